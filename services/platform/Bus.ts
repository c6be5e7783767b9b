import { Context, Schema } from "effect"
import type { Effect, Scope, Stream } from "effect"

export class BusError extends Schema.TaggedError<BusError>()("BusError", {
  operation: Schema.String,
  cause: Schema.Defect()
}) {}

/** One entry of an event stream: its id (`<ms>-<seq>`, ordered) and its fields. */
export interface StreamEntry {
  readonly id: string
  readonly fields: Readonly<Record<string, string>>
}

export interface ReadGroupOptions {
  /** Most entries to return. */
  readonly count: number
  /** Wait up to this long for new entries when none are ready; 0 returns at once. */
  readonly blockMs: number
  /**
   * Re-read this consumer's delivered but unacknowledged entries instead of new
   * ones (what a consumer does after a restart, before reading new entries).
   */
  readonly pending?: boolean
}

/**
 * The shared state bus: Redis when `REDIS_URL` is set, an in-process
 * equivalent otherwise. The operations are the Redis commands statusgrid uses,
 * with Redis semantics, so both implementations pass the same tests.
 * Key names are in `platform/RedisKeys.ts`.
 */
export class Bus extends Context.Service<Bus, {
  readonly kind: "redis" | "memory"
  readonly target: string
  /** HSET: set fields of a hash. */
  hset(key: string, fields: Readonly<Record<string, string>>): Effect.Effect<void, BusError>
  /** HSET of many hashes in one round trip (a pipeline); fails if any of them failed (each may be written again). */
  hsetMany(entries: ReadonlyArray<readonly [key: string, fields: Readonly<Record<string, string>>]>): Effect.Effect<void, BusError>
  /** HGETALL: all fields of a hash, `{}` when the key is absent. */
  hgetall(key: string): Effect.Effect<Record<string, string>, BusError>
  /** HDEL: remove fields of a hash. */
  hdel(key: string, fields: ReadonlyArray<string>): Effect.Effect<void, BusError>
  /** DEL: remove keys. */
  del(keys: ReadonlyArray<string>): Effect.Effect<void, BusError>
  /** PUBLISH: at-most-once fan-out to current subscribers; returns how many received it. */
  publish(channel: string, message: string): Effect.Effect<number, BusError>
  /**
   * SUBSCRIBE: once this effect succeeds the subscription is active, and the
   * stream yields every message published on `channel` from then until the
   * scope closes.
   */
  subscribe(channel: string): Effect.Effect<Stream.Stream<string, BusError>, BusError, Scope.Scope>
  /** XADD with approximate MAXLEN trimming; returns the entry id. */
  xadd(stream: string, fields: Readonly<Record<string, string>>, maxLen?: number): Effect.Effect<string, BusError>
  /** XGROUP CREATE ... MKSTREAM, idempotent. `from` is "$" (new entries only) or "0" (everything). */
  xgroupCreate(stream: string, group: string, from: "$" | "0"): Effect.Effect<void, BusError>
  /** XREADGROUP: deliver entries to `consumer`; they stay pending until acknowledged. */
  xreadgroup(
    stream: string,
    group: string,
    consumer: string,
    options: ReadGroupOptions
  ): Effect.Effect<ReadonlyArray<StreamEntry>, BusError>
  /**
   * XAUTOCLAIM from 0-0: take over up to `count` entries pending (delivered,
   * not acknowledged) to any consumer for at least `minIdleMs`, as
   * `consumer`'s; the entries of a consumer that died are handled by another.
   */
  xautoclaim(stream: string, group: string, consumer: string, minIdleMs: number, count: number): Effect.Effect<ReadonlyArray<StreamEntry>, BusError>
  /** XACK: acknowledge entries; returns how many were pending. */
  xack(stream: string, group: string, ids: ReadonlyArray<string>): Effect.Effect<number, BusError>
  /**
   * INCR, and PEXPIRE the key when the increment created it: a counter that lives `ttlMs` (rate
   * limits), in one atomic step (on Redis a script: no counter is ever left without its lifetime).
   */
  incr(key: string, ttlMs: number): Effect.Effect<number, BusError>
  /** `incr` of each key in one round trip and one step, in order; a key given twice is counted twice. */
  incrMany(keys: ReadonlyArray<string>, ttlMs: number): Effect.Effect<ReadonlyArray<number>, BusError>
  /** XLEN */
  xlen(stream: string): Effect.Effect<number, BusError>
  readonly ping: Effect.Effect<void, BusError>
}>()("statusgrid/platform/Bus") {}
