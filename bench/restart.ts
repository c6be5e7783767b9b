import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Catalog from "../services/catalog/Catalog.ts"
import * as Migrations from "../services/platform/Migrations.ts"
import { PollerStats } from "../services/poller/PollerStats.ts"
import { percentile, round } from "./figures.ts"
import { pollerLayer } from "./poller.ts"
import { spawnSimulator } from "./simulatorProcess.ts"

export interface RestartBenchOptions {
  readonly sources: number
  /** seconds the poller is stopped between its two runs */
  readonly downS: number
  /** seconds the second run is watched after every overdue source was checked */
  readonly afterS: number
  /** POLLER_SHARDS, to tell when every shard has started */
  readonly shards: number
}

interface Checked {
  readonly key: string
  /** epoch ms, null if never checked */
  readonly at: number | null
  readonly interval_ms: number
}

const readChecks = Effect.gen(function*() {
  const sql = yield* SqlClient
  const rows = yield* sql<{ key: string; at: number | null; interval_s: number }>`
    SELECT s.key, (extract(epoch FROM c.checked_at) * 1000)::float8 AS at, s.poll_interval_s AS interval_s
    FROM sources s LEFT JOIN source_checks c ON c.source_id = s.id WHERE s.enabled AND s.synthetic`
  return rows.map((r): Checked => ({ key: r.key, at: r.at === null ? null : Number(r.at), interval_ms: Number(r.interval_s) * 1000 }))
})

/** Runs the poller in its own scope until `until` holds (checked every 250 ms); the time it took. */
const runPoller = <E, R>(shards: number, until: (stats: PollerStats["Service"]) => Effect.Effect<boolean, E, R>, limitMs: number) =>
  Effect.gen(function*() {
    const started = Date.now()
    const context = yield* Layer.build(pollerLayer)
    const stats = Context.get(context, PollerStats)
    let startedAllMs: number | undefined
    for (;;) {
      yield* Effect.sleep("250 millis")
      if (startedAllMs === undefined && (yield* stats.snapshot).shardStarts >= shards) {
        startedAllMs = Date.now() - started
      }
      if (yield* until(stats)) break
      if (Date.now() - started > limitMs) return yield* Effect.fail(new Error(`not done within ${limitMs / 1000} s`))
    }
    return { elapsedMs: Date.now() - started, shardsStartedMs: startedAllMs, stats: yield* stats.snapshot }
  }).pipe(Effect.scoped)

/**
 * `statusgrid bench restart`: N synthetic sources at their check classes' intervals (30 s to 15 min),
 * each last checked at a random point of its interval (a running installation); the poller runs 30 s,
 * stops for `downS`, and starts again. Measured:
 * the time from the second start to every overdue source checked, and how close the others' first
 * checks are to their cadence (last check + interval). Check times are read from PostgreSQL, where
 * the shards save them once a second: each figure may be up to a second late.
 */
export const runRestartBench = Effect.fn("bench.restart")(function*(options: RestartBenchOptions) {
  const sim = yield* spawnSimulator({ sources: options.sources, latency: "50-500", errorRate: 0 })
  yield* Migrations.migrateAll()
  yield* Catalog.enableSynthetic(Catalog.syntheticEntries(options.sources, sim.url))

  // As a running installation left them: each source last checked at a random point of its last interval
  // (a fresh installation's first checks are spread over one interval, FirstChecks.ts). The first run then
  // checks them on that cadence for 30 s, so the times the restart reads are the poller's own where due.
  const sql = yield* SqlClient
  yield* sql`
    INSERT INTO source_checks (source_id, checked_at)
    SELECT id, now() - random() * poll_interval_s * interval '1 second' FROM sources WHERE enabled AND synthetic
    ON CONFLICT (source_id) DO UPDATE SET checked_at = excluded.checked_at, error = NULL`
  const firstStarted = Date.now()
  const first = yield* runPoller(options.shards, () => Effect.succeed(Date.now() - firstStarted >= 30_000), 600_000)

  yield* Effect.sleep(`${options.downS} seconds`)
  const before = yield* readChecks
  const restartAt = Date.now()
  const overdue = new Set(before.filter((r) => r.at! + r.interval_ms <= restartAt).map((r) => r.key))
  const planned = new Map(before.filter((r) => !overdue.has(r.key)).map((r) => [r.key, r.at! + r.interval_ms]))

  let caughtUpMs: number | undefined
  let watchUntil = Number.POSITIVE_INFINITY
  const firstAfter = new Map<string, number>()
  const second = yield* runPoller(options.shards, () =>
    Effect.gen(function*() {
      const now = Date.now()
      for (const r of yield* readChecks) {
        if (r.at !== null && r.at >= restartAt && !firstAfter.has(r.key)) firstAfter.set(r.key, r.at)
      }
      if (caughtUpMs === undefined && [...overdue].every((key) => firstAfter.has(key))) {
        caughtUpMs = now - restartAt
        watchUntil = now + options.afterS * 1000
      }
      return now >= watchUntil
    }), 900_000)

  // The others: first check after the restart against their cadence, for those due while watched.
  const watchedUntil = restartAt + second.elapsedMs
  const offsets: Array<number> = []
  let early = 0
  let missed = 0
  for (const [key, due] of planned) {
    if (due > watchedUntil - 2_000) continue
    const at = firstAfter.get(key)
    if (at === undefined) {
      missed++
      continue
    }
    offsets.push(at - due)
    if (at < due - 1_000) early++
  }
  const sorted = offsets.toSorted((a, b) => a - b)
  return {
    bench: "restart",
    sources: options.sources,
    down_s: options.downS,
    first_run: { ran_s: round(first.elapsedMs / 1000), shards_started_s: round((first.shardsStartedMs ?? 0) / 1000), checks: first.stats.checks },
    restart: {
      shards_started_s: round((second.shardsStartedMs ?? 0) / 1000),
      overdue: overdue.size,
      on_cadence: planned.size,
      all_overdue_checked_s: round((caughtUpMs ?? 0) / 1000),
      // The rest, due while watched: their first check minus their last + interval (ms; + up to 1 s of saving).
      due_while_watched: offsets.length + missed,
      cadence_offset_ms: offsets.length === 0 ? null : {
        p50: round(percentile(sorted, 50)),
        p99: round(percentile(sorted, 99)),
        max: round(sorted.at(-1)!)
      },
      checked_early: early,
      not_checked_when_due: missed,
      lag_ms: { p50: round(second.stats.lag.p50), p99: round(second.stats.lag.p99), max: round(second.stats.lag.max) },
      checks: second.stats.checks
    }
  }
})
