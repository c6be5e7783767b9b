import { describe, expect, it } from "vitest"
import { networkOf } from "../crowd/Network.ts"
import { hourOfWeekOf } from "../domain/CrowdScore.ts"
import { backgroundRate, crowdAddress, crowdArrivals, type CrowdOutage, crowdSource, nthReporter, officialStatusAt, sourceScale } from "./Crowd.ts"

const minuteMs = 60_000
const hourMs = 3_600_000
const dayMs = 86_400_000
/** A Monday 00:00 UTC. */
const monday = Date.UTC(2026, 0, 5)

/** The expected background reports of `scale` over `[from, to)` (whole hours): Σ rate × 6 windows per hour. */
const expectedBackground = (from: number, to: number, scale: number) => {
  let sum = 0
  for (let h = from; h < to; h += hourMs) sum += backgroundRate(hourOfWeekOf(h), scale) * 6
  return sum
}

const tuesday = (hour: number) => 24 + hour
const saturday = (hour: number) => 5 * 24 + hour
const hourOf = (t: number) => new Date(t).getUTCHours()

describe("the simulated crowd", () => {
  it("the background is busier on weekday afternoons than at night and at weekends, and scales", () => {
    expect(backgroundRate(tuesday(16))).toBeGreaterThan(backgroundRate(tuesday(4)) * 3)
    expect(backgroundRate(saturday(16))).toBeLessThan(backgroundRate(tuesday(16)))
    expect(backgroundRate(tuesday(16), 3)).toBeCloseTo(backgroundRate(tuesday(16)) * 3, 12)
    for (let h = 0; h < 168; h++) expect(backgroundRate(h)).toBeGreaterThan(0)
  })

  it("is deterministic, and a range generated in pieces is the range generated whole", () => {
    const source = crowdSource("github")
    const outage: CrowdOutage = { at: monday + 2 * dayMs + 5 * hourMs, durationMs: 40 * minuteMs, leadMs: 5 * minuteMs, rampMs: 2 * minuteMs, peakPer10Min: 30 }
    const whole = crowdArrivals(source, monday, monday + 7 * dayMs, [outage])
    expect(crowdArrivals(crowdSource("github"), monday, monday + 7 * dayMs, [outage])).toEqual(whole)
    // Cut inside the outage and inside an hour.
    const cut = outage.at + 7 * minuteMs + 123
    expect([...crowdArrivals(source, monday, cut, [outage]), ...crowdArrivals(source, cut, monday + 7 * dayMs, [outage])]).toEqual(whole)
    expect(crowdArrivals(crowdSource("gitlab"), monday, monday + 7 * dayMs, [outage])).not.toEqual(whole)
    for (let i = 1; i < whole.length; i++) expect(whole[i]!.at).toBeGreaterThanOrEqual(whole[i - 1]!.at)
  })

  it("background arrivals follow the rate: four weeks within 4 standard deviations of Σ rate, for two scales", () => {
    for (const scale of [1, 4]) {
      const from = monday
      const to = monday + 28 * dayMs
      const n = crowdArrivals(crowdSource(`scale-${scale}`, { scale }), from, to).length
      const expected = expectedBackground(from, to, scale)
      expect(Math.abs(n - expected)).toBeLessThan(4 * Math.sqrt(expected))
      // Weekday afternoons carry more than nights: 14-18 h UTC against 2-6 h UTC.
      const reports = crowdArrivals(crowdSource(`scale-${scale}`, { scale }), from, to)
      expect(reports.filter((r) => hourOf(r.at) >= 14 && hourOf(r.at) < 18).length)
        .toBeGreaterThan(2 * reports.filter((r) => hourOf(r.at) >= 2 && hourOf(r.at) < 6).length)
    }
  })

  it("an outage's reports start `leadMs` before the flip, ramp to the peak and stop when the official status is back", () => {
    const source = crowdSource("outage", { scale: 0.000_001 })
    const outage: CrowdOutage = { at: monday + 10 * hourMs, durationMs: 60 * minuteMs, leadMs: 5 * minuteMs, rampMs: 2 * minuteMs, peakPer10Min: 60 }
    const reports = crowdArrivals(source, monday, monday + dayMs, [outage])
    const first = outage.at - outage.leadMs
    const end = outage.at + outage.durationMs
    expect(reports.every((r) => r.at >= first && r.at < end)).toBe(true)
    // First reports (not repeats) over the outage: ∫ rate = peak/10 min × (lead + duration − ramp/2); repeats add ~10 %.
    const reporters = new Set(reports.map((r) => r.reporter)).size
    const expected = (outage.peakPer10Min / 10) * (5 + 60 - 1)
    expect(Math.abs(reporters - expected)).toBeLessThan(4 * Math.sqrt(expected))
    expect(reports.length).toBeGreaterThan(reporters)
    // The ramp: fewer in its first minute than in a minute at the peak.
    const inMinute = (t: number) => reports.filter((r) => r.at >= t && r.at < t + minuteMs).length
    expect(inMinute(first)).toBeLessThan(inMinute(outage.at + 10 * minuteMs) + 1)
    expect(officialStatusAt([outage], outage.at - 1)).toBe("operational")
    expect(officialStatusAt([outage], outage.at)).toBe("down")
    expect(officialStatusAt([outage], end)).toBe("operational")
  })

  it("reporters are mostly in networks of their own, about a tenth from the source's offices, and their addresses say so", () => {
    const source = crowdSource("networks", { scale: 5 })
    const reports = crowdArrivals(source, monday, monday + 14 * dayMs)
    const offices = new Set(source.offices)
    const fromOffices = reports.filter((r) => offices.has(r.network)).length
    expect(fromOffices / reports.length).toBeGreaterThan(0.07)
    expect(fromOffices / reports.length).toBeLessThan(0.13)
    const homes = reports.filter((r) => !offices.has(r.network))
    expect(new Set(homes.map((r) => r.network)).size).toBeGreaterThan(homes.length * 0.9)
    for (const r of reports.slice(0, 200)) {
      const address = crowdAddress(r)
      const [a, x, y, z] = address.split(".").map(Number)
      expect(a).toBe(127)
      expect(x! * 256 + y!).toBe(r.network)
      expect(z).toBe(r.reporter - r.network * 256)
      expect(z).toBeGreaterThanOrEqual(1)
      expect(z).toBeLessThanOrEqual(254)
      // The service's network of the address is the reporter's /24.
      expect(networkOf(address)).toBe(`127.${x}.${y}.0/24`)
      expect(x).toBeGreaterThanOrEqual(1)
    }
  })

  it("a load generator's reporters are distinct addresses", () => {
    const addresses = Array.from({ length: 200_000 }, (_, i) => crowdAddress(nthReporter(i)))
    expect(new Set(addresses).size).toBe(addresses.length)
  })

  it("sources' scales are log-normal around 1, deterministic, and all 1 without spread", () => {
    const scales = Array.from({ length: 2000 }, (_, i) => sourceScale(i, 0.5))
    expect(sourceScale(7, 0.5)).toBe(sourceScale(7, 0.5))
    const logs = scales.map(Math.log)
    const mean = logs.reduce((a, b) => a + b, 0) / logs.length
    const sd = Math.sqrt(logs.reduce((a, b) => a + (b - mean) ** 2, 0) / logs.length)
    expect(Math.abs(mean)).toBeLessThan(0.05)
    expect(sd).toBeGreaterThan(0.45)
    expect(sd).toBeLessThan(0.55)
    expect(sourceScale(7, 0)).toBe(1)
  })
})
