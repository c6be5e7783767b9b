import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { ReportContent, ReportFrequency } from "../Report.ts"
import { isTimeZone } from "../ReportPeriods.ts"
import { noNul } from "../Text.ts"
import { OrgAuth } from "./Auth.ts"
import { Forbidden, NotFound, PlanLimitReached } from "./Errors.ts"
import { Email } from "./Members.ts"
import { Page, PageQuery } from "./Paging.ts"
import { NullOr } from "../NullOr.ts"

const Uuid = Schema.String.annotate({ format: "uuid" })
const Timestamp = Schema.String.annotate({ format: "date-time" })
const UuidInput = Schema.String.check(Schema.isUUID(undefined, { message: "must be a UUID" }))

/** The plan feature (plans.features) scheduled reports need: Pro and Enterprise. */
export const reportsFeature = "scheduled_reports"

export const reportLimits = { name: 200, recipients: 50, stacks: 100 } as const

const Name = Schema.Trim.check(
  Schema.isBetweenLength(1, reportLimits.name, { message: `must be 1 to ${reportLimits.name} characters` }),
  noNul
)
const TimeZone = Schema.String.check(Schema.makeFilter((zone: string) => isTimeZone(zone) ? undefined : "must be an IANA time zone, such as Europe/Paris or UTC"))
const Recipients = Schema.Array(Email).check(
  Schema.isBetweenLength(1, reportLimits.recipients, { message: `must list 1 to ${reportLimits.recipients} e-mail addresses` })
)
const StackIds = Schema.Array(UuidInput).check(
  Schema.isBetweenLength(0, reportLimits.stacks, { message: `must list at most ${reportLimits.stacks} stacks` })
)
const SlaTarget = Schema.Number.check(Schema.makeFilter((n: number) => n > 0 && n <= 100 ? undefined : "must be a percentage above 0 and at most 100"))

/** A report schedule: what is sent, to whom, how often. */
export const ReportSchedule = Schema.Struct({
  id: Uuid,
  name: Schema.String,
  frequency: ReportFrequency,
  time_zone: Schema.String.annotate({ description: "Periods start at local midnight: Monday for weekly, the 1st for monthly." }),
  recipients: Schema.Array(Schema.String),
  stack_ids: Schema.Array(Uuid).annotate({ description: "The stacks covered; empty: every stack of the organization." }),
  sla_target: Schema.Number.annotate({ description: "Uptime target, percent: each stack is shown as meeting or missing it." }),
  enabled: Schema.Boolean,
  created_at: Timestamp,
  updated_at: Timestamp
}).annotate({ identifier: "ReportSchedule" })
export type ReportSchedule = typeof ReportSchedule.Type

export const ReportScheduleCreate = Schema.Struct({
  name: Name,
  frequency: ReportFrequency,
  time_zone: Schema.optionalKey(TimeZone.annotate({ description: "Default UTC." })),
  recipients: Recipients,
  stack_ids: Schema.optionalKey(StackIds),
  sla_target: Schema.optionalKey(SlaTarget.annotate({ description: "Default 99.9." })),
  enabled: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "ReportScheduleCreate" })
export type ReportScheduleCreate = typeof ReportScheduleCreate.Type

export const ReportScheduleUpdate = Schema.Struct({
  name: Schema.optionalKey(Name),
  frequency: Schema.optionalKey(ReportFrequency),
  time_zone: Schema.optionalKey(TimeZone),
  recipients: Schema.optionalKey(Recipients),
  stack_ids: Schema.optionalKey(StackIds),
  sla_target: Schema.optionalKey(SlaTarget),
  enabled: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "ReportScheduleUpdate" })
export type ReportScheduleUpdate = typeof ReportScheduleUpdate.Type

export const ReportStatus = Schema.Literals(["pending", "sending", "sent", "failed"])

/** A report of one period, without its figures. */
export const ReportSummary = Schema.Struct({
  id: Uuid,
  schedule_id: Uuid,
  schedule_name: Schema.String,
  from: Timestamp,
  to: Timestamp,
  status: ReportStatus.annotate({ description: "pending: due, not sent yet; sending: being sent; sent; failed: given up (last_error)." }),
  generated: Schema.Boolean,
  sent_at: NullOr(Timestamp),
  last_error: Schema.NullOr(Schema.String)
}).annotate({ identifier: "ReportSummary" })
export type ReportSummary = typeof ReportSummary.Type

/** A report with its figures (null until generated). */
export const Report = Schema.Struct({
  ...ReportSummary.fields,
  content: Schema.NullOr(ReportContent)
}).annotate({ identifier: "Report" })
export type Report = typeof Report.Type

const IdParams = { id: UuidInput }

/** Scheduled reports (Pro and Enterprise): weekly or monthly uptime reports by e-mail, and each report's figures. */
export class ReportsGroup extends HttpApiGroup.make("reports")
  .add(
    HttpApiEndpoint.get("listSchedules", "/report-schedules", { query: PageQuery, success: Page(ReportSchedule, "ReportScheduleList"), error: Forbidden })
      .annotateMerge(OpenApi.annotations({ summary: "List the organization's report schedules, oldest first" })),
    HttpApiEndpoint.post("createSchedule", "/report-schedules", {
      payload: ReportScheduleCreate,
      success: ReportSchedule.pipe(HttpApiSchema.status(201)),
      error: [Forbidden, NotFound, PlanLimitReached]
    }).annotateMerge(OpenApi.annotations({
      summary: "Schedule a report (Admin, Member; Pro and Enterprise)",
      description: "Each period (Monday to Monday, or the 1st to the 1st, at local midnight) is reported once when it ends: an " +
        "e-mail with an HTML body and CSV and PDF attachments. Periods missed while the service was down are sent when it is back."
    })),
    HttpApiEndpoint.patch("updateSchedule", "/report-schedules/:id", {
      params: IdParams,
      payload: ReportScheduleUpdate,
      success: ReportSchedule,
      error: [Forbidden, NotFound]
    }).annotateMerge(OpenApi.annotations({ summary: "Change a report schedule (Admin, Member)" })),
    HttpApiEndpoint.delete("deleteSchedule", "/report-schedules/:id", { params: IdParams, success: HttpApiSchema.NoContent, error: [Forbidden, NotFound] })
      .annotateMerge(OpenApi.annotations({ summary: "Delete a report schedule and its reports (Admin, Member)" })),
    HttpApiEndpoint.get("listReports", "/reports", { query: PageQuery, success: Page(ReportSummary, "ReportList"), error: Forbidden })
      .annotateMerge(OpenApi.annotations({ summary: "The organization's reports, oldest first (one per schedule and period)" })),
    HttpApiEndpoint.get("getReport", "/reports/:id", { params: IdParams, success: Report, error: [Forbidden, NotFound] })
      .annotateMerge(OpenApi.annotations({ summary: "A report with its figures (JSON); as CSV: /reports/{id}/csv, as PDF: /reports/{id}/pdf" })),
    HttpApiEndpoint.get("getReportCsv", "/reports/:id/csv", {
      params: IdParams,
      success: Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/csv; charset=utf-8" })),
      error: [Forbidden, NotFound]
    }).annotateMerge(OpenApi.annotations({ summary: "A report's figures as CSV (one row per stack and per item); 404 until generated" })),
    HttpApiEndpoint.get("getReportPdf", "/reports/:id/pdf", {
      params: IdParams,
      success: Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "application/pdf" })),
      error: [Forbidden, NotFound]
    }).annotateMerge(OpenApi.annotations({ summary: "A report as the PDF its e-mail carried; 404 until generated" }))
  )
  .middleware(OrgAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Reports",
    description: "Scheduled uptime reports (Pro and Enterprise): per stack uptime against the organization's target, outages, incidents, slowest monitors."
  }))
{}
