-- Issue #18: each source's last check (its time and error) in a narrow table of its own. Every shard
-- writes the check times of the sources it checked once a second (services/poller/SourceStore.ts,
-- `markChecked`); on `sources` each of those writes copied the whole catalog row (430 bytes on
-- average: description, search text, region statuses) and, once a page had no room left for the new
-- version (PostgreSQL without autovacuum), added an entry to each of its six indexes, the trigram
-- index among them. Here a write is a 60-byte row under one key. Measured on PGlite, 11 sources a
-- statement: 0.63 ms against 1.03-1.08 ms on `sources` (decision 0025).
-- Readers join it: the API's sources and custom sources, the stack board, a shard's load (each
-- source's first check after a restart keeps its cadence from `checked_at`, FirstChecks.ts).
CREATE TABLE source_checks (
  source_id uuid PRIMARY KEY REFERENCES sources (id) ON DELETE CASCADE,
  checked_at timestamptz NOT NULL,
  -- Why the last check failed (fetch, parse or detection); NULL when it succeeded.
  error text
);

INSERT INTO source_checks (source_id, checked_at, error)
SELECT id, last_checked_at, last_error FROM sources WHERE last_checked_at IS NOT NULL;

ALTER TABLE sources DROP COLUMN last_checked_at, DROP COLUMN last_error;
