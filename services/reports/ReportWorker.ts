import { Clock, Config, Effect, Layer, Option, Redacted, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { claimDue } from "../platform/ClaimDue.ts"
import { ReportContent, ReportFrequency } from "../domain/Report.ts"
import { reportsFeature } from "../domain/api/Reports.ts"
import { duePeriods } from "../domain/ReportPeriods.ts"
import { type Mailer, makeMailer } from "../notifier/channels/email.ts"
import { nextDelayMs, OutboxConfig } from "../notifier/Outbox.ts"
import { JsonColumn, rowsOf, TextArrayColumn } from "../platform/Rows.ts"
import { ReportContents, type ScheduleFacts } from "./ReportContent.ts"
import { reportCsv, reportHtml, reportText, reportTitle } from "./ReportFormats.ts"
import { reportPdf } from "./ReportPdf.ts"

/**
 * The report worker of a serving process: every `REPORTS_POLL_MS` it
 * (1) inserts a `reports` row for each period an enabled schedule of an
 * organization whose plan has `scheduled_reports` (Pro, Enterprise) owes (ReportPeriods.duePeriods since the schedule
 * was made: a process that was down catches up), `ON CONFLICT DO NOTHING`
 * on (schedule, period), so several processes insert each period once; and
 * (2) claims due rows (`FOR UPDATE SKIP LOCKED`, leased as the outbox's
 * deliveries are), generates the figures once (stored on the row), and
 * e-mails them through the operator's SMTP server with the HTML body, the
 * CSV and the PDF; sent, retried with the outbox's backoff, or failed.
 */

const ScheduleRow = Schema.Struct({
  id: Schema.String,
  organization_id: Schema.String,
  name: Schema.String,
  frequency: ReportFrequency,
  time_zone: Schema.String,
  stack_ids: TextArrayColumn(Schema.String),
  recipients: TextArrayColumn(Schema.String),
  sla_target: Schema.Union([Schema.Number, Schema.NumberFromString]),
  created_by: Schema.NullOr(Schema.String),
  created_ms: Schema.Number
})
const scheduleRows = rowsOf("report_schedules", ScheduleRow)

const DueRow = Schema.Struct({
  id: Schema.String,
  attempts: Schema.Number,
  from_ms: Schema.Number,
  to_ms: Schema.Number,
  content: Schema.NullOr(JsonColumn(ReportContent)),
  slug: Schema.String,
  schedule: JsonColumn(Schema.Struct({
    id: Schema.String,
    organization_id: Schema.String,
    name: Schema.String,
    frequency: ReportFrequency,
    time_zone: Schema.String,
    stack_ids: Schema.Array(Schema.String),
    recipients: Schema.Array(Schema.String),
    sla_target: Schema.Number,
    created_by: Schema.NullOr(Schema.String)
  }))
})
const dueRows = rowsOf("reports", DueRow)

const encodeContent = Schema.encodeSync(Schema.fromJsonString(ReportContent))

/** Inserts the reports the enabled schedules of paying organizations owe at `now`; how many were new. */
export const planDueReports = Effect.fn("ReportWorker.planDueReports")(function*(now: number) {
  const sql = yield* SqlClient
  const schedules = yield* sql`
    SELECT s.id, s.organization_id, s.name, s.frequency, s.time_zone, s.stack_ids, s.recipients, s.sla_target, s.created_by,
      (extract(epoch FROM s.created_at) * 1000)::float8 AS created_ms
    FROM report_schedules s JOIN organizations o ON o.id = s.organization_id JOIN plans p ON p.id = o.plan_id
    WHERE s.enabled AND ${reportsFeature} = ANY(p.features)`.pipe(Effect.flatMap(scheduleRows))
  let added = 0
  for (const s of schedules) {
    for (const period of duePeriods(s.frequency, s.time_zone, s.created_ms, now)) {
      const rows = yield* sql`
        INSERT INTO reports (schedule_id, organization_id, period_start, period_end)
        VALUES (${s.id}::uuid, ${s.organization_id}::uuid, ${new Date(period.from).toISOString()}::timestamptz, ${new Date(period.to).toISOString()}::timestamptz)
        ON CONFLICT (schedule_id, period_start) DO NOTHING
        RETURNING id`
      added += rows.length
    }
  }
  return added
}, Effect.orDie)

const attemptTimeoutMs = 30_000

/** Claims the due reports, generates and e-mails each; how many it handled. */
export const sendDueReports = Effect.fn("ReportWorker.sendDueReports")(function*(mailer: Mailer) {
  const sql = yield* SqlClient
  const contents = yield* ReportContents
  const config = yield* Effect.orDie(OutboxConfig)
  const due = yield* claimDue(sql, {
    table: "reports",
    alias: "r",
    key: "id",
    limit: 5,
    leaseMs: config.leaseMs,
    orderBy: "next_attempt_at",
    join: sql`, report_schedules s, organizations o`,
    joinOn: sql`AND s.id = r.schedule_id AND o.id = r.organization_id`,
    returning: sql`r.id, r.attempts, r.content, o.slug,
      (extract(epoch FROM r.period_start) * 1000)::float8 AS from_ms,
      (extract(epoch FROM r.period_end) * 1000)::float8 AS to_ms,
      json_build_object('id', s.id, 'organization_id', s.organization_id, 'name', s.name, 'frequency', s.frequency,
        'time_zone', s.time_zone, 'stack_ids', s.stack_ids, 'recipients', s.recipients,
        'sla_target', s.sla_target::float8, 'created_by', s.created_by) AS schedule`
  }).pipe(Effect.flatMap(dueRows))
  for (const row of due) {
    const schedule: ScheduleFacts = row.schedule
    const content = row.content ?? (yield* contents.generate(schedule, { from: row.from_ms, to: row.to_ms }).pipe(
      Effect.tap((generated) => sql`
        UPDATE reports SET content = ${encodeContent(generated)}::jsonb, generated_at = now() WHERE id = ${row.id}::uuid`),
      Effect.catchTag("HistoryUnavailable", () => Effect.succeed(null))
    ))
    const link = `${config.publicUrl.replace(/\/$/, "")}/settings/${row.slug}/reports/${row.id}`
    const result = content === null
      ? { ok: false as const, status: 0, retryable: true, error: "the results store did not answer" }
      : yield* Effect.promise(async () => {
        const pdf = await reportPdf(content)
        const file = `statusgrid-report-${content.from.slice(0, 10)}`
        return mailer({
          to: row.schedule.recipients,
          subject: reportTitle(content),
          text: reportText(content, link),
          html: reportHtml(content, link),
          attachments: [
            { filename: `${file}.csv`, contentType: "text/csv; charset=utf-8", content: reportCsv(content) },
            { filename: `${file}.pdf`, contentType: "application/pdf", content: pdf }
          ],
          idempotencyKey: `report-${row.id}`,
          timeoutMs: attemptTimeoutMs
        })
      })
    const retry = !result.ok && result.retryable && row.attempts < config.maxAttempts
    const delay = retry ? Math.round(nextDelayMs(row.attempts, result, config.backoffBaseMs, config.backoffMaxMs)) : 0
    const status = result.ok ? "sent" : retry ? "pending" : "failed"
    yield* sql`
      UPDATE reports SET status = ${status}, last_error = ${result.ok ? null : result.error},
        sent_at = CASE WHEN ${status} = 'sent' THEN now() END,
        next_attempt_at = now() + ${`${delay} milliseconds`}::interval
      WHERE id = ${row.id}::uuid`
  }
  return due.length
}, Effect.orDie)

/** One round: plan, then send what is due. */
export const reportRound = (mailer: Mailer) =>
  Clock.currentTimeMillis.pipe(Effect.flatMap(planDueReports), Effect.andThen(sendDueReports(mailer)))

/** The worker of a serving process (needs SqlClient and ClickHouse), over SMTP_URL and SMTP_FROM. */
export const layer = Layer.effectDiscard(Effect.gen(function*() {
  const smtpUrl = yield* Config.option(Config.Redacted("SMTP_URL"))
  const smtpFrom = yield* Config.option(Config.String("SMTP_FROM"))
  const pollMs = yield* Config.Int("REPORTS_POLL_MS").pipe(Config.withDefault(60_000))
  const mailer = makeMailer({
    ...(Option.isSome(smtpUrl) ? { smtpUrl: Redacted.value(smtpUrl.value) } : {}),
    ...(Option.isSome(smtpFrom) ? { smtpFrom: smtpFrom.value } : {})
  })
  const round = reportRound(mailer).pipe(
    Effect.andThen(Effect.sleep(pollMs)),
    Effect.catchCause((cause) => Effect.logWarning("report round failed; retrying", cause).pipe(Effect.andThen(Effect.sleep("5 seconds"))))
  )
  yield* round.pipe(Effect.forever, Effect.forkScoped)
}).pipe(Effect.orDie)).pipe(Layer.provide(ReportContents.layer))
