import { Schema } from "effect"
import { CheckType, HttpMethod, KeywordMode, type MonitorAuth } from "../domain/Monitor.ts"
import { IntArrayColumn, JsonColumn } from "../platform/Rows.ts"
import type { MonitorSettings } from "./Validate.ts"

/**
 * The settings columns of a `monitors` row: the one row Schema the API
 * (services/orgs/Monitors.ts) and the shards (services/poller/MonitorStore.ts)
 * extend with the columns they read; headers (jsonb) and the expiry days (int[])
 * are decoded once, here.
 */
export const MonitorSettingsRow = Schema.Struct({
  name: Schema.String,
  url: Schema.String,
  check_type: CheckType,
  method: HttpMethod,
  interval_s: Schema.Number,
  alert_threshold: Schema.Number,
  timeout_ms: Schema.Number,
  expected_status: Schema.String,
  headers: JsonColumn(Schema.Record(Schema.String, Schema.String)),
  body: Schema.NullOr(Schema.String),
  keyword: Schema.NullOr(Schema.String),
  keyword_mode: KeywordMode,
  degraded_after_ms: Schema.NullOr(Schema.Number),
  ssl_expiry_days: IntArrayColumn,
  follow_redirects: Schema.Boolean,
  tls_verify: Schema.Boolean,
  state: Schema.String
})
export type MonitorSettingsRow = typeof MonitorSettingsRow.Type

/**
 * A stored monitor's settings, in the shape `validateMonitor` produces:
 * the one mapping from columns to settings, for the shards (with the
 * decrypted credentials) and for merging an API patch (with a stand-in).
 */
export const settingsOfRow = (row: MonitorSettingsRow, auth: MonitorAuth | undefined): MonitorSettings => ({
  name: row.name,
  url: row.url,
  check_type: row.check_type,
  interval: row.interval_s,
  alert_threshold: row.alert_threshold,
  timeout: row.timeout_ms,
  expected_status: row.expected_status,
  method: row.method,
  headers: row.headers,
  ...(auth ? { auth } : {}),
  ...(row.body !== null ? { body: row.body } : {}),
  ...(row.keyword !== null ? { keyword: row.keyword } : {}),
  keyword_mode: row.keyword_mode,
  ...(row.degraded_after_ms !== null ? { degraded_after_ms: row.degraded_after_ms } : {}),
  ssl_expiry_days: row.ssl_expiry_days.toSorted((a, b) => b - a),
  follow_redirects: row.follow_redirects,
  tls_verify: row.tls_verify,
  paused: row.state === "paused"
})
