import type { ComponentStatus, MonitorState, SourceStatus } from "./Status.ts"

/**
 * A stack's health banner, from the current statuses of what it shows.
 *
 * The spec's banner (States and transitions) uses operational, degraded,
 * critical (major outages) and maintenance; the portal adds Partial Outage to
 * tell one failing thing among many from a stack that is mostly down. The
 * one rule, used by the API (`health` of stacks) and the portal:
 *
 * 1. Each item counts as one of four levels: **outage** (a component
 *    `critical`, a whole source `down`, a monitor `down`), **degraded**
 *    (`degraded` of any of the three), **maintenance** (a component or source
 *    in `maintenance`) or **operational** (`operational`, a monitor `up`).
 *    A monitor `pending` (never checked) or `paused`, and an item whose target
 *    has no status, is **unknown**: it is counted apart and never moves the
 *    banner, so a new monitor does not paint a stack red or green.
 * 2. Worst level wins: any outage → `major_outage` when at least half of the
 *    known items are out, else `partial_outage`; otherwise any degraded →
 *    `degraded`; otherwise any maintenance → `maintenance` (maintenance only
 *    when nothing is worse); otherwise `operational`.
 * 3. A stack with no known item (empty, or only unknown items) is
 *    `operational`; `counts.unknown` says how many items were left out, so a
 *    page can say "not checked yet" beside the banner.
 *
 * Plain TypeScript with no import of Effect: the dashboard recomputes the
 * banner in the browser with this very function, and its bundle stays small.
 * The wire Schemas of these types are in StackHealthSchema.ts.
 */
export const healthStatuses = ["operational", "degraded", "partial_outage", "major_outage", "maintenance"] as const
export type HealthStatus = typeof healthStatuses[number]

/** The words of each banner, kept apart from the wire values. */
export const healthLabel: Readonly<Record<HealthStatus, string>> = {
  operational: "All Systems Operational",
  degraded: "Degraded Performance",
  partial_outage: "Partial Outage",
  major_outage: "Major Outage",
  maintenance: "Under Maintenance"
}

/** How many items count as each level; `unknown` items (a monitor pending or paused) do not move the banner. */
export interface HealthCounts {
  readonly operational: number
  readonly degraded: number
  readonly outage: number
  readonly maintenance: number
  readonly unknown: number
}

/** A stack's banner: its level, its words and the counts it came from. */
export interface StackHealth {
  readonly status: HealthStatus
  readonly label: string
  readonly counts: HealthCounts
}

export type ItemLevel = keyof HealthCounts

/** What one item's current status counts as. */
export type ItemStatus =
  | { readonly kind: "component"; readonly status: ComponentStatus | null }
  | { readonly kind: "source"; readonly status: SourceStatus | null }
  | { readonly kind: "monitor"; readonly status: MonitorState | null }

export const itemLevel = (item: ItemStatus): ItemLevel => {
  switch (item.status) {
    case null:
    case "pending":
    case "paused":
      return "unknown"
    case "operational":
    case "up":
      return "operational"
    case "degraded":
      return "degraded"
    case "maintenance":
      return "maintenance"
    case "critical":
    case "down":
      return "outage"
  }
}

/** The banner of a stack whose items have these statuses (the rule above). */
export const stackHealth = (items: Iterable<ItemStatus>): StackHealth => {
  const counts = { operational: 0, degraded: 0, outage: 0, maintenance: 0, unknown: 0 }
  for (const item of items) counts[itemLevel(item)] += 1
  return healthOfCounts(counts)
}

/** The banner from how many items count as each level (rule 2 and 3 above); the history of a stack uses it too. */
export const healthOfCounts = (counts: HealthCounts): StackHealth => {
  const known = counts.operational + counts.degraded + counts.outage + counts.maintenance
  const status: HealthStatus = counts.outage > 0
    ? (counts.outage * 2 >= known ? "major_outage" : "partial_outage")
    : counts.degraded > 0
    ? "degraded"
    : counts.maintenance > 0
    ? "maintenance"
    : "operational"
  return { status, label: healthLabel[status], counts }
}
