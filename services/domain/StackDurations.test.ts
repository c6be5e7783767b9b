import { describe, expect, it } from "@effect/vitest"
import { healthDurationsOf, levelPeriodsOf, stackCellsOf, stackPeriodsOf } from "./StackDurations.ts"
import { durationsOf, outagesOf, periodsOf, uptimeOf } from "./StatusDurations.ts"

const minute = 60_000
/** Monday 2026-11-02 00:00 UTC. */
const t0 = Date.UTC(2026, 10, 2)
const at = (minutes: number) => t0 + minutes * minute
const day = { from: t0, to: at(1440) }
/** Nothing was checked in the first half hour, for every item. */
const gaps = [{ from: at(0), to: at(30) }]

describe("StackDurations", () => {
  it("the banner at each instant from the items' levels, by StackHealth's rule; unknown items left out", () => {
    const items = [
      // A: down 01:00–02:00
      periodsOf("component", "operational", [{ at: at(60), status: "critical" }, { at: at(120), status: "operational" }], day, gaps),
      // B: down 01:30–03:00
      periodsOf("component", "operational", [{ at: at(90), status: "critical" }, { at: at(180), status: "operational" }], day, gaps),
      // C: maintenance 10:00–12:00
      periodsOf("component", "operational", [{ at: at(600), status: "maintenance" }, { at: at(720), status: "operational" }], day, gaps),
      // D: a monitor never checked: unknown all day, never moves the banner
      periodsOf("monitor", "pending", [], day)
    ]
    const periods = stackPeriodsOf(items, day)
    expect(periods.map((p) => [(p.start - t0) / minute, (p.end - t0) / minute, p.health])).toEqual([
      [0, 30, "unknown"],
      [30, 60, "operational"],
      [60, 90, "partial_outage"], // 1 of 3 known out
      [90, 120, "major_outage"], // 2 of 3
      [120, 180, "partial_outage"],
      [180, 600, "operational"],
      [600, 720, "maintenance"],
      [720, 1440, "operational"]
    ])
    expect(healthDurationsOf(periods)).toEqual({
      unknown: 30 * minute,
      operational: (30 + 420 + 720) * minute,
      partial_outage: 90 * minute,
      major_outage: 30 * minute,
      maintenance: 120 * minute,
      degraded: 0
    })
    // Down while any outage shows: 01:00–03:00, one outage of 120 minutes.
    const levels = levelPeriodsOf(periods)
    const d = durationsOf(levels)
    expect(d).toEqual({ unknown: 30 * minute, operational: 1170 * minute, down: 120 * minute, maintenance: 120 * minute, degraded: 0 })
    expect(uptimeOf(d)).toBeCloseTo(((1290 - 120) / 1290) * 100, 10)
    expect(outagesOf(levels, day)).toEqual([{ start: at(60), end: at(180), duration_ms: 120 * minute, cut: false }])
  })

  it("a degraded item among operational ones makes the stack degraded; a stack of no item is unknown", () => {
    const items = [
      periodsOf("source", "operational", [{ at: at(100), status: "degraded" }, { at: at(200), status: "operational" }], day),
      periodsOf("monitor", "up", [], day)
    ]
    expect(healthDurationsOf(stackPeriodsOf(items, day)).degraded).toBe(100 * minute)
    expect(stackPeriodsOf([], day)).toEqual([{ start: t0, end: at(1440), health: "unknown" }])
  })
})

describe("stackCellsOf", () => {
  it("each cell by the banner's rule over the items' cells: an outage of one item is down, degraded shows, no data anywhere is no data", () => {
    expect(stackCellsOf([
      ["operational", "down", "degraded", "no_data", "maintenance", "operational"],
      ["operational", "operational", "operational", "no_data", "operational", "no_data"],
      ["no_data", "operational", "maintenance", "no_data", "operational", "operational"]
    ])).toEqual(["operational", "down", "degraded", "no_data", "maintenance", "operational"])
    expect(stackCellsOf([])).toEqual([])
  })
})
