import { Clock, Effect } from "effect"
import type { HistorySubject, HistoryWindow } from "../services/domain/History.ts"
import { StatusHistory } from "../services/history/StatusHistory.ts"
import { ClickHouse } from "../services/platform/ClickHouse.ts"
import * as Migrations from "../services/platform/Migrations.ts"
import { peakRssMb, percentile, round } from "./figures.ts"

export interface HistoryBenchOptions {
  /** components in the stack, spread over sources of `perSource` components */
  readonly components: number
  readonly perSource: number
  /** reads of each window measured (after 3 unmeasured) */
  readonly reads: number
}

const hour = 3_600_000
const day = 86_400_000
const statuses = ["operational", "operational", "operational", "operational", "operational", "operational", "degraded", "down", "maintenance"]

/**
 * A stack's history page: `components` components (of `components / perSource` sources) with 90
 * days of checks (one every 3 hours) and the last 24 hours dense (one every 5 minutes), inserted as
 * the ResultWriter inserts (one row per source check, its components in arrays, into check_results,
 * so the rollups are fed by their views); then
 * `forSubjects` for the whole stack, 24 h and 90 d, timed one read after another.
 */
export const runHistoryBench = (options: HistoryBenchOptions) =>
  Effect.gen(function*() {
    const ch = yield* ClickHouse
    yield* Migrations.migrateClickHouse()
    const now = yield* Clock.currentTimeMillis
    const subjects: Array<HistorySubject> = Array.from({ length: options.components }, (_, i) => ({
      kind: "source" as const,
      id: `bench-history-${Math.floor(i / options.perSource)}`,
      component: `component-${i}`
    }))
    const times = [
      ...Array.from({ length: 90 * 8 }, (_, i) => now - 90 * day + i * 3 * hour),
      ...Array.from({ length: 288 }, (_, i) => now - day + i * 300_000)
    ]
    const loadStarted = Date.now()
    // One row per source check with its components in arrays, as the poller writes them (decision 0016).
    const sources = new Map<string, Array<readonly [number, HistorySubject]>>()
    for (const [s, subject] of subjects.entries()) {
      const members = sources.get(subject.id)
      if (members === undefined) sources.set(subject.id, [[s, subject]])
      else members.push([s, subject])
    }
    let rows = 0
    let batch: Array<Record<string, unknown>> = []
    for (const [id, members] of sources) {
      for (const [t, at] of times.entries()) {
        batch.push({
          checked_at: new Date(at).toISOString(),
          subject_kind: "source",
          subject_id: id,
          component_id: "",
          status: "operational",
          latency_ms: 100,
          http_status: 200,
          bytes: 0,
          error: "",
          region: "",
          shard: 0,
          component_ids: members.map(([, subject]) => subject.component),
          component_statuses: members.map(([s]) => statuses[(s * 7 + t) % statuses.length]!),
          component_regions: members.map(() => "")
        })
      }
      if (batch.length >= 10_000) {
        yield* ch.insert("check_results", batch)
        rows += batch.length
        batch = []
      }
    }
    yield* ch.insert("check_results", batch)
    rows += batch.length
    const loadS = (Date.now() - loadStarted) / 1000

    const history = yield* StatusHistory
    const measure = (window: HistoryWindow) =>
      Effect.gen(function*() {
        const ms: Array<number> = []
        let cells = 0
        for (let i = 0; i < options.reads + 3; i++) {
          const started = performance.now()
          const strips = yield* history.forSubjects(subjects, window)
          if (i >= 3) ms.push(performance.now() - started)
          cells = strips.reduce((n, s) => n + s.cells.filter((c) => c.status !== "no_data").length, 0)
        }
        const sorted = ms.toSorted((a, b) => a - b)
        return { p50_ms: round(percentile(sorted, 50)), p99_ms: round(percentile(sorted, 99)), max_ms: round(sorted.at(-1) ?? 0), cells_with_data: cells }
      })
    const h24 = yield* measure("24h")
    const d90 = yield* measure("90d")
    return {
      bench: "history",
      store: ch.kind,
      components: options.components,
      sources: Math.ceil(options.components / options.perSource),
      rows,
      load_s: round(loadS, 1),
      reads: options.reads,
      window_24h: h24,
      window_90d: d90,
      peak_rss_mb: peakRssMb()
    }
  })
