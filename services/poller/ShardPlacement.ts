import { Context, Duration, Effect, Layer } from "effect"
import { PollerShard } from "../domain/entities/PollerShard.ts"
import { PollerConfig } from "./PollerConfig.ts"

/** Where the poller shards stand, as `/readyz` reports it. */
export interface Placement {
  /** POLLER_SHARDS */
  readonly shards: number
  /** shards that answered having loaded their sources: running on some runner of the cluster */
  readonly placed: number
  /** sources the placed shards hold */
  readonly sources: number
}

/** How long a shard may take to answer before it counts as not placed. */
const answerWithin = Duration.seconds(2)

/**
 * Whether every poller shard runs on some runner: each is sent `Ensure` (the keeper's message,
 * which starts a shard that is not running), wherever the cluster placed it; a shard that does not
 * answer within 2 s, or answers before it has loaded its sources, is not placed (no runner holds it yet, or its runner is gone and its lock has
 * not expired). One message per shard, all at once.
 */
export class ShardPlacement extends Context.Service<ShardPlacement, {
  readonly check: Effect.Effect<Placement>
}>()("statusgrid/poller/ShardPlacement") {
  static readonly layer = Layer.effect(ShardPlacement, Effect.gen(function*() {
    const config = yield* Effect.orDie(PollerConfig)
    const client = yield* PollerShard.client
    const check = Effect.forEach(
      Array.from({ length: config.shards }, (_, i) => i),
      (shard) => client(String(shard)).Ensure().pipe(Effect.timeout(answerWithin), Effect.option),
      { concurrency: "unbounded" }
    ).pipe(
      Effect.map((answers) => {
        const placed = answers.flatMap((a) => a._tag === "Some" && a.value.started ? [a.value] : [])
        return { shards: config.shards, placed: placed.length, sources: placed.reduce((n, a) => n + a.sources, 0) }
      })
    )
    return ShardPlacement.of({ check })
  }))
}
