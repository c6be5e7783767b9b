import { Clock, Effect, Layer, Option } from "effect"
import { Entity, Singleton } from "effect/cluster"
import { Fetcher } from "../adapters/Fetcher.ts"
import { PollerShard } from "../domain/entities/PollerShard.ts"
import { SecretBox } from "../platform/SecretBox.ts"
import { MonitorAgents } from "../monitors/MonitorAgents.ts"
import { MonitorStore } from "./MonitorStore.ts"
import { PollerConfig } from "./PollerConfig.ts"
import { PollerStats, statsLogAnnotations } from "./PollerStats.ts"
import { ShardPlacement } from "./ShardPlacement.ts"
import * as ShardReloads from "./ShardReloads.ts"
import { ResultWriter } from "./ResultWriter.ts"
import { makeShard } from "./Shard.ts"
import { TransitionWriter } from "./TransitionWriter.ts"
import { SourceStore } from "./SourceStore.ts"
import { CheckTimes } from "./CheckTimes.ts"
import { Upstream } from "./Upstream.ts"


/**
 * The poller shard entity: when the cluster places shard N on this runner,
 * it loads the shard's sources and checks them until the shard moves or the
 * runner stops. `keepAlive` stops the cluster from passivating an idle shard.
 */
const ShardEntity = PollerShard.toLayer(
  Effect.gen(function*() {
    const config = yield* Effect.orDie(PollerConfig)
    const address = yield* Entity.CurrentAddress
    const shard = yield* makeShard({
      shard: Number(address.entityId),
      shards: config.shards,
      concurrency: config.concurrency,
      refreshMs: config.refreshMs,
      intervalOverrideS: Option.getOrUndefined(config.intervalOverrideS),
      // The process's catch-up rate, shared by its shards.
      catchUp: { windowMs: config.catchUpMs, perSecond: config.catchUpPerS / Math.max(1, config.shards) }
    })
    yield* shard.run.pipe(Effect.forkScoped)
    yield* Entity.keepAlive(true)
    return PollerShard.of({
      Ensure: () => Effect.sync(() => ({ shard: Number(address.entityId), sources: shard.size(), started: shard.started() })),
      Reload: () => shard.reload.pipe(Effect.as({ sources: shard.size() }))
    })
  })
)

/**
 * One keeper in the whole cluster (a singleton) tells every shard to be
 * running, every few seconds: shards start on first contact, and after a
 * runner dies its shards start on the runners that take them over.
 */
const Keeper = Singleton.make(
  "statusgrid/poller-keeper",
  Effect.gen(function*() {
    const config = yield* Effect.orDie(PollerConfig)
    const client = yield* PollerShard.client
    const ensureAll = Effect.forEach(
      Array.from({ length: config.shards }, (_, i) => i),
      (shard) => client(String(shard)).Ensure().pipe(Effect.ignore),
      { concurrency: "unbounded", discard: true }
    )
    yield* ensureAll.pipe(Effect.delay(config.keeperMs), Effect.forever)
  })
)

/** The poller's settings, read once as the runner starts: a value out of range stops it with a ConfigError naming it. */
const checkedSettings = Layer.effectDiscard(Effect.gen(function*() {
  yield* PollerConfig
}))

/**
 * Everything a runner needs to poll; requires the cluster (Sharding), the stores and the process's
 * Publisher (one per process: its hand-over directory is locked to it, and the API's manual source
 * changes go through it too). Provides ShardReloads and ShardPlacement (for /readyz).
 */
export const layer = Layer.mergeAll(checkedSettings, ShardEntity, Keeper, ShardReloads.layer, ShardPlacement.layer).pipe(
  Layer.provide(CheckTimes.layer),
  Layer.provide(Layer.mergeAll(SourceStore.layer, MonitorStore.layer, MonitorAgents.layer, Upstream.layer, Fetcher.layer)),
  Layer.provide(SecretBox.layer),
  Layer.provideMerge(Layer.mergeAll(ResultWriter.layer, TransitionWriter.layer).pipe(Layer.provideMerge(PollerStats.layer)))
)

/** The first multiple of `periodMs` (epoch milliseconds) after `nowMs`. */
export const nextBoundary = (nowMs: number, periodMs: number) => (Math.floor(nowMs / periodMs) + 1) * periodMs

/**
 * With `POLLER_STATS_LOG_MS` (off by default): every that many milliseconds, at its multiples on the
 * wall clock (so that runners log over the same periods), one "poller stats" log line at Info with
 * this process's figures over the period (checks, failures, lag percentiles), which then start over.
 * Owns the counters' resets: `start` and `runner` add it, the benchmarks' in-process pollers do not.
 */
export const statsLog = Layer.effectDiscard(Effect.gen(function*() {
  const { statsLogMs } = yield* Effect.orDie(PollerConfig)
  if (statsLogMs <= 0) return
  const stats = yield* PollerStats
  let from = yield* Clock.currentTimeMillis
  let boundary = nextBoundary(from, statsLogMs)
  yield* Effect.gen(function*() {
    yield* Effect.sleep(Math.max(0, boundary - (yield* Clock.currentTimeMillis)))
    const to = yield* Clock.currentTimeMillis
    const snapshot = yield* stats.drain
    yield* Effect.logInfo("poller stats").pipe(Effect.annotateLogs(statsLogAnnotations(snapshot, from, to)))
    from = to
    // A period the process missed (a stalled event loop) is skipped, not logged empty.
    boundary = nextBoundary(Math.max(boundary, to), statsLogMs)
  }).pipe(Effect.forever, Effect.forkScoped)
}))
