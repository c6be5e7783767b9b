import { NodeClusterSocket } from "@effect/platform-node"
import { Config, Effect, Layer, Option } from "effect"
import { RunnerAddress, SingleRunner } from "effect/cluster"
import { Digest } from "effect/crypto"

/**
 * The cluster a process joins. `start` runs a single runner in-process that
 * owns every shard; `runner` joins a cluster of runner processes that share
 * the shards, with runner and shard-lock storage in PostgreSQL, talking over
 * TCP on RUNNER_HOST:RUNNER_PORT.
 */
export const single = SingleRunner.layer({ runnerStorage: "memory" }).pipe(Layer.provide(Digest.layerWebCrypto))

export const socket = Layer.unwrap(Effect.gen(function*() {
  const host = yield* Config.String("RUNNER_HOST").pipe(Config.withDefault("127.0.0.1"))
  const port = yield* Config.Port("RUNNER_PORT").pipe(Config.withDefault(34431))
  // A dead runner's shards are taken over once its shard locks expire, so its shards run elsewhere
  // within about RUNNER_LOCK_EXPIRATION_S seconds. The locks are refreshed every third of that, and a
  // refresh that takes longer than its interval makes the runner give up every shard it holds
  // (effect/cluster's lease safety). A runner whose event loop is behind (a catch-up of thousands of
  // full checks) answers late: with 8 s (a 2-s refresh) a saturated runner at 20,000 sources dropped
  // and restarted its shards 85 times in 4 minutes, each restart more full checks; with 15 s (a 5-s
  // refresh) none (bench/README.md, "Shard locks under load").
  const expirationS = yield* Config.Int("RUNNER_LOCK_EXPIRATION_S").pipe(Config.withDefault(15))
  return NodeClusterSocket.layer({
    storage: "sql",
    shardingConfig: {
      runnerAddress: Option.some(RunnerAddress.make(host, port)),
      shardLockExpiration: `${expirationS} seconds`,
      shardLockRefreshInterval: `${Math.round((expirationS * 1000) / 3)} millis`
    }
  })
}))

/**
 * A client of the runners' cluster that runs no shard (`statusgrid http`): it sends to the shards'
 * entities wherever they run, through the same SQL storage.
 */
export const client = NodeClusterSocket.layer({ storage: "sql", clientOnly: true })
