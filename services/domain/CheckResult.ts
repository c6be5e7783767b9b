import { Schema } from "effect"

/**
 * One check of a source (or one of its components) or of a website monitor,
 * as written to ClickHouse `check_results` (migrations/clickhouse/0001, 0004).
 * A source check writes one row: the source's (component_id ""), its
 * components' ids, statuses and regions in parallel arrays, which the rollups'
 * views spread into one row per component (decision 0016). A row per component
 * (component_id set, no arrays) is still read the same way.
 */
export const CheckResultRow = Schema.Struct({
  /**
   * Milliseconds since the epoch (what a source check writes: ClickHouse reads an integer into
   * `DateTime64(3)` as milliseconds, cheaper than parsing text; decision 0024), or ISO 8601 UTC text
   * with milliseconds (website monitors, spill files written before).
   */
  checked_at: Schema.Union([Schema.Number, Schema.String]),
  subject_kind: Schema.Literals(["source", "monitor"]),
  /** source key or monitor id */
  subject_id: Schema.String,
  /** "" for the subject as a whole, else the component's provider id */
  component_id: Schema.String,
  /** normalized status: operational/degraded/down/critical/maintenance (sources), up/degraded/down (monitors) */
  status: Schema.String,
  latency_ms: Schema.Number,
  /** 0 when no HTTP answer was received */
  http_status: Schema.Number,
  bytes: Schema.Number,
  /** "" when the check succeeded */
  error: Schema.String,
  region: Schema.String,
  shard: Schema.Number,
  /** A source check: its leaf components' provider ids, and their statuses and regions in the same order. */
  component_ids: Schema.optional(Schema.Array(Schema.String)),
  component_statuses: Schema.optional(Schema.Array(Schema.String)),
  component_regions: Schema.optional(Schema.Array(Schema.String)),
  /** Website monitors: the phases of the request (migrations/clickhouse/0002); 0 for sources. */
  dns_ms: Schema.optional(Schema.Number),
  connect_ms: Schema.optional(Schema.Number),
  tls_ms: Schema.optional(Schema.Number),
  first_byte_ms: Schema.optional(Schema.Number),
  /** Website monitors over https: whole days until the certificate expires. */
  tls_days_left: Schema.optional(Schema.NullOr(Schema.Number))
})
export type CheckResultRow = typeof CheckResultRow.Type
