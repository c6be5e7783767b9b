import { describe, expect, it } from "vitest"
import { isTimeZone, localValue, zonedInstant } from "./zonedTime.ts"

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
  })

  it("writes an instant back as the zone's wall clock", () => {
    expect(localValue("2026-12-01T04:30:00Z", "Asia/Kolkata")).toBe("2026-12-01T10:00")
    const there = zonedInstant("2026-07-15T09:00", "Europe/Berlin")!
    expect(localValue(there, "Europe/Berlin")).toBe("2026-07-15T09:00")
  })
})
