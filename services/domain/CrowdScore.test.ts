import { describe, expect, it } from "vitest"
import { crowdDefaults, crowdReason, crowdScore, hourOfWeekOf, log10PoissonTail, signalOn, usualByHourOfWeek } from "./CrowdScore.ts"

/** P(X ≥ n) for X ~ Poisson(λ) the long way: Σ_{k≥n} e^−λ λ^k / k!, term by term until they vanish. */
const tailByHand = (n: number, lambda: number) => {
  let pmf = Math.exp(-lambda)
  let tail = 0
  for (let k = 0; k < n + 1000; k++) {
    if (k > 0) pmf *= lambda / k
    if (k >= n) tail += pmf
  }
  return tail
}

/** A score with this confidence and `counted` reporters, for the hysteresis. */
const at = (confidence: number, counted = 10) => ({ confidence, counted, reporters: counted, networks: counted, expected: 1, surprise: 0, corroborating: 0 })

/** `n` reporters, each from a network of its own. */
const apart = (n: number) => Array.from({ length: n }, () => 1)

describe("crowd score", () => {
  it("the Poisson tail matches the sum by hand, on both sides of λ, and stays finite far out", () => {
    for (const [n, lambda] of [[1, 1], [2, 1], [8, 1], [1, 3], [3, 3], [30, 20], [12, 0.4]] as const) {
      expect(log10PoissonTail(n, lambda)).toBeCloseTo(Math.log10(tailByHand(n, lambda)), 8)
    }
    expect(log10PoissonTail(0, 5)).toBe(0)
    // 500 reporters where 1 is usual: e^−1/500! ≈ 10^−1134.5, far below what a double holds.
    expect(log10PoissonTail(500, 1)).toBeCloseTo(-0.4343 - 1134.0864, 2)
  })

  it("one or two reports on a quiet source mean little; eight from eight networks start a signal", () => {
    const two = crowdScore({ networks: apart(2), usual: 0, failingMonitorOrganizations: 0 })
    expect(two.expected).toBe(crowdDefaults.floor)
    // P(X ≥ 2 | 1) = 0.2642: surprise 0.578 of 6.
    expect(two.confidence).toBe(10)
    expect(signalOn(false, two)).toBe(false)

    const eight = crowdScore({ networks: apart(8), usual: 0.2, failingMonitorOrganizations: 0 })
    // P(X ≥ 8 | 1) = 1.0249e-5: surprise 4.989 of 6.
    expect(eight.surprise).toBeCloseTo(4.989, 3)
    expect(eight.confidence).toBe(83)
    expect(signalOn(false, eight)).toBe(true)
  })

  it("counts at most two reporters per network", () => {
    const oneOffice = crowdScore({ networks: [8], usual: 0, failingMonitorOrganizations: 0 })
    expect(oneOffice).toMatchObject({ reporters: 8, networks: 1, counted: 2, confidence: 10 })
    expect(signalOn(false, oneOffice)).toBe(false)
  })

  it("compares with the source's own usual: thirty reporters where twenty are usual is little", () => {
    const busy = crowdScore({ networks: apart(30), usual: 20, failingMonitorOrganizations: 0 })
    expect(busy.confidence).toBe(Math.round((-Math.log10(tailByHand(30, 20)) / 6) * 100))
    expect(busy.confidence).toBeLessThan(crowdDefaults.startAt)
  })

  it("failing monitors of other organizations corroborate reports, two at most, and are nothing without a report", () => {
    const four = crowdScore({ networks: apart(4), usual: 0, failingMonitorOrganizations: 0 })
    const corroborated = crowdScore({ networks: apart(4), usual: 0, failingMonitorOrganizations: 5 })
    expect(corroborated.corroborating).toBe(2)
    expect(corroborated.surprise).toBeCloseTo(four.surprise + 2, 10)
    expect(crowdScore({ networks: [], usual: 0, failingMonitorOrganizations: 3 })).toMatchObject({ confidence: 0, corroborating: 0 })
  })

  it("a signal holds until confidence falls below the lower threshold, and needs three counted reporters to start", () => {
    expect(signalOn(false, at(69))).toBe(false)
    expect(signalOn(false, at(70))).toBe(true)
    expect(signalOn(false, at(100, 2))).toBe(false)
    expect(signalOn(true, at(30))).toBe(true)
    expect(signalOn(true, at(29))).toBe(false)
  })

  it("the usual rate of each hour of the week spreads an hour's reporters over its windows and weeks", () => {
    const usual = usualByHourOfWeek([{ hourOfWeek: 10, reporters: 24 }, { hourOfWeek: 167, reporters: 6 }], 4)
    expect(usual).toHaveLength(168)
    expect(usual[10]).toBe(1)
    expect(usual[167]).toBe(0.25)
    expect(usual.filter((u) => u > 0)).toHaveLength(2)
    // 2026-11-23 is a Monday.
    expect(hourOfWeekOf(Date.parse("2026-11-23T00:30:00Z"))).toBe(0)
    expect(hourOfWeekOf(Date.parse("2026-11-26T10:05:00Z"))).toBe(3 * 24 + 10)
    expect(hourOfWeekOf(Date.parse("2026-11-29T23:59:59Z"))).toBe(167)
  })

  it("says why in a sentence", () => {
    expect(crowdReason(crowdScore({ networks: [], usual: 0, failingMonitorOrganizations: 0 }))).toBe("No reports in the last 10 min.")
    expect(crowdReason(crowdScore({ networks: apart(23), usual: 0.4, failingMonitorOrganizations: 0 }))).toBe("23 reporters in 10 min, usually 1 or fewer.")
    expect(crowdReason(crowdScore({ networks: [5, 1, 1], usual: 2.5, failingMonitorOrganizations: 1 })))
      .toBe("7 reporters in 10 min from 3 networks, usually 2.5; monitors of 1 organization failing too.")
  })
})
