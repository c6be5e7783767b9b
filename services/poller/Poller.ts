import { Config, Effect, Layer, Option } from "effect"
import { Entity, Singleton } from "effect/cluster"
import { PollerShard } from "../domain/entities/PollerShard.ts"
import { PollerStats } from "./PollerStats.ts"
import { Publisher } from "./Publisher.ts"
import { ResultWriter } from "./ResultWriter.ts"
import { makeShard } from "./Shard.ts"
import { SourceStore } from "./SourceStore.ts"
import { Upstream } from "./Upstream.ts"

/** Poller settings (README, Configuration). */
export const PollerConfig = Config.all({
  shards: Config.Int("POLLER_SHARDS").pipe(Config.withDefault(16)),
  concurrency: Config.Int("POLLER_SHARD_CONCURRENCY").pipe(Config.withDefault(64)),
  refreshMs: Config.Int("POLLER_REFRESH_MS").pipe(Config.withDefault(15_000)),
  keeperMs: Config.Int("POLLER_KEEPER_MS").pipe(Config.withDefault(3_000)),
  intervalOverrideS: Config.option(Config.Int("POLLER_INTERVAL_OVERRIDE_S"))
})

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
      intervalOverrideS: Option.getOrUndefined(config.intervalOverrideS)
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

/** Everything a runner needs to poll; requires the cluster (Sharding) and the stores. */
export const layer = Layer.mergeAll(ShardEntity, Keeper).pipe(
  Layer.provide(Layer.mergeAll(SourceStore.layer, Publisher.layer, Upstream.layer)),
  Layer.provideMerge(Layer.mergeAll(PollerStats.layer, ResultWriter.layer))
)
