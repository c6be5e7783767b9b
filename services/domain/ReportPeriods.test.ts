import { describe, expect, it } from "@effect/vitest"
import { duePeriods, isTimeZone } from "./ReportPeriods.ts"

const utc = (s: string) => Date.parse(s)
const iso = (ms: number) => new Date(ms).toISOString()

describe("ReportPeriods", () => {
  it("weekly in UTC: Monday to Monday; a schedule made on a Wednesday owes that week once it ends", () => {
    const since = utc("2026-11-04T10:00:00Z") // a Wednesday
    expect(duePeriods("weekly", "UTC", since, utc("2026-11-08T23:59:00Z"))).toEqual([])
    expect(duePeriods("weekly", "UTC", since, utc("2026-11-09T00:00:00Z")).map((p) => [iso(p.from), iso(p.to)])).toEqual([
      ["2026-11-02T00:00:00.000Z", "2026-11-09T00:00:00.000Z"]
    ])
  })

  it("a process down for three weeks owes the three weeks it missed, oldest first", () => {
    const periods = duePeriods("weekly", "UTC", utc("2026-11-04T10:00:00Z"), utc("2026-11-25T08:00:00Z"))
    expect(periods.map((p) => iso(p.from))).toEqual(["2026-11-02T00:00:00.000Z", "2026-11-09T00:00:00.000Z", "2026-11-16T00:00:00.000Z"])
  })

  it("in Europe/Paris a week starts at Monday 00:00 local time, and the week the clocks go back is an hour longer", () => {
    const periods = duePeriods("weekly", "Europe/Paris", utc("2026-10-20T12:00:00Z"), utc("2026-11-03T00:00:00Z"))
    expect(periods.map((p) => [iso(p.from), iso(p.to)])).toEqual([
      ["2026-10-18T22:00:00.000Z", "2026-10-25T23:00:00.000Z"], // summer time until Sunday 25 October: 169 hours
      ["2026-10-25T23:00:00.000Z", "2026-11-01T23:00:00.000Z"]
    ])
    expect(periods[0]!.to - periods[0]!.from).toBe((7 * 24 + 1) * 3_600_000)
  })

  it("monthly in America/New_York: the 1st to the 1st, local midnight", () => {
    const periods = duePeriods("monthly", "America/New_York", utc("2026-09-15T00:00:00Z"), utc("2026-11-26T00:00:00Z"))
    expect(periods.map((p) => [iso(p.from), iso(p.to)])).toEqual([
      ["2026-09-01T04:00:00.000Z", "2026-10-01T04:00:00.000Z"],
      ["2026-10-01T04:00:00.000Z", "2026-11-01T04:00:00.000Z"]
    ])
  })

  it("at most the last twelve periods; unknown zones are refused", () => {
    expect(duePeriods("weekly", "UTC", utc("2024-01-01T00:00:00Z"), utc("2026-11-26T00:00:00Z"))).toHaveLength(12)
    expect(isTimeZone("Europe/Paris")).toBe(true)
    expect(isTimeZone("Mars/Olympus")).toBe(false)
  })
})
