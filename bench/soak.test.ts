import { describe, expect, it } from "vitest"
import { outagePlan, rssFlatness, slope } from "./soak.ts"

describe("bench soak's outage plan", () => {
  it("cuts each store every 10 minutes, starting 5 s before minutes 2, 4 and 6 of the cycle", () => {
    const plan = outagePlan(60, 60, 20)
    expect(plan).toHaveLength(18)
    expect(plan.slice(0, 4)).toEqual([
      { store: "postgres", at_s: 115, seconds: 20 },
      { store: "redis", at_s: 235, seconds: 20 },
      { store: "clickhouse", at_s: 355, seconds: 20 },
      { store: "postgres", at_s: 715, seconds: 20 }
    ])
    expect(plan.at(-1)).toEqual({ store: "clickhouse", at_s: 3355, seconds: 20 })
  })

  it("scales down in short runs: one of each, across period boundaries when there are 4 periods or more", () => {
    expect(outagePlan(4, 15, 5)).toEqual([
      { store: "postgres", at_s: 14, seconds: 5 },
      { store: "redis", at_s: 29, seconds: 5 },
      { store: "clickhouse", at_s: 44, seconds: 5 }
    ])
    // 3 minutes of 60 s: at 15, 40 and 65 % of the run, each at most a quarter of it.
    expect(outagePlan(3, 60, 20)).toEqual([
      { store: "postgres", at_s: 27, seconds: 20 },
      { store: "redis", at_s: 72, seconds: 20 },
      { store: "clickhouse", at_s: 117, seconds: 20 }
    ])
    expect(outagePlan(1, 60, 20).map((o) => o.seconds)).toEqual([15, 15, 15])
    expect(outagePlan(10, 60, 0)).toEqual([])
  })

  it("never plans an outage past the run's end", () => {
    for (const [periods, periodS, outageS] of [[5, 60, 20], [9, 60, 20], [11, 60, 20], [20, 30, 20], [4, 10, 30]] as const) {
      for (const o of outagePlan(periods, periodS, outageS)) {
        expect(o.at_s).toBeGreaterThanOrEqual(0)
        expect(o.at_s + o.seconds).toBeLessThanOrEqual(periods * periodS)
      }
    }
  })
})

describe("bench soak's RSS judgement", () => {
  it("fits a line", () => {
    expect(slope([[0, 1], [1, 3], [2, 5]])).toBeCloseTo(2)
    expect(slope([[1, 1]])).toBeNull()
  })

  it("is flat when the second half grows under 1 MB/min, and undecided under 4 points there", () => {
    const noisy = Array.from({ length: 60 }, (_, i) => [i + 1, 600 + (i % 2 === 0 ? 5 : -5) + (i < 10 ? i * 10 : 90)] as const)
    expect(rssFlatness(noisy).rss_flat).toBe(true)
    const leaking = Array.from({ length: 60 }, (_, i) => [i + 1, 600 + 2 * i] as const)
    expect(rssFlatness(leaking)).toMatchObject({ rss_flat: false, slope_second_half_mb_per_min: 2 })
    expect(rssFlatness([[1, 300], [2, 320], [3, 330]]).rss_flat).toBeNull()
  })
})
