import { Effect, Layer, Option } from "effect"
import { Entity, Singleton } from "effect/cluster"
import { Fetcher } from "../adapters/Fetcher.ts"
import { PollerShard } from "../domain/entities/PollerShard.ts"
import { SecretBox } from "../platform/SecretBox.ts"
import { MonitorAgents } from "../monitors/MonitorAgents.ts"
import { MonitorStore } from "./MonitorStore.ts"
import { PollerConfig } from "./PollerConfig.ts"
import { PollerStats } from "./PollerStats.ts"
import * as ShardReloads from "./ShardReloads.ts"
import { ResultWriter } from "./ResultWriter.ts"
import { makeShard } from "./Shard.ts"
import { TransitionWriter } from "./TransitionWriter.ts"
import { SourceStore } from "./SourceStore.ts"
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
      Ensure: () => Effect.succeed({ shard: Number(address.entityId), sources: shard.size() }),
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

/**
 * Everything a runner needs to poll; requires the cluster (Sharding), the stores and the process's
 * Publisher (one per process: its hand-over directory is locked to it, and the API's manual source
 * changes go through it too). Provides ShardReloads.
 */
export const layer = Layer.mergeAll(ShardEntity, Keeper, ShardReloads.layer).pipe(
  Layer.provide(Layer.mergeAll(SourceStore.layer, MonitorStore.layer, MonitorAgents.layer, Upstream.layer, Fetcher.layer)),
  Layer.provide(SecretBox.layer),
  Layer.provideMerge(Layer.mergeAll(PollerStats.layer, ResultWriter.layer, TransitionWriter.layer))
)
