-- Crowd reports (issue #17, decision 0014): users' reports of a problem with a source, holding no
-- personal data in clear. A reporter is an HMAC of its account or address (services/crowd/README.md),
-- its network an HMAC of the address's /24 or /48; the key is derived from SECRETS_KEY and never stored.
-- No code wrote this table before; a row without a network or window cannot be scored, so none is kept.
DELETE FROM crowd_reports;
ALTER TABLE crowd_reports
  DROP COLUMN user_id,
  DROP COLUMN comment,
  ADD COLUMN network_hash text NOT NULL,
  -- The start of the fixed 10-minute window the report falls in (crowdDefaults.windowMs).
  ADD COLUMN window_start timestamptz NOT NULL;
ALTER TABLE crowd_reports ALTER COLUMN symptom DROP DEFAULT;

-- One reporter counts once per source per window: inserts use ON CONFLICT DO NOTHING.
ALTER TABLE crowd_reports
  ADD CONSTRAINT crowd_reports_once_per_window UNIQUE (source_id, reporter_hash, window_start);

-- The last window of a source and the hourly counts of its last weeks are both ranges of
-- (source_id, created_at); the index carries what they read (index-only scans where it can).
DROP INDEX crowd_reports_source_time_idx;
CREATE INDEX crowd_reports_source_time_idx ON crowd_reports (source_id, created_at DESC)
  INCLUDE (reporter_hash, network_hash, component_id, region);
