import { describe, expect, it } from "vitest"
import { latencySlices, slicesAfter } from "./latencySlices.ts"

describe("latencySlices", () => {
  // 4 slices of 250 ms, 100 requests each; the third slice's requests all wait 120 ms.
  const scheduled = Array.from({ length: 400 }, (_, i) => 1_000 + i * 2.5)
  const latency = scheduled.map((_, i) => (i >= 200 && i < 300 ? 120 : 5 + (i % 10)))

  it("cuts the requests by scheduled time and finds the slow slice", () => {
    const s = latencySlices(scheduled, latency, { sliceMs: 250, limitMs: 50 })
    expect(s.slices).toBe(4)
    expect(s.over_limit).toBe(1)
    expect(s.worst[0]).toEqual({ at_s: 0.5, p99_ms: 120, p50_ms: 120 })
    expect(s.worst[1]!.p99_ms).toBe(14)
  })

  it("counts the slow slices that follow an event against all slices", () => {
    const s = latencySlices(scheduled, latency, { sliceMs: 250, limitMs: 50 })
    // an event 100 ms before the slow slice (which starts at 1,500), one long before anything
    const near = slicesAfter(s.starts, [1_400, -5_000], { sliceMs: 250, limitMs: 50, beforeMs: 500 })
    expect(near).toEqual({ over_limit_near: 1, over_limit: 1, all_near: 3, all: 4 })
    expect(slicesAfter(s.starts, [3_000], { sliceMs: 250, limitMs: 50, beforeMs: 500 }).over_limit_near).toBe(0)
  })
})
