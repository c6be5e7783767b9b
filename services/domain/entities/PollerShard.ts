import { Schema } from "effect"
import { Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"

/**
 * Starts the shard if it is not running (the keeper sends it to every shard every few seconds);
 * `started`: it has loaded its sources and checks them (/readyz counts it placed).
 */
export const Ensure = Rpc.make("Ensure", {
  success: Schema.Struct({ shard: Schema.Number, sources: Schema.Number, started: Schema.Boolean })
})

/** Re-reads the shard's sources from PostgreSQL now (after a source was added, edited or removed). */
export const Reload = Rpc.make("Reload", {
  success: Schema.Struct({ sources: Schema.Number })
})

/** A poller shard: entity id is the shard number, "0" to POLLER_SHARDS - 1. */
export const PollerShard = Entity.make("PollerShard", [Ensure, Reload])
