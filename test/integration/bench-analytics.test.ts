import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Layer, Schema } from "effect"
import {
  analyticsBenchServices,
  checkedAt,
  generateHistory,
  generationPath,
  type PlannedSubject,
  planOf,
  plannedRows,
  recordStep,
  plannedTransitions,
  runAnalyticsBench,
  type Window
} from "../../bench/analytics.ts"
import * as Catalog from "../../services/catalog/Catalog.ts"
import type { HistorySubject } from "../../services/domain/History.ts"
import { Analytics } from "../../services/history/Analytics.ts"
import { ClickHouse } from "../../services/platform/ClickHouse.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { freshDatabase, tempDir, withConfig } from "../support/stores.ts"

/**
 * `statusgrid bench analytics` at a small size: the history generated inside
 * ClickHouse has the rows the plan says, and the analytics read back exactly
 * the outages, degradations and maintenances it chose; the whole bench runs,
 * then runs again on the same data without generating it anew.
 */

const hour = 3_600_000
const day = 24 * hour
const days = 2

const chdb = Layer.unwrap(Effect.map(tempDir("bench-analytics-ch"), (dir) => ClickHouse.layerEmbedded(dir, "statusgrid")))

const decodeCounts = Schema.decodeUnknownSync(Schema.Array(Schema.Struct({ results: Schema.Number, rolled: Schema.Number, unread: Schema.Number, changes: Schema.Number })))

/** Milliseconds of `windows` of `kinds` over a subject's checks, each from the check that shows it to the first after it. */
const timeIn = (t0: number, s: PlannedSubject, windows: ReadonlyArray<Window>, kinds: ReadonlyArray<Window["kind"]>, delay = 0) =>
  windows.filter((w) => kinds.includes(w.kind)).reduce((n, w) => n + checkedAt(t0, s, w.k1) - checkedAt(t0, s, w.k0 + delay), 0)

describe("statusgrid bench analytics", () => {
  it.live("generates the writers' rows and transitions, and the analytics read back the windows it chose", () =>
    Effect.gen(function*() {
      yield* Migrations.migrateClickHouse()
      // Four real sources and eight synthetic ones (some regional), six monitors, two days.
      const real = (yield* Catalog.realSeed()).slice(0, 4)
      const plan = planOf(real, { sources: 12, monitors: 6, days })
      const t0 = Math.floor((yield* Clock.currentTimeMillis) / hour) * hour - 3 * day
      yield* generateHistory(plan, t0)
      const expected = plannedRows(plan)
      const changes = plannedTransitions(plan, t0)
      const ch = yield* ClickHouse
      const [counts] = decodeCounts(yield* ch.query(`SELECT
        (SELECT count() FROM check_results) AS results,
        (SELECT sum(checks) FROM check_rollup_hourly) AS rolled,
        (SELECT count() FROM check_results WHERE status = 'unknown' AND error != '') AS unread,
        (SELECT count() FROM status_transitions) AS changes`))
      const unread = plan.subjects.flatMap((s) => s.windows.filter((w) => w.kind === "unread").map((w) => w.k1 - w.k0)).reduce((a, b) => a + b, 0)
      assert.deepStrictEqual(counts, { results: expected.rows, rolled: expected.rows, unread, changes: changes.length })

      const sources = plan.subjects.filter((s) => s.kind === "source")
      const monitors = plan.subjects.filter((s) => s.kind === "monitor")
      const windows = plan.subjects.flatMap((s) => s.windows.map((w) => w.kind))
      for (const kind of ["outage", "degraded", "maintenance", "down"] as const) assert.include(windows, kind)

      // Every subject whose page was always read: time at each level as planned (the range is whole hours of checks).
      const range = { from: t0, to: t0 + days * day }
      const read = sources.filter((s) => s.windows.every((w) => w.kind !== "unread"))
      const subjects: Array<{ subject: HistorySubject; down: number; degraded: number; maintenance: number }> = [
        ...read.flatMap((s) => [
          {
            subject: { kind: "source" as const, id: s.id, component: "" },
            down: timeIn(t0, s, s.windows, ["outage"]),
            degraded: timeIn(t0, s, s.windows, ["degraded"]),
            maintenance: timeIn(t0, s, s.windows, ["maintenance"])
          },
          ...s.components.map((component, c) => {
            const mine = s.windows.filter((w) => c >= w.c0 && c < w.c1)
            return {
              subject: { kind: "source" as const, id: s.id, component },
              down: timeIn(t0, s, mine, ["outage"]),
              degraded: timeIn(t0, s, mine, ["degraded"]),
              maintenance: timeIn(t0, s, mine, ["maintenance"])
            }
          })
        ]),
        ...monitors.map((s) => ({
          subject: { kind: "monitor" as const, id: s.id, component: "" },
          // Down from the third failed check in a row.
          down: timeIn(t0, s, s.windows, ["down"], 2),
          degraded: timeIn(t0, s, s.windows, ["degraded"]),
          maintenance: 0
        }))
      ]
      const analytics = yield* Analytics
      const got = yield* analytics.forSubjects(subjects.map((s) => s.subject), range)
      assert.deepStrictEqual(
        got.map((a) => a.durations),
        subjects.map((s) => ({
          down: s.down,
          degraded: s.degraded,
          maintenance: s.maintenance,
          operational: days * day - s.down - s.degraded - s.maintenance,
          unknown: 0
        }))
      )
      // A page unreadable for a while: only a clock hour with no check read is a gap (unknown); the rest as planned.
      const unreadable = sources.filter((s) => s.windows.some((w) => w.kind === "unread"))
      assert.isNotEmpty(unreadable)
      const gotUnread = yield* analytics.forSubjects(unreadable.map((s) => ({ kind: "source", id: s.id, component: "" })), range)
      for (const [i, a] of gotUnread.entries()) {
        const s = unreadable[i]!
        assert.strictEqual(a.durations.unknown % hour, 0)
        assert.strictEqual(a.durations.down, timeIn(t0, s, s.windows, ["outage"]))
        assert.strictEqual(Object.values(a.durations).reduce((x, y) => x + y, 0), days * day)
      }
    }).pipe(Effect.provide(Analytics.layer.pipe(Layer.provideMerge(chdb)))), 60_000)

  it.live("the whole bench at a small size, resuming a generation stopped half-way; then again on the same data without generating it", () =>
    Effect.gen(function*() {
      const options = { sources: 30, monitors: 10, days: 1, reads: 5 }
      // An earlier run stopped after its third statement, and the fourth written but not recorded: both resumed, nothing twice.
      yield* Migrations.migrateClickHouse()
      const plan = planOf(yield* Catalog.realSeed(), options)
      const t0 = Math.floor((yield* Clock.currentTimeMillis) / hour) * hour - day
      yield* generateHistory(plan, t0, { to: 3, onStep: (step) => recordStep(options, t0, step, 1) })
      yield* generateHistory(plan, t0, { from: 3, to: 4 })
      const first = yield* runAnalyticsBench(options)
      assert.strictEqual(first.generation.path, generationPath)
      assert.isFalse(first.generation.reused)
      assert.strictEqual(first.generation.resumed_at_step, 3)
      assert.strictEqual(first.range.from, new Date(t0).toISOString())
      assert.strictEqual(first.generation.check_results_rows, first.generation.rows_expected)
      assert.strictEqual(first.generation.status_transitions_rows, first.generation.transitions_expected)
      assert.strictEqual(first.uptime_all_sources.subjects, 30)
      assert.strictEqual(first.uptime_all_sources.with_uptime, 30)
      assert.strictEqual(first.analytics_all_sources.subjects, 30)
      assert.strictEqual(first.analytics_all_sources.with_uptime, 30)
      assert.strictEqual(first.source_page.reads, 5)
      assert.strictEqual(first.stack_report.components, 150)
      assert.isAbove(first.bytes_per_check_row, 0)
      const again = yield* runAnalyticsBench(options)
      assert.isTrue(again.generation.reused)
      assert.strictEqual(again.generation.check_results_rows, first.generation.check_results_rows)
      assert.strictEqual(again.range.from, first.range.from)
    }).pipe(
      Effect.provide(analyticsBenchServices.pipe(Layer.provideMerge(Layer.mergeAll(
        Layer.unwrap(Effect.map(freshDatabase, (url) => Postgres.layerServer(url, { maxConnections: 4 }))),
        chdb
      )))),
      Effect.provide(withConfig({})),
      Effect.scoped
    ), 60_000)
})
