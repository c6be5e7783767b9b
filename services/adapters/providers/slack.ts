import { Effect, Schema } from "effect"
import type { MaintenanceStatus, Snapshot, SnapshotIncident, SnapshotMaintenance } from "../../domain/Snapshot.ts"
import type { IncidentImpact, SourceStatus } from "../../domain/Status.ts"
import { type Adapter, AdapterError, type Fetched, type SourceConfig } from "../Adapter.ts"
import {
  countsForSource,
  effectiveStatus,
  impactToSource,
  isoOrNull,
  lookup,
  sourceToComponent,
  worstComponent
} from "../normalize.ts"
import { joinUrl, json } from "../text.ts"
import { hostIs } from "../hosts.ts"

/**
 * Slack's own status API (`/api/v2.0.0/current`): a page status and the
 * active incidents, notices and maintenances, each naming the services it
 * affects. Services have no ids; their names are stable, so they are the ids.
 */

const provider = "slack"
const currentPath = "/api/v2.0.0/current"

/** The services Slack's status page always lists; any other name an incident uses is appended. */
export const slackServices = [
  "Login/SSO",
  "Messaging",
  "Notifications",
  "Search",
  "Workspace/Org Administration",
  "Canvases",
  "Connectivity",
  "Files",
  "Huddles",
  "Apps/Integrations/APIs",
  "Workflows"
] as const

const Incident = Schema.Struct({
  id: Schema.Union([Schema.String, Schema.Number]),
  date_created: Schema.String,
  date_updated: Schema.optional(Schema.NullOr(Schema.String)),
  title: Schema.String,
  type: Schema.String,
  status: Schema.String,
  url: Schema.optional(Schema.NullOr(Schema.String)),
  services: Schema.optional(Schema.NullOr(Schema.Array(Schema.String))),
  notes: Schema.optional(Schema.NullOr(Schema.Array(Schema.Unknown)))
})
type Incident = typeof Incident.Type

const Current = Schema.Struct({
  status: Schema.String,
  active_incidents: Schema.optional(Schema.NullOr(Schema.Array(Incident)))
})

// "active" only says that something is listed; the listed items' types carry the severity.
type PageStatus = SourceStatus | "listed"
const pageStatuses: Record<string, PageStatus> = { ok: "operational", active: "listed" }

const impacts: Record<string, IncidentImpact> = { outage: "critical", incident: "minor", notice: "none" }

/** An item is an incident (open or resolved) or, for the maintenance lifecycle, a maintenance. */
type Lifecycle = "open" | "resolved" | MaintenanceStatus
const lifecycles: Record<string, Lifecycle> = {
  active: "open",
  resolved: "resolved",
  scheduled: "scheduled",
  completed: "completed",
  cancelled: "cancelled"
}

const descriptions: Record<SourceStatus, string> = {
  operational: "All Systems Operational",
  degraded: "Partial outage",
  down: "Major outage",
  maintenance: "Under maintenance"
}

const endpoints = (source: SourceConfig): ReadonlyArray<string> =>
  [new URL(source.url).pathname.endsWith(currentPath) ? source.url : joinUrl(source.url, currentPath)]

const toItem = (raw: Incident, warnings: Array<string>): SnapshotIncident | SnapshotMaintenance | null => {
  // Slack writes local times with an offset (-07:00); snapshots hold UTC.
  const createdAt = isoOrNull(raw.date_created)
  if (createdAt === null) {
    warnings.push(`Slack item ${raw.id} has an unreadable date_created ${JSON.stringify(raw.date_created)}, skipped`)
    return null
  }
  const updatedAt = isoOrNull(raw.date_updated) ?? createdAt
  const lifecycle = lookup<Lifecycle>(lifecycles, raw.status, "open", warnings, "Slack status")
  const common = { id: String(raw.id), title: raw.title, components: [...(raw.services ?? [])], url: raw.url ?? null }
  if (lifecycle !== "open" && lifecycle !== "resolved") {
    // Slack gives no schedule window; the item's creation is the best start we have.
    return { ...common, status: lifecycle, scheduled_for: createdAt, scheduled_until: null }
  }
  return {
    ...common,
    status: lifecycle === "open" ? "investigating" : "resolved",
    impact: lookup<IncidentImpact>(impacts, raw.type, "minor", warnings, "Slack incident type"),
    created_at: createdAt,
    updated_at: updatedAt,
    resolved_at: lifecycle === "resolved" ? updatedAt : null,
    update_count: raw.notes?.length ?? 0,
    region: null
  }
}

const toSnapshot = (current: typeof Current.Type, source: SourceConfig, now: Date): Snapshot => {
  const warnings: Array<string> = []
  const page = lookup<PageStatus>(pageStatuses, current.status, "degraded", warnings, "Slack page status")
  const reported = page === "listed" ? null : page
  const items = (current.active_incidents ?? []).map((i) => toItem(i, warnings)).filter((i) => i !== null)
  const incidents = items
    .filter((i): i is SnapshotIncident => "impact" in i)
    .toSorted((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at))
  const maintenances = items.filter((i): i is SnapshotMaintenance => "scheduled_for" in i)
  const counted = incidents.filter((i) => i.resolved_at === null && countsForSource(i, source.regions, now))
  const names = [...new Set([...slackServices, ...items.flatMap((i) => i.components)])]
  const components = names.map((name, position) => ({
    id: name,
    name,
    description: "",
    status: worstComponent(counted.filter((i) => i.components.includes(name)).map((i) => sourceToComponent(impactToSource(i.impact)))),
    parent_id: null,
    is_group: false,
    position,
    region: null
  }))
  const status = effectiveStatus({ reported, components, incidents, maintenances, regions: source.regions, now })
  return {
    provider,
    status,
    reported_status: reported,
    description: descriptions[status],
    components,
    incidents,
    maintenances,
    regions: [],
    warnings
  }
}

const parse = Effect.fnUntraced(function*(fetched: ReadonlyArray<Fetched>, source: SourceConfig, now: Date) {
  const primary = fetched[0]
  if (primary === undefined) {
    return yield* new AdapterError({ provider, url: source.url, reason: "invalid_shape", message: "no current status was fetched" })
  }
  const body = yield* json(provider, primary)
  const current = yield* Schema.decodeUnknownEffect(Current)(body).pipe(
    Effect.mapError((error) =>
      new AdapterError({ provider, url: primary.url, reason: "invalid_shape", message: `not Slack's current status: ${error.message}` })
    )
  )
  return toSnapshot(current, source, now)
})

/** The least Slack's current status carries; Statuspage's `status` is an object, Instatus has none. */
const isProbeCurrent = Schema.is(Schema.Struct({
  status: Schema.Literals(["ok", "active"]),
  active_incidents: Schema.Array(Schema.Unknown)
}))


export const slack = {
  id: provider,
  name: "Slack",
  endpoints,
  parse,
  detect: {
    host: (url) => hostIs(url.hostname, "slack-status.com") || hostIs(url.hostname, "status.slack.com"),
    probe: { path: currentPath, accepts: isProbeCurrent }
  }
} as const satisfies Adapter
