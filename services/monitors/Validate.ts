import { Effect, Result, Schema, SchemaIssue } from "effect"
import {
  type CheckType,
  type HttpMethod,
  type KeywordMode,
  type MonitorAuth,
  MonitorInput,
  monitorDefaults,
  monitorLimits
} from "../domain/Monitor.ts"
import { parseExpectedStatus } from "./ExpectedStatus.ts"

/** One problem with one field, named as on the wire (`check_interval`, `headers.X-Foo`, `auth.token`). */
export interface FieldIssue {
  readonly field: string
  readonly message: string
}

export const FieldIssueSchema = Schema.Struct({ field: Schema.String, message: Schema.String })

/** A monitor definition that cannot be accepted; `issues` lists every field at fault. */
export class MonitorInvalid extends Schema.TaggedError<MonitorInvalid>()("MonitorInvalid", {
  issues: Schema.Array(FieldIssueSchema),
  message: Schema.String
}) {}

/** The settings of a valid monitor, normalized: what is stored and what a check is built from. */
export interface MonitorSettings {
  readonly name: string
  /** The URL as `new URL(...).href` prints it. */
  readonly url: string
  readonly check_type: CheckType
  /** Seconds, whether given as `interval` or `check_interval`. */
  readonly interval: number
  readonly alert_threshold: number
  /** Milliseconds for the whole check. */
  readonly timeout: number
  /** As entered (trimmed); it parses with `parseExpectedStatus`. */
  readonly expected_status: string
  readonly method: HttpMethod
  readonly headers: Readonly<Record<string, string>>
  readonly auth?: MonitorAuth
  readonly body?: string
  readonly keyword?: string
  readonly keyword_mode: KeywordMode
  readonly degraded_after_ms?: number
  /** Distinct, largest first. */
  readonly ssl_expiry_days: ReadonlyArray<number>
  readonly follow_redirects: boolean
  readonly tls_verify: boolean
  readonly paused: boolean
}

export interface ValidatedMonitor {
  readonly settings: MonitorSettings
  /** The recommended ranges below that the settings do not follow; accepted, shown to the user. */
  readonly warnings: ReadonlyArray<FieldIssue>
}

/** Recommended ranges: checks every 1-5 minutes, alert after 3-5 consecutive failures. */
export const recommended = {
  interval: { minimum: 60, maximum: 300 },
  intervalFloor: 30,
  alertThreshold: { minimum: 3, maximum: 5 }
} as const

const formatter = SchemaIssue.makeFormatterStandardSchemaV1({
  // The optional fields' type errors read "Expected number | undefined": the `undefined` is noise to API users.
  leafHook: (issue) => SchemaIssue.defaultLeafHook(issue).replace(/ \| undefined$/, "")
})

const decodeInput = Schema.decodeUnknownResult(MonitorInput)

const fieldOf = (path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined): string =>
  path === undefined || path.length === 0
    ? "body"
    : path.map((s) => String(typeof s === "object" && s !== null ? s.key : s)).join(".")

/** Schema failures as field issues, the first message of each field only. */
const schemaIssues = (issue: SchemaIssue.Issue): Array<FieldIssue> => {
  const out: Array<FieldIssue> = []
  const seen = new Set<string>()
  for (const i of formatter(issue).issues) {
    const field = fieldOf(i.path)
    if (seen.has(field)) continue
    seen.add(field)
    out.push({ field, message: i.message === "Expected no excess property" ? "is not a monitor setting" : i.message })
  }
  return out
}

const invalid = (issues: ReadonlyArray<FieldIssue>): MonitorInvalid =>
  new MonitorInvalid({
    issues,
    message: `invalid monitor: ${issues.map((i) => `${i.field} ${i.message}`).join("; ")}`
  })

/**
 * Decodes a monitor's create/update body and applies the cross-field rules.
 * Every problem is reported at once; warnings never block.
 */
export const validateMonitorResult = (input: unknown): Result.Result<ValidatedMonitor, MonitorInvalid> => {
  const decoded = decodeInput(input, { errors: "all", onExcessProperty: "error" })
  if (Result.isFailure(decoded)) return Result.fail(invalid(schemaIssues(decoded.failure.issue)))
  const m = decoded.success
  const issues: Array<FieldIssue> = []
  const warnings: Array<FieldIssue> = []

  // URL: http(s) only, no credentials (they belong in `auth`, stored encrypted).
  let url: URL | undefined
  try {
    url = new URL(m.url)
  } catch {
    issues.push({ field: "url", message: "is not a valid absolute URL (e.g. https://example.com/health)" })
  }
  let checkType: CheckType = m.check_type ?? "https"
  if (url) {
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      issues.push({ field: "url", message: `must use http or https, not ${url.protocol.slice(0, -1)}` })
    } else {
      const scheme = url.protocol === "https:" ? "https" : "http"
      if (m.check_type !== undefined && m.check_type !== scheme) {
        issues.push({ field: "check_type", message: `is ${m.check_type} but the URL is ${scheme}` })
      }
      checkType = scheme
    }
    if (url.username !== "" || url.password !== "") {
      issues.push({ field: "url", message: "must not contain credentials (user:password@); use auth instead" })
    }
    if (url.hostname === "") issues.push({ field: "url", message: "has no host" })
  }

  // `check_interval` is an alias of `interval`: either, or both when they agree.
  let interval: number = monitorDefaults.interval
  let intervalField = "interval"
  if (m.interval !== undefined && m.check_interval !== undefined && m.interval !== m.check_interval) {
    issues.push({
      field: "check_interval",
      message: `is an alias of interval and disagrees with it (${m.check_interval} vs ${m.interval}); give one`
    })
  } else if (m.interval !== undefined) {
    interval = m.interval
  } else if (m.check_interval !== undefined) {
    interval = m.check_interval
    intervalField = "check_interval"
  }

  const { minimum: minTimeout, maximum: maxTimeout } = monitorLimits.timeout
  if (m.timeout < minTimeout || m.timeout > maxTimeout) {
    issues.push({ field: "timeout", message: `must be from ${minTimeout} to ${maxTimeout} milliseconds` })
  } else if (m.timeout > interval * 1000) {
    issues.push({
      field: "timeout",
      message: `must not exceed the interval (${m.timeout} ms > ${interval} s); a check would still run when the next starts`
    })
  }

  const status = parseExpectedStatus(m.expected_status)
  if (Result.isFailure(status)) issues.push({ field: "expected_status", message: status.failure })

  if (m.degraded_after_ms !== undefined && m.degraded_after_ms >= m.timeout) {
    issues.push({ field: "degraded_after_ms", message: `must be less than the timeout (${m.timeout} ms)` })
  }
  if (m.keyword !== undefined && m.method === "HEAD") {
    issues.push({ field: "keyword", message: "cannot be checked with method HEAD (the response has no body)" })
  }
  if (m.auth !== undefined && Object.keys(m.headers).some((h) => h.toLowerCase() === "authorization")) {
    const name = Object.keys(m.headers).find((h) => h.toLowerCase() === "authorization")!
    issues.push({ field: `headers.${name}`, message: "conflicts with auth; give one of them" })
  }

  if (issues.length > 0) return Result.fail(invalid(issues))

  if (interval < recommended.intervalFloor) {
    warnings.push({
      field: intervalField,
      message: `checks under ${recommended.intervalFloor} s load the endpoint and rarely detect outages sooner; 60-300 s is recommended`
    })
  } else if (interval < recommended.interval.minimum || interval > recommended.interval.maximum) {
    warnings.push({ field: intervalField, message: "60-300 s is recommended" })
  }
  if (m.body !== undefined && (m.method === "GET" || m.method === "HEAD")) {
    warnings.push({ field: "body", message: `is sent with ${m.method}, which many servers ignore or refuse; POST or PUT is usual` })
  }
  if (m.alert_threshold === 1) {
    warnings.push({ field: "alert_threshold", message: "a single failure alerts: expect false alarms; 3-5 is recommended" })
  } else if (m.alert_threshold < recommended.alertThreshold.minimum || m.alert_threshold > recommended.alertThreshold.maximum) {
    warnings.push({ field: "alert_threshold", message: "3-5 consecutive failures is recommended" })
  }

  const settings: MonitorSettings = {
    name: m.name,
    url: url!.href,
    check_type: checkType,
    interval,
    alert_threshold: m.alert_threshold,
    timeout: m.timeout,
    expected_status: m.expected_status,
    method: m.method,
    headers: m.headers,
    ...(m.auth !== undefined ? { auth: m.auth } : {}),
    ...(m.body !== undefined ? { body: m.body } : {}),
    ...(m.keyword !== undefined ? { keyword: m.keyword } : {}),
    keyword_mode: m.keyword_mode,
    ...(m.degraded_after_ms !== undefined ? { degraded_after_ms: m.degraded_after_ms } : {}),
    ssl_expiry_days: m.ssl_expiry_days.toSorted((a, b) => b - a),
    follow_redirects: m.follow_redirects,
    tls_verify: m.tls_verify,
    paused: m.paused
  }
  return Result.succeed({ settings, warnings })
}

/** `validateMonitorResult` in the error channel. */
export const validateMonitor = (input: unknown): Effect.Effect<ValidatedMonitor, MonitorInvalid> =>
  Effect.fromResult(validateMonitorResult(input))
