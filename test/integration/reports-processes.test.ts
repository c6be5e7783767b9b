import { Effect, Exit, ManagedRuntime, Scope } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { duePeriods } from "../../services/domain/ReportPeriods.ts"
import { ClickHouse } from "../../services/platform/ClickHouse.ts"
import { api, makeOrganization, type Organization, secretsKey, type WorldRuntime, worldRuntime } from "../support/alertWorld.ts"
import { clickHouseHttp } from "../support/clickhouseHttp.ts"
import { waitForValue } from "../support/eventually.ts"
import { checksEvery15, historyWriters, statusChange } from "../support/history.ts"
import { childEnv, freePort, type Running, startService } from "../support/process.ts"
import { type SmtpReceiver, startSmtpReceiver } from "../support/receivers.ts"
import { tempDir } from "../support/stores.ts"

/**
 * "Sent once with two processes running": two `statusgrid start` processes
 * on one PostgreSQL, one ClickHouse (an HTTP server over chDB) and one SMTP
 * server, each running the report worker every 200 ms. A schedule made two
 * weeks ago owes two weekly reports (missed while nothing ran): each arrives
 * once, claimed once.
 */

const minute = 60_000
const hour = 60 * minute
const day = 24 * hour

const scope = Scope.makeUnsafe()
let world: { runtime: WorldRuntime; databaseUrl: string }
let smtp: SmtpReceiver
let servers: Array<Running> = []
let org: Organization
const dataDirs: Array<string> = []

beforeAll(async () => {
  const front = await Effect.runPromise(Scope.provide(scope)(Effect.flatMap(tempDir("reports-processes-ch"), clickHouseHttp)))
  const database = "statusgrid_reports_processes"
  ;[world, smtp] = await Promise.all([worldRuntime(), startSmtpReceiver()])
  const start = async () => {
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-reports-"))
    dataDirs.push(dataDir)
    const port = await freePort()
    return startService(childEnv({
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: "127.0.0.1",
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      DATABASE_URL: world.databaseUrl,
      CLICKHOUSE_URL: front.url,
      CLICKHOUSE_DATABASE: database,
      SECRETS_KEY: secretsKey,
      SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
      SMTP_FROM: "statusgrid <reports@statusgrid.test>",
      REPORTS_POLL_MS: "200"
    }), 120_000)
  }
  // One after the other: the first migrates PostgreSQL and ClickHouse.
  servers = [await start()]
  servers.push(await start())
  org = await makeOrganization(world.runtime, "Report Co", "reportco")

  // A stack with one component of a catalog source, down 2 hours in each of the last two weeks.
  const now = Date.now()
  const [before, last] = duePeriods("weekly", "UTC", now - 15 * day, now).slice(-2)
  const component = await world.runtime.runPromise(SqlClient.use((sql) => Effect.gen(function*() {
    yield* sql`
      INSERT INTO sources (key, name, kind, provider_type, status_page_url, check_class, poll_interval_s, enabled)
      VALUES ('rp2-pay', 'PayCo', 'catalog', 'statuspage_io', 'https://status.invalid', 'low', 86400, true)`
    const [row] = yield* sql<{ id: string }>`
      INSERT INTO components (source_id, external_id, name, is_group, position)
      SELECT id, 'cards', 'Card payments', false, 0 FROM sources WHERE key = 'rp2-pay' RETURNING id`
    return row!.id
  })))
  const base = servers[0]!.url
  const stack = await api(base, org.adminKey, "POST", "/stacks", { name: "Payments" })
  await api(base, org.adminKey, "POST", `/stacks/${String(stack["id"])}/items`, { kind: "component", component_id: component })
  const downAt = [before!.from + 2 * day + 9 * hour, last!.from + 3 * day + 14 * hour]
  const down = (t: number) => downAt.some((d) => t >= d && t < d + 2 * hour)
  const spill = await Effect.runPromise(Scope.provide(scope)(tempDir("reports-processes-spill")))
  const writers = ManagedRuntime.make(ClickHouse.layerServer(front.url, database))
  await writers.runPromise(Effect.scoped(Effect.flatMap(historyWriters(spill), (w) =>
    w.write(
      checksEvery15("source", "rp2-pay", "cards", before!.from, now - (now % hour), (t) => down(t) ? "critical" : "operational"),
      [
        statusChange("source", "rp2-pay", "cards", before!.from - hour, "operational", "operational"),
        ...downAt.flatMap((d) => [
          statusChange("source", "rp2-pay", "cards", d, "operational", "critical"),
          statusChange("source", "rp2-pay", "cards", d + 2 * hour, "critical", "operational")
        ])
      ]
    )
  )))
  await writers.dispose()
}, 300_000)

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()))
  await smtp?.close()
  await world?.runtime.dispose()
  await Effect.runPromise(Scope.close(scope, Exit.void))
  for (const dir of dataDirs) Fs.rmSync(dir, { recursive: true, force: true })
}, 120_000)

describe("scheduled reports with two processes", () => {
  it("two serving processes send each owed week once", async () => {
    const made = await api(servers[1]!.url, org.adminKey, "POST", "/report-schedules", {
      name: "Weekly uptime",
      frequency: "weekly",
      recipients: ["ops@example.com"]
    })
    const scheduleId = String(made["id"])
    const now = Date.now()
    const owed = duePeriods("weekly", "UTC", now - 15 * day, now).slice(-2)
    // Made during the week before last (as if both processes had been down since).
    await world.runtime.runPromise(SqlClient.use((sql) =>
      sql`UPDATE report_schedules SET created_at = ${new Date(owed[0]!.from + hour).toISOString()}::timestamptz WHERE id = ${scheduleId}::uuid`
    ))
    await waitForValue("two report e-mails", () => (smtp.mails.length >= 2 ? true : undefined), 60_000)
    // Both workers keep polling every 200 ms: give them a few more rounds to send anything twice.
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    assert.strictEqual(smtp.mails.length, 2, "each week once")
    const rows = await world.runtime.runPromise(SqlClient.use((sql) =>
      sql<{ period_start: Date; status: string; attempts: number }>`
        SELECT period_start, status, attempts FROM reports WHERE schedule_id = ${scheduleId}::uuid ORDER BY period_start`
    ))
    assert.deepStrictEqual(rows.map((r) => [new Date(r.period_start).getTime(), r.status, r.attempts]), owed.map((p) => [p.from, "sent", 1]))
    // Each e-mail is a different week, with the stack's uptime of that week: 2 h down of 168.
    const subjects = smtp.mails.map((m) => /^Subject: (.*)$/m.exec(m.raw)?.[1] ?? "").toSorted()
    assert.strictEqual(new Set(subjects).size, 2)
    const shown = `${((166 / 168) * 100).toFixed(3)} %`
    for (const mail of smtp.mails) assert.include(mail.raw.replace(/=\r?\n/g, ""), shown)
  })
})
