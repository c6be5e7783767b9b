import { type HealthCounts, healthOfCounts, type HealthStatus } from "./StackHealth.ts"
import type { Level, Period, Range } from "./StatusDurations.ts"

/**
 * A stack's history from its items' (issue "Analytics and reports"): at each
 * instant the stack is at the level its banner would have shown, by the one
 * rule of StackHealth.ts applied to the items' levels at that instant (an
 * item down counts as an outage, and so on; unknown items are left out).
 * Plain TypeScript, as StatusDurations.ts.
 *
 * For uptime and outages (StatusDurations' rule), the stack is **down** while
 * its banner shows an outage, partial or major: a stack is up only while
 * every known item in it is up, which is what a team's "our stack was down
 * 40 minutes" means. The time at each banner (`health_ms`) keeps partial
 * and major apart. A stretch where no item is known is `unknown` (the live
 * banner shows such a stack as operational; history does not call unseen
 * time up).
 */

export type StackHealthLevel = HealthStatus | "unknown"

/** A stretch of one banner, `[start, end)`. */
export interface StackPeriod {
  readonly start: number
  readonly end: number
  readonly health: StackHealthLevel
}

const itemLevelOf: Readonly<Record<Level, keyof HealthCounts>> = {
  down: "outage",
  degraded: "degraded",
  maintenance: "maintenance",
  operational: "operational",
  unknown: "unknown"
}

/** The level a banner counts as for uptime. */
export const levelOfHealth = (health: StackHealthLevel): Level =>
  health === "major_outage" || health === "partial_outage" ? "down" : health

/**
 * The stack's banner over `range` from each item's periods (each list covering
 * the range, as `periodsOf` returns them). Adjacent stretches of one banner are merged.
 */
export const stackPeriodsOf = (items: ReadonlyArray<ReadonlyArray<Period>>, range: Range): Array<StackPeriod> => {
  if (range.to <= range.from) return []
  const cuts = new Set<number>([range.from, range.to])
  for (const periods of items) for (const p of periods) if (p.start > range.from && p.start < range.to) cuts.add(p.start)
  const points = [...cuts].toSorted((a, b) => a - b)
  const cursor = items.map(() => 0)
  const out: Array<StackPeriod> = []
  for (let i = 0; i + 1 < points.length; i++) {
    const start = points[i]!
    const end = points[i + 1]!
    const counts = { operational: 0, degraded: 0, outage: 0, maintenance: 0, unknown: 0 }
    for (const [n, periods] of items.entries()) {
      while (cursor[n]! < periods.length && periods[cursor[n]!]!.end <= start) cursor[n]! += 1
      const p = periods[cursor[n]!]
      counts[p !== undefined && p.start <= start ? itemLevelOf[p.level] : "unknown"] += 1
    }
    const known = counts.operational + counts.degraded + counts.outage + counts.maintenance
    const health: StackHealthLevel = known === 0 ? "unknown" : healthOfCounts(counts).status
    const last = out.at(-1)
    if (last !== undefined && last.health === health && last.end === start) out[out.length - 1] = { ...last, end }
    else out.push({ start, end, health })
  }
  return out
}

/** The stack's periods as levels (partial and major outage both down), merged, for StatusDurations' figures. */
export const levelPeriodsOf = (periods: ReadonlyArray<StackPeriod>): Array<Period> => {
  const out: Array<Period> = []
  for (const p of periods) {
    const level = levelOfHealth(p.health)
    const last = out.at(-1)
    if (last !== undefined && last.level === level && last.end === p.start) out[out.length - 1] = { ...last, end: p.end }
    else out.push({ start: p.start, end: p.end, level })
  }
  return out
}

export type HealthDurations = Readonly<Record<StackHealthLevel, number>>

/** Milliseconds at each banner. */
export const healthDurationsOf = (periods: ReadonlyArray<StackPeriod>): HealthDurations => {
  const out: Record<StackHealthLevel, number> = { operational: 0, degraded: 0, partial_outage: 0, major_outage: 0, maintenance: 0, unknown: 0 }
  for (const p of periods) out[p.health] += p.end - p.start
  return out
}

/** A history cell's status (services/domain/History.ts' CellStatus), restated here so this module stays free of Effect. */
export type StripCell = "operational" | "degraded" | "down" | "maintenance" | "no_data"

const cellLevel: Readonly<Record<StripCell, keyof HealthCounts>> = {
  operational: "operational",
  degraded: "degraded",
  down: "outage",
  maintenance: "maintenance",
  no_data: "unknown"
}

/**
 * A stack's history strip from its items' strips (the same window, so the same
 * cells): each cell is the banner StackHealth's rule gives for the items'
 * cells, shown as a cell status (an outage, partial or major, is `down`); a
 * cell where no item has data is `no_data`. A cell holds the most significant
 * status each item saw in it, so two items down at different minutes of one
 * hour show as down together: the strip is an overview, uptime comes from
 * durations.
 */
export const stackCellsOf = (items: ReadonlyArray<ReadonlyArray<StripCell>>): Array<StripCell> => {
  const length = Math.max(0, ...items.map((i) => i.length))
  return Array.from({ length }, (_, n) => {
    const counts = { operational: 0, degraded: 0, outage: 0, maintenance: 0, unknown: 0 }
    for (const cells of items) counts[cellLevel[cells[n] ?? "no_data"]] += 1
    if (counts.operational + counts.degraded + counts.outage + counts.maintenance === 0) return "no_data"
    const health = healthOfCounts(counts).status
    return health === "major_outage" || health === "partial_outage" ? "down" : health
  })
}
