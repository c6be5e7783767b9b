import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { PollerShard } from "../domain/entities/PollerShard.ts"
import { ShardReloads } from "../domain/ShardReloads.ts"
import { PollerConfig } from "./PollerConfig.ts"
import { shardExpr } from "./SourceStore.ts"
import { rowsOf } from "../platform/Rows.ts"

/** The expression is a bigint: the driver hands a BigInt. */
const decodeShards = rowsOf("shards", Schema.Struct({ shard: Schema.Union([Schema.Number, Schema.BigInt]) }))

/** The rows of the queries below, decoded by Schemas compiled once (services/platform/Rows.ts). */


/**
 * ShardReloads through the cluster: the shard that owns a key (the shard may
 * run on another runner) is told to re-read its sources and monitors.
 */
export const layer = Layer.effect(
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
