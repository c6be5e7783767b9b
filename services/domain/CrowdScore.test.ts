import { describe, expect, it } from "vitest"
import {
  crowdDefaults,
  crowdReason,
  crowdScore,
  hourOfWeekOf,
  log10PoissonTail,
  signalOn,
  usualByHourOfWeek,
  windowNetworks
} from "./CrowdScore.ts"

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

/** The confidence of a surprise under the defaults. */
const confidenceOf = (surprise: number) => Math.round(Math.min(100, (surprise / crowdDefaults.fullSurprise) * 100))

/** A score with this confidence and `counted` reporters, for the hysteresis. */
const at = (confidence: number, counted = 10) => ({ confidence, counted })

/** `n` reporters, each from a network of its own. */
const apart = (n: number) => Array.from({ length: n }, () => 1)

const minute = 60_000
const now = Date.parse("2026-11-27T10:00:00Z")

describe("crowd score", () => {
  it("the Poisson tail matches the sum by hand, on both sides of λ, and stays finite far out", () => {
    for (const [n, lambda] of [[1, 1], [2, 1], [8, 1], [1, 3], [3, 3], [30, 20], [12, 0.4], [4, 0.04]] as const) {
      expect(log10PoissonTail(n, lambda)).toBeCloseTo(Math.log10(tailByHand(n, lambda)), 8)
    }
    expect(log10PoissonTail(0, 5)).toBe(0)
    // 500 reporters where 1 is usual: e^−1/500! ≈ 10^−1134.5, far below what a double holds.
    expect(log10PoissonTail(500, 1)).toBeCloseTo(-0.4343 - 1134.0864, 2)
  })

  it("one or two reports on a quiet source mean little; five in ten minutes from five networks start a signal", () => {
    const two = crowdScore({ networks: apart(2), usual: 0, failingMonitorOrganizations: 0 })
    expect(two.expected).toBe(crowdDefaults.floor)
    // P(X ≥ 2 | 0.2) = 0.0175: surprise 1.76 of 6.5.
    expect(two.confidence).toBe(confidenceOf(-Math.log10(tailByHand(2, 0.2))))
    expect(two.confidence).toBe(27)
    expect(signalOn(false, two)).toBe(false)

    const four = crowdScore({ networks: apart(4), usual: 0.1, failingMonitorOrganizations: 0 })
    expect(four.confidence).toBeLessThan(crowdDefaults.startAt)
    const five = crowdScore({ networks: apart(5), usual: 0.1, failingMonitorOrganizations: 0 })
    // P(X ≥ 5 | 0.2) = 2.2e-6: surprise 5.66 of 6.5.
    expect(five.surprise).toBeCloseTo(-Math.log10(tailByHand(5, 0.2)), 8)
    expect(five.confidence).toBe(87)
    expect(signalOn(false, five)).toBe(true)
  })

  it("counts at most two reporters per network", () => {
    const oneOffice = crowdScore({ networks: [8], usual: 0, failingMonitorOrganizations: 0 })
    expect(oneOffice).toMatchObject({ reporters: 8, networks: 1, counted: 2, confidence: 27 })
    expect(signalOn(false, oneOffice)).toBe(false)
  })

  it("compares with the source's own usual: thirty reporters where twenty are usual is little", () => {
    const busy = crowdScore({ networks: apart(30), usual: 20, failingMonitorOrganizations: 0 })
    expect(busy.confidence).toBe(confidenceOf(-Math.log10(tailByHand(30, 20))))
    expect(busy.confidence).toBeLessThan(crowdDefaults.startAt)
  })

  it("scores the last minutes too: four reporters within two minutes start a signal that four over ten minutes do not", () => {
    const reports = [90, 80, 70, 61].map((s, i) => ({ at: now - s * 1000, reporter: `r${i}`, network: `n${i}` }))
    const burst = crowdScore({ ...windowNetworks(reports, now), usual: 0, failingMonitorOrganizations: 0 })
    // None in the last minute; four in the last 2, 3 and 5 minutes: the 2-minute window is the most surprising.
    expect(burst).toMatchObject({ windowMs: 2 * minute, reporters: 4, counted: 4, expected: 0.04 })
    expect(burst.surprise).toBeCloseTo(-Math.log10(tailByHand(4, 0.04)) - crowdDefaults.shortWindowPenalty, 8)
    expect(signalOn(false, burst)).toBe(true)
    expect(crowdReason(burst)).toBe("4 reporters in 2 min, usually 0.04 or fewer.")

    const spread = [540, 400, 260, 61].map((s, i) => ({ at: now - s * 1000, reporter: `r${i}`, network: `n${i}` }))
    const slow = crowdScore({ ...windowNetworks(spread, now), usual: 0, failingMonitorOrganizations: 0 })
    expect(slow.windowMs).toBe(10 * minute)
    expect(slow.confidence).toBe(confidenceOf(-Math.log10(tailByHand(4, 0.2))))
    expect(signalOn(false, slow)).toBe(false)
  })

  it("takes each window's reporters once, in the network of their latest report, and none from the future", () => {
    const reports = [
      { at: now - 9 * minute, reporter: "a", network: "home" },
      { at: now - 4 * minute, reporter: "b", network: "office" },
      { at: now - 30_000, reporter: "a", network: "office" },
      { at: now - 20_000, reporter: "c", network: "office" },
      { at: now + 1000, reporter: "d", network: "elsewhere" }
    ]
    const w = windowNetworks(reports, now)
    expect(w.networks).toEqual([3])
    // 1, 2, 3 and 5 minutes: a and c in the first three, b too in the last.
    expect(w.recent).toEqual([[2], [2], [2], [3]])
    // The rows' order does not matter (the table is read without ORDER BY).
    expect(windowNetworks(reports.toReversed(), now)).toEqual(w)
    // Two in the last minute where 0.02 are usual is more surprising than three (two counted) in ten.
    expect(crowdScore({ ...w, usual: 0, failingMonitorOrganizations: 0 })).toMatchObject({ windowMs: minute, reporters: 2, networks: 1, counted: 2 })
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

  it("the usual rate of each hour of the week spreads an hour's reporters over its windows and weeks, and over the hours beside it", () => {
    const hours = [{ hourOfWeek: 10, reporters: 24 }, { hourOfWeek: 167, reporters: 6 }]
    const raw = usualByHourOfWeek(hours, 4, { ...crowdDefaults, baselineSpreadHours: 0 })
    expect(raw).toHaveLength(168)
    expect(raw[10]).toBe(1)
    expect(raw[167]).toBe(0.25)
    expect(raw.filter((u) => u > 0)).toHaveLength(2)
    const usual = usualByHourOfWeek(hours, 4)
    expect(usual[9]).toBeCloseTo(1 / 3, 12)
    expect(usual[10]).toBeCloseTo(1 / 3, 12)
    expect(usual[11]).toBeCloseTo(1 / 3, 12)
    // Sunday's last hour is beside Monday's first.
    expect(usual[0]).toBeCloseTo(0.25 / 3, 12)
    expect(usual.filter((u) => u > 0)).toHaveLength(6)
    // 2026-11-23 is a Monday.
    expect(hourOfWeekOf(Date.parse("2026-11-23T00:30:00Z"))).toBe(0)
    expect(hourOfWeekOf(Date.parse("2026-11-26T10:05:00Z"))).toBe(3 * 24 + 10)
    expect(hourOfWeekOf(Date.parse("2026-11-29T23:59:59Z"))).toBe(167)
  })

  it("says why in a sentence", () => {
    expect(crowdReason(crowdScore({ networks: [], usual: 0, failingMonitorOrganizations: 0 }))).toBe("No reports in the last 10 min.")
    expect(crowdReason(crowdScore({ networks: apart(23), usual: 0.1, failingMonitorOrganizations: 0 }))).toBe("23 reporters in 10 min, usually 0.2 or fewer.")
    expect(crowdReason(crowdScore({ networks: apart(23), usual: 0.4, failingMonitorOrganizations: 0 }))).toBe("23 reporters in 10 min, usually 0.4.")
    expect(crowdReason(crowdScore({ networks: [5, 1, 1], usual: 2.5, failingMonitorOrganizations: 1 })))
      .toBe("7 reporters in 10 min from 3 networks, usually 2.5; monitors of 1 organization failing too.")
  })
})
