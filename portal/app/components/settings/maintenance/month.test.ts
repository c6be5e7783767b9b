import { describe, expect, it } from "vitest"
import { monthGrid, monthOf, shiftMonth } from "./month.ts"

describe("month grid", () => {
  it("covers the month in Monday-first weeks, marking the neighbours' days", () => {
    // November 2026 starts on a Sunday and ends on a Monday: 6 weeks, 26 October to 6 December.
    const weeks = monthGrid({ year: 2026, month: 11 })
    expect(weeks).toHaveLength(6)
    expect(weeks[0]![0]!.date).toBe("2026-10-26")
    expect(weeks[0]![6]).toEqual({ date: "2026-11-01", start: Date.UTC(2026, 10, 1), inMonth: true })
    expect(weeks.at(-1)!.at(-1)!.date).toBe("2026-12-06")
    expect(weeks.flat().filter((d) => d.inMonth)).toHaveLength(30)
    // February 2027 starts on a Monday: exactly 4 weeks.
    expect(monthGrid({ year: 2027, month: 2 })).toHaveLength(4)
  })

  it("reads ?month and moves across years", () => {
    const now = new Date("2026-11-26T10:00:00Z")
    expect(monthOf("2027-01", now)).toEqual({ year: 2027, month: 1 })
    expect(monthOf("2027-13", now)).toEqual({ year: 2026, month: 11 })
    expect(monthOf(null, now)).toEqual({ year: 2026, month: 11 })
    expect(shiftMonth({ year: 2026, month: 12 }, 1)).toEqual({ year: 2027, month: 1 })
    expect(shiftMonth({ year: 2026, month: 1 }, -1)).toEqual({ year: 2025, month: 12 })
  })
})
