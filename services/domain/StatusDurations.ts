/**
 * Uptime from status durations (issue "Analytics and reports"): a subject's
 * status over a time range, rebuilt from its changes (ClickHouse
 * `status_transitions`), as time spent at each level, its uptime, its
 * outages and their mean time to resolution. Plain TypeScript (no Effect):
 * the API, the reports and the portal's pages compute with the same rule.
 *
 * The rule (README of services/history, "Uptime from durations"):
 * - a subject is at one **level** at each instant: `down` (a source down, a
 *   component critical, a monitor down), `degraded` (degraded or partial),
 *   `maintenance`, `operational` (a monitor up), or `unknown`;
 * - `unknown` is time nobody knows: before the first known status, a page
 *   that could not be read, a paused or pending monitor, and **gaps** in
 *   checking (hours without any check whose answer was read, passed in by
 *   the caller);
 * - uptime = (counted − down) / counted × 100 where counted = the range's
 *   time minus maintenance minus unknown (null when nothing is counted):
 *   degraded counts as up (the service answered), planned maintenance is
 *   left out as providers do, and what was not seen is never called up;
 * - an **outage** is one stretch of `down`: changes between down statuses
 *   do not end it, any other level or a gap in checking does; one still
 *   open at the range's end has no end, one that began before the range is
 *   cut at the range's start (`cut`), and neither counts in the mean time
 *   to resolution.
 */

export type SubjectKind = "source" | "component" | "monitor"
export type Level = "down" | "degraded" | "maintenance" | "operational" | "unknown"
export const levels: ReadonlyArray<Level> = ["down", "degraded", "maintenance", "operational", "unknown"]

const levelsByKind: Readonly<Record<SubjectKind, Readonly<Record<string, Level>>>> = {
  source: { operational: "operational", degraded: "degraded", down: "down", maintenance: "maintenance" },
  component: { operational: "operational", degraded: "degraded", partial_outage: "degraded", critical: "down", major_outage: "down", maintenance: "maintenance" },
  monitor: { up: "operational", degraded: "degraded", down: "down" }
}

/** The level of a status string of `kind` (`unknown` for anything else: unread, pending, paused). */
export const levelOf = (kind: SubjectKind, status: string | null): Level => (status === null ? "unknown" : levelsByKind[kind][status] ?? "unknown")

/** A change of status at an instant (epoch milliseconds). */
export interface Change {
  readonly at: number
  readonly status: string
}

export interface Range {
  readonly from: number
  readonly to: number
}

/** A stretch of one level, `[start, end)`. */
export interface Period {
  readonly start: number
  readonly end: number
  readonly level: Level
}

const clamp = (t: number, range: Range) => Math.min(range.to, Math.max(range.from, t))

/**
 * The range cut into periods: `initial` is the status at `range.from` (the
 * last change before it, or null when there is none), `changes` those inside
 * the range in any order; gaps (intervals without checks) override to
 * `unknown`. Adjacent periods of one level are merged.
 */
export const periodsOf = (
  kind: SubjectKind,
  initial: string | null,
  changes: ReadonlyArray<Change>,
  range: Range,
  gaps: ReadonlyArray<Range> = []
): Array<Period> => {
  if (range.to <= range.from) return []
  const inside = changes.filter((c) => c.at >= range.from && c.at < range.to).toSorted((a, b) => a.at - b.at)
  // The cut points: changes, and each gap's edges.
  const cuts = new Set<number>([range.from, range.to])
  for (const c of inside) cuts.add(c.at)
  for (const g of gaps) {
    cuts.add(clamp(g.from, range))
    cuts.add(clamp(g.to, range))
  }
  const points = [...cuts].toSorted((a, b) => a - b)
  const periods: Array<Period> = []
  let current = levelOf(kind, initial)
  let next = 0
  for (let i = 0; i + 1 < points.length; i++) {
    const start = points[i]!
    const end = points[i + 1]!
    while (next < inside.length && inside[next]!.at <= start) current = levelOf(kind, inside[next++]!.status)
    const inGap = gaps.some((g) => g.from <= start && end <= g.to)
    const level: Level = inGap ? "unknown" : current
    const last = periods.at(-1)
    if (last !== undefined && last.level === level && last.end === start) periods[periods.length - 1] = { ...last, end }
    else periods.push({ start, end, level })
  }
  return periods
}

export type Durations = Readonly<Record<Level, number>>

/** Milliseconds at each level. */
export const durationsOf = (periods: ReadonlyArray<Period>): Durations => {
  const out: Record<Level, number> = { down: 0, degraded: 0, maintenance: 0, operational: 0, unknown: 0 }
  for (const p of periods) out[p.level] += p.end - p.start
  return out
}

/** Uptime in percent by the rule above, or null when no time is counted. */
export const uptimeOf = (d: Durations): number | null => {
  const counted = d.down + d.degraded + d.operational
  return counted === 0 ? null : ((counted - d.down) / counted) * 100
}

export interface Outage {
  readonly start: number
  /** null: still down at the range's end. */
  readonly end: number | null
  readonly duration_ms: number
  /** It began before the range (its start is the range's). */
  readonly cut: boolean
}

/** Each stretch of `down`, in order. */
export const outagesOf = (periods: ReadonlyArray<Period>, range: Range, initial: string | null = null, kind: SubjectKind = "source"): Array<Outage> =>
  periods.filter((p) => p.level === "down").map((p) => {
    const open = p.end === range.to
    return {
      start: p.start,
      end: open ? null : p.end,
      duration_ms: p.end - p.start,
      cut: p.start === range.from && levelOf(kind, initial) === "down"
    }
  })

/** Mean time to resolution: the mean duration of the outages that ended (and began) in the range, or null. */
export const meanTimeToResolution = (outages: ReadonlyArray<Outage>): number | null => {
  const resolved = outages.filter((o) => o.end !== null && !o.cut)
  return resolved.length === 0 ? null : resolved.reduce((sum, o) => sum + o.duration_ms, 0) / resolved.length
}

/**
 * When outages begin, by UTC hour of the week: 7 rows (Monday first) of 24
 * counts, for the "peak incident times" heatmap.
 */
export const hourOfWeek = (starts: ReadonlyArray<number>): Array<Array<number>> => {
  const grid = Array.from({ length: 7 }, () => Array.from({ length: 24 }, () => 0))
  for (const t of starts) {
    const d = new Date(t)
    grid[(d.getUTCDay() + 6) % 7]![d.getUTCHours()]! += 1
  }
  return grid
}
