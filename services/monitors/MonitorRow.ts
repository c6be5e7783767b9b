import type { MonitorAuth } from "../domain/Monitor.ts"
import type { MonitorSettings } from "./Validate.ts"

/** The settings columns of a `monitors` row, as the PostgreSQL driver returns them. */
export interface MonitorSettingsRow {
  readonly name: string
  readonly url: string
  readonly check_type: MonitorSettings["check_type"]
  readonly method: MonitorSettings["method"]
  readonly interval_s: number
  readonly alert_threshold: number
  readonly timeout_ms: number
  readonly expected_status: string
  readonly headers: unknown
  readonly body: string | null
  readonly keyword: string | null
  readonly keyword_mode: MonitorSettings["keyword_mode"]
  readonly degraded_after_ms: number | null
  readonly ssl_expiry_days: ReadonlyArray<number> | string
  readonly follow_redirects: boolean
  readonly tls_verify: boolean
  readonly state: string
}

/** PostgreSQL arrays may arrive as text ("{30,14}") depending on the driver. */
export const intArray = (value: ReadonlyArray<number> | string): Array<number> =>
  typeof value === "string" ? value.replace(/[{}]/g, "").split(",").filter((s) => s !== "").map(Number) : value.map(Number)

/** jsonb may arrive parsed or as text. */
export const headersOf = (value: unknown): Record<string, string> =>
  (typeof value === "string" ? JSON.parse(value) : value) as Record<string, string>

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
  headers: headersOf(row.headers),
  ...(auth ? { auth } : {}),
  ...(row.body !== null ? { body: row.body } : {}),
  ...(row.keyword !== null ? { keyword: row.keyword } : {}),
  keyword_mode: row.keyword_mode,
  ...(row.degraded_after_ms !== null ? { degraded_after_ms: row.degraded_after_ms } : {}),
  ssl_expiry_days: intArray(row.ssl_expiry_days).toSorted((a, b) => b - a),
  follow_redirects: row.follow_redirects,
  tls_verify: row.tls_verify,
  paused: row.state === "paused"
})
