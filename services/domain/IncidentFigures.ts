import { hourOfWeek, type Range } from "./StatusDurations.ts"

/**
 * Incident analytics (issue "Analytics and reports"): how often a provider
 * declares incidents, how bad they are, how long they take to resolve, which
 * components and regions they touch, and when they begin. From the incidents
 * the provider published (PostgreSQL `incidents`), which is what the spec's
 * "incident frequency", "mean time to resolution" and "incident impact" mean;
 * the outages statusgrid saw itself are StatusDurations' figures.
 *
 * The rule: an incident counts in a range when it **began** in it; maintenance
 * posted as an incident (impact `maintenance`) is left out, as in uptime; its
 * time to resolution is `resolved_at − started_at` when it was resolved before
 * the range's end, and it is `open` otherwise. Plain TypeScript.
 */

export const incidentImpacts = ["critical", "major", "minor", "none"] as const
export type CountedImpact = typeof incidentImpacts[number]

/** One incident as the figures need it. */
export interface IncidentFact {
  readonly impact: CountedImpact
  readonly region: string | null
  readonly started: number
  readonly resolved: number | null
  /** The components it named: id and name. */
  readonly components: ReadonlyArray<{ readonly id: string; readonly name: string }>
}

export interface IncidentFigures {
  readonly count: number
  /** Incidents per 7 days of the range. */
  readonly per_week: number
  readonly by_impact: Readonly<Record<CountedImpact, number>>
  readonly resolved: number
  /** Not resolved by the range's end. */
  readonly open: number
  /** Mean `resolved − started` of the resolved ones; null without one. */
  readonly mttr_ms: number | null
  /** The longest time to resolution; null without one. */
  readonly longest_ms: number | null
  /** Distinct components named by the incidents. */
  readonly components_affected: number
  /** The components named most often, most first (ties by name), at most `topComponents`. */
  readonly components: ReadonlyArray<{ readonly id: string; readonly name: string; readonly incidents: number }>
  /** Incidents by region the provider named (`null` region left out), most first. */
  readonly regions: ReadonlyArray<{ readonly region: string; readonly incidents: number }>
  /** Starts by UTC weekday (Monday first) × hour. */
  readonly hour_of_week: ReadonlyArray<ReadonlyArray<number>>
}

export const topComponents = 10
const weekMs = 7 * 86_400_000

export const incidentFiguresOf = (incidents: ReadonlyArray<IncidentFact>, range: Range): IncidentFigures => {
  const inRange = incidents.filter((i) => i.started >= range.from && i.started < range.to)
  const byImpact: Record<CountedImpact, number> = { critical: 0, major: 0, minor: 0, none: 0 }
  const components = new Map<string, { id: string; name: string; incidents: number }>()
  const regions = new Map<string, number>()
  const resolvedTimes: Array<number> = []
  for (const i of inRange) {
    byImpact[i.impact] += 1
    if (i.resolved !== null && i.resolved < range.to) resolvedTimes.push(i.resolved - i.started)
    for (const c of i.components) {
      const seen = components.get(c.id) ?? { id: c.id, name: c.name, incidents: 0 }
      components.set(c.id, { ...seen, incidents: seen.incidents + 1 })
    }
    if (i.region !== null) regions.set(i.region, (regions.get(i.region) ?? 0) + 1)
  }
  const span = range.to - range.from
  return {
    count: inRange.length,
    per_week: span <= 0 ? 0 : (inRange.length * weekMs) / span,
    by_impact: byImpact,
    resolved: resolvedTimes.length,
    open: inRange.length - resolvedTimes.length,
    mttr_ms: resolvedTimes.length === 0 ? null : resolvedTimes.reduce((a, b) => a + b, 0) / resolvedTimes.length,
    longest_ms: resolvedTimes.length === 0 ? null : Math.max(...resolvedTimes),
    components_affected: components.size,
    components: [...components.values()]
      .toSorted((a, b) => b.incidents - a.incidents || a.name.localeCompare(b.name))
      .slice(0, topComponents),
    regions: [...regions.entries()]
      .map(([region, n]) => ({ region, incidents: n }))
      .toSorted((a, b) => b.incidents - a.incidents || a.region.localeCompare(b.region)),
    hour_of_week: hourOfWeek(inRange.map((i) => i.started))
  }
}
