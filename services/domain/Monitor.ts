import { Effect, Schema, SchemaTransformation } from "effect"
import { NullOr } from "./NullOr.ts"

/** Website monitors (issue #5): an organization's own HTTP/HTTPS endpoints, checked on an interval. */

export const MonitorState = Schema.Literals(["pending", "up", "degraded", "down", "paused"])
export type MonitorState = typeof MonitorState.Type

export const CheckType = Schema.Literals(["http", "https"])
export type CheckType = typeof CheckType.Type

export const HttpMethod = Schema.Literals(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
export type HttpMethod = typeof HttpMethod.Type

export const KeywordMode = Schema.Literals(["contains", "absent"])
export type KeywordMode = typeof KeywordMode.Type

export const AuthType = Schema.Literals(["none", "basic", "bearer"])
export type AuthType = typeof AuthType.Type

/** Every default of a monitor setting, in one place (the PostgreSQL defaults of `monitors` agree). */
export const monitorDefaults = {
  interval: 60,
  alert_threshold: 3,
  timeout: 10_000,
  expected_status: "200-299",
  method: "GET",
  headers: {},
  keyword_mode: "contains",
  ssl_expiry_days: [30, 14, 7, 1],
  follow_redirects: true,
  tls_verify: true,
  paused: false
} as const satisfies {
  interval: number
  alert_threshold: number
  timeout: number
  expected_status: string
  method: HttpMethod
  headers: Record<string, string>
  keyword_mode: KeywordMode
  ssl_expiry_days: ReadonlyArray<number>
  follow_redirects: boolean
  tls_verify: boolean
  paused: boolean
}

/** Hard limits of the settings (the table's CHECK constraints). */
export const monitorLimits = {
  nameLength: 200,
  urlLength: 2048,
  interval: { minimum: 10, maximum: 86_400 },
  alertThreshold: { minimum: 1, maximum: 100 },
  timeout: { minimum: 100, maximum: 120_000 },
  bodyBytes: 64 * 1024,
  keywordLength: 1000,
  headerCount: 50,
  headerValueLength: 8192,
  sslExpiryDay: { minimum: 1, maximum: 365 },
  sslExpiryDays: 10
} as const

/** Headers the HTTP client owns: setting them by hand breaks framing or routing. */
export const forbiddenHeaders: ReadonlySet<string> = new Set(["host", "content-length", "transfer-encoding", "connection"])

/** RFC 9110 `token`: what a header name may be made of. */
const headerNamePattern = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
/** What node accepts in a header value: no control characters other than tab. */
const headerValuePattern = /^[\t\x20-\x7e\x80-\xff]*$/

const utf8 = new TextEncoder()

/** Optional on input, `value` when absent. */
const withDefault = <S extends Schema.Constraint>(self: S, value: S["Type"]) =>
  Schema.withDecodingDefaultType<S, never>(Effect.succeed(value))(self)

const IntBetween = (range: { readonly minimum: number; readonly maximum: number }, unit: string) =>
  Schema.Int.check(Schema.isBetween(range, { message: `must be an integer from ${range.minimum} to ${range.maximum}${unit}` }))

const Seconds = IntBetween(monitorLimits.interval, " seconds")

/** Custom request headers: names are HTTP tokens, values are single-line text; the framing headers are refused. */
export const MonitorHeaders = Schema.Record(Schema.String, Schema.String).check(
  Schema.makeFilter((headers: Readonly<Record<string, string>>) => {
    const issues: Array<Schema.FilterIssue> = []
    const names = Object.keys(headers)
    if (names.length > monitorLimits.headerCount) {
      return `at most ${monitorLimits.headerCount} headers`
    }
    const seen = new Set<string>()
    for (const name of names) {
      const value = headers[name]!
      const lower = name.toLowerCase()
      if (!headerNamePattern.test(name)) {
        issues.push({ path: [name], issue: "is not a valid header name (letters, digits and !#$%&'*+-.^_`|~ only)" })
      } else if (forbiddenHeaders.has(lower)) {
        issues.push({ path: [name], issue: "is set by the monitor itself and cannot be given" })
      } else if (seen.has(lower)) {
        issues.push({ path: [name], issue: "is given twice (header names are case-insensitive)" })
      } else if (!headerValuePattern.test(value)) {
        issues.push({ path: [name], issue: "value must not contain line breaks or control characters" })
      } else if (value.length > monitorLimits.headerValueLength) {
        issues.push({ path: [name], issue: `value is longer than ${monitorLimits.headerValueLength} characters` })
      }
      seen.add(lower)
    }
    return issues
  })
)

/** RFC 7617: the user-id of Basic authentication cannot contain a colon. */
export const BasicAuth = Schema.Struct({
  type: Schema.Literal("basic"),
  username: Schema.String.check(
    Schema.isMaxLength(1000, { message: "must be at most 1000 characters" }),
    Schema.makeFilter((s: string) => !s.includes(":") || "must not contain a colon")
  ),
  password: Schema.String.check(Schema.isMaxLength(1000, { message: "must be at most 1000 characters" }))
})
export const BearerAuth = Schema.Struct({
  type: Schema.Literal("bearer"),
  token: Schema.String.check(
    Schema.isBetweenLength(1, 8192, { message: "must be 1 to 8192 characters" }),
    Schema.makeFilter((s: string) => /^[\x21-\x7e]+$/.test(s) || "must be printable ASCII without spaces")
  )
})
/** Credentials as given on create/update; stored encrypted, never returned. */
export const MonitorAuth = Schema.Union([BasicAuth, BearerAuth])
export type MonitorAuth = typeof MonitorAuth.Type

/**
 * The create/update body of a monitor, field by field; cross-field rules
 * (URL, interval vs timeout, expected status syntax) live in
 * services/monitors/Validate.ts. `check_interval` is accepted as an alias of
 * `interval`; neither has a default here because the alias is resolved there.
 */
export const MonitorInput = Schema.Struct({
  name: Schema.Trim.check(Schema.isBetweenLength(1, monitorLimits.nameLength, {
    message: `must be 1 to ${monitorLimits.nameLength} characters`
  })),
  url: Schema.Trim.check(Schema.isBetweenLength(1, monitorLimits.urlLength, {
    message: `must be 1 to ${monitorLimits.urlLength} characters`
  })),
  check_type: Schema.optionalKey(CheckType),
  interval: Schema.optionalKey(Seconds),
  check_interval: Schema.optionalKey(Seconds),
  alert_threshold: withDefault(IntBetween(monitorLimits.alertThreshold, ""), monitorDefaults.alert_threshold),
  timeout: withDefault(Schema.Int, monitorDefaults.timeout),
  expected_status: withDefault(Schema.Trim, monitorDefaults.expected_status),
  method: withDefault(HttpMethod, monitorDefaults.method),
  headers: withDefault(MonitorHeaders, monitorDefaults.headers),
  auth: Schema.optionalKey(MonitorAuth),
  body: Schema.optionalKey(Schema.String.check(Schema.makeFilter((s: string) =>
    utf8.encode(s).length <= monitorLimits.bodyBytes || `must be at most ${monitorLimits.bodyBytes} bytes (64 KiB)`
  ))),
  keyword: Schema.optionalKey(Schema.String.check(Schema.isBetweenLength(1, monitorLimits.keywordLength, {
    message: `must be 1 to ${monitorLimits.keywordLength} characters`
  }))),
  keyword_mode: withDefault(KeywordMode, monitorDefaults.keyword_mode),
  degraded_after_ms: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThan(0, { message: "must be a positive integer" }))),
  ssl_expiry_days: withDefault(
    Schema.Array(IntBetween(monitorLimits.sslExpiryDay, " days")).check(
      Schema.isMaxLength(monitorLimits.sslExpiryDays, { message: `at most ${monitorLimits.sslExpiryDays} thresholds` }),
      Schema.isUnique({ message: "thresholds must be distinct" })
    ),
    monitorDefaults.ssl_expiry_days
  ),
  follow_redirects: withDefault(Schema.Boolean, monitorDefaults.follow_redirects),
  tls_verify: withDefault(Schema.Boolean, monitorDefaults.tls_verify),
  paused: withDefault(Schema.Boolean, monitorDefaults.paused)
}).annotate({ identifier: "MonitorInput" })
export type MonitorInput = typeof MonitorInput.Type
export type MonitorInputEncoded = typeof MonitorInput.Encoded

/** An instant on the wire: ISO 8601 in UTC with milliseconds (as in the sources API). */
const UtcTimestamp = Schema.String.annotate({ format: "date-time" }).pipe(
  Schema.decodeTo(Schema.DateTimeUtc, SchemaTransformation.dateTimeUtcFromString)
)

/** A monitor as the API returns it: every setting with its defaults applied, the check state, never the credentials. */
export const Monitor = Schema.Struct({
  id: Schema.String.annotate({ format: "uuid" }),
  organization_id: Schema.String.annotate({ format: "uuid" }),
  name: Schema.String,
  url: Schema.String,
  check_type: CheckType,
  interval: Schema.Int.annotate({ description: "Seconds between checks." }),
  alert_threshold: Schema.Int.annotate({ description: "Consecutive failures before the monitor is down." }),
  timeout: Schema.Int.annotate({ description: "Milliseconds a whole check may take." }),
  expected_status: Schema.String.annotate({ description: "Accepted status codes, as entered (\"200-299\", \"2xx,301\")." }),
  method: HttpMethod,
  headers: Schema.Record(Schema.String, Schema.String),
  auth: Schema.Struct({ type: AuthType }).annotate({ description: "Only the kind; credentials are never returned." }),
  body: Schema.NullOr(Schema.String),
  keyword: Schema.NullOr(Schema.String),
  keyword_mode: KeywordMode,
  degraded_after_ms: Schema.NullOr(Schema.Int),
  ssl_expiry_days: Schema.Array(Schema.Int),
  follow_redirects: Schema.Boolean,
  tls_verify: Schema.Boolean,
  paused: Schema.Boolean,
  state: MonitorState,
  consecutive_failures: Schema.Int,
  last_checked_at: NullOr(UtcTimestamp),
  last_changed_at: NullOr(UtcTimestamp),
  last_error: Schema.NullOr(Schema.String),
  created_at: UtcTimestamp,
  updated_at: UtcTimestamp
}).annotate({ identifier: "Monitor" })
export type Monitor = typeof Monitor.Type
