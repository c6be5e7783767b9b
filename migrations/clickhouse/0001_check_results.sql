-- Raw check results, status transitions, and hourly/daily rollups.
-- The same SQL runs on chDB and on a ClickHouse server; every statement is
-- re-runnable because ClickHouse DDL is not transactional.
--
-- subject_kind: 'source' (subject_id = source key) or 'monitor' (subject_id = monitor id).
-- component_id: '' for the subject as a whole, else the component's external id.
-- status: the subject's or component's normalized status (operational, degraded,
-- down, critical, maintenance for sources and components; up, degraded, down for monitors).

CREATE TABLE IF NOT EXISTS check_results (
  checked_at DateTime64(3, 'UTC'),
  subject_kind Enum8('source' = 1, 'monitor' = 2),
  subject_id String,
  component_id String DEFAULT '',
  status LowCardinality(String),
  latency_ms UInt32 DEFAULT 0,
  http_status UInt16 DEFAULT 0,
  bytes UInt32 DEFAULT 0,
  error String DEFAULT '' CODEC(ZSTD(3)),
  region LowCardinality(String) DEFAULT '',
  shard UInt16 DEFAULT 0
)
ENGINE = MergeTree
PARTITION BY toDate(checked_at)
ORDER BY (subject_kind, subject_id, component_id, checked_at)
TTL toDateTime(checked_at) + INTERVAL 90 DAY DELETE
SETTINGS ttl_only_drop_parts = 1;

CREATE TABLE IF NOT EXISTS status_transitions (
  changed_at DateTime64(3, 'UTC'),
  subject_kind Enum8('source' = 1, 'monitor' = 2),
  subject_id String,
  component_id String DEFAULT '',
  previous_status LowCardinality(String),
  status LowCardinality(String),
  incident_id String DEFAULT '',
  event_id String DEFAULT ''
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(changed_at)
ORDER BY (subject_kind, subject_id, component_id, changed_at)
TTL toDateTime(changed_at) + INTERVAL 2 YEAR DELETE;

-- Hourly rollup: uptime counts and response-time figures per subject and component.
CREATE TABLE IF NOT EXISTS check_rollup_hourly (
  hour DateTime('UTC'),
  subject_kind Enum8('source' = 1, 'monitor' = 2),
  subject_id String,
  component_id String,
  checks SimpleAggregateFunction(sum, UInt64),
  down_checks SimpleAggregateFunction(sum, UInt64),
  degraded_checks SimpleAggregateFunction(sum, UInt64),
  maintenance_checks SimpleAggregateFunction(sum, UInt64),
  error_checks SimpleAggregateFunction(sum, UInt64),
  latency_sum SimpleAggregateFunction(sum, UInt64),
  latency_max SimpleAggregateFunction(max, UInt32),
  latency_quantiles AggregateFunction(quantilesTDigest(0.5, 0.95, 0.99), UInt32)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (subject_kind, subject_id, component_id, hour)
TTL hour + INTERVAL 400 DAY DELETE;

CREATE MATERIALIZED VIEW IF NOT EXISTS check_rollup_hourly_mv TO check_rollup_hourly AS
SELECT
  toStartOfHour(checked_at) AS hour,
  subject_kind,
  subject_id,
  component_id,
  count() AS checks,
  countIf(status IN ('down', 'critical')) AS down_checks,
  countIf(status = 'degraded') AS degraded_checks,
  countIf(status = 'maintenance') AS maintenance_checks,
  countIf(error != '') AS error_checks,
  sum(latency_ms) AS latency_sum,
  max(latency_ms) AS latency_max,
  quantilesTDigestState(0.5, 0.95, 0.99)(latency_ms) AS latency_quantiles
FROM check_results
GROUP BY hour, subject_kind, subject_id, component_id;

-- Daily rollup: the same figures per day, kept for five years.
CREATE TABLE IF NOT EXISTS check_rollup_daily (
  day Date,
  subject_kind Enum8('source' = 1, 'monitor' = 2),
  subject_id String,
  component_id String,
  checks SimpleAggregateFunction(sum, UInt64),
  down_checks SimpleAggregateFunction(sum, UInt64),
  degraded_checks SimpleAggregateFunction(sum, UInt64),
  maintenance_checks SimpleAggregateFunction(sum, UInt64),
  error_checks SimpleAggregateFunction(sum, UInt64),
  latency_sum SimpleAggregateFunction(sum, UInt64),
  latency_max SimpleAggregateFunction(max, UInt32),
  latency_quantiles AggregateFunction(quantilesTDigest(0.5, 0.95, 0.99), UInt32)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYear(day)
ORDER BY (subject_kind, subject_id, component_id, day)
TTL day + INTERVAL 5 YEAR DELETE;

CREATE MATERIALIZED VIEW IF NOT EXISTS check_rollup_daily_mv TO check_rollup_daily AS
SELECT
  toDate(checked_at) AS day,
  subject_kind,
  subject_id,
  component_id,
  count() AS checks,
  countIf(status IN ('down', 'critical')) AS down_checks,
  countIf(status = 'degraded') AS degraded_checks,
  countIf(status = 'maintenance') AS maintenance_checks,
  countIf(error != '') AS error_checks,
  sum(latency_ms) AS latency_sum,
  max(latency_ms) AS latency_max,
  quantilesTDigestState(0.5, 0.95, 0.99)(latency_ms) AS latency_quantiles
FROM check_results
GROUP BY day, subject_kind, subject_id, component_id;
