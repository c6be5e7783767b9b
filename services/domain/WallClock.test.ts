import { describe, expect, it } from "vitest"
import { isTimeZone, localValue, wallClock, zonedInstant } from "./WallClock.ts"

describe("zonedInstant", () => {
  it("reads a wall clock in a zone, with its offset of that date", () => {
    expect(zonedInstant("2026-12-01T10:00", "UTC")?.toISOString()).toBe("2026-12-01T10:00:00.000Z")
    expect(zonedInstant("2026-12-01T10:00", "Asia/Kolkata")?.toISOString()).toBe("2026-12-01T04:30:00.000Z")
    // Winter (UTC+1) and summer (UTC+2) in Berlin.
    expect(zonedInstant("2026-01-15T09:00", "Europe/Berlin")?.toISOString()).toBe("2026-01-15T08:00:00.000Z")
    expect(zonedInstant("2026-07-15T09:00", "Europe/Berlin")?.toISOString()).toBe("2026-07-15T07:00:00.000Z")
    expect(zonedInstant("2026-07-15T09:00:30", "America/New_York")?.toISOString()).toBe("2026-07-15T13:00:30.000Z")
  })

  it("moves a time skipped by daylight saving forward, and takes the first of a repeated one", () => {
    // 2026-03-29 02:30 does not exist in Berlin (02:00 → 03:00): 03:30 CEST = 01:30Z.
    expect(zonedInstant("2026-03-29T02:30", "Europe/Berlin")?.toISOString()).toBe("2026-03-29T01:30:00.000Z")
    // 2026-10-25 02:30 happens twice in Berlin: first at CEST (00:30Z).
    expect(zonedInstant("2026-10-25T02:30", "Europe/Berlin")?.toISOString()).toBe("2026-10-25T00:30:00.000Z")
  })

  it("refuses malformed times, impossible dates and unknown zones", () => {
    expect(zonedInstant("2026-02-31T10:00", "UTC")).toBeUndefined()
    expect(zonedInstant("2026-12-01 10:00", "UTC")).toBeUndefined()
    expect(zonedInstant("2026-12-01T24:00", "UTC")).toBeUndefined()
    expect(zonedInstant("2026-12-01T10:00", "Mars/Olympus")).toBeUndefined()
    expect(isTimeZone("")).toBe(false)
    expect(isTimeZone("Europe/Paris")).toBe(true)
    expect(isTimeZone("x".repeat(65))).toBe(false)
  })

  it("reads the wall clock of an instant, midnight as hour 0", () => {
    expect(wallClock(new Date("2026-07-15T22:30:05Z"), "Europe/Berlin")).toEqual({ year: 2026, month: 7, day: 16, hour: 0, minute: 30, second: 5 })
    expect(wallClock(new Date("2026-01-01T00:00:00Z"), "America/New_York")).toEqual({ year: 2025, month: 12, day: 31, hour: 19, minute: 0, second: 0 })
  })

  it("writes an instant back as the zone's wall clock", () => {
    expect(localValue("2026-12-01T04:30:00Z", "Asia/Kolkata")).toBe("2026-12-01T10:00")
    const there = zonedInstant("2026-07-15T09:00", "Europe/Berlin")!
    expect(localValue(there, "Europe/Berlin")).toBe("2026-07-15T09:00")
  })
})
