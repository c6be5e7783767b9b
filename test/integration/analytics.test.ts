import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import type { CheckResultRow } from "../../services/domain/CheckResult.ts"
import type { HistorySubject } from "../../services/domain/History.ts"
import type { StatusTransitionRow } from "../../services/domain/StatusTransition.ts"
import { Analytics } from "../../services/history/Analytics.ts"
import { ClickHouse } from "../../services/platform/ClickHouse.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import { clickHouseHttp } from "../support/clickhouseHttp.ts"
import { checksEvery15, historyWriters, statusChange } from "../support/history.ts"
import { tempDir } from "../support/stores.ts"

/**
 * Analytics from status durations over ClickHouse's HTTP interface (real
 * chDB behind it): a known day of checks and status changes written through
 * the poller's writers (check results feed the rollups through the
 * migrations' views), read at a fixed instant; every figure is worked out
 * by hand below.
 */

const minute = 60_000
const hour = 60 * minute
/** The day under test, 2026-11-19 (a Thursday), and the instant of the reads: the next day 12:30 UTC. */
const day = Date.UTC(2026, 10, 19)
const now = Date.UTC(2026, 10, 20, 12, 30)
const at = (minutes: number) => day + minutes * minute
const iso = (ms: number) => new Date(ms).toISOString()


/**
 * acme (a source), the day before `now`:
 * - operational since before the day (its last change, two days earlier);
 * - down 01:00–02:30 (90 min), maintenance 10:00–12:00 (120 min), degraded 12:00–12:30 (30 min), down 20:00–20:45 (45 min);
 * - no check at all 05:00–07:00 (two hours: a gap).
 * acme's component "db" never changed: every check critical from 08:00 to 09:00, the rest of the day no check.
 * A monitor: up all day, its first change ever at 06:00 (pending → up), no check before 06:00.
 */
const acmeStatus = (t: number) =>
  t >= at(60) && t < at(150) ? "down" : t >= at(600) && t < at(720) ? "maintenance" : t >= at(720) && t < at(750) ? "degraded"
  : t >= at(1200) && t < at(1245) ? "down" : "operational"
const gap = (t: number) => t >= at(300) && t < at(420)

const checks: ReadonlyArray<CheckResultRow> = [
  ...checksEvery15("source", "acme", "", day, day + 24 * hour, acmeStatus).filter((r) => !gap(new Date(r.checked_at).getTime())),
  ...checksEvery15("source", "acme", "db", at(480), at(540), () => "critical"),
  ...checksEvery15("monitor", "mon-1", "", at(360), now, () => "up"),
  // beta: up all day, but its page could not be read from 13:00 to 14:00 (status unknown with the error, no change).
  ...checksEvery15("source", "beta", "", day, day + 24 * hour, (t) => (t >= at(780) && t < at(840) ? "unknown" : "operational"))
    .map((r) => (r.status === "unknown" ? { ...r, error: "parse: not a status page" } : r))
]

const transitions: ReadonlyArray<StatusTransitionRow> = [
  statusChange("source", "acme", "", day - 2 * 24 * hour, "down", "operational"),
  statusChange("source", "acme", "", at(60), "operational", "down"),
  statusChange("source", "acme", "", at(150), "down", "operational"),
  statusChange("source", "acme", "", at(600), "operational", "maintenance"),
  statusChange("source", "acme", "", at(720), "maintenance", "degraded"),
  statusChange("source", "acme", "", at(750), "degraded", "operational"),
  statusChange("source", "acme", "", at(1200), "operational", "down"),
  statusChange("source", "acme", "", at(1245), "down", "operational"),
  statusChange("monitor", "mon-1", "", at(360), "pending", "up"),
  statusChange("source", "beta", "", day - hour, "down", "operational"),
  // Another source, never asked for.
  statusChange("source", "other", "", at(100), "operational", "down")
]

const TestLayer = Layer.unwrap(Effect.gen(function*() {
  const front = yield* clickHouseHttp(yield* tempDir("analytics-ch"))
  const spillDir = yield* tempDir("analytics-spill")
  const ch = Layer.effectDiscard(Migrations.migrateClickHouse()).pipe(
    Layer.provideMerge(ClickHouse.layerServer(front.url, "statusgrid_analytics"))
  )
  const written = Effect.flatMap(historyWriters(spillDir), (w) => w.write(checks, transitions))
  return Layer.mergeAll(Analytics.layer, Layer.effectDiscard(Effect.scoped(written))).pipe(Layer.provideMerge(ch))
}))

const atNow = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(now)
    return yield* effect
  }).pipe(Effect.provide(TestClock.layer()))

const acme: HistorySubject = { kind: "source", id: "acme", component: "" }
const db: HistorySubject = { kind: "source", id: "acme", component: "db" }
const monitor: HistorySubject = { kind: "monitor", id: "mon-1", component: "" }
const theDay = { from: day, to: day + 24 * hour }

describe("Analytics", () => {
  layer(TestLayer, { timeout: 120_000, excludeTestServices: true })("over ClickHouse's HTTP interface", (it) => {
    it.effect("a source's day: time at each level, the gap as unknown, uptime, outages and MTTR as worked out by hand", () =>
      Effect.gen(function*() {
        const analytics = yield* Analytics
        const [a] = yield* atNow(analytics.forSubjects([acme], theDay))
        // 1440 min: down 90 + 45 = 135, maintenance 120, degraded 30, unknown 120 (05:00–07:00), operational the rest.
        assert.deepStrictEqual(a!.durations, {
          down: 135 * minute,
          maintenance: 120 * minute,
          degraded: 30 * minute,
          unknown: 120 * minute,
          operational: (1440 - 135 - 120 - 30 - 120) * minute
        })
        // counted = 1440 − 120 − 120 = 1200 min, of which 135 down: 88.75 %.
        assert.closeTo(a!.uptime!, 88.75, 0.005)
        assert.deepStrictEqual(a!.outages.map((o) => [iso(o.start), o.end === null ? null : iso(o.end), o.duration_ms / minute, o.cut]), [
          [iso(at(60)), iso(at(150)), 90, false],
          [iso(at(1200)), iso(at(1245)), 45, false]
        ])
        assert.strictEqual(a!.mttr_ms, 67.5 * minute)
        // Both outages began on a Thursday (row 3), at 01:00 and 20:00 UTC.
        assert.strictEqual(a!.hour_of_week[3]![1], 1)
        assert.strictEqual(a!.hour_of_week[3]![20], 1)
        assert.strictEqual(a!.hour_of_week.flat().reduce((x, y) => x + y, 0), 2)
      }))

    it.effect("a component that never changed takes the status its checks saw; the hours without checks are unknown", () =>
      Effect.gen(function*() {
        const analytics = yield* Analytics
        const [c] = yield* atNow(analytics.forSubjects([db], theDay))
        assert.deepStrictEqual(c!.durations, { down: 60 * minute, maintenance: 0, degraded: 0, operational: 0, unknown: 1380 * minute })
        assert.strictEqual(c!.uptime, 0)
        assert.strictEqual(c!.outages.length, 1)
        assert.strictEqual(c!.outages[0]!.duration_ms, 60 * minute)
      }))

    it.effect("a range reaching into the future ends now; before a monitor's first change and check it is unknown, not up", () =>
      Effect.gen(function*() {
        const analytics = yield* Analytics
        const [m, a] = yield* atNow(analytics.forSubjects([monitor, acme], { from: day, to: now + 24 * hour }))
        assert.strictEqual(m!.to, now)
        // 06:00 on the day to 12:30 the next day up (30.5 h); before, 6 h unknown.
        assert.deepStrictEqual(m!.durations, { down: 0, maintenance: 0, degraded: 0, operational: 30.5 * hour, unknown: 6 * hour })
        assert.strictEqual(m!.uptime, 100)
        assert.strictEqual(m!.mttr_ms, null)
        // acme's next day (no checks written for it) is unknown: the hours without checks, up to the current hour (12:00–12:30 operational).
        assert.strictEqual(a!.durations.unknown, 120 * minute + 12 * hour)
        assert.strictEqual(a!.durations.operational, (1440 - 135 - 120 - 30 - 120) * minute + 30 * minute)
      }))

    it.effect("an hour whose page could not be read is unknown, not up", () =>
      Effect.gen(function*() {
        const analytics = yield* Analytics
        const [b] = yield* atNow(analytics.forSubjects([{ kind: "source", id: "beta", component: "" }], theDay))
        assert.deepStrictEqual(b!.durations, { down: 0, maintenance: 0, degraded: 0, operational: 1380 * minute, unknown: 60 * minute })
        assert.strictEqual(b!.uptime, 100)
      }))

    it.effect("a range inside an outage: the outage is cut at the range's start and left out of MTTR", () =>
      Effect.gen(function*() {
        const analytics = yield* Analytics
        const [a] = yield* atNow(analytics.forSubjects([acme], { from: at(120), to: at(180) }))
        assert.deepStrictEqual(a!.outages.map((o) => [o.duration_ms / minute, o.cut]), [[30, true]])
        assert.strictEqual(a!.mttr_ms, null)
        assert.closeTo(a!.uptime!, 50, 0.005)
      }))
  })
})
