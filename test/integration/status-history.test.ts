import { assert, describe, layer } from "@effect/vitest"
import { DateTime, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import type { CheckResultRow } from "../../services/domain/CheckResult.ts"
import type { HistorySubject, StatusStrip } from "../../services/domain/History.ts"
import { StatusHistory } from "../../services/history/StatusHistory.ts"
import { ClickHouse } from "../../services/platform/ClickHouse.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import { ResultWriter } from "../../services/poller/ResultWriter.ts"
import { clickHouseHttp } from "../support/clickhouseHttp.ts"
import { tempDir } from "../support/stores.ts"

/**
 * The history reader over ClickHouse's HTTP interface (test/support/clickhouseHttp.ts over real
 * chDB; the API test reads the same SQL on embedded chDB). Check results go in through the real
 * ResultWriter, so the rollups are fed by the migrations' materialized views; the reads run at a
 * fixed instant on a TestClock.
 */

const hour = 3_600_000
const day = 86_400_000
/** The instant the reads run at: 12:30 UTC, so the current hour is 12:00 and today is 2026-11-20. */
const now = Date.UTC(2026, 10, 20, 12, 30)
const at = (ms: number) => new Date(ms).toISOString()

const check = (kind: "source" | "monitor", id: string, component: string, ms: number, status: string, error = ""): CheckResultRow => ({
  checked_at: at(ms),
  subject_kind: kind,
  subject_id: id,
  component_id: component,
  status,
  latency_ms: 100,
  http_status: error === "" ? 200 : 0,
  bytes: 0,
  error,
  region: "",
  shard: 0
})

/** `n` checks of a subject in the hour starting at `start`, one a minute. */
const checks = (kind: "source" | "monitor", id: string, component: string, start: number, statuses: ReadonlyArray<string>, error = "") =>
  statuses.map((status, i) => check(kind, id, component, start + i * 60_000, status, error))

const times = (n: number, status: string) => Array.from({ length: n }, () => status)

const h = (hh: number) => Date.UTC(2026, 10, 20, hh)
const d = (month: number, dd: number) => Date.UTC(2026, month, dd, 6)

/** The rows every test reads, written once through the poller's ResultWriter when the layer starts. */
const rows: ReadonlyArray<CheckResultRow> = [
  // The source as a whole: 10:00 all up; 11:00 two down of ten; 09:00 its page unreadable;
  // 08:00 three in maintenance and one up.
  ...checks("source", "acme", "", h(10), times(10, "operational")),
  ...checks("source", "acme", "", h(11), [...times(8, "operational"), ...times(2, "down")]),
  ...checks("source", "acme", "", h(9), times(4, "unknown"), "parse: not a status page"),
  ...checks("source", "acme", "", h(8), [...times(3, "maintenance"), "operational"]),
  // Five days ago: one down of twenty. Fifty days ago: ten down (in the 90 days, not in the 30).
  ...checks("source", "acme", "", d(10, 15), [...times(19, "operational"), "down"]),
  ...checks("source", "acme", "", d(9, 1), times(10, "down")),
  // A component degraded half of 11:00; one critical check at 10:00.
  ...checks("source", "acme", "api-ext", h(11), [...times(5, "degraded"), ...times(5, "operational")]),
  ...checks("source", "acme", "api-ext", h(10), [...times(9, "operational"), "critical"]),
  // A website monitor: one failed check of four in the current hour.
  ...checks("monitor", "mon-1", "", h(12), ["up", "up"]),
  check("monitor", "mon-1", "", h(12) + 120_000, "down", "connect ECONNREFUSED"),
  check("monitor", "mon-1", "", h(12) + 180_000, "up"),
  // Another source, never asked for: its rows stay out of acme's figures.
  ...checks("source", "other", "", h(11), times(5, "down"))
]

const written = Effect.gen(function*() {
  const writer = yield* ResultWriter
  yield* writer.write(rows)
  yield* writer.flush
})

const atNow = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(now)
    return yield* effect
  }).pipe(Effect.provide(TestClock.layer()))


const TestLayer = Layer.unwrap(Effect.gen(function*() {
  const front = yield* clickHouseHttp(yield* tempDir("history-ch"))
  const spillDir = yield* tempDir("history-spill")
  const ch = Layer.effectDiscard(Migrations.migrateClickHouse()).pipe(
    Layer.provideMerge(ClickHouse.layerServer(front.url, "statusgrid_history"))
  )
  const writer = Layer.effect(ResultWriter, ResultWriter.make({ spillDir, flushMs: 20 }))
  return Layer.mergeAll(StatusHistory.layer, Layer.effectDiscard(written).pipe(Layer.provide(writer))).pipe(
    Layer.provideMerge(ch)
  )
}))

const cellAt = (strip: StatusStrip, ms: number) => {
  const cell = strip.cells.find((c) => DateTime.toEpochMillis(c.start) === ms)
  assert.isDefined(cell, `no cell starting at ${at(ms)}`)
  return cell!
}

const acme: HistorySubject = { kind: "source", id: "acme", component: "" }
const api: HistorySubject = { kind: "source", id: "acme", component: "api-ext" }
const db: HistorySubject = { kind: "source", id: "acme", component: "db-ext" }
const monitor: HistorySubject = { kind: "monitor", id: "mon-1", component: "" }

describe("StatusHistory", () => {
  layer(TestLayer, { timeout: 120_000, excludeTestServices: true })("over ClickHouse's HTTP interface", (it) => {
    it.effect("24 hourly cells: the worst status of each hour, its uptime, no data where nothing was checked", () =>
      Effect.gen(function*() {
        const history = yield* StatusHistory
        const [strip] = yield* atNow(history.forSubjects([acme], "24h"))
        assert.strictEqual(strip!.window, "24h")
        assert.strictEqual(strip!.cell, "1h")
        assert.strictEqual(strip!.cells.length, 24)
        // Oldest first, ending with the current hour.
        assert.deepStrictEqual(strip!.cells.map((c) => DateTime.toEpochMillis(c.start)), Array.from({ length: 24 }, (_, i) => h(12) - (23 - i) * hour))

        assert.deepInclude(cellAt(strip!, h(10)), { status: "operational", checks: 10, uptime: 100 })
        assert.deepInclude(cellAt(strip!, h(11)), { status: "down", checks: 10, uptime: 80 })
        // Unreadable checks say nothing about the provider: no data, not up.
        assert.deepInclude(cellAt(strip!, h(9)), { status: "no_data", checks: 4, uptime: null })
        // Maintenance is shown, and left out of the uptime: the one other check was up.
        assert.deepInclude(cellAt(strip!, h(8)), { status: "maintenance", checks: 4, uptime: 100 })
        for (const c of strip!.cells.filter((c) => ![h(8), h(9), h(10), h(11)].includes(DateTime.toEpochMillis(c.start)))) {
          assert.deepInclude(c, { status: "no_data", checks: 0, uptime: null })
        }

        // Over the window: 10 + 10 + 1 counted (3 in maintenance and 4 unread left out), 2 down.
        assert.deepInclude(strip!.uptime, {
          checks: 28,
          counted_checks: 21,
          down_checks: 2,
          maintenance_checks: 3,
          unread_checks: 4,
          percent: (19 / 21) * 100
        })
        assert.strictEqual(DateTime.toEpochMillis(strip!.uptime.from), h(12) - 23 * hour)
        assert.strictEqual(DateTime.toEpochMillis(strip!.uptime.to), h(13))
        // 30 days: today's 21 counted and 5 days ago's 20, 3 down; 50 days ago is outside.
        assert.deepInclude(strip!.uptime_30d, { checks: 48, counted_checks: 41, down_checks: 3, percent: (38 / 41) * 100 })
        assert.strictEqual(DateTime.toEpochMillis(strip!.uptime_30d.from), Date.UTC(2026, 9, 22))
        assert.strictEqual(DateTime.toEpochMillis(strip!.uptime_30d.to), Date.UTC(2026, 10, 21))
      }))

    it.effect("90 daily cells, the last one today; the 30-day figure is the same from either window", () =>
      Effect.gen(function*() {
        const history = yield* StatusHistory
        const [strip] = yield* atNow(history.forSubjects([acme], "90d"))
        const [hourly] = yield* atNow(history.forSubjects([acme], "24h"))
        assert.strictEqual(strip!.cell, "1d")
        assert.strictEqual(strip!.cells.length, 90)
        assert.strictEqual(DateTime.toEpochMillis(strip!.cells[89]!.start), Date.UTC(2026, 10, 20))
        assert.strictEqual(DateTime.toEpochMillis(strip!.cells[0]!.start), Date.UTC(2026, 10, 20) - 89 * day)
        assert.deepInclude(cellAt(strip!, Date.UTC(2026, 10, 20)), { status: "down", checks: 28, uptime: (19 / 21) * 100 })
        assert.deepInclude(cellAt(strip!, Date.UTC(2026, 10, 15)), { status: "down", checks: 20, uptime: 95 })
        assert.deepInclude(cellAt(strip!, Date.UTC(2026, 9, 1)), { status: "down", checks: 10, uptime: 0 })
        assert.strictEqual(strip!.cells.filter((c) => c.status === "no_data").length, 87)
        assert.deepInclude(strip!.uptime, { checks: 58, counted_checks: 51, down_checks: 13, percent: (38 / 51) * 100 })
        assert.deepStrictEqual(strip!.uptime_30d, hourly!.uptime_30d)
      }))

    it.effect("many subjects of both kinds in one read, in the order asked; a subject never checked is all no data", () =>
      Effect.gen(function*() {
        const history = yield* StatusHistory
        const strips = yield* atNow(history.forSubjects([monitor, api, db, acme], "24h"))
        assert.strictEqual(strips.length, 4)
        const [m, a, none, source] = strips
        assert.deepInclude(cellAt(m!, h(12)), { status: "down", checks: 4, uptime: 75 })
        assert.strictEqual(m!.uptime.percent, 75)
        // A monitor's errors are outages, not unread checks.
        assert.strictEqual(m!.uptime.unread_checks, 0)
        assert.deepInclude(cellAt(a!, h(11)), { status: "degraded", checks: 10, uptime: 100 })
        // Critical is a component's down.
        assert.deepInclude(cellAt(a!, h(10)), { status: "down", checks: 10, uptime: 90 })
        assert.isTrue(none!.cells.every((c) => c.status === "no_data" && c.checks === 0 && c.uptime === null))
        assert.deepInclude(none!.uptime, { checks: 0, percent: null })
        assert.deepInclude(none!.uptime_30d, { checks: 0, percent: null })
        assert.strictEqual(source!.uptime.down_checks, 2)

        const viaSource = yield* atNow(history.forSource("acme", ["api-ext", "db-ext"], "24h"))
        assert.deepStrictEqual(viaSource.source, source)
        assert.deepStrictEqual(viaSource.components, [a!, none!])
        assert.strictEqual((yield* atNow(history.forSubjects([], "90d"))).length, 0)
      }))

    it.effect("uptime over any number of days from the daily rollup", () =>
      Effect.gen(function*() {
        const history = yield* StatusHistory
        const [month, monitorMonth] = yield* atNow(history.uptime([acme, monitor]))
        assert.deepInclude(month!, { counted_checks: 41, down_checks: 3, percent: (38 / 41) * 100 })
        assert.deepInclude(monitorMonth!, { checks: 4, down_checks: 1, percent: 75 })
        const [quarter] = yield* atNow(history.uptime([acme], 90))
        assert.deepInclude(quarter!, { counted_checks: 51, down_checks: 13 })
        const [today] = yield* atNow(history.uptime([acme], 1))
        assert.deepInclude(today!, { counted_checks: 21, down_checks: 2 })
      }))
  })
})
