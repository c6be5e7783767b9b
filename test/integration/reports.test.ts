import { assert, describe, layer } from "@effect/vitest"
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { simpleParser } from "mailparser"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { getDocument } from "pdfjs-dist/legacy/build/pdf.mjs"
import { duePeriods } from "../../services/domain/ReportPeriods.ts"
import { makeMailer } from "../../services/notifier/channels/email.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import { ReportContents } from "../../services/reports/ReportContent.ts"
import { reportRound } from "../../services/reports/ReportWorker.ts"
import { ApiBase, apiServer, call, newTenant } from "../support/api.ts"
import { checksEvery15, historyWriters, statusChange } from "../support/history.ts"
import { startSmtpReceiver } from "../support/receivers.ts"
import { tempDir } from "../support/stores.ts"

/**
 * Scheduled reports end to end over PostgreSQL, embedded chDB and a real
 * SMTP server (smtp-server): a Pro organization's weekly schedule, a stack
 * with a known outage in last week, two report workers running at once. The
 * report arrives once, with an HTML body, a CSV and a PDF whose text
 * (extracted with Mozilla's PDF.js, not the library that wrote it) has the
 * uptime the API gives for the same stack and week.
 */

const minute = 60_000
const hour = 60 * minute
const day = 24 * hour

class Writers extends Context.Service<Writers, Effect.Success<ReturnType<typeof historyWriters>>>()("test/reports/Writers") {
  static readonly layer = Layer.effect(Writers, Effect.flatMap(tempDir("reports-spill"), historyWriters))
}

const TestLayer = Layer.mergeAll(Writers.layer, ReportContents.layer).pipe(
  Layer.provideMerge(Layer.effectDiscard(Migrations.migrateClickHouse())),
  Layer.provideMerge(apiServer({ API_CACHE_MS: "0", NOTIFIER_LEASE_MS: "60000" }))
)

/** PDF.js's copies of the standard fonts (the PDF names Helvetica without embedding it). */
const standardFontDataUrl = `${Path.join(Path.dirname(createRequire(import.meta.url).resolve("pdfjs-dist/package.json")), "standard_fonts")}/`

/** The text of every page of a PDF, as PDF.js reads it. */
const pdfText = async (bytes: Uint8Array): Promise<string> => {
  const task = getDocument({ data: bytes, useSystemFonts: false, disableFontFace: true, standardFontDataUrl })
  const doc = await task.promise
  const pages: Array<string> = []
  for (let n = 1; n <= doc.numPages; n++) {
    const content = await (await doc.getPage(n)).getTextContent()
    pages.push(content.items.map((i) => ("str" in i ? i.str : "")).join(" "))
  }
  await task.destroy()
  return pages.join("\n")
}

describe("scheduled reports", () => {
  layer(TestLayer, { timeout: 180_000, excludeTestServices: true })("weekly report", (it) => {
    it.effect("a weekly report arrives once with two workers: HTML, CSV and a PDF with the API's uptime; a missed week is sent when the worker comes back", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const smtp = yield* Effect.promise(() => startSmtpReceiver())
        yield* Effect.addFinalizer(() => Effect.promise(() => smtp.close()))
        const tenant = yield* newTenant("pro")
        const now = yield* Clock.currentTimeMillis
        // The last whole week (Monday to Monday, UTC) and the one before it.
        const [before, week] = duePeriods("weekly", "UTC", now - 15 * day, now).slice(-2)
        // A source with one component, down 3 h on the week's Tuesday; a stack showing it.
        yield* sql`
          INSERT INTO sources (key, name, kind, provider_type, status_page_url, check_class, poll_interval_s)
          VALUES ('rp-pay', 'PayCo', 'catalog', 'statuspage_io', 'https://status.invalid', 'standard', 300)`
        const [component] = yield* sql<{ id: string }>`
          INSERT INTO components (source_id, external_id, name, is_group, position)
          SELECT id, 'cards', 'Card payments', false, 0 FROM sources WHERE key = 'rp-pay' RETURNING id`
        const stack = yield* call("POST", "/stacks", { key: tenant.keys.admin, body: { name: "Payments" } })
        const stackId = (stack.body as { id: string }).id
        yield* call("POST", `/stacks/${stackId}/items`, { key: tenant.keys.admin, body: { kind: "component", component_id: component!.id } })
        const downFrom = week!.from + day + 10 * hour
        const down = (t: number) => t >= downFrom && t < downFrom + 3 * hour
        yield* (yield* Writers).write(
          checksEvery15("source", "rp-pay", "cards", before!.from, now - (now % hour), (t) => down(t) ? "critical" : "operational"),
          [
            statusChange("source", "rp-pay", "cards", before!.from, "operational", "operational"),
            statusChange("source", "rp-pay", "cards", downFrom, "operational", "critical"),
            statusChange("source", "rp-pay", "cards", downFrom + 3 * hour, "critical", "operational")
          ]
        )
        // Scheduled through the API; it was made during the week before last (set here): both weeks are owed.
        const created = yield* call("POST", "/report-schedules", {
          key: tenant.keys.member,
          body: { name: "Weekly uptime", frequency: "weekly", recipients: ["ops@example.com", "cto@example.com"], sla_target: 99.5, stack_ids: [stackId] }
        })
        assert.strictEqual(created.status, 201, JSON.stringify(created.body))
        const scheduleId = (created.body as { id: string }).id
        yield* sql`UPDATE report_schedules SET created_at = ${new Date(before!.from + hour).toISOString()}::timestamptz WHERE id = ${scheduleId}::uuid`

        // Two workers at once, then more rounds: each report goes out once.
        const mailer = makeMailer({ smtpUrl: `smtp://127.0.0.1:${smtp.port}`, smtpFrom: "statusgrid <reports@statusgrid.test>" })
        yield* Effect.all([reportRound(mailer), reportRound(mailer)], { concurrency: 2 })
        yield* Effect.all([reportRound(mailer), reportRound(mailer)], { concurrency: 2 })
        const sent = yield* sql<{ period_start: Date; status: string; attempts: number }>`
          SELECT period_start, status, attempts FROM reports r JOIN report_schedules s ON s.id = r.schedule_id
          WHERE s.organization_id = ${tenant.id}::uuid ORDER BY period_start`
        assert.deepStrictEqual(sent.map((r) => [new Date(r.period_start).getTime(), r.status, r.attempts]), [
          [before!.from, "sent", 1],
          [week!.from, "sent", 1]
        ])
        assert.strictEqual(smtp.mails.length, 2, "one e-mail per week, though two workers ran twice")
        assert.deepStrictEqual(smtp.mails[0]!.to.toSorted(), ["cto@example.com", "ops@example.com"])

        // Last week's report: the uptime the API gives for that stack and week, in the body, the CSV and the PDF.
        const api = yield* call("GET", `/stacks/${stackId}/analytics?from=${new Date(week!.from).toISOString()}&to=${new Date(week!.to).toISOString()}`, {
          key: tenant.keys.viewer
        })
        const uptime = (api.body as { analytics: { uptime: number } }).analytics.uptime
        // 168 h, 3 h down: by hand.
        assert.closeTo(uptime, (165 / 168) * 100, 1e-9)
        const shown = `${uptime.toFixed(3)} %`
        const mail = yield* Effect.promise(() => simpleParser(smtp.mails.find((m) => m.raw.includes(`${new Date(week!.from).toISOString().slice(0, 10)} to`))!.raw))
        assert.include(mail.subject ?? "", "weekly uptime report")
        assert.include(String(mail.html), shown)
        assert.include(String(mail.html), "missed") // 98.214 % is under the 99.5 % target
        assert.include(mail.text ?? "", `Payments: uptime ${shown}`)
        const csv = mail.attachments.find((a) => a.contentType.startsWith("text/csv"))!
        const pdf = mail.attachments.find((a) => a.contentType === "application/pdf")!
        assert.isDefined(csv)
        assert.isDefined(pdf)
        const csvLines = csv.content.toString("utf8").trim().split("\r\n")
        assert.strictEqual(csvLines[0], "period_start,period_end,stack,item,kind,uptime_percent,downtime_s,outages,mttr_s,sla_target_percent,sla_met")
        assert.include(csvLines[1]!, `,Payments,,stack,${uptime.toFixed(3)},${3 * 3600},1,${3 * 3600},99.5,false`)
        assert.include(csvLines[2]!, `,Payments,Card payments,component,${uptime.toFixed(3)},${3 * 3600},1,`)
        const text = yield* Effect.promise(() => pdfText(new Uint8Array(pdf.content)))
        assert.include(text, `Uptime ${shown}`)
        assert.include(text, "Payments")
        assert.include(text, "Card payments")

        // Another round owes nothing: no third e-mail.
        yield* reportRound(mailer)
        assert.strictEqual(smtp.mails.length, 2)

        // The same report through the API: JSON, CSV and PDF, for any role of the organization.
        const list = yield* call("GET", "/reports", { key: tenant.keys.viewer })
        assert.strictEqual(list.status, 200)
        const reports = (list.body as { data: Array<{ id: string; from: string; status: string; schedule_name: string }> }).data
        assert.deepStrictEqual(reports.map((r) => [r.from, r.status, r.schedule_name]), [
          [new Date(before!.from).toISOString(), "sent", "Weekly uptime"],
          [new Date(week!.from).toISOString(), "sent", "Weekly uptime"]
        ])
        const latest = reports[1]!.id
        const json = yield* call("GET", `/reports/${latest}`, { key: tenant.keys.viewer })
        assert.strictEqual(json.status, 200)
        const content = (json.body as { content: { stacks: Array<{ name: string; uptime: number; sla_met: boolean; allowed_downtime_ms: number }> } }).content
        assert.strictEqual(content.stacks[0]!.uptime, uptime)
        assert.strictEqual(content.stacks[0]!.sla_met, false)
        // 0.5 % of 168 h: 50 min 24 s.
        assert.strictEqual(content.stacks[0]!.allowed_downtime_ms, Math.round(168 * hour * 0.005))
        const csvReply = yield* call("GET", `/reports/${latest}/csv`, { key: tenant.keys.viewer })
        assert.strictEqual(csvReply.status, 200)
        assert.match(csvReply.headers.get("content-type") ?? "", /^text\/csv/)
        assert.strictEqual(String(csvReply.body), csv.content.toString("utf8"))
        const base = yield* ApiBase
        const pdfReply = yield* Effect.promise(() => fetch(`${base}/api/v1/reports/${latest}/pdf`, { headers: { authorization: `Bearer ${tenant.keys.viewer}` } }))
        assert.strictEqual(pdfReply.status, 200)
        assert.strictEqual(pdfReply.headers.get("content-type"), "application/pdf")
        const downloaded = yield* Effect.promise(async () => pdfText(new Uint8Array(await pdfReply.arrayBuffer())))
        assert.include(downloaded, `Uptime ${shown}`)

        // Another organization sees none of it; a missing report is 404.
        const other = yield* newTenant("pro")
        assert.strictEqual((yield* call("GET", `/reports/${latest}`, { key: other.keys.admin })).status, 404)
        assert.strictEqual((yield* call("GET", `/reports/${latest}/pdf`, { key: other.keys.admin })).status, 404)
        assert.deepStrictEqual((yield* call("GET", "/reports", { key: other.keys.admin })).body.data, [])
      }))

    it.effect("schedules: Free is 402; bad input is 400 naming the field; a Viewer may not schedule; changes and deletion", () =>
      Effect.gen(function*() {
        const free = yield* newTenant("free")
        const refused = yield* call("POST", "/report-schedules", { key: free.keys.admin, body: { name: "W", frequency: "weekly", recipients: ["a@example.com"] } })
        assert.strictEqual(refused.status, 402)
        const pro = yield* newTenant("pro")
        const bad: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
          [{ name: "W", frequency: "daily", recipients: ["a@example.com"] }, "frequency"],
          [{ name: "W", frequency: "weekly", recipients: ["not an address"] }, "recipients"],
          [{ name: "W", frequency: "weekly", recipients: [] }, "recipients"],
          [{ name: "W", frequency: "weekly", recipients: ["a@example.com"], time_zone: "Mars/Olympus" }, "time_zone"],
          [{ name: "W", frequency: "weekly", recipients: ["a@example.com"], sla_target: 0 }, "sla_target"],
          [{ name: "", frequency: "weekly", recipients: ["a@example.com"] }, "name"]
        ]
        for (const [body, field] of bad) {
          const r = yield* call("POST", "/report-schedules", { key: pro.keys.admin, body })
          assert.strictEqual(r.status, 400, JSON.stringify(body))
          assert.include(JSON.stringify(r.body), field, JSON.stringify(r.body))
        }
        const unknownStack = yield* call("POST", "/report-schedules", {
          key: pro.keys.admin,
          body: { name: "W", frequency: "weekly", recipients: ["a@example.com"], stack_ids: ["00000000-0000-4000-8000-000000000000"] }
        })
        assert.strictEqual(unknownStack.status, 404)
        assert.strictEqual((yield* call("POST", "/report-schedules", { key: pro.keys.viewer, body: { name: "W", frequency: "weekly", recipients: ["a@example.com"] } })).status, 403)
        const made = yield* call("POST", "/report-schedules", {
          key: pro.keys.admin,
          body: { name: "Monthly", frequency: "monthly", time_zone: "Europe/Paris", recipients: ["a@example.com"] }
        })
        assert.strictEqual(made.status, 201)
        const id = (made.body as { id: string }).id
        assert.deepStrictEqual(made.body, { ...(made.body as object), frequency: "monthly", time_zone: "Europe/Paris", sla_target: 99.9, enabled: true, stack_ids: [] })
        const changed = yield* call("PATCH", `/report-schedules/${id}`, { key: pro.keys.member, body: { enabled: false, sla_target: 99.95 } })
        assert.strictEqual(changed.status, 200)
        assert.strictEqual((changed.body as { sla_target: number }).sla_target, 99.95)
        assert.strictEqual((changed.body as { enabled: boolean }).enabled, false)
        assert.strictEqual((yield* call("GET", "/report-schedules", { key: pro.keys.viewer })).body.data.length, 1)
        assert.strictEqual((yield* call("DELETE", `/report-schedules/${id}`, { key: pro.keys.admin })).status, 204)
        assert.strictEqual((yield* call("DELETE", `/report-schedules/${id}`, { key: pro.keys.admin })).status, 404)
      }))

    it.effect("a Free organization's schedule sends nothing; an SMTP server that refuses is retried, never lost", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const now = yield* Clock.currentTimeMillis
        const free = yield* newTenant("free")
        const pro = yield* newTenant("pro")
        const since = new Date(now - 10 * day).toISOString()
        for (const t of [free, pro]) {
          yield* sql`
            INSERT INTO report_schedules (organization_id, name, frequency, recipients, created_at)
            VALUES (${t.id}::uuid, 'Weekly', 'weekly', ${["ops@example.com"]}, ${since}::timestamptz)`
        }
        const refusing = yield* Effect.promise(() =>
          startSmtpReceiver(undefined, { onRcptTo: (_address, _session, callback) => callback(Object.assign(new Error("mailbox busy"), { responseCode: 451 })) })
        )
        yield* Effect.addFinalizer(() => Effect.promise(() => refusing.close()))
        yield* reportRound(makeMailer({ smtpUrl: `smtp://127.0.0.1:${refusing.port}`, smtpFrom: "reports@statusgrid.test" }))
        const rows = yield* sql<{ organization_id: string; status: string; last_error: string | null }>`
          SELECT organization_id, status, last_error FROM reports WHERE organization_id IN (${free.id}::uuid, ${pro.id}::uuid)`
        assert.isTrue(rows.every((r) => r.organization_id === pro.id), "no report for the Free organization")
        assert.isAbove(rows.length, 0)
        assert.isTrue(rows.every((r) => r.status === "pending" && (r.last_error ?? "").includes("451")), JSON.stringify(rows))
      }))
  })
})
