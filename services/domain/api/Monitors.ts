import { Schema, SchemaTransformation } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { AnalyticsQuery, MonitorAnalytics } from "../Analytics.ts"
import { HistoryQuery, MonitorHistory } from "../History.ts"
import { Monitor, MonitorAuth, MonitorInput } from "../Monitor.ts"
import { OrgAuth } from "./Auth.ts"
import { Conflict, Forbidden, InvalidParameter, NotFound, PlanLimitReached } from "./Errors.ts"
import { Page, PageQuery } from "./Paging.ts"
import { NullOr } from "../NullOr.ts"

const UtcTimestamp = Schema.String.annotate({ format: "date-time" }).pipe(
  Schema.decodeTo(Schema.DateTimeUtc, SchemaTransformation.dateTimeUtcFromString)
)

/** A monitor as `/monitors` returns it: its settings, its state and the figures of its last check. */
export const MonitorRecord = Schema.Struct({
  ...Monitor.fields,
  last_response_ms: Schema.NullOr(Schema.Int).annotate({ description: "Total time of the last check, ms; null before the first." }),
  last_http_status: Schema.NullOr(Schema.Int).annotate({ description: "HTTP status of the last check; null before the first (0: no response)." }),
  tls_valid_to: NullOr(UtcTimestamp).annotate({ description: "Expiry of the certificate last seen (https)." }),
  tls_issuer: Schema.NullOr(Schema.String).annotate({ description: "Issuer of the certificate last seen (https)." })
}).annotate({ identifier: "Monitor" })
export type MonitorRecord = typeof MonitorRecord.Type

/** A recommended range (monitors/Validate.ts) the settings do not follow: the monitor is saved anyway. */
export const MonitorWarning = Schema.Struct({
  field: Schema.String,
  message: Schema.String
}).annotate({ identifier: "MonitorWarning" })
export type MonitorWarning = typeof MonitorWarning.Type

/** The answer of a create or update: the saved monitor and the recommendations it does not follow. */
export const MonitorSaved = Schema.Struct({
  ...MonitorRecord.fields,
  warnings: Schema.Array(MonitorWarning)
}).annotate({ identifier: "MonitorSaved" })
export type MonitorSaved = typeof MonitorSaved.Type

/** The phases of one check, in milliseconds (summed over redirects; 0 on a kept-alive connection). */
export const CheckPhases = Schema.Struct({
  dns_ms: Schema.Number,
  connect_ms: Schema.Number,
  tls_ms: Schema.Number,
  first_byte_ms: Schema.Number,
  total_ms: Schema.Number
}).annotate({ identifier: "CheckPhases" })

/** The certificate of an https check. */
export const CheckCertificate = Schema.Struct({
  valid_to: Schema.String.annotate({ format: "date-time" }),
  days_left: Schema.Int,
  issuer: Schema.String,
  subject: Schema.String,
  authorized: Schema.Boolean,
  authorization_error: Schema.String
}).annotate({ identifier: "CheckCertificate" })

/**
 * `POST /monitors/{id}/check`: one check run at once with the monitor's
 * settings (credentials included), its outcome shown to the caller. A trial:
 * the monitor's state, alerts and check log are the scheduled checks' alone.
 */
export const MonitorCheckResult = Schema.Struct({
  status: Schema.Literals(["up", "degraded", "down"]),
  http_status: Schema.Int.annotate({ description: "0 when there was no response." }),
  error_code: Schema.String,
  error: Schema.String,
  phases: CheckPhases,
  reused: Schema.Boolean,
  redirects: Schema.Int,
  final_url: Schema.String,
  bytes: Schema.Int,
  truncated: Schema.Boolean,
  tls: Schema.NullOr(CheckCertificate),
  checked_at: Schema.String.annotate({ format: "date-time" })
}).annotate({ identifier: "MonitorCheckResult" })
export type MonitorCheckResult = typeof MonitorCheckResult.Type

/** One scheduled check of a monitor as the check log (ClickHouse `check_results`) holds it. */
export const MonitorCheckLogEntry = Schema.Struct({
  checked_at: Schema.String.annotate({ format: "date-time" }),
  status: Schema.String,
  latency_ms: Schema.Number,
  http_status: Schema.Number,
  error: Schema.String,
  dns_ms: Schema.Number,
  connect_ms: Schema.Number,
  tls_ms: Schema.Number,
  first_byte_ms: Schema.Number,
  tls_days_left: Schema.NullOr(Schema.Number)
}).annotate({ identifier: "MonitorCheckLogEntry" })
export type MonitorCheckLogEntry = typeof MonitorCheckLogEntry.Type

/** `GET /monitors/{id}/checks`: the latest checks (or those before `before`), newest first. */
export const MonitorCheckLog = Schema.Struct({
  id: Schema.String,
  checks: Schema.Array(MonitorCheckLogEntry),
  next_before: Schema.NullOr(Schema.String.annotate({ format: "date-time" })).annotate({
    description: "Pass as `before` for the next (older) page; null on the last page."
  })
}).annotate({ identifier: "MonitorCheckLog" })
export type MonitorCheckLog = typeof MonitorCheckLog.Type

/** Most checks one read of the log returns. */
export const maxCheckLog = 500

export const CheckLogQuery = {
  before: Schema.optional(Schema.String.annotate({ format: "date-time", description: "Only checks before this instant (ISO 8601): a previous page's `next_before`." }).pipe(
    Schema.decodeTo(Schema.DateTimeUtc, SchemaTransformation.dateTimeUtcFromString)
  )),
  limit: Schema.optional(Schema.String.pipe(
    Schema.check(Schema.isPattern(/^[0-9]{1,9}$/u)),
    Schema.annotate({ description: `Checks to return, 1 to ${maxCheckLog}; 50 when absent.` }),
    Schema.decodeTo(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: maxCheckLog })), SchemaTransformation.numberFromString)
  ))
}

const input = MonitorInput.fields

/** A create field's own schema, without the default MonitorInput gives it (a patch leaves absent fields as they are). */
const plain = <S extends Schema.Top>(field: { readonly from: { readonly schema: { readonly members: readonly [S, Schema.Undefined] } } }): S =>
  field.from.schema.members[0]

/**
 * `PATCH /monitors/{id}`: any subset of the settings, without defaults (an
 * absent field keeps its value). `null` removes an optional setting (`auth`,
 * `body`, `keyword`, `degraded_after_ms`). The merged settings are validated
 * as a whole, as on create. Pausing has its own endpoints.
 */
export const MonitorPatch = Schema.Struct({
  name: Schema.optionalKey(input.name),
  url: Schema.optionalKey(input.url),
  check_type: input.check_type,
  interval: input.interval,
  check_interval: input.check_interval,
  alert_threshold: Schema.optionalKey(plain(input.alert_threshold)),
  timeout: Schema.optionalKey(plain(input.timeout)),
  expected_status: Schema.optionalKey(plain(input.expected_status)),
  method: Schema.optionalKey(plain(input.method)),
  headers: Schema.optionalKey(plain(input.headers)),
  auth: Schema.optionalKey(Schema.NullOr(MonitorAuth)).annotate({ description: "Replaces the credentials; null removes them." }),
  body: Schema.optionalKey(Schema.NullOr(input.body.schema)),
  keyword: Schema.optionalKey(Schema.NullOr(input.keyword.schema)),
  keyword_mode: Schema.optionalKey(plain(input.keyword_mode)),
  degraded_after_ms: Schema.optionalKey(Schema.NullOr(input.degraded_after_ms.schema)),
  ssl_expiry_days: Schema.optionalKey(plain(input.ssl_expiry_days)),
  follow_redirects: Schema.optionalKey(plain(input.follow_redirects)),
  tls_verify: Schema.optionalKey(plain(input.tls_verify))
}).annotate({ identifier: "MonitorPatch" })
export type MonitorPatch = typeof MonitorPatch.Type

const IdParams = { id: Schema.String.check(Schema.isUUID(undefined, { message: "must be a UUID" })) }

/** Website monitors: an organization's own HTTP(S) endpoints. */
export class MonitorsGroup extends HttpApiGroup.make("monitors")
  .add(
    HttpApiEndpoint.get("list", "/monitors", { query: PageQuery, success: Page(MonitorRecord, "MonitorList"), error: Forbidden })
      .annotateMerge(OpenApi.annotations({ summary: "List the organization's monitors, oldest first" })),
    HttpApiEndpoint.post("create", "/monitors", {
      payload: MonitorInput,
      success: MonitorSaved.pipe(HttpApiSchema.status(201)),
      error: [Forbidden, PlanLimitReached]
    }).annotateMerge(OpenApi.annotations({
      summary: "Create a monitor (Admin, Member)",
      description: "Invalid settings answer 400 naming the first field at fault, every problem in the message. " +
        "Settings outside the spec's recommendations are accepted and listed in `warnings`. " +
        "The URL must resolve to public addresses unless the operator allows private ones (MONITOR_ALLOW_PRIVATE)."
    })),
    HttpApiEndpoint.get("get", "/monitors/:id", { params: IdParams, success: MonitorRecord, error: [Forbidden, NotFound] })
      .annotateMerge(OpenApi.annotations({ summary: "Get one monitor with its state and last check" })),
    HttpApiEndpoint.patch("update", "/monitors/:id", {
      params: IdParams,
      payload: MonitorPatch,
      success: MonitorSaved,
      error: [Forbidden, NotFound, Conflict]
    }).annotateMerge(OpenApi.annotations({
      summary: "Change a monitor's settings (Admin, Member)",
      description: "Absent fields keep their values; the merged settings are validated as on create. " +
        "A changed URL is checked for private addresses again."
    })),
    HttpApiEndpoint.post("pause", "/monitors/:id/pause", { params: IdParams, success: MonitorRecord, error: [Forbidden, NotFound] })
      .annotateMerge(OpenApi.annotations({ summary: "Stop checking a monitor (Admin, Member)" })),
    HttpApiEndpoint.post("resume", "/monitors/:id/resume", { params: IdParams, success: MonitorRecord, error: [Forbidden, NotFound] })
      .annotateMerge(OpenApi.annotations({ summary: "Check a paused monitor again, from the pending state (Admin, Member)" })),
    HttpApiEndpoint.post("check", "/monitors/:id/check", {
      params: IdParams,
      success: MonitorCheckResult,
      error: [Forbidden, NotFound]
    }).annotateMerge(OpenApi.annotations({
      summary: "Run one check now and return its outcome (Admin, Member)",
      description: "The monitor's settings and credentials, its phases (DNS, connect, TLS, first byte) and certificate. " +
        "A trial: the state, alerts and check log stay the scheduled checks'."
    })),
    HttpApiEndpoint.get("checks", "/monitors/:id/checks", {
      params: IdParams,
      query: CheckLogQuery,
      success: MonitorCheckLog,
      error: [Forbidden, NotFound]
    }).annotateMerge(OpenApi.annotations({
      summary: "The scheduled checks of a monitor, newest first, paged (limit 1-500, default 50; `before` from `next_before`)"
    })),
    HttpApiEndpoint.get("history", "/monitors/:id/history", {
      params: IdParams,
      query: HistoryQuery,
      success: MonitorHistory,
      error: [Forbidden, NotFound]
    }).annotateMerge(OpenApi.annotations({
      summary: "Status history and uptime of a monitor",
      description: "`window=24h` (default, hourly cells) or `90d` (daily cells), with the uptime over the window and " +
        "over the last 30 UTC days: checks not down / checks (degraded counts as up)."
    })),
    HttpApiEndpoint.get("analytics", "/monitors/:id/analytics", {
      params: IdParams,
      query: AnalyticsQuery,
      success: MonitorAnalytics,
      error: [Forbidden, NotFound, InvalidParameter]
    }).annotateMerge(OpenApi.annotations({
      summary: "Analytics of a monitor over a range",
      description: "From status durations, as `GET /sources/{key}/analytics`: time at each level, uptime (paused, pending " +
        "and hours without checks left out as unknown), outages, mean time to resolution, outage starts by hour of the week."
    })),
    HttpApiEndpoint.delete("delete", "/monitors/:id", { params: IdParams, success: HttpApiSchema.NoContent, error: [Forbidden, NotFound] })
      .annotateMerge(OpenApi.annotations({ summary: "Delete a monitor (Admin); it leaves the stacks that showed it" }))
  )
  .middleware(OrgAuth)
  .annotateMerge(OpenApi.annotations({ title: "Monitors", description: "Website monitors: an organization's own HTTP(S) endpoints." }))
{}
