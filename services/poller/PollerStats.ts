import { Context, Effect, Layer } from "effect"
import * as Metrics from "../platform/Metrics.ts"
import { PollerConfig } from "./PollerConfig.ts"

export interface PollerStatsSnapshot {
  /** checks since the last reset */
  readonly checks: number
  /** checks since the process started (never reset) */
  readonly checksSinceStart: number
  readonly failures: number
  readonly notModified: number
  readonly changes: number
  readonly sources: number
  /** shards running in this process */
  readonly shards: number
  /** shard starts in this process (more than POLLER_SHARDS means shards restarted or moved here) */
  readonly shardStarts: number
  /** schedule lag (actual start minus planned start), milliseconds */
  readonly lag: { readonly p50: number; readonly p99: number; readonly max: number; readonly samples: number }
}

/** How many recent lag samples are kept for percentiles. */
const window = 200_000

const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!

/**
 * Counters of this process's pollers, for logs and the benchmark; each figure also goes to the
 * process's metrics (services/platform/Metrics.ts), which `/metrics` serves.
 */
export class PollerStats extends Context.Service<PollerStats, {
  check(kind: Metrics.CheckKind, outcome: Metrics.CheckOutcome, lagMs: number): void
  changed(kind: Metrics.CheckKind): void
  sources(shard: number, count: number): void
  /** How to read the number of changed snapshots `shard` holds until PostgreSQL takes them (until it stops). */
  saving(shard: number, waiting: () => number): void
  /** The changed snapshots this process's shards hold unsaved, now. */
  unsaved(): number
  shardStarted(): void
  /** the shard stopped here (moved to another runner, or the runner stops): its sources no longer count */
  shardStopped(shard: number): void
  /**
   * The shards loaded here over all shards (`POLLER_SHARDS`): this process's share of the checks, and
   * so of the rows the cluster writes (the result writers' `share`).
   */
  share(): number
  readonly snapshot: Effect.Effect<PollerStatsSnapshot>
  readonly reset: Effect.Effect<void>
  /** the snapshot, then reset, at once: no check falls between the two */
  readonly drain: Effect.Effect<PollerStatsSnapshot>
}>()("statusgrid/poller/PollerStats") {
  static readonly layer = Layer.effect(PollerStats, Effect.gen(function*() {
    const { shards } = yield* Effect.orDie(PollerConfig)
    let checks = 0
    let checksSinceStart = 0
    let failures = 0
    let notModified = 0
    let changes = 0
    let maxLag = 0
    let shardStarts = 0
    let lags = new Float64Array(window)
    let filled = 0
    let next = 0
    const perShard = new Map<number, number>()
    const waitingPerShard = new Map<number, () => number>()
    const unsaved = () => {
      let total = 0
      for (const waiting of waitingPerShard.values()) total += waiting()
      return total
    }
    yield* Metrics.gauges([
      [Metrics.unsavedSnapshots, {}, unsaved],
      [Metrics.shards, {}, () => perShard.size],
      [Metrics.scheduled, {}, () => {
        let total = 0
        for (const count of perShard.values()) total += count
        return total
      }]
    ])
    const read = (): PollerStatsSnapshot => {
      const sorted = Array.from(lags.subarray(0, filled)).toSorted((a, b) => a - b)
      return {
        checks,
        checksSinceStart,
        failures,
        notModified,
        changes,
        sources: [...perShard.values()].reduce((a, b) => a + b, 0),
        shards: perShard.size,
        shardStarts,
        lag: { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: maxLag, samples: filled }
      }
    }
    const clear = () => {
      checks = failures = notModified = changes = maxLag = filled = next = 0
      lags = new Float64Array(window)
    }
    return PollerStats.of({
      check: (kind, outcome, lagMs) => {
        Metrics.count(Metrics.checks, { kind, outcome })
        Metrics.observe(Metrics.scheduleLag, { kind }, Math.max(0, lagMs) / 1000)
        checks++
        checksSinceStart++
        if (outcome === "failed") failures++
        if (outcome === "not_modified") notModified++
        if (lagMs > maxLag) maxLag = lagMs
        lags[next] = lagMs
        next = (next + 1) % window
        if (filled < window) filled++
      },
      changed: (kind) => {
        Metrics.count(Metrics.statusChanges, { kind })
        changes++
      },
      sources: (shard, count) => {
        perShard.set(shard, count)
      },
      saving: (shard, waiting) => {
        waitingPerShard.set(shard, waiting)
      },
      unsaved,
      shardStarted: () => {
        Metrics.count(Metrics.shardStarts, {})
        shardStarts++
      },
      shardStopped: (shard) => {
        Metrics.count(Metrics.shardStops, {})
        perShard.delete(shard)
        waitingPerShard.delete(shard)
      },
      share: () => perShard.size / Math.max(1, shards),
      snapshot: Effect.sync(read),
      reset: Effect.sync(clear),
      drain: Effect.sync(() => {
        const snapshot = read()
        clear()
        return snapshot
      })
    })
  }))
}

/**
 * The annotations of the "poller stats" log line (`POLLER_STATS_LOG_MS`): the figures of the period
 * from `fromMs` to `toMs` (epoch milliseconds), flat, lag in milliseconds.
 */
export const statsLogAnnotations = (snapshot: PollerStatsSnapshot, fromMs: number, toMs: number) => ({
  from_ms: fromMs,
  to_ms: toMs,
  checks: snapshot.checks,
  failures: snapshot.failures,
  not_modified: snapshot.notModified,
  changes: snapshot.changes,
  lag_p50_ms: snapshot.lag.p50,
  lag_p99_ms: snapshot.lag.p99,
  lag_max_ms: snapshot.lag.max,
  lag_samples: snapshot.lag.samples,
  checks_since_start: snapshot.checksSinceStart,
  sources: snapshot.sources,
  shards: snapshot.shards,
  shard_starts: snapshot.shardStarts
})
