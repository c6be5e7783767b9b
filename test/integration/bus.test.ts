import { assert, describe, layer } from "@effect/vitest"
import { Duration, Effect, Fiber, type Layer, Stream } from "effect"
import { Bus } from "../../services/platform/Bus.ts"
import * as MemoryBus from "../../services/platform/Bus/Memory.ts"
import * as RedisBus from "../../services/platform/Bus/Redis.ts"
import { Redis } from "ioredis"
import { testRedisUrl } from "../support/stores.ts"

const run = Math.random().toString(36).slice(2, 10)
const k = (name: string) => `sg:test:${run}:${name}`

/** The same behaviour is required of Redis and of the in-process bus. */
const busSuite = (name: string, bus: Layer.Layer<Bus, unknown>) =>
  layer(bus, { timeout: 30_000, excludeTestServices: true })(name, (it) => {
    it.effect("hash fields round-trip, and an absent key reads as empty", () =>
      Effect.gen(function*() {
        const bus = yield* Bus
        const key = k("state:source:github")
        assert.deepStrictEqual(yield* bus.hgetall(key), {})
        yield* bus.hset(key, { status: "degraded", last_checked_at: "2026-11-22T00:00:00.000Z" })
        yield* bus.hset(key, { status: "operational" })
        assert.deepStrictEqual(yield* bus.hgetall(key), {
          status: "operational",
          last_checked_at: "2026-11-22T00:00:00.000Z"
        })
        yield* bus.hdel(key, ["last_checked_at"])
        assert.deepStrictEqual(yield* bus.hgetall(key), { status: "operational" })
        yield* bus.del([key])
        assert.deepStrictEqual(yield* bus.hgetall(key), {})
      }))

    it.effect("many hashes are set in one call, each keeping its other fields", () =>
      Effect.gen(function*() {
        const bus = yield* Bus
        const keys = Array.from({ length: 50 }, (_, i) => k(`many:${i}`))
        yield* bus.hset(keys[0]!, { status: "down" })
        yield* bus.hsetMany(keys.map((key, i) => [key, { last_checked_at: `2026-11-22T00:00:${String(i % 60).padStart(2, "0")}.000Z` }] as const))
        assert.deepStrictEqual(yield* bus.hgetall(keys[0]!), { status: "down", last_checked_at: "2026-11-22T00:00:00.000Z" })
        assert.deepStrictEqual(yield* bus.hgetall(keys[49]!), { last_checked_at: "2026-11-22T00:00:49.000Z" })
        yield* bus.hsetMany([])
        // More hashes than one script call takes, then entries with different fields (a pipeline).
        const more = Array.from({ length: 2_100 }, (_, i) => k(`many:more:${i}`))
        yield* bus.hsetMany(more.map((key, i) => [key, { last_checked_at: String(i) }] as const))
        assert.deepStrictEqual(yield* bus.hgetall(more[2_099]!), { last_checked_at: "2099" })
        assert.deepStrictEqual(yield* bus.hgetall(more[1_000]!), { last_checked_at: "1000" })
        yield* bus.hsetMany([[keys[1]!, { status: "up" }], [keys[2]!, { status: "down", last_checked_at: "x" }]])
        assert.deepStrictEqual(yield* bus.hgetall(keys[2]!), { status: "down", last_checked_at: "x" })
        assert.deepStrictEqual(yield* bus.hgetall(keys[1]!), { last_checked_at: "2026-11-22T00:00:01.000Z", status: "up" })
        yield* bus.del([...keys, ...more])
      }))

    it.effect("counters are incremented one by one or many in one call, and live their time from their first increment", () =>
      Effect.gen(function*() {
        const bus = yield* Bus
        const [a, b] = [k("count:a"), k("count:b")]
        assert.strictEqual(yield* bus.incr(a, 60_000), 1)
        // A key given twice is counted twice, in order.
        assert.deepStrictEqual(yield* bus.incrMany([a, b, a, b, b], 600), [2, 1, 3, 2, 3])
        assert.deepStrictEqual(yield* bus.incrMany([], 600), [])
        // b's lifetime began with its first increment (600 ms), not with its last; a keeps its minute.
        yield* Effect.sleep("800 millis")
        assert.deepStrictEqual(yield* bus.incrMany([b, a], 600), [1, 4])
        yield* bus.del([a, b])
      }))

    it.effect("delivers published messages in order to every active subscriber", () =>
      Effect.scoped(Effect.gen(function*() {
        const bus = yield* Bus
        const channel = k("deltas")
        assert.strictEqual(yield* bus.publish(channel, "nobody listens"), 0)
        const a = yield* bus.subscribe(channel)
        const b = yield* bus.subscribe(channel)
        const fa = yield* Stream.runCollect(Stream.take(a, 3)).pipe(Effect.forkScoped)
        const fb = yield* Stream.runCollect(Stream.take(b, 3)).pipe(Effect.forkScoped)
        const receivers = []
        for (const m of ["one", "two", "three"]) receivers.push(yield* bus.publish(channel, m))
        assert.deepStrictEqual(receivers, [2, 2, 2])
        assert.deepStrictEqual(yield* Fiber.join(fa), ["one", "two", "three"])
        assert.deepStrictEqual(yield* Fiber.join(fb), ["one", "two", "three"])
      })))

    it.effect("a consumer group delivers each entry once and keeps it pending until acknowledged", () =>
      Effect.gen(function*() {
        const bus = yield* Bus
        const stream = k("events")
        yield* bus.xadd(stream, { type: "before.group" })
        yield* bus.xgroupCreate(stream, "notifier", "$")
        yield* bus.xgroupCreate(stream, "notifier", "$") // idempotent
        const ids = []
        for (const n of [1, 2, 3]) ids.push(yield* bus.xadd(stream, { type: "component.status_changed", n: String(n) }))
        assert.strictEqual(yield* bus.xlen(stream), 4)

        const first = yield* bus.xreadgroup(stream, "notifier", "c1", { count: 2, blockMs: 0 })
        assert.deepStrictEqual(first.map((e) => e.fields["n"]), ["1", "2"])
        assert.deepStrictEqual(first.map((e) => e.id), ids.slice(0, 2))
        const second = yield* bus.xreadgroup(stream, "notifier", "c2", { count: 10, blockMs: 0 })
        assert.deepStrictEqual(second.map((e) => e.fields["n"]), ["3"])
        assert.deepStrictEqual(yield* bus.xreadgroup(stream, "notifier", "c1", { count: 10, blockMs: 0 }), [])

        // After a restart c1 re-reads what it had not acknowledged.
        assert.strictEqual(yield* bus.xack(stream, "notifier", [ids[0]!]), 1)
        const pending = yield* bus.xreadgroup(stream, "notifier", "c1", { count: 10, blockMs: 0, pending: true })
        assert.deepStrictEqual(pending.map((e) => e.fields["n"]), ["2"])
        assert.strictEqual(yield* bus.xack(stream, "notifier", [ids[0]!, ids[1]!]), 1)
        assert.deepStrictEqual(yield* bus.xreadgroup(stream, "notifier", "c1", { count: 10, blockMs: 0, pending: true }), [])

        // Another group reads the whole stream independently.
        yield* bus.xgroupCreate(stream, "audit", "0")
        const all = yield* bus.xreadgroup(stream, "audit", "a1", { count: 10, blockMs: 0 })
        assert.deepStrictEqual(all.map((e) => e.fields["type"]), [
          "before.group",
          "component.status_changed",
          "component.status_changed",
          "component.status_changed"
        ])
        yield* bus.del([stream])
      }))

    it.effect("entries a consumer left pending are claimed by another once idle long enough", () =>
      Effect.gen(function*() {
        const bus = yield* Bus
        const stream = k("claims")
        yield* bus.xgroupCreate(stream, "notifier", "$")
        const ids = [yield* bus.xadd(stream, { n: "1" }), yield* bus.xadd(stream, { n: "2" })]
        assert.strictEqual((yield* bus.xreadgroup(stream, "notifier", "dead", { count: 10, blockMs: 0 })).length, 2)
        // Not idle long enough: nothing moves.
        assert.deepStrictEqual(yield* bus.xautoclaim(stream, "notifier", "alive", 60_000, 10), [])
        yield* Effect.sleep(Duration.millis(150))
        const claimed = yield* bus.xautoclaim(stream, "notifier", "alive", 100, 10)
        assert.deepStrictEqual(claimed.map((e) => [e.id, e.fields["n"]]), [[ids[0], "1"], [ids[1], "2"]])
        // Now they are the new consumer's pending entries, not the old one's.
        assert.deepStrictEqual(yield* bus.xreadgroup(stream, "notifier", "dead", { count: 10, blockMs: 0, pending: true }), [])
        const mine = yield* bus.xreadgroup(stream, "notifier", "alive", { count: 10, blockMs: 0, pending: true })
        assert.deepStrictEqual(mine.map((e) => e.fields["n"]), ["1", "2"])
        // Claiming restarts the idle time.
        assert.deepStrictEqual(yield* bus.xautoclaim(stream, "notifier", "third", 100, 10), [])
        assert.strictEqual(yield* bus.xack(stream, "notifier", ids), 2)
        yield* bus.del([stream])
      }))

    it.effect("a blocking read wakes up for a new entry and times out empty", () =>
      Effect.gen(function*() {
        const bus = yield* Bus
        const stream = k("blocking")
        yield* bus.xgroupCreate(stream, "g", "$")
        const started = Date.now()
        assert.deepStrictEqual(yield* bus.xreadgroup(stream, "g", "c", { count: 1, blockMs: 200 }), [])
        assert.isAtLeast(Date.now() - started, 150)

        const reader = yield* bus.xreadgroup(stream, "g", "c", { count: 5, blockMs: 10_000 }).pipe(Effect.forkChild)
        yield* Effect.sleep("100 millis")
        yield* bus.xadd(stream, { type: "incident.created" })
        const woke = Date.now()
        const got = yield* Fiber.join(reader)
        assert.deepStrictEqual(got.map((e) => e.fields["type"]), ["incident.created"])
        assert.isBelow(Date.now() - woke, 2_000)
        yield* bus.del([stream])
      }))
  })

describe("Bus", () => {
  busSuite("on Redis (REDIS_URL)", RedisBus.layer(testRedisUrl))
  busSuite("in process", MemoryBus.layer)
})

describe("Bus counters on Redis", () => {
  layer(RedisBus.layer(testRedisUrl), { timeout: 30_000, excludeTestServices: true })("one step each", (it) => {
    it.effect("a counter left without a lifetime (an INCR whose PEXPIRE never came) gets one at its next count", () =>
      Effect.scoped(Effect.gen(function*() {
        const key = k("count:leaked")
        const redis = yield* Effect.acquireRelease(
          Effect.sync(() => new Redis(testRedisUrl, { lazyConnect: false })),
          (client) => Effect.promise(() => client.quit())
        )
        yield* Effect.promise(() => redis.set(key, "5"))
        assert.strictEqual(yield* Effect.promise(() => redis.pttl(key)), -1)
        const bus = yield* Bus
        assert.strictEqual(yield* bus.incr(key, 60_000), 6)
        const ttl = yield* Effect.promise(() => redis.pttl(key))
        assert.isAbove(ttl, 50_000)
        assert.isAtMost(ttl, 60_000)
        // A counted key keeps the lifetime it has.
        yield* Effect.sleep("200 millis")
        assert.deepStrictEqual(yield* bus.incrMany([key], 60_000), [7])
        assert.isBelow(yield* Effect.promise(() => redis.pttl(key)), ttl)
        yield* Effect.promise(() => redis.del(key))
      })))
  })
})
