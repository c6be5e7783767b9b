import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { TestClock } from "effect/testing"
import { makeMicroCache } from "./MicroCache.ts"

const counter = () => {
  let n = 0
  return { count: () => n, compute: Effect.sync(() => ++n) }
}

describe("makeMicroCache", () => {
  it.effect("serves a fresh answer again within the TTL and recomputes after it", () =>
    Effect.gen(function*() {
      const cached = makeMicroCache(80)
      const c = counter()
      assert.deepStrictEqual([yield* cached("k", c.compute), yield* cached("k", c.compute)], [1, 1])
      assert.strictEqual(yield* cached("other", c.compute), 2)
      yield* TestClock.adjust("79 millis")
      assert.strictEqual(yield* cached("k", c.compute), 1)
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(yield* cached("k", c.compute), 3)
    }))

  it.live("concurrent misses of one key share one computation", () =>
    Effect.gen(function*() {
      const cached = makeMicroCache(1000)
      let runs = 0
      const slow = Effect.sync(() => ++runs).pipe(Effect.delay("30 millis"))
      const all = yield* Effect.all(Array.from({ length: 5 }, () => cached("k", slow)), { concurrency: "unbounded" })
      assert.deepStrictEqual(all, [1, 1, 1, 1, 1])
      assert.strictEqual(runs, 1)
    }))

  it.live("caches failures, not defects; TTL 0 caches nothing", () =>
    Effect.gen(function*() {
      const cached = makeMicroCache(1000)
      let failures = 0
      const fail = Effect.suspend(() => Effect.fail(`missing ${++failures}`))
      assert.strictEqual(yield* Effect.flip(cached("f", fail)), "missing 1")
      assert.strictEqual(yield* Effect.flip(cached("f", fail)), "missing 1")
      let defects = 0
      const die = Effect.suspend(() => Effect.die(new Error(`boom ${++defects}`)))
      assert.isTrue(Exit.hasDies(yield* Effect.exit(cached("d", die))))
      yield* Effect.exit(cached("d", die))
      assert.strictEqual(defects, 2)
      const off = makeMicroCache(0)
      const c = counter()
      assert.deepStrictEqual([yield* off("k", c.compute), yield* off("k", c.compute)], [1, 2])
    }))
})
