-- The rollups keep a row for a source's component only for the checks that found it not operational
-- (decision 0022), and one row `component_id = '*'` per source and hour (or day) for every check that
-- listed components: it stands for the source's components that have no row of their own, so a
-- component's checks are the larger of its own and its source's '*' checks (the readers:
-- services/history/Rollups.ts). For sources of many components, the rollup rows per component were
-- most of ClickHouse's work: each check made one per component in both rollups, merged again and
-- again (bench/clickhouseRows.ts: 0.108 cores at 667 checks/s of 12 components each, 0.065 without
-- the operational ones).
--
-- Rows written before this migration (one per component and check, or every component of the arrays)
-- stay as they are, without '*' rows: a component is read from its own rows there, as before. The
-- views are replaced as in 0004 (DROP, then CREATE; not transactional). Re-running this file is
-- harmless.

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
  arrayConcat([component_id], if(empty(component_ids), [], ['*']), arrayFilter((c, s) -> s != 'operational', component_ids, component_statuses)) AS component,
  arrayConcat([status], if(empty(component_ids), [], ['operational']), arrayFilter((s) -> s != 'operational', component_statuses)) AS component_status
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
  arrayConcat([component_id], if(empty(component_ids), [], ['*']), arrayFilter((c, s) -> s != 'operational', component_ids, component_statuses)) AS component,
  arrayConcat([status], if(empty(component_ids), [], ['operational']), arrayFilter((s) -> s != 'operational', component_statuses)) AS component_status
GROUP BY day, subject_kind, subject_id, component;
