import { Effect, Schema } from "effect"
import type {
  MaintenanceStatus,
  Snapshot,
  SnapshotComponent,
  SnapshotIncident,
  SnapshotIncidentUpdate,
  SnapshotMaintenance
} from "../../domain/Snapshot.ts"
import type { ComponentStatus, IncidentImpact, IncidentStatus, SourceStatus } from "../../domain/Status.ts"
import { type Adapter, AdapterError, type Fetched, type SourceConfig } from "../Adapter.ts"
import { effectiveStatus, isoOrNull, lookup, rollUpGroups } from "../normalize.ts"
import { joinUrl, json } from "../text.ts"
import { hostIs } from "../hosts.ts"

/**
 * Atlassian Statuspage's public API v2 (`/api/v2/summary.json`), also served
 * by GitHub (githubstatus.com) and, with null lists and flat components, by
 * incident.io pages; `parseStatuspageSummary` reads all three.
 */

const summaryPath = "/api/v2/summary.json"

/** The summary URL of a page; a URL that already is one is kept. */
export const summaryEndpoints = (source: SourceConfig): ReadonlyArray<string> =>
  [new URL(source.url).pathname.endsWith(summaryPath) ? source.url : joinUrl(source.url, summaryPath)]

// Lists are NullOr because incident.io sends null for an empty list.
const Ref = Schema.Struct({ id: Schema.String })
const Refs = Schema.optional(Schema.NullOr(Schema.Array(Ref)))
const OptionalText = Schema.optional(Schema.NullOr(Schema.String))

const Component = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  status: Schema.String,
  description: OptionalText,
  group_id: OptionalText,
  group: Schema.optional(Schema.NullOr(Schema.Boolean)),
  /** On group entries: the ids of its children. */
  components: Schema.optional(Schema.NullOr(Schema.Array(Schema.String)))
})

const Incident = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  status: Schema.String,
  impact: Schema.String,
  created_at: Schema.String,
  updated_at: OptionalText,
  resolved_at: OptionalText,
  shortlink: OptionalText,
  incident_updates: Schema.optional(Schema.NullOr(Schema.Array(Schema.Unknown))),
  components: Refs
})

// Updates are read one by one: a malformed update is left out, it never fails the poll.
const IncidentUpdate = Schema.Struct({
  id: Schema.String,
  status: Schema.String,
  body: OptionalText,
  created_at: Schema.String
})
const isIncidentUpdate = Schema.is(IncidentUpdate)

const Maintenance = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  status: Schema.String,
  scheduled_for: Schema.String,
  scheduled_until: OptionalText,
  shortlink: OptionalText,
  components: Refs
})

const Summary = Schema.Struct({
  page: Schema.Struct({ id: Schema.String }),
  status: Schema.Struct({ indicator: Schema.String, description: OptionalText }),
  components: Schema.NullOr(Schema.Array(Component)),
  incidents: Schema.optional(Schema.NullOr(Schema.Array(Incident))),
  scheduled_maintenances: Schema.optional(Schema.NullOr(Schema.Array(Maintenance)))
})
type Summary = typeof Summary.Type

// Statuspage's vocabulary; full_outage is incident.io's name for major_outage.
const componentStatuses: Record<string, ComponentStatus> = {
  operational: "operational",
  degraded_performance: "degraded",
  partial_outage: "degraded",
  major_outage: "critical",
  full_outage: "critical",
  under_maintenance: "maintenance"
}

// "major" is Statuspage's "Partial System Outage", hence degraded (README status rules).
const indicators: Record<string, SourceStatus> = {
  none: "operational",
  minor: "degraded",
  major: "degraded",
  critical: "down",
  maintenance: "maintenance"
}

const incidentStatuses: Record<string, IncidentStatus> = {
  investigating: "investigating",
  identified: "identified",
  monitoring: "monitoring",
  resolved: "resolved",
  postmortem: "postmortem"
}

const impacts: Record<string, IncidentImpact> = {
  none: "none",
  minor: "minor",
  major: "major",
  critical: "critical",
  maintenance: "maintenance"
}

// incident.io's own lifecycle names are accepted beside Statuspage's.
const maintenanceStatuses: Record<string, MaintenanceStatus> = {
  scheduled: "scheduled",
  in_progress: "in_progress",
  verifying: "verifying",
  completed: "completed",
  maintenance_scheduled: "scheduled",
  maintenance_in_progress: "in_progress",
  maintenance_complete: "completed"
}

const descriptions: Record<SourceStatus, string> = {
  operational: "All Systems Operational",
  degraded: "Partial outage",
  down: "Major outage",
  maintenance: "Under maintenance"
}

/** An ISO timestamp; an unparseable one is kept as sent rather than failing the poll. */
const iso = (value: string): string => isoOrNull(value) ?? value

const toComponents = (summary: Summary, warnings: Array<string>): Array<SnapshotComponent> => {
  const list = summary.components ?? []
  // Children may be named only by their group's `components` list.
  const listedParent = new Map<string, string>()
  for (const c of list) if (c.group === true) for (const child of c.components ?? []) listedParent.set(child, c.id)
  return rollUpGroups(list.map((c, position) => ({
    id: c.id,
    name: c.name,
    description: c.description ?? "",
    status: lookup<ComponentStatus>(componentStatuses, c.status, "degraded", warnings, "component status"),
    parent_id: c.group_id ?? listedParent.get(c.id) ?? null,
    is_group: c.group === true,
    position,
    region: null
  })))
}

/** The updates of an incident, oldest first (Statuspage lists them newest first). */
const toUpdates = (raw: ReadonlyArray<unknown>, warnings: Array<string>): Array<SnapshotIncidentUpdate> =>
  raw.filter(isIncidentUpdate)
    .map((u) => ({
      id: u.id,
      status: lookup<IncidentStatus>(incidentStatuses, u.status, "investigating", warnings, "incident update status"),
      body: u.body ?? "",
      created_at: iso(u.created_at)
    }))
    .toSorted((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at))

// Summary incidents are unresolved, so an unknown status reads as open; an unknown impact as minor (degraded).
const toIncident = (incident: typeof Incident.Type, warnings: Array<string>): SnapshotIncident => {
  const status = lookup<IncidentStatus>(incidentStatuses, incident.status, "investigating", warnings, "incident status")
  const updatedAt = iso(incident.updated_at ?? incident.created_at)
  const closed = status === "resolved" || status === "postmortem"
  return {
    id: incident.id,
    title: incident.name,
    status,
    impact: lookup<IncidentImpact>(impacts, incident.impact, "minor", warnings, "incident impact"),
    created_at: iso(incident.created_at),
    updated_at: updatedAt,
    // A closed incident without resolved_at must not count as open.
    resolved_at: isoOrNull(incident.resolved_at) ?? (closed ? updatedAt : null),
    update_count: incident.incident_updates?.length ?? 0,
    components: (incident.components ?? []).map((c) => c.id),
    url: incident.shortlink ?? null,
    region: null,
    updates: toUpdates(incident.incident_updates ?? [], warnings)
  }
}

const toMaintenance = (maintenance: typeof Maintenance.Type, warnings: Array<string>): SnapshotMaintenance => ({
  id: maintenance.id,
  title: maintenance.name,
  status: lookup<MaintenanceStatus>(maintenanceStatuses, maintenance.status, "scheduled", warnings, "maintenance status"),
  scheduled_for: iso(maintenance.scheduled_for),
  scheduled_until: isoOrNull(maintenance.scheduled_until),
  components: (maintenance.components ?? []).map((c) => c.id),
  url: maintenance.shortlink ?? null
})

const toSnapshot = (provider: string, summary: Summary, source: SourceConfig, now: Date): Snapshot => {
  const warnings: Array<string> = []
  const reported = lookup<SourceStatus>(indicators, summary.status.indicator, "degraded", warnings, "page indicator")
  const components = toComponents(summary, warnings)
  const incidents = (summary.incidents ?? [])
    .map((i) => toIncident(i, warnings))
    .toSorted((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at))
  const maintenances = (summary.scheduled_maintenances ?? [])
    .map((m) => toMaintenance(m, warnings))
    .filter((m) => m.status !== "completed")
  const status = effectiveStatus({ reported, components, incidents, maintenances, regions: source.regions, now })
  return {
    provider,
    status,
    reported_status: reported,
    description: summary.status.description || descriptions[status],
    components,
    incidents,
    maintenances,
    regions: [],
    warnings
  }
}

/** A Statuspage-v2 summary (Statuspage, GitHub, incident.io) as a snapshot of `provider`. */
export const parseStatuspageSummary = Effect.fnUntraced(function*(
  provider: string,
  fetched: ReadonlyArray<Fetched>,
  source: SourceConfig,
  now: Date
) {
  const primary = fetched[0]
  if (primary === undefined) {
    return yield* new AdapterError({ provider, url: source.url, reason: "invalid_shape", message: "no summary was fetched" })
  }
  const body = yield* json(provider, primary)
  const summary = yield* Schema.decodeUnknownEffect(Summary)(body).pipe(
    Effect.mapError((error) =>
      new AdapterError({
        provider,
        url: primary.url,
        reason: "invalid_shape",
        message: `not a Statuspage v2 summary: ${error.message}`
      })
    )
  )
  return toSnapshot(provider, summary, source, now)
})

/** The least a summary carries, for detection probes (lists may be null on incident.io). */
const ProbeSummary = Schema.Struct({
  page: Schema.Struct({ id: Schema.String, url: OptionalText }),
  status: Schema.Struct({ indicator: Schema.String }),
  components: Schema.NullOr(Schema.Array(Ref)),
  incidents: Schema.optional(Schema.NullOr(Schema.Array(Schema.Unknown))),
  scheduled_maintenances: Schema.optional(Schema.NullOr(Schema.Array(Schema.Unknown)))
})
export type ProbeSummary = typeof ProbeSummary.Type
export const isProbeSummary = Schema.is(ProbeSummary)

/**
 * Statuspage's own HTML markers: its asset CDN, colour data and index layout.
 * Not the cdn.statuspage.io widget, which any site can embed.
 */
const statuspageMarkers = ["dka575ofm4ao0.cloudfront.net", "window.pageColorData", "layout-content status status-index"]
export const hasStatuspageMarkers = (html: string): boolean => statuspageMarkers.some((m) => html.includes(m))

const githubPageId = "kctbh9vrtdwd"

const isGithubPage = (page: ProbeSummary["page"]): boolean => {
  if (page.id === githubPageId) return true
  if (!page.url || !URL.canParse(page.url)) return false
  return hostIs(new URL(page.url).hostname, "githubstatus.com")
}

export const statuspage = {
  id: "statuspage_io",
  name: "Atlassian Statuspage",
  endpoints: summaryEndpoints,
  parse: (fetched, source, now) => parseStatuspageSummary("statuspage_io", fetched, source, now),
  detect: {
    // www.statuspage.io is Atlassian's product site (unclaimed pages redirect there), not a page.
    host: (url) => url.hostname !== "www.statuspage.io" && url.hostname.endsWith(".statuspage.io"),
    probe: { path: summaryPath, accepts: (body) => isProbeSummary(body) && body.components !== null },
    html: hasStatuspageMarkers
  }
} as const satisfies Adapter

export const github = {
  id: "github",
  name: "GitHub",
  endpoints: summaryEndpoints,
  parse: (fetched, source, now) => parseStatuspageSummary("github", fetched, source, now),
  detect: {
    host: (url) => hostIs(url.hostname, "githubstatus.com"),
    probe: {
      path: summaryPath,
      accepts: (body) => isProbeSummary(body) && body.components !== null && isGithubPage(body.page)
    }
  }
} as const satisfies Adapter
