import { describe, expect, it } from "@effect/vitest"
import { incidentFiguresOf } from "./IncidentFigures.ts"

const hour = 3_600_000
/** Monday 2026-11-02 00:00 UTC. */
const t0 = Date.UTC(2026, 10, 2)
const week = { from: t0, to: t0 + 7 * 24 * hour }
const api = { id: "c-api", name: "API" }
const web = { id: "c-web", name: "Website" }

describe("IncidentFigures", () => {
  it("counts incidents that began in the range, by impact, region and component; MTTR of the resolved ones", () => {
    const figures = incidentFiguresOf([
      // before the range: left out even though it resolved inside
      { impact: "major", region: null, started: t0 - hour, resolved: t0 + hour, components: [api] },
      // Monday 09:00, 2 h, major, us-east, API
      { impact: "major", region: "us-east", started: t0 + 9 * hour, resolved: t0 + 11 * hour, components: [api] },
      // Wednesday 14:00, 30 min, minor, us-east, API and Website
      { impact: "minor", region: "us-east", started: t0 + (48 + 14) * hour, resolved: t0 + (48 + 14.5) * hour, components: [api, web] },
      // Friday 09:00, critical, eu-west, still open at the range's end (resolved after it)
      { impact: "critical", region: "eu-west", started: t0 + (96 + 9) * hour, resolved: week.to + hour, components: [web] },
      // Sunday 23:00, no impact, no region, open
      { impact: "none", region: null, started: t0 + (144 + 23) * hour, resolved: null, components: [] }
    ], week)
    expect(figures.count).toBe(4)
    expect(figures.per_week).toBeCloseTo(4, 10)
    expect(figures.by_impact).toEqual({ critical: 1, major: 1, minor: 1, none: 1 })
    expect(figures.resolved).toBe(2)
    expect(figures.open).toBe(2)
    expect(figures.mttr_ms).toBe((2 * hour + 0.5 * hour) / 2)
    expect(figures.longest_ms).toBe(2 * hour)
    expect(figures.components_affected).toBe(2)
    expect(figures.components).toEqual([{ id: "c-api", name: "API", incidents: 2 }, { id: "c-web", name: "Website", incidents: 2 }])
    expect(figures.regions).toEqual([{ region: "us-east", incidents: 2 }, { region: "eu-west", incidents: 1 }])
    expect(figures.hour_of_week[0]![9]).toBe(1)
    expect(figures.hour_of_week[2]![14]).toBe(1)
    expect(figures.hour_of_week[4]![9]).toBe(1)
    expect(figures.hour_of_week[6]![23]).toBe(1)
    expect(figures.hour_of_week.flat().reduce((a, b) => a + b, 0)).toBe(4)
  })

  it("a range without incidents: zeros and nulls", () => {
    const figures = incidentFiguresOf([], week)
    expect(figures).toMatchObject({ count: 0, per_week: 0, resolved: 0, open: 0, mttr_ms: null, longest_ms: null, components: [], regions: [] })
  })
})
