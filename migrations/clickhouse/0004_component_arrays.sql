-- A source check is one row (decision 0016): its leaf components' ids, statuses and regions ride on
-- the source's row as parallel arrays instead of one row per component.
--
-- The rollups' views are replaced by views that read both forms: each row stands for its own
-- component_id (the source or monitor itself when '') and for every component of its arrays, so a row
-- written one per component (before this migration, or by a fixture) and a row with arrays roll up
-- to the same hourly and daily rows with the same counts. Response times are kept for the subject
-- only: a component's latency is its source's check (the rows repeated it), and nothing reads a
-- component's; its rollup rows keep zero latency and an empty t-digest state, the largest part of a
-- rollup row (decision 0016).
--
-- ClickHouse DDL is not transactional: between a view's DROP and its CREATE, an insert by a process
-- of the previous version (servers, several runners during an upgrade) would not be rolled up. The
-- embedded default applies migrations before its poller starts. Re-running this file is harmless.

ALTER TABLE check_results
  ADD COLUMN IF NOT EXISTS component_ids Array(String) DEFAULT [] CODEC(ZSTD(3)),
  ADD COLUMN IF NOT EXISTS component_statuses Array(LowCardinality(String)) DEFAULT [],
  ADD COLUMN IF NOT EXISTS component_regions Array(LowCardinality(String)) DEFAULT [];

DROP VIEW IF EXISTS check_rollup_hourly_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS check_rollup_hourly_mv TO check_rollup_hourly AS
SELECT
  toStartOfHour(checked_at) AS hour,
  subject_kind,
  subject_id,
  component AS component_id,
  count() AS checks,
  countIf(component_status IN ('down', 'critical')) AS down_checks,
  countIf(component_status = 'degraded') AS degraded_checks,
  countIf(component_status = 'maintenance') AS maintenance_checks,
  countIf(error != '') AS error_checks,
  sumIf(latency_ms, component = '') AS latency_sum,
  maxIf(latency_ms, component = '') AS latency_max,
  quantilesTDigestStateIf(0.5, 0.95, 0.99)(latency_ms, component = '') AS latency_quantiles
FROM check_results
ARRAY JOIN
  arrayConcat([component_id], component_ids) AS component,
  arrayConcat([status], component_statuses) AS component_status
GROUP BY hour, subject_kind, subject_id, component;

DROP VIEW IF EXISTS check_rollup_daily_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS check_rollup_daily_mv TO check_rollup_daily AS
SELECT
  toDate(checked_at) AS day,
  subject_kind,
  subject_id,
  component AS component_id,
  count() AS checks,
  countIf(component_status IN ('down', 'critical')) AS down_checks,
  countIf(component_status = 'degraded') AS degraded_checks,
  countIf(component_status = 'maintenance') AS maintenance_checks,
  countIf(error != '') AS error_checks,
  sumIf(latency_ms, component = '') AS latency_sum,
  maxIf(latency_ms, component = '') AS latency_max,
  quantilesTDigestStateIf(0.5, 0.95, 0.99)(latency_ms, component = '') AS latency_quantiles
FROM check_results
ARRAY JOIN
  arrayConcat([component_id], component_ids) AS component,
  arrayConcat([status], component_statuses) AS component_status
GROUP BY day, subject_kind, subject_id, component;
