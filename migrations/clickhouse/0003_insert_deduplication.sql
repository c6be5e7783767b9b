-- Idempotent inserts: the writers send one `insert_deduplication_token` per
-- batch (the same on every retry, and after a spill to disk and a replay),
-- and a non-replicated MergeTree drops a block whose token is among the last
-- `non_replicated_deduplication_window` blocks inserted into the table. 1,000
-- blocks is far more than a writer inserts between a timed-out attempt and its
-- retry. The rollups behind check_results' materialized views need the window
-- too: a view is fed even by a block its source table dropped as a repeat, and
-- drops it only with `deduplicate_blocks_in_dependent_materialized_views = 1`
-- (sent with every insert, see services/platform/ClickHouse.ts) and a window
-- on the view's target table.
-- Server side: ClickHouse 22.2 or later (`insert_deduplication_token`), with
-- `insert_deduplicate = 1` (the default). Replicated tables would deduplicate
-- through `replicated_deduplication_window` instead, with the same tokens.
ALTER TABLE check_results MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE status_transitions MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE check_rollup_hourly MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE check_rollup_daily MODIFY SETTING non_replicated_deduplication_window = 1000;
