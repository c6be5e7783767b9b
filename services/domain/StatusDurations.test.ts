import { describe, expect, it } from "@effect/vitest"
import { durationsOf, hourOfWeek, levelOf, meanTimeToResolution, outagesOf, periodsOf, uptimeOf } from "./StatusDurations.ts"

const minute = 60_000
const hour = 60 * minute
/** Monday 2026-11-02 00:00 UTC. */
const t0 = Date.UTC(2026, 10, 2)
const at = (minutes: number) => t0 + minutes * minute
const day = { from: t0, to: t0 + 24 * hour }

describe("StatusDurations", () => {
  it("levels: a component's critical and a monitor's down are down; unread, pending and paused are unknown", () => {
    expect(levelOf("component", "critical")).toBe("down")
    expect(levelOf("source", "down")).toBe("down")
    expect(levelOf("monitor", "up")).toBe("operational")
    expect(levelOf("monitor", "paused")).toBe("unknown")
    expect(levelOf("source", "unknown")).toBe("unknown")
    expect(levelOf("source", null)).toBe("unknown")
  })

  it("a day with a 90-minute outage, 2 h of maintenance and 30 min degraded: time at each level and uptime by hand", () => {
    const changes = [
      { at: at(60), status: "down" }, // 01:00 down
      { at: at(150), status: "operational" }, // 02:30 up: 90 min down
      { at: at(600), status: "maintenance" }, // 10:00
      { at: at(720), status: "degraded" }, // 12:00: 120 min maintenance
      { at: at(750), status: "operational" } // 12:30: 30 min degraded
    ]
    const periods = periodsOf("source", "operational", changes, day)
    const d = durationsOf(periods)
    expect(d).toEqual({ down: 90 * minute, maintenance: 120 * minute, degraded: 30 * minute, operational: (1440 - 240) * minute, unknown: 0 })
    // counted = 1440 − 120 = 1320 min; up = 1320 − 90 = 1230 → 93.1818… %
    expect(uptimeOf(d)).toBeCloseTo((1230 / 1320) * 100, 10)
    const outages = outagesOf(periods, day, "operational")
    expect(outages).toEqual([{ start: at(60), end: at(150), duration_ms: 90 * minute, cut: false }])
    expect(meanTimeToResolution(outages)).toBe(90 * minute)
  })

  it("a gap in checking is unknown, left out of uptime, and ends an outage", () => {
    const changes = [{ at: at(0), status: "critical" }, { at: at(300), status: "operational" }]
    // No check from 02:00 to 03:00: the outage 00:00–05:00 is two, 2 h and 2 h.
    const periods = periodsOf("component", null, changes, day, [{ from: at(120), to: at(180) }])
    expect(periods.map((p) => [p.level, (p.end - p.start) / minute])).toEqual([["down", 120], ["unknown", 60], ["down", 120], ["operational", 1140]])
    const d = durationsOf(periods)
    expect(uptimeOf(d)).toBeCloseTo((1140 / 1380) * 100, 10)
    expect(outagesOf(periods, day).map((o) => o.duration_ms / minute)).toEqual([120, 120])
  })

  it("before the first known status is unknown; nothing counted is null uptime, never 100 %", () => {
    expect(uptimeOf(durationsOf(periodsOf("source", null, [], day)))).toBeNull()
    const periods = periodsOf("monitor", null, [{ at: at(720), status: "up" }], day)
    expect(durationsOf(periods)).toMatchObject({ unknown: 720 * minute, operational: 720 * minute })
    expect(uptimeOf(durationsOf(periods))).toBe(100)
  })

  it("an outage open at the end has no end, one carried in from before the range is cut: neither counts in MTTR", () => {
    const periods = periodsOf("source", "down", [{ at: at(30), status: "operational" }, { at: at(1400), status: "down" }], day)
    const outages = outagesOf(periods, day, "down")
    expect(outages).toEqual([
      { start: t0, end: at(30), duration_ms: 30 * minute, cut: true },
      { start: at(1400), end: null, duration_ms: 40 * minute, cut: false }
    ])
    expect(meanTimeToResolution(outages)).toBeNull()
  })

  it("changes between down statuses and changes outside the range do not split or move anything", () => {
    const changes = [
      { at: t0 - hour, status: "degraded" }, // before the range: `initial` says the status at its start
      { at: at(100), status: "down" },
      { at: at(130), status: "down" },
      { at: at(160), status: "operational" },
      { at: day.to + hour, status: "down" }
    ]
    const periods = periodsOf("source", "operational", changes, day)
    expect(outagesOf(periods, day)).toEqual([{ start: at(100), end: at(160), duration_ms: 60 * minute, cut: false }])
    expect(periods.at(-1)!.end).toBe(day.to)
  })

  it("hour of the week: Monday 01:00 and Sunday 23:30 UTC", () => {
    const grid = hourOfWeek([at(60), at(61), t0 + 6 * 24 * hour + 23 * hour + 30 * minute])
    expect(grid[0]![1]).toBe(2)
    expect(grid[6]![23]).toBe(1)
    expect(grid.flat().reduce((a, b) => a + b, 0)).toBe(3)
  })
})
