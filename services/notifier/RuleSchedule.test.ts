import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { RuleSchedule, type Weekday } from "../domain/Rule.ts"
import { localTime, nextAllowed, scheduleAllows } from "./RuleSchedule.ts"

const weekdays: ReadonlyArray<Weekday> = ["mon", "tue", "wed", "thu", "fri"]
const everyDay: ReadonlyArray<Weekday> = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

const schedule = (fields: Partial<RuleSchedule> & Pick<RuleSchedule, "timezone">): RuleSchedule => ({
  days: everyDay,
  start: "00:00",
  end: "24:00",
  holidays: [],
  critical_always: false,
  ...fields
})

/** Allowed for a degraded alert at this UTC instant. */
const allows = (s: RuleSchedule | null, iso: string) => scheduleAllows(s, "degraded", new Date(iso))

/** The allowed minutes, in UTC `HH:MM`, of the `hours` hours from `fromIso`, checked minute by minute. */
const allowedMinutes = (s: RuleSchedule, fromIso: string, hours: number): ReadonlyArray<string> => {
  const from = Date.parse(fromIso)
  const allowed: Array<string> = []
  for (let m = 0; m < hours * 60; m++) {
    const at = new Date(from + m * 60_000)
    if (scheduleAllows(s, "degraded", at)) allowed.push(at.toISOString().slice(0, 16))
  }
  return allowed
}

describe("localTime", () => {
  it("gives the local date, weekday and minutes in the zone", () => {
    expect(localTime(new Date("2026-01-12T03:30:00Z"), "Asia/Kolkata")).toEqual({ date: "2026-01-12", weekday: "mon", minutes: 9 * 60 })
    expect(localTime(new Date("2026-01-11T20:00:00Z"), "Pacific/Auckland")).toEqual({ date: "2026-01-12", weekday: "mon", minutes: 9 * 60 })
    expect(localTime(new Date("2026-01-12T03:00:00Z"), "America/Los_Angeles")).toEqual({ date: "2026-01-11", weekday: "sun", minutes: 19 * 60 })
  })

  it("reads local midnight as minute 0, not 24:00", () => {
    expect(localTime(new Date("2026-01-12T05:00:00Z"), "America/New_York")).toEqual({ date: "2026-01-12", weekday: "mon", minutes: 0 })
    expect(localTime(new Date("2026-01-12T04:59:00Z"), "America/New_York")).toEqual({ date: "2026-01-11", weekday: "sun", minutes: 23 * 60 + 59 })
  })

  it("jumps from 01:59 to 03:00 at the Paris spring-forward", () => {
    expect(localTime(new Date("2026-03-29T00:59:00Z"), "Europe/Paris").minutes).toBe(1 * 60 + 59)
    expect(localTime(new Date("2026-03-29T01:00:00Z"), "Europe/Paris").minutes).toBe(3 * 60)
  })
})

/** 09:00-17:00, Monday to Friday. */
const officeHours = (timezone: string) => schedule({ timezone, days: weekdays, start: "09:00", end: "17:00" })

describe("scheduleAllows: time zones (09:00-17:00, Mon-Fri)", () => {

  it("America/New_York (UTC-5 in January)", () => {
    const s = officeHours("America/New_York")
    expect(allows(s, "2026-01-12T13:59:00Z")).toBe(false)
    expect(allows(s, "2026-01-12T14:00:00Z")).toBe(true)
    expect(allows(s, "2026-01-12T21:59:00Z")).toBe(true)
    expect(allows(s, "2026-01-12T22:00:00Z")).toBe(false)
  })

  it("Asia/Kolkata (UTC+5:30)", () => {
    const s = officeHours("Asia/Kolkata")
    expect(allows(s, "2026-01-12T03:29:00Z")).toBe(false)
    expect(allows(s, "2026-01-12T03:30:00Z")).toBe(true)
    expect(allows(s, "2026-01-12T11:29:00Z")).toBe(true)
    expect(allows(s, "2026-01-12T11:30:00Z")).toBe(false)
  })

  it("Pacific/Auckland (UTC+13 in January): Monday opens on Sunday in UTC, Saturday is closed on Friday in UTC", () => {
    const s = officeHours("Pacific/Auckland")
    expect(allows(s, "2026-01-11T19:59:00Z")).toBe(false)
    expect(allows(s, "2026-01-11T20:00:00Z")).toBe(true)
    expect(allows(s, "2026-01-12T03:59:00Z")).toBe(true)
    expect(allows(s, "2026-01-12T04:00:00Z")).toBe(false)
    // Friday 22:00Z = Saturday 11:00 in Auckland.
    expect(allows(s, "2026-01-16T22:00:00Z")).toBe(false)
  })

  it("refuses an instant that is Monday in UTC but Sunday in America/Los_Angeles", () => {
    const s = schedule({ timezone: "America/Los_Angeles", days: weekdays })
    expect(allows(s, "2026-01-12T03:00:00Z")).toBe(false)
    expect(allows(s, "2026-01-12T07:59:00Z")).toBe(false)
    expect(allows(s, "2026-01-12T08:00:00Z")).toBe(true)
    expect(allows(schedule({ timezone: "UTC", days: weekdays }), "2026-01-12T03:00:00Z")).toBe(true)
  })
})

describe("scheduleAllows: DST (windows are local wall-clock time)", () => {
  it("Europe/Paris 09:00-17:00 opens at 08:00Z before the spring change and at 07:00Z after it", () => {
    const s = schedule({ timezone: "Europe/Paris", days: weekdays, start: "09:00", end: "17:00" })
    // Friday 2026-03-27, CET (UTC+1).
    expect(allows(s, "2026-03-27T07:59:00Z")).toBe(false)
    expect(allows(s, "2026-03-27T08:00:00Z")).toBe(true)
    expect(allows(s, "2026-03-27T15:59:00Z")).toBe(true)
    expect(allows(s, "2026-03-27T16:00:00Z")).toBe(false)
    // Monday 2026-03-30, CEST (UTC+2).
    expect(allows(s, "2026-03-30T06:59:00Z")).toBe(false)
    expect(allows(s, "2026-03-30T07:00:00Z")).toBe(true)
    expect(allows(s, "2026-03-30T14:59:00Z")).toBe(true)
    expect(allows(s, "2026-03-30T15:00:00Z")).toBe(false)
  })

  it("Europe/Paris 09:00-17:00 opens at 07:00Z before the autumn change and at 08:00Z after it", () => {
    const s = schedule({ timezone: "Europe/Paris", days: weekdays, start: "09:00", end: "17:00" })
    // Friday 2026-10-23, CEST.
    expect(allows(s, "2026-10-23T06:59:00Z")).toBe(false)
    expect(allows(s, "2026-10-23T07:00:00Z")).toBe(true)
    expect(allows(s, "2026-10-23T15:00:00Z")).toBe(false)
    // Monday 2026-10-26, CET.
    expect(allows(s, "2026-10-26T07:59:00Z")).toBe(false)
    expect(allows(s, "2026-10-26T08:00:00Z")).toBe(true)
    expect(allows(s, "2026-10-26T15:59:00Z")).toBe(true)
    expect(allows(s, "2026-10-26T16:00:00Z")).toBe(false)
  })

  it("Europe/Paris 02:00-04:00: one hour on spring-forward night, three on fall-back night, two otherwise", () => {
    const s = schedule({ timezone: "Europe/Paris", start: "02:00", end: "04:00" })
    // An ordinary night (CET): 01:00Z-02:59Z.
    const ordinary = allowedMinutes(s, "2026-03-21T22:00:00Z", 24)
    expect(ordinary).toHaveLength(120)
    expect([ordinary[0], ordinary.at(-1)]).toEqual(["2026-03-22T01:00", "2026-03-22T02:59"])
    // 2026-03-29: 02:00-02:59 never happens; 03:00-03:59 CEST = 01:00Z-01:59Z.
    const spring = allowedMinutes(s, "2026-03-28T22:00:00Z", 24)
    expect(spring).toHaveLength(60)
    expect([spring[0], spring.at(-1)]).toEqual(["2026-03-29T01:00", "2026-03-29T01:59"])
    // 2026-10-25: 02:00-02:59 CEST (00:00Z-00:59Z), again in CET (01:00Z-01:59Z), then 03:00-03:59 CET.
    const autumn = allowedMinutes(s, "2026-10-24T21:00:00Z", 24)
    expect(autumn).toHaveLength(180)
    expect([autumn[0], autumn.at(-1)]).toEqual(["2026-10-25T00:00", "2026-10-25T02:59"])
  })

  it("America/New_York: 09:00-17:00 moves by an hour in UTC, 01:00-03:00 is one hour in March and three in November", () => {
    const office = schedule({ timezone: "America/New_York", days: weekdays, start: "09:00", end: "17:00" })
    expect(allows(office, "2026-03-06T13:59:00Z")).toBe(false) // Friday 08:59 EST
    expect(allows(office, "2026-03-06T14:00:00Z")).toBe(true)
    expect(allows(office, "2026-03-09T12:59:00Z")).toBe(false) // Monday 08:59 EDT
    expect(allows(office, "2026-03-09T13:00:00Z")).toBe(true)

    const night = schedule({ timezone: "America/New_York", start: "01:00", end: "03:00" })
    // 2026-03-08: 01:00-01:59 EST (06:00Z-06:59Z), then 02:00 is skipped to 03:00 EDT.
    const spring = allowedMinutes(night, "2026-03-08T04:00:00Z", 24)
    expect(spring).toHaveLength(60)
    expect([spring[0], spring.at(-1)]).toEqual(["2026-03-08T06:00", "2026-03-08T06:59"])
    // 2026-11-01: 01:00-01:59 EDT (05:00Z), 01:00-02:59 EST (06:00Z-07:59Z).
    const autumn = allowedMinutes(night, "2026-11-01T03:00:00Z", 24)
    expect(autumn).toHaveLength(180)
    expect([autumn[0], autumn.at(-1)]).toEqual(["2026-11-01T05:00", "2026-11-01T07:59"])
  })
})

describe("scheduleAllows: windows spanning midnight (22:00-06:00, Fridays, Europe/Berlin UTC+1)", () => {
  const s = schedule({ timezone: "Europe/Berlin", days: ["fri"], start: "22:00", end: "06:00" })

  it("runs from Friday 22:00 to Saturday 06:00 local", () => {
    expect(allows(s, "2026-01-16T20:59:00Z")).toBe(false) // Friday 21:59
    expect(allows(s, "2026-01-16T21:00:00Z")).toBe(true) // Friday 22:00
    expect(allows(s, "2026-01-16T22:00:00Z")).toBe(true) // Friday 23:00
    expect(allows(s, "2026-01-17T04:00:00Z")).toBe(true) // Saturday 05:00
    expect(allows(s, "2026-01-17T04:59:00Z")).toBe(true) // Saturday 05:59
    expect(allows(s, "2026-01-17T05:00:00Z")).toBe(false) // Saturday 06:00
    expect(allows(s, "2026-01-17T22:00:00Z")).toBe(false) // Saturday 23:00
  })

  it("does not run in the early hours of Friday (they belong to Thursday)", () => {
    expect(allows(s, "2026-01-16T02:00:00Z")).toBe(false) // Friday 03:00
    expect(allows(schedule({ ...s, days: ["thu"] }), "2026-01-16T02:00:00Z")).toBe(true)
  })

  it("checks holidays against the current local date", () => {
    const saturdayOff = schedule({ ...s, holidays: ["2026-01-17"] })
    expect(allows(saturdayOff, "2026-01-16T22:00:00Z")).toBe(true) // Friday 23:00
    expect(allows(saturdayOff, "2026-01-17T04:00:00Z")).toBe(false) // Saturday 05:00
    const fridayOff = schedule({ ...s, holidays: ["2026-01-16"] })
    expect(allows(fridayOff, "2026-01-16T22:00:00Z")).toBe(false)
    expect(allows(fridayOff, "2026-01-17T04:00:00Z")).toBe(true)
  })
})

describe("scheduleAllows: holidays and critical_always", () => {
  // Monday 2026-01-12 10:00 in Auckland = Sunday 2026-01-11 21:00Z.
  const mondayMorning = new Date("2026-01-11T21:00:00Z")
  const office = schedule({ timezone: "Pacific/Auckland", days: weekdays, start: "09:00", end: "17:00" })

  it("pauses on a holiday in the rule's zone, even when UTC is still on the day before", () => {
    expect(scheduleAllows(office, "degraded", mondayMorning)).toBe(true)
    expect(scheduleAllows({ ...office, holidays: ["2026-01-12"] }, "degraded", mondayMorning)).toBe(false)
    expect(scheduleAllows({ ...office, holidays: ["2026-01-11"] }, "degraded", mondayMorning)).toBe(true)
  })

  it("pauses critical alerts too without critical_always", () => {
    expect(scheduleAllows({ ...office, holidays: ["2026-01-12"] }, "critical", mondayMorning)).toBe(false)
    expect(scheduleAllows(office, "critical", new Date("2026-01-12T06:00:00Z"))).toBe(false) // Monday 19:00
  })

  it("lets critical alerts through on holidays and outside hours with critical_always, but not others", () => {
    const s = { ...office, holidays: ["2026-01-12"], critical_always: true }
    expect(scheduleAllows(s, "critical", mondayMorning)).toBe(true)
    expect(scheduleAllows(s, "degraded", mondayMorning)).toBe(false)
    expect(scheduleAllows(s, "info", mondayMorning)).toBe(false)
    const saturdayNoon = new Date("2026-01-16T23:00:00Z")
    expect(scheduleAllows(s, "critical", saturdayNoon)).toBe(true)
    expect(scheduleAllows(s, "degraded", saturdayNoon)).toBe(false)
    const tuesdayNight = new Date("2026-01-13T09:00:00Z") // Tuesday 22:00
    expect(scheduleAllows(s, "critical", tuesdayNight)).toBe(true)
    expect(scheduleAllows(s, "degraded", tuesdayNight)).toBe(false)
  })
})

describe("scheduleAllows: whole days and no schedule", () => {
  it("the decoded defaults (every day, 00:00-24:00) allow every minute, midnight included", () => {
    const s = Schema.decodeUnknownSync(RuleSchedule)({ timezone: "Asia/Kolkata" })
    expect([s.start, s.end, s.days.length]).toEqual(["00:00", "24:00", 7])
    expect(allowedMinutes(s, "2026-01-11T18:00:00Z", 48)).toHaveLength(48 * 60)
  })

  it("00:00-24:00 on chosen days covers exactly those local days", () => {
    const weekend = schedule({ timezone: "America/New_York", days: ["sat", "sun"] })
    expect(allows(weekend, "2026-01-17T04:59:00Z")).toBe(false) // Friday 23:59
    expect(allows(weekend, "2026-01-17T05:00:00Z")).toBe(true) // Saturday 00:00
    expect(allows(weekend, "2026-01-19T04:59:00Z")).toBe(true) // Sunday 23:59
    expect(allows(weekend, "2026-01-19T05:00:00Z")).toBe(false) // Monday 00:00
  })

  it("no schedule allows every level at any time", () => {
    for (const level of ["critical", "degraded", "info"] as const) {
      expect(scheduleAllows(null, level, new Date("2026-01-17T03:00:00Z"))).toBe(true)
    }
  })
})

/** When a paused degraded alert from this UTC instant may go, in ISO. */
const next = (s: RuleSchedule, iso: string) => nextAllowed(s, "degraded", new Date(iso))?.toISOString()

describe("nextAllowed: when a paused alert may go", () => {
  const office = schedule({ timezone: "Europe/Paris", days: weekdays, start: "09:00", end: "17:00" })

  it("the next opening of the window, across a weekend and a DST change", () => {
    // Friday 2026-03-27 18:00 Paris (17:00Z): Monday 09:00, which is 07:00Z after the spring change.
    expect(next(office, "2026-03-27T17:00:00Z")).toBe("2026-03-30T07:00:00.000Z")
    // Tuesday 06:30 Paris in winter: 09:00 the same day, 08:00Z.
    expect(next(office, "2026-01-13T05:30:00Z")).toBe("2026-01-13T08:00:00.000Z")
  })

  it("a whole minute, at or after the instant", () => {
    const minute = schedule({ timezone: "UTC", start: "10:05", end: "11:00" })
    expect(next(minute, "2026-01-13T10:04:59.200Z")).toBe("2026-01-13T10:05:00.000Z")
    expect(next(minute, "2026-01-13T10:05:00.000Z")).toBe("2026-01-13T10:05:00.000Z")
  })

  it("skips holidays, and gives up after eight days", () => {
    const withHoliday = { ...office, holidays: ["2026-01-14"] }
    // Tuesday 18:00: Wednesday is a holiday, so Thursday 09:00.
    expect(next(withHoliday, "2026-01-13T17:00:00Z")).toBe("2026-01-15T08:00:00.000Z")
    const allWeek = { ...office, holidays: ["2026-01-14", "2026-01-15", "2026-01-16", "2026-01-19", "2026-01-20", "2026-01-21"] }
    expect(next(allWeek, "2026-01-13T17:00:00Z")).toBeUndefined()
  })
})
