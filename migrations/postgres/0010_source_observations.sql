-- The poller's last observation of each source: the snapshot (as the domain's Snapshot, JSON) and since
-- when the source's and each component's status have held. Written with every changed snapshot; a shard
-- that starts (a restart, a deploy, a runner fail-over) compares each source's first snapshot with it,
-- so a change made while no shard ran the source still becomes its events, with the ids it would have had.
CREATE TABLE source_observations (
  source_id uuid PRIMARY KEY REFERENCES sources (id) ON DELETE CASCADE,
  snapshot jsonb NOT NULL,
  since jsonb NOT NULL,
  observed_at timestamptz NOT NULL
);
