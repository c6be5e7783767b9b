import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { type Forbidden, type InvalidParameter, NotFound, PlanLimitReached } from "../domain/api/Errors.ts"
import type { Page } from "../domain/api/Paging.ts"
import {
  type Report,
  type ReportSchedule,
  type ReportScheduleCreate,
  type ReportScheduleUpdate,
  reportsFeature,
  ReportStatus,
  type ReportSummary
} from "../domain/api/Reports.ts"
import type { Principal } from "../domain/Principal.ts"
import { ReportContent, ReportFrequency } from "../domain/Report.ts"
import { requirePermission } from "../orgs/Access.ts"
import { recordAudit } from "../orgs/Audit.ts"
import { cursorAt, listPage, type PageRequest } from "../orgs/Paging.ts"
import { JsonColumn, rowsOf, TextArrayColumn } from "../platform/Rows.ts"
import { reportCsv } from "./ReportFormats.ts"
import { reportPdf } from "./ReportPdf.ts"
import { NullOr } from "../domain/NullOr.ts"

const ScheduleRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  frequency: ReportFrequency,
  time_zone: Schema.String,
  recipients: TextArrayColumn(Schema.String),
  stack_ids: TextArrayColumn(Schema.String),
  sla_target: Schema.Union([Schema.Number, Schema.NumberFromString]),
  enabled: Schema.Boolean,
  created_at: Schema.Date,
  updated_at: Schema.Date,
  cursor_at: Schema.String
})
type ScheduleRow = typeof ScheduleRow.Type
const scheduleRows = rowsOf("report_schedules", ScheduleRow)

const ReportRow = Schema.Struct({
  id: Schema.String,
  schedule_id: Schema.String,
  schedule_name: Schema.String,
  period_start: Schema.Date,
  period_end: Schema.Date,
  status: ReportStatus,
  generated: Schema.Boolean,
  sent_at: NullOr(Schema.Date),
  last_error: Schema.NullOr(Schema.String),
  cursor_at: Schema.String
})
type ReportRow = typeof ReportRow.Type
const reportRows = rowsOf("reports", ReportRow)
const contentRows = rowsOf("reports", Schema.Struct({ content: Schema.NullOr(JsonColumn(ReportContent)) }))
const planRows = rowsOf("plans", Schema.Struct({ name: Schema.String, features: TextArrayColumn(Schema.String) }))
const idRows = rowsOf("stacks", Schema.Struct({ id: Schema.String }))

const iso = (d: Date) => new Date(d).toISOString()

const toSchedule = (r: ScheduleRow): ReportSchedule => ({
  id: r.id,
  name: r.name,
  frequency: r.frequency,
  time_zone: r.time_zone,
  recipients: [...r.recipients],
  stack_ids: [...r.stack_ids],
  sla_target: r.sla_target,
  enabled: r.enabled,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at)
})

const toSummary = (r: ReportRow): ReportSummary => ({
  id: r.id,
  schedule_id: r.schedule_id,
  schedule_name: r.schedule_name,
  from: iso(r.period_start),
  to: iso(r.period_end),
  status: r.status,
  generated: r.generated,
  sent_at: r.sent_at === null ? null : iso(r.sent_at),
  last_error: r.last_error
})

/**
 * An organization's report schedules and its reports (the API's `reports`
 * group and the portal's reports page): schedules are managed with
 * "Manage notifications" (they e-mail people) and need the plan's
 * `scheduled_reports` feature; every role views reports. The worker
 * (ReportWorker.ts) generates and sends them; a report's CSV and PDF are
 * rendered from its stored figures, so a download says what the e-mail said.
 */
export class ReportSchedules extends Context.Service<ReportSchedules, {
  listSchedules(principal: Principal, page: PageRequest): Effect.Effect<Page<ReportSchedule>, Forbidden | InvalidParameter>
  createSchedule(principal: Principal, input: ReportScheduleCreate): Effect.Effect<ReportSchedule, Forbidden | NotFound | PlanLimitReached>
  updateSchedule(principal: Principal, id: string, input: ReportScheduleUpdate): Effect.Effect<ReportSchedule, Forbidden | NotFound>
  deleteSchedule(principal: Principal, id: string): Effect.Effect<void, Forbidden | NotFound>
  listReports(principal: Principal, page: PageRequest): Effect.Effect<Page<ReportSummary>, Forbidden | InvalidParameter>
  getReport(principal: Principal, id: string): Effect.Effect<Report, Forbidden | NotFound>
  csv(principal: Principal, id: string): Effect.Effect<string, Forbidden | NotFound>
  pdf(principal: Principal, id: string): Effect.Effect<Uint8Array, Forbidden | NotFound>
}>()("statusgrid/reports/ReportSchedules") {
  static readonly layer = Layer.effect(ReportSchedules, Effect.gen(function*() {
    const sql = yield* SqlClient

    const scheduleColumns = `t.id, t.name, t.frequency, t.time_zone, t.recipients, t.stack_ids::text[] AS stack_ids,
      t.sla_target::float8 AS sla_target, t.enabled, t.created_at, t.updated_at, ${cursorAt}`

    const findSchedule = (principal: Principal, id: string) =>
      sql`SELECT ${sql.literal(scheduleColumns)} FROM report_schedules t
          WHERE t.id = ${id}::uuid AND t.organization_id = ${principal.organization_id}::uuid`.pipe(
        Effect.orDie,
        Effect.flatMap(scheduleRows),
        Effect.flatMap((rows) => rows[0] === undefined ? Effect.fail(new NotFound({ field: "id", message: `no report schedule ${id}` })) : Effect.succeed(rows[0]))
      )

    /** The stacks named must be the organization's. */
    const checkStacks = Effect.fnUntraced(function*(principal: Principal, ids: ReadonlyArray<string>) {
      if (ids.length === 0) return
      const found = yield* sql`SELECT id FROM stacks WHERE organization_id = ${principal.organization_id}::uuid AND id = ANY(${ids}::uuid[])`
        .pipe(Effect.orDie, Effect.flatMap(idRows))
      const missing = ids.find((id) => !found.some((f) => f.id === id))
      if (missing !== undefined) return yield* new NotFound({ field: "stack_ids", message: `no stack ${missing} in this organization` })
    })

    const listSchedules = Effect.fn("ReportSchedules.listSchedules")(function*(principal: Principal, page: PageRequest) {
      yield* requirePermission(principal, "view")
      return yield* listPage({
        page,
        select: (where, limit) =>
          sql`SELECT ${sql.literal(scheduleColumns)} FROM report_schedules t
              WHERE t.organization_id = ${principal.organization_id}::uuid AND ${where}
              ORDER BY t.created_at, t.id LIMIT ${limit}`.pipe(Effect.flatMap(scheduleRows)),
        map: toSchedule
      })
    })

    const createSchedule = Effect.fn("ReportSchedules.createSchedule")(function*(principal: Principal, input: ReportScheduleCreate) {
      yield* requirePermission(principal, "notifications.manage")
      const [plan] = yield* sql`SELECT p.name, p.features FROM organizations o JOIN plans p ON p.id = o.plan_id WHERE o.id = ${principal.organization_id}::uuid`
        .pipe(Effect.orDie, Effect.flatMap(planRows))
      if (!plan?.features.includes(reportsFeature)) {
        return yield* new PlanLimitReached({
          field: reportsFeature,
          message: `scheduled reports are a Pro and Enterprise feature (${reportsFeature}); the ${plan?.name ?? "current"} plan does not include it`
        })
      }
      const stackIds = input.stack_ids ?? []
      yield* checkStacks(principal, stackIds)
      return yield* sql.withTransaction(Effect.gen(function*() {
        const [row] = yield* sql`
          INSERT INTO report_schedules (organization_id, name, frequency, time_zone, recipients, stack_ids, sla_target, enabled, created_by)
          VALUES (${principal.organization_id}::uuid, ${input.name}, ${input.frequency}, ${input.time_zone ?? "UTC"}, ${input.recipients},
            ${stackIds}::uuid[], ${input.sla_target ?? 99.9}, ${input.enabled ?? true},
            ${principal.actor.kind === "user" ? principal.actor.id : null}::uuid)
          RETURNING ${sql.literal(scheduleColumns.replaceAll("t.", ""))}`.pipe(Effect.flatMap(scheduleRows))
        const schedule = toSchedule(row!)
        yield* recordAudit(principal, { action: "report_schedule.created", entity_type: "report_schedule", entity_id: schedule.id, after: schedule })
        return schedule
      })).pipe(Effect.orDie)
    })

    const updateSchedule = Effect.fn("ReportSchedules.updateSchedule")(function*(principal: Principal, id: string, input: ReportScheduleUpdate) {
      yield* requirePermission(principal, "notifications.manage")
      const before = toSchedule(yield* findSchedule(principal, id))
      if (input.stack_ids !== undefined) yield* checkStacks(principal, input.stack_ids)
      return yield* sql.withTransaction(Effect.gen(function*() {
        const [row] = yield* sql`
          UPDATE report_schedules t SET
            name = ${input.name ?? before.name}, frequency = ${input.frequency ?? before.frequency},
            time_zone = ${input.time_zone ?? before.time_zone}, recipients = ${input.recipients ?? before.recipients},
            stack_ids = ${input.stack_ids ?? before.stack_ids}::uuid[], sla_target = ${input.sla_target ?? before.sla_target},
            enabled = ${input.enabled ?? before.enabled}, updated_at = now()
          WHERE t.id = ${id}::uuid AND t.organization_id = ${principal.organization_id}::uuid
          RETURNING ${sql.literal(scheduleColumns)}`.pipe(Effect.flatMap(scheduleRows))
        const after = toSchedule(row!)
        yield* recordAudit(principal, { action: "report_schedule.updated", entity_type: "report_schedule", entity_id: id, before, after })
        return after
      })).pipe(Effect.orDie)
    })

    const deleteSchedule = Effect.fn("ReportSchedules.deleteSchedule")(function*(principal: Principal, id: string) {
      yield* requirePermission(principal, "notifications.manage")
      const before = toSchedule(yield* findSchedule(principal, id))
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`DELETE FROM report_schedules WHERE id = ${id}::uuid AND organization_id = ${principal.organization_id}::uuid`
        yield* recordAudit(principal, { action: "report_schedule.deleted", entity_type: "report_schedule", entity_id: id, before })
      })).pipe(Effect.orDie)
    })

    const reportColumns = `t.id, t.schedule_id, s.name AS schedule_name, t.period_start, t.period_end, t.status,
      t.content IS NOT NULL AS generated, t.sent_at, t.last_error, ${cursorAt}`

    const listReports = Effect.fn("ReportSchedules.listReports")(function*(principal: Principal, page: PageRequest) {
      yield* requirePermission(principal, "view")
      return yield* listPage({
        page,
        select: (where, limit) =>
          sql`SELECT ${sql.literal(reportColumns)} FROM reports t JOIN report_schedules s ON s.id = t.schedule_id
              WHERE t.organization_id = ${principal.organization_id}::uuid AND ${where}
              ORDER BY t.created_at, t.id LIMIT ${limit}`.pipe(Effect.flatMap(reportRows)),
        map: toSummary
      })
    })

    const contentOf = Effect.fnUntraced(function*(principal: Principal, id: string) {
      yield* requirePermission(principal, "view")
      const [row] = yield* sql`SELECT content FROM reports WHERE id = ${id}::uuid AND organization_id = ${principal.organization_id}::uuid`
        .pipe(Effect.orDie, Effect.flatMap(contentRows))
      if (row === undefined) return yield* new NotFound({ field: "id", message: `no report ${id}` })
      return row.content
    })

    const getReport = Effect.fn("ReportSchedules.getReport")(function*(principal: Principal, id: string) {
      const content = yield* contentOf(principal, id)
      const [row] = yield* sql`SELECT ${sql.literal(reportColumns)} FROM reports t JOIN report_schedules s ON s.id = t.schedule_id
        WHERE t.id = ${id}::uuid`.pipe(Effect.orDie, Effect.flatMap(reportRows))
      return { ...toSummary(row!), content } satisfies Report
    })

    const generated = (principal: Principal, id: string) =>
      contentOf(principal, id).pipe(Effect.flatMap((content) =>
        content === null ? Effect.fail(new NotFound({ field: "id", message: `report ${id} is not generated yet` })) : Effect.succeed(content)
      ))

    const withSql = <A, E>(effect: Effect.Effect<A, E, SqlClient>) => Effect.provideService(effect, SqlClient, sql)
    return ReportSchedules.of({
      listSchedules: (principal, page) => withSql(listSchedules(principal, page)),
      createSchedule: (principal, input) => withSql(createSchedule(principal, input)),
      updateSchedule: (principal, id, input) => withSql(updateSchedule(principal, id, input)),
      deleteSchedule: (principal, id) => withSql(deleteSchedule(principal, id)),
      listReports: (principal, page) => withSql(listReports(principal, page)),
      getReport,
      csv: (principal, id) => generated(principal, id).pipe(Effect.map(reportCsv)),
      pdf: (principal, id) => generated(principal, id).pipe(Effect.flatMap((content) => Effect.promise(() => reportPdf(content))))
    })
  }))
}
