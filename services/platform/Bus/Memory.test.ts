import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { Bus } from "../Bus.ts"
import * as MemoryBus from "./Memory.ts"

/** The in-process bus keeps time on the Effect clock: idle times, blocking reads and counter lives follow TestClock. */
describe("in-process bus on the Effect clock", () => {
  it.effect("claims a pending entry once it has been idle for the given time", () =>
    Effect.gen(function*() {
      const bus = yield* Bus
      yield* bus.xgroupCreate("s", "g", "$")
      const id = yield* bus.xadd("s", { n: "1" })
      assert.strictEqual((yield* bus.xreadgroup("s", "g", "dead", { count: 10, blockMs: 0 })).length, 1)
      yield* TestClock.adjust("99 millis")
      assert.deepStrictEqual(yield* bus.xautoclaim("s", "g", "alive", 100, 10), [])
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual((yield* bus.xautoclaim("s", "g", "alive", 100, 10)).map((e) => e.id), [id])
      // Claiming restarts the idle time.
      assert.deepStrictEqual(yield* bus.xautoclaim("s", "g", "third", 100, 10), [])
    }).pipe(Effect.provide(MemoryBus.layer)))

  it.effect("a blocking read returns empty when its time is up, and earlier with a new entry", () =>
    Effect.gen(function*() {
      const bus = yield* Bus
      yield* bus.xgroupCreate("s", "g", "$")
      const empty = yield* bus.xreadgroup("s", "g", "c", { count: 1, blockMs: 200 }).pipe(Effect.forkChild)
      yield* TestClock.adjust("200 millis")
      assert.deepStrictEqual(yield* Fiber.join(empty), [])

      const reader = yield* bus.xreadgroup("s", "g", "c", { count: 5, blockMs: 10_000 }).pipe(Effect.forkChild)
      yield* TestClock.adjust("1 second")
      yield* bus.xadd("s", { type: "incident.created" })
      assert.deepStrictEqual((yield* Fiber.join(reader)).map((e) => e.fields["type"]), ["incident.created"])
    }).pipe(Effect.provide(MemoryBus.layer)))

  it.effect("stream ids carry the clock's milliseconds; a counter lives its ttl", () =>
    Effect.gen(function*() {
      const bus = yield* Bus
      yield* TestClock.adjust("5 seconds")
      assert.deepStrictEqual([yield* bus.xadd("s", {}), yield* bus.xadd("s", {})], ["5000-0", "5000-1"])
      assert.deepStrictEqual([yield* bus.incr("k", 1000), yield* bus.incr("k", 1000)], [1, 2])
      yield* TestClock.adjust("999 millis")
      assert.strictEqual(yield* bus.incr("k", 1000), 3)
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(yield* bus.incr("k", 1000), 1)
    }).pipe(Effect.provide(MemoryBus.layer)))
})
