import { assert, describe, it } from "@effect/vitest"
import { retryAfterMs } from "./retry.ts"

describe("Retry-After (the one parser of every outbound client)", () => {
  const now = Date.parse("2026-11-22T10:00:00Z")

  it("reads delay-seconds, fractions included, rounded up to the millisecond", () => {
    assert.strictEqual(retryAfterMs("120", now), 120_000)
    assert.strictEqual(retryAfterMs(" 0 ", now), 0)
    // Date.parse reads "1.5" as a date in 2001: this is one and a half seconds.
    assert.strictEqual(retryAfterMs("1.5", now), 1_500)
    assert.strictEqual(retryAfterMs("0.0004", now), 1)
  })

  it("reads the three HTTP-date forms of RFC 9110 as UTC, a past date as 0", () => {
    assert.strictEqual(retryAfterMs("Sun, 22 Nov 2026 10:00:30 GMT", now), 30_000)
    assert.strictEqual(retryAfterMs("Sunday, 22-Nov-26 10:01:00 GMT", now), 60_000)
    assert.strictEqual(retryAfterMs("Sun Nov 22 10:02:00 2026", now), 120_000)
    assert.strictEqual(retryAfterMs("Sun Nov  1 10:00:00 2026", now), 0)
    assert.strictEqual(retryAfterMs("Sun, 22 Nov 2026 09:00:00 GMT", now), 0)
  })

  it("ignores garbage", () => {
    for (const value of [undefined, "", "soon", "-1", "1.5.2", "12 seconds", "Sun, 32 Nov 2026 10:00:00 GMT", "Nov 22 2026"]) {
      assert.strictEqual(retryAfterMs(value, now), undefined, String(value))
    }
  })
})
