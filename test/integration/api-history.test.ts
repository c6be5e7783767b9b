import { assert, describe, layer } from "@effect/vitest"
import { Clock, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { CheckResultRow } from "../../services/domain/CheckResult.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import { ResultWriter } from "../../services/poller/ResultWriter.ts"
import { apiServer, call, newTenant } from "../support/api.ts"
import { tempDir } from "../support/stores.ts"

/**
 * `GET /sources/{key}/history` and `GET /monitors/{id}/history` over embedded chDB (the reader's
 * SQL over ClickHouse's HTTP interface: status-history.test.ts). Rows go in through the real
 * ResultWriter at times relative to now; cells are found by their start, so an hour turning
 * during the test moves them by one place, not out of the window.
 */
const TestLayer = Layer.unwrap(Effect.gen(function*() {
  const spillDir = yield* tempDir("api-history-spill")
  return Layer.effect(ResultWriter, ResultWriter.make({ spillDir, flushMs: 20 })).pipe(
    Layer.provideMerge(Layer.effectDiscard(Migrations.migrateClickHouse())),
    Layer.provideMerge(apiServer({ API_CACHE_MS: "0" }))
  )
}))

const hour = 3_600_000
const day = 86_400_000

const row = (kind: "source" | "monitor", id: string, component: string, ms: number, status: string, error = ""): CheckResultRow => ({
  checked_at: new Date(ms).toISOString(),
  subject_kind: kind,
  subject_id: id,
  component_id: component,
  status,
  latency_ms: 80,
  http_status: error === "" ? 200 : 0,
  bytes: 0,
  error,
  region: "",
  shard: 0
})

/** A catalog source with components (one a group, which checks write no rows for); returns their API ids. */
const seedSource = (key: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    yield* sql`
      INSERT INTO sources (key, name, kind, provider_type, status_page_url, check_class, poll_interval_s)
      VALUES (${key}, ${`Service ${key}`}, 'catalog', 'statuspage_io', 'https://status.invalid', 'standard', 300)`
    const ids = new Map<string, string>()
    for (const [position, [external, name, group]] of ([["grp", "Platform", true], ["api-ext", "API", false], ["db-ext", "Database", false]] as const).entries()) {
      const [c] = yield* sql<{ id: string }>`
        INSERT INTO components (source_id, external_id, name, is_group, position)
        SELECT id, ${external}, ${name}, ${group}, ${position} FROM sources WHERE key = ${key} RETURNING id`
      ids.set(external, c!.id)
    }
    return ids
  })

const write = (rows: ReadonlyArray<CheckResultRow>) =>
  Effect.gen(function*() {
    const writer = yield* ResultWriter
    yield* writer.write(rows)
    yield* writer.flush
  })

interface Cell {
  readonly start: string
  readonly status: string
  readonly checks: number
  readonly uptime: number | null
}

const cellAt = (cells: ReadonlyArray<Cell>, ms: number) => {
  const cell = cells.find((c) => Date.parse(c.start) === ms)
  assert.isDefined(cell, `no cell starting at ${new Date(ms).toISOString()}`)
  return cell!
}

describe("history API", () => {
  layer(TestLayer, { timeout: 120_000, excludeTestServices: true })("/sources/{key}/history, /monitors/{id}/history", (it) => {
    it.effect("a source's strip and its components', hourly and daily, with the uptime figures", () =>
      Effect.gen(function*() {
        const ids = yield* seedSource("hist-acme")
        const now = yield* Clock.currentTimeMillis
        const twoHoursAgo = Math.floor(now / hour) * hour - 2 * hour
        const threeDaysAgo = Math.floor(now / day) * day - 3 * day
        yield* write([
          ...Array.from({ length: 4 }, (_, i) => row("source", "hist-acme", "", twoHoursAgo + i * 60_000, i === 0 ? "down" : "operational")),
          ...Array.from({ length: 4 }, (_, i) => row("source", "hist-acme", "api-ext", twoHoursAgo + i * 60_000, "degraded")),
          ...Array.from({ length: 5 }, (_, i) => row("source", "hist-acme", "", threeDaysAgo + 3 * hour + i * 60_000, "operational"))
        ])

        const r = yield* call("GET", "/sources/hist-acme/history")
        assert.strictEqual(r.status, 200, JSON.stringify(r.body))
        assert.strictEqual(r.body.key, "hist-acme")
        assert.strictEqual(r.body.history.window, "24h")
        assert.strictEqual(r.body.history.cells.length, 24)
        assert.deepInclude(cellAt(r.body.history.cells, twoHoursAgo), { status: "down", checks: 4, uptime: 75 })
        assert.strictEqual(r.body.history.uptime.percent, 75)
        // 30 days: 3 of 4 two hours ago and 5 of 5 three days ago.
        assert.deepInclude(r.body.history.uptime_30d, { checks: 9, counted_checks: 9, down_checks: 1, percent: (8 / 9) * 100 })
        // Components by their API ids and names, ordered by position; the group is left out.
        assert.deepStrictEqual(r.body.components.map((c: { id: string; name: string }) => [c.id, c.name]), [
          [ids.get("api-ext"), "API"],
          [ids.get("db-ext"), "Database"]
        ])
        const [api, db] = r.body.components
        assert.deepInclude(cellAt(api.history.cells, twoHoursAgo), { status: "degraded", checks: 4, uptime: 100 })
        // Never checked: no data everywhere, and no uptime rather than 100 %.
        assert.isTrue(db.history.cells.every((c: Cell) => c.status === "no_data" && c.checks === 0 && c.uptime === null))
        assert.isNull(db.history.uptime.percent)
        assert.isNull(db.history.uptime_30d.percent)

        const daily = yield* call("GET", "/sources/hist-acme/history?window=90d")
        assert.strictEqual(daily.status, 200, JSON.stringify(daily.body))
        assert.strictEqual(daily.body.history.cell, "1d")
        assert.strictEqual(daily.body.history.cells.length, 90)
        assert.deepInclude(cellAt(daily.body.history.cells, threeDaysAgo), { status: "operational", checks: 5, uptime: 100 })
        assert.deepStrictEqual(daily.body.history.uptime_30d, r.body.history.uptime_30d)
      }))

    it.effect("a source without checks: every cell no data; unknown source 404; bad window 400 naming it", () =>
      Effect.gen(function*() {
        yield* seedSource("hist-empty")
        const r = yield* call("GET", "/sources/hist-empty/history?window=90d")
        assert.strictEqual(r.status, 200, JSON.stringify(r.body))
        assert.isTrue(r.body.history.cells.every((c: Cell) => c.status === "no_data" && c.uptime === null))
        assert.deepInclude(r.body.history.uptime, { checks: 0, percent: null })

        const missing = yield* call("GET", "/sources/no-such-source/history")
        assert.strictEqual(missing.status, 404)
        assert.strictEqual(missing.body.field, "key")

        for (const bad of ["7d", "", "24h&window=90d"]) {
          const b = yield* call("GET", `/sources/hist-empty/history?window=${bad}`)
          assert.strictEqual(b.status, 400, `window=${bad}: ${JSON.stringify(b.body)}`)
          assert.strictEqual(b.body.field, "window")
          assert.include(b.body.message, "24h or 90d")
        }
      }))

    it.effect("a monitor's history under its organization's key; other organizations get 404", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant()
        const other = yield* newTenant()
        const created = yield* call("POST", "/monitors", {
          key: tenant.keys.admin,
          body: { name: "Site", url: "http://127.0.0.1:9/health" }
        })
        assert.strictEqual(created.status, 201, JSON.stringify(created.body))
        const id = created.body.id as string
        const now = yield* Clock.currentTimeMillis
        const hourAgo = Math.floor(now / hour) * hour - hour
        yield* write([
          row("monitor", id, "", hourAgo, "up"),
          row("monitor", id, "", hourAgo + 60_000, "down", "connect ECONNREFUSED"),
          row("monitor", id, "", hourAgo + 120_000, "up"),
          row("monitor", id, "", hourAgo + 180_000, "up")
        ])

        const r = yield* call("GET", `/monitors/${id}/history`, { key: tenant.keys.viewer })
        assert.strictEqual(r.status, 200, JSON.stringify(r.body))
        assert.strictEqual(r.body.id, id)
        assert.deepInclude(cellAt(r.body.history.cells, hourAgo), { status: "down", checks: 4, uptime: 75 })
        assert.deepInclude(r.body.history.uptime_30d, { checks: 4, down_checks: 1, unread_checks: 0, percent: 75 })

        const foreign = yield* call("GET", `/monitors/${id}/history`, { key: other.keys.admin })
        assert.strictEqual(foreign.status, 404)
        const anonymous = yield* call("GET", `/monitors/${id}/history`)
        assert.strictEqual(anonymous.status, 401)
        const bad = yield* call("GET", `/monitors/${id}/history?window=1y`, { key: tenant.keys.viewer })
        assert.strictEqual(bad.status, 400)
        assert.strictEqual(bad.body.field, "window")
      }))

    it.effect("a monitor's check log: its latest checks newest first, limited; other organizations get 404", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant()
        const other = yield* newTenant()
        const created = yield* call("POST", "/monitors", { key: tenant.keys.admin, body: { name: "Log", url: "http://127.0.0.1:9/log" } })
        assert.strictEqual(created.status, 201, JSON.stringify(created.body))
        const id = created.body.id as string
        const now = yield* Clock.currentTimeMillis
        const start = now - 10 * 60_000
        yield* write([
          row("monitor", id, "", start, "up"),
          row("monitor", id, "", start + 60_000, "down", "connect ECONNREFUSED"),
          row("monitor", id, "", start + 120_000, "up")
        ])
        const r = yield* call("GET", `/monitors/${id}/checks?limit=2`, { key: tenant.keys.viewer })
        assert.strictEqual(r.status, 200, JSON.stringify(r.body))
        assert.strictEqual(r.body.id, id)
        assert.deepStrictEqual(
          r.body.checks.map((c: { checked_at: string; status: string; error: string }) => [c.checked_at, c.status, c.error]),
          [[new Date(start + 120_000).toISOString(), "up", ""], [new Date(start + 60_000).toISOString(), "down", "connect ECONNREFUSED"]]
        )
        assert.strictEqual(r.body.checks[0].latency_ms, 80)
        const foreign = yield* call("GET", `/monitors/${id}/checks`, { key: other.keys.admin })
        assert.strictEqual(foreign.status, 404)
        const bad = yield* call("GET", `/monitors/${id}/checks?limit=0`, { key: tenant.keys.viewer })
        assert.strictEqual(bad.status, 400)
      }))
  })
})
