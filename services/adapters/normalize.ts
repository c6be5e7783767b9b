import type { Snapshot, SnapshotComponent, SnapshotIncident, SnapshotMaintenance } from "../domain/Snapshot.ts"
import type { ComponentStatus, IncidentImpact, SourceStatus } from "../domain/Status.ts"

/**
 * Status rules shared by every adapter (documented in services/adapters/README.md).
 *
 * Severity order: operational < maintenance < degraded < down (critical for components).
 */
const sourceRank: Record<SourceStatus, number> = { operational: 0, maintenance: 1, degraded: 2, down: 3 }
const componentRank: Record<ComponentStatus, number> = { operational: 0, maintenance: 1, degraded: 2, critical: 3 }

/** The one-line description of a source status, for providers that give none of their own. */
export const statusDescriptions: Record<SourceStatus, string> = {
  operational: "All Systems Operational",
  degraded: "Partial outage",
  down: "Major outage",
  maintenance: "Under maintenance"
}

export const worstSource = (statuses: Iterable<SourceStatus>): SourceStatus => {
  let worst: SourceStatus = "operational"
  for (const s of statuses) if (sourceRank[s] > sourceRank[worst]) worst = s
  return worst
}

export const worstComponent = (statuses: Iterable<ComponentStatus>): ComponentStatus => {
  let worst: ComponentStatus = "operational"
  for (const s of statuses) if (componentRank[s] > componentRank[worst]) worst = s
  return worst
}

export const componentToSource = (status: ComponentStatus): SourceStatus => (status === "critical" ? "down" : status)
export const sourceToComponent = (status: SourceStatus): ComponentStatus => (status === "down" ? "critical" : status)

/**
 * An incident's impact as a source status: minor and major (Statuspage's
 * "partial outage") are degraded, critical is down, maintenance is
 * maintenance, none adds nothing.
 */
export const impactToSource = (impact: IncidentImpact): SourceStatus => {
  switch (impact) {
    case "none":
      return "operational"
    case "minor":
    case "major":
      return "degraded"
    case "critical":
      return "down"
    case "maintenance":
      return "maintenance"
  }
}

/**
 * Looks `value` up in a provider's table. An unknown value maps to
 * `fallback` and leaves a warning naming it, so a new upstream value is
 * visible in the logs and never crashes the adapter.
 */
export const lookup = <A extends string>(
  table: Readonly<Record<string, A>>,
  value: unknown,
  fallback: A,
  warnings: Array<string>,
  what: string
): A => {
  const key = String(value)
  if (Object.hasOwn(table, key)) return table[key]!
  warnings.push(`unknown ${what} ${JSON.stringify(value)}, read as ${fallback}`)
  return fallback
}

/** How long an open regional event may count toward a source with no region filter. */
export const longOpenMs = 72 * 60 * 60 * 1000

/**
 * Whether an open incident counts toward the source's overall status. With a
 * region filter, only incidents in those regions (or with no region) count.
 * Without one, an incident in some region counts while it is younger than
 * `longOpenMs`: events left open for months in one region (AWS, GCP) must not
 * keep a global source red. Either way it still shows in `regions`.
 */
export const countsForSource = (incident: SnapshotIncident, regions: ReadonlyArray<string> | undefined, now: Date): boolean => {
  if (incident.region === null) return true
  if (regions && regions.length > 0) return regions.includes(incident.region)
  return now.getTime() - Date.parse(incident.created_at) < longOpenMs
}

export interface EffectiveInput {
  /** The provider's own page-level indicator, when it has one. */
  readonly reported: SourceStatus | null
  readonly components: ReadonlyArray<SnapshotComponent>
  readonly incidents: ReadonlyArray<SnapshotIncident>
  readonly maintenances: ReadonlyArray<SnapshotMaintenance>
  readonly regions?: ReadonlyArray<string> | undefined
  readonly now: Date
}

/**
 * The effective status of a source: the worst of the provider's indicator,
 * the impact of open incidents that count for it, and its leaf components
 * (all critical = down; any critical or degraded = degraded). A maintenance
 * in progress, or all components in maintenance, reads as maintenance when
 * nothing is worse. Providers' indicators lag incidents (Statuspage shows
 * "none" during open minor incidents), hence the worst-of.
 */
export const effectiveStatus = (input: EffectiveInput): SourceStatus => {
  const parts: Array<SourceStatus> = []
  if (input.reported !== null) parts.push(input.reported)
  for (const incident of input.incidents) {
    if (incident.resolved_at === null && countsForSource(incident, input.regions, input.now)) {
      parts.push(impactToSource(incident.impact))
    }
  }
  const leaves = input.components.filter((c) => !c.is_group)
  if (leaves.length > 0) {
    const critical = leaves.filter((c) => c.status === "critical").length
    if (critical === leaves.length) parts.push("down")
    else if (critical > 0 || leaves.some((c) => c.status === "degraded")) parts.push("degraded")
    else if (leaves.every((c) => c.status === "maintenance")) parts.push("maintenance")
  }
  if (input.maintenances.some((m) => m.status === "in_progress" || m.status === "verifying")) parts.push("maintenance")
  return worstSource(parts)
}

/**
 * The snapshot of a provider with no page indicator and no maintenances
 * (the regional feeds: AWS, Azure, GCP): effective status from components
 * and incidents, regions from `regionIncidents` over `knownRegions`.
 */
export const incidentSnapshot = (input: {
  readonly provider: string
  readonly components: ReadonlyArray<SnapshotComponent>
  readonly incidents: ReadonlyArray<SnapshotIncident>
  readonly regionIncidents?: ReadonlyArray<SnapshotIncident>
  readonly knownRegions: ReadonlyArray<string>
  readonly sourceRegions: ReadonlyArray<string> | undefined
  readonly now: Date
  readonly warnings: ReadonlyArray<string>
}): Snapshot => {
  const status = effectiveStatus({
    reported: null,
    components: input.components,
    incidents: input.incidents,
    maintenances: [],
    regions: input.sourceRegions,
    now: input.now
  })
  return {
    provider: input.provider,
    status,
    reported_status: null,
    description: statusDescriptions[status],
    components: [...input.components],
    incidents: [...input.incidents],
    maintenances: [],
    regions: regionStatuses(input.regionIncidents ?? input.incidents, input.knownRegions),
    warnings: [...input.warnings]
  }
}

/** Status per region from open incidents that name one (worst impact wins). */
export const regionStatuses = (
  incidents: ReadonlyArray<SnapshotIncident>,
  known: ReadonlyArray<string> = []
): Array<{ region: string; status: SourceStatus }> => {
  const byRegion = new Map<string, SourceStatus>(known.map((r) => [r, "operational"]))
  for (const incident of incidents) {
    if (incident.resolved_at !== null || incident.region === null) continue
    byRegion.set(incident.region, worstSource([byRegion.get(incident.region) ?? "operational", impactToSource(incident.impact)]))
  }
  return [...byRegion].map(([region, status]) => ({ region, status })).toSorted((a, b) => a.region.localeCompare(b.region))
}

/**
 * Gives each group the worst status of its children when the provider gives
 * the group none of its own (or only "operational"): a group is a container.
 */
export const rollUpGroups = (components: ReadonlyArray<SnapshotComponent>): Array<SnapshotComponent> => {
  const children = new Map<string, Array<ComponentStatus>>()
  for (const c of components) {
    if (c.parent_id !== null) children.set(c.parent_id, [...(children.get(c.parent_id) ?? []), c.status])
  }
  return components.map((c) =>
    c.is_group && children.has(c.id)
      ? { ...c, status: worstComponent([c.status, ...children.get(c.id)!]) }
      : c
  )
}

/** A timestamp in any form Date understands (ISO, RFC 822, epoch seconds or ms) as ISO 8601 UTC, or null. */
export const isoOrNull = (value: unknown): string | null => {
  if (value === null || value === undefined || value === "") return null
  // A timestamp without a zone ("2024-06-01 12:00:00") is read as UTC, never as this machine's local time.
  const text = String(value)
  const naive = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(text)
  const date = typeof value === "number"
    ? new Date(value < 1e12 ? value * 1000 : value)
    : new Date(naive ? `${text.replace(" ", "T")}Z` : text)
  return Number.isNaN(date.getTime()) ? null : date.toISOString()
}
