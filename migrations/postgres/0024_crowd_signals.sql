-- Crowd signals and official onsets (issue #17, decision 0015): when the crowd's confidence that a
-- source is in trouble crosses the model's threshold, and when the official status page followed.

-- A signal: from the report (or sweep) that took the score to the start threshold to the one that
-- took it below the end threshold. At most one open signal per source, whichever process saw the
-- score first: inserts use ON CONFLICT DO NOTHING on the partial unique index.
CREATE TABLE crowd_signals (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  source_id uuid NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
  started_at timestamptz NOT NULL,
  ended_at timestamptz,
  start_confidence integer NOT NULL CHECK (start_confidence BETWEEN 0 AND 100),
  peak_confidence integer NOT NULL CHECK (peak_confidence BETWEEN 0 AND 100),
  -- The score's sentence when the signal started ("8 reporters in 10 min, usually 1 or fewer.").
  reason text NOT NULL,
  -- The official status of the source when the signal started: a signal during an official
  -- outage confirms it (neither a lead nor a false alarm).
  official_status text NOT NULL,
  end_confidence integer CHECK (end_confidence BETWEEN 0 AND 100),
  -- Whether crowd.signal_started / crowd.signal_ended (and the Redis state) reached the bus: the row is
  -- written first, and the sweep hands over what the bus refused.
  start_published boolean NOT NULL DEFAULT false,
  end_published boolean NOT NULL DEFAULT false,
  CHECK (ended_at IS NULL OR ended_at >= started_at)
);
CREATE UNIQUE INDEX crowd_signals_open ON crowd_signals (source_id) WHERE ended_at IS NULL;
CREATE INDEX crowd_signals_source_time ON crowd_signals (source_id, started_at DESC);
CREATE INDEX crowd_signals_unpublished ON crowd_signals (started_at) WHERE NOT start_published OR (ended_at IS NOT NULL AND NOT end_published);

-- An official onset: the source's status page leaving operational or opening an incident, as the
-- poller's events on sg:events say (read by the crowd's own consumer group), with the signal that
-- led it, if one started within the follow window before it. One row per event (at least once
-- delivery); a signal leads at most one onset.
CREATE TABLE crowd_onsets (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  source_id uuid NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
  event_id text NOT NULL UNIQUE,
  kind text NOT NULL CHECK (kind IN ('status', 'incident')),
  at timestamptz NOT NULL,
  signal_id uuid UNIQUE REFERENCES crowd_signals (id) ON DELETE SET NULL
);
CREATE INDEX crowd_onsets_source_time ON crowd_onsets (source_id, at DESC);
