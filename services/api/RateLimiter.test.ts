import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import * as MemoryBus from "../platform/Bus/Memory.ts"
import { RateLimiter } from "./RateLimiter.ts"

const limiter = RateLimiter.layer.pipe(
  Layer.provide(MemoryBus.layer),
  Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ API_RATE_LIMIT_PER_MINUTE: "2" })))
)

describe("RateLimiter", () => {
  it.effect("counts a key per minute window: refused past the limit until the next window", () =>
    Effect.gen(function*() {
      const limits = yield* RateLimiter
      yield* TestClock.adjust("10 seconds")
      assert.isTrue((yield* limits.take("key-a")).allowed)
      assert.isTrue((yield* limits.take("key-a")).allowed)
      const refused = yield* limits.take("key-a")
      assert.isFalse(refused.allowed)
      assert.strictEqual(refused.retryAfterS, 50)
      assert.isTrue((yield* limits.take("key-b")).allowed)
      yield* TestClock.adjust("49 seconds")
      assert.isFalse((yield* limits.take("key-a")).allowed)
      yield* TestClock.adjust("1 second")
      assert.isTrue((yield* limits.take("key-a")).allowed)
    }).pipe(Effect.provide(limiter)))
})
