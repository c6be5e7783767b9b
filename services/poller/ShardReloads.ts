import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { PollerShard } from "../domain/entities/PollerShard.ts"
import { PollerConfig } from "./PollerConfig.ts"
import { shardExpr } from "./SourceStore.ts"
import { rowsOf } from "../platform/Rows.ts"

/** The expression is a bigint: the driver hands a BigInt. */
const decodeShards = rowsOf("shards", Schema.Struct({ shard: Schema.Union([Schema.Number, Schema.BigInt]) }))

/** The rows of the queries below, decoded by Schemas compiled once (services/platform/Rows.ts). */


/**
 * Tells the shards that own some sources to re-read them now, through the
 * cluster (the shard may run on another runner), so an edit made through the
 * API is polled on its next check rather than after the next periodic refresh
 * (`POLLER_REFRESH_MS`, the fallback for writers outside the cluster such as
 * `statusgrid catalog import`).
 */
export class ShardReloads extends Context.Service<ShardReloads, {
  sources(keys: ReadonlyArray<string>): Effect.Effect<void>
  monitors(ids: ReadonlyArray<string>): Effect.Effect<void>
}>()("statusgrid/poller/ShardReloads") {
  static readonly layer = Layer.effect(
    ShardReloads,
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const client = yield* PollerShard.client
      const { shards } = yield* Effect.orDie(PollerConfig)
      // The shard of a key (or monitor id) is PostgreSQL's hash of it, as the shards load them.
      const reloadOwners = (keys: ReadonlyArray<string>) =>
        keys.length === 0 ? Effect.void : Effect.gen(function*() {
          const rows = yield* sql.unsafe(
            `SELECT DISTINCT ${shardExpr(shards, "k")}::int AS shard FROM unnest($1::text[]) AS t(k)`,
            [keys]
          ).pipe(Effect.flatMap(decodeShards))
          yield* Effect.forEach(rows, ({ shard }) => client(String(shard)).Reload(), { concurrency: "unbounded", discard: true })
        }).pipe(
          // A shard that cannot be reached now still picks the change up on its next refresh.
          Effect.catchCause((cause) => Effect.logWarning("could not reload shards", cause))
        )
      return ShardReloads.of({ sources: reloadOwners, monitors: reloadOwners })
    })
  )
}
