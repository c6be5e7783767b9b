import { Effect, Schema } from "effect"
import type { MaintenanceStatus, SnapshotComponent, SnapshotIncident, SnapshotMaintenance } from "../../domain/Snapshot.ts"
import type { ComponentStatus, IncidentImpact, IncidentStatus, SourceStatus } from "../../domain/Status.ts"
import { type Adapter, AdapterError, type Fetched, type SourceConfig } from "../Adapter.ts"
import { effectiveStatus, isoOrNull, lookup, rollUpGroups, statusDescriptions } from "../normalize.ts"
import { joinUrl, json } from "../text.ts"
import { hostIs } from "../hosts.ts"

/**
 * Instatus pages: `/summary.json` (page status, active incidents and
 * maintenances) and the undocumented `/v2/components.json`, which comes in two
 * shapes (a `{components}` list with `group`, or the docs' bare array with
 * `isParent`/`children`).
 */

const provider = "instatus"
const summaryPath = "/summary.json"
const componentsPath = "/v2/components.json"

/** The page URL, also when the source was added (or detected) by its summary's URL. */
const pageOf = (url: string): string => {
  const page = new URL(url)
  page.pathname = page.pathname.replace(/\/summary\.json$/, "")
  return page.toString()
}

const OptionalText = Schema.optional(Schema.NullOr(Schema.String))

// openstatus reads the page status as `{text, type}`; accepted beside the documented string.
const StatusObject = Schema.Struct({ text: OptionalText, type: Schema.String })

const SummaryIncident = Schema.Struct({
  id: Schema.optional(Schema.String),
  name: Schema.String,
  started: OptionalText,
  status: OptionalText,
  impact: OptionalText,
  url: OptionalText
})

const SummaryMaintenance = Schema.Struct({
  id: Schema.optional(Schema.String),
  name: Schema.String,
  start: OptionalText,
  status: OptionalText,
  /** Minutes, sent as a string. */
  duration: Schema.optional(Schema.NullOr(Schema.Union([Schema.String, Schema.Number]))),
  url: OptionalText
})

// Both lists are omitted when empty.
const Summary = Schema.Struct({
  page: Schema.Struct({ name: OptionalText, status: Schema.optional(Schema.Union([Schema.String, StatusObject])) }),
  status: Schema.optional(StatusObject),
  activeIncidents: Schema.optional(Schema.NullOr(Schema.Array(SummaryIncident))),
  activeMaintenances: Schema.optional(Schema.NullOr(Schema.Array(SummaryMaintenance)))
})
type Summary = typeof Summary.Type

const ComponentFields = {
  id: Schema.String,
  name: Schema.String,
  description: OptionalText,
  status: OptionalText,
  activeIncidents: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({ id: Schema.optional(Schema.String), url: OptionalText }))))
}
const Child = Schema.Struct(ComponentFields)
type Child = typeof Child.Type

const Component = Schema.Struct({
  ...ComponentFields,
  group: Schema.optional(Schema.NullOr(Schema.Union([Schema.String, Schema.Struct({ id: Schema.optional(Schema.String), name: Schema.String })]))),
  isParent: Schema.optional(Schema.NullOr(Schema.Boolean)),
  children: Schema.optional(Schema.NullOr(Schema.Array(Child)))
})
type Component = typeof Component.Type

const Components = Schema.Union([Schema.Array(Component), Schema.Struct({ components: Schema.Array(Component) })])

const pageStatuses: Record<string, SourceStatus> = {
  UP: "operational",
  HASISSUES: "degraded",
  UNDERMAINTENANCE: "maintenance"
}

const componentStatuses: Record<string, ComponentStatus> = {
  OPERATIONAL: "operational",
  UNDERMAINTENANCE: "maintenance",
  DEGRADEDPERFORMANCE: "degraded",
  PARTIALOUTAGE: "degraded",
  MINOROUTAGE: "degraded",
  MAJOROUTAGE: "critical"
}

const incidentStatuses: Record<string, IncidentStatus> = {
  INVESTIGATING: "investigating",
  IDENTIFIED: "identified",
  MONITORING: "monitoring",
  RESOLVED: "resolved"
}

// Instatus ranks MINOROUTAGE above PARTIALOUTAGE; both read as degraded (major), MAJOROUTAGE as down.
const impacts: Record<string, IncidentImpact> = {
  OPERATIONAL: "none",
  UNDERMAINTENANCE: "maintenance",
  DEGRADEDPERFORMANCE: "minor",
  PARTIALOUTAGE: "major",
  MINOROUTAGE: "major",
  MAJOROUTAGE: "critical"
}

const maintenanceStatuses: Record<string, MaintenanceStatus> = {
  NOTSTARTEDYET: "scheduled",
  INPROGRESS: "in_progress",
  COMPLETED: "completed"
}


const decode = <A>(schema: Schema.Decoder<A>, fetched: Fetched, what: string) =>
  Effect.flatMap(json(provider, fetched), (body) =>
    Schema.decodeUnknownEffect(schema)(body).pipe(
      Effect.mapError((error) =>
        new AdapterError({ provider, url: fetched.url, reason: "invalid_shape", message: `not an Instatus ${what}: ${error.message}` })
      )
    ))

interface Ref {
  readonly id?: string | undefined
  readonly url?: string | null | undefined
}

/** Summary items carry no id: Instatus ids are the last segment of their URL. */
const refId = (item: Ref): string | undefined => item.id ?? /\/([^/?#]+)\/?(?:[?#].*)?$/.exec(item.url ?? "")?.[1]
const idOf = (item: Ref & { readonly name: string }): string => refId(item) ?? item.name

const toComponents = (list: ReadonlyArray<Component>, warnings: Array<string>): Array<SnapshotComponent> => {
  const out: Array<SnapshotComponent> = []
  const push = (c: Omit<SnapshotComponent, "position" | "region">) => out.push({ ...c, position: out.length, region: null })
  const leaf = (c: Child, parent: string | null) =>
    push({
      id: c.id,
      name: c.name.trim(),
      description: c.description ?? "",
      status: lookup<ComponentStatus>(componentStatuses, c.status, "degraded", warnings, "component status"),
      parent_id: parent,
      is_group: false
    })
  // A group named only by its children gets an id derived from its name, stable across polls.
  const groupOf = (group: Component["group"]): string | null => {
    if (group === null || group === undefined) return null
    const name = (typeof group === "string" ? group : group.name).trim()
    if (name === "") return null
    const id = typeof group === "string" || group.id === undefined ? `group:${name}` : group.id
    if (!out.some((c) => c.id === id)) push({ id, name, description: "", status: "operational", parent_id: null, is_group: true })
    return id
  }
  for (const c of list) {
    if (c.isParent === true || (c.children ?? []).length > 0) {
      const status = c.status ? lookup<ComponentStatus>(componentStatuses, c.status, "degraded", warnings, "component status") : "operational"
      push({ id: c.id, name: c.name.trim(), description: c.description ?? "", status, parent_id: null, is_group: true })
      for (const child of c.children ?? []) leaf(child, c.id)
    } else {
      leaf(c, groupOf(c.group))
    }
  }
  return rollUpGroups(out)
}

/** Incident id → ids of the components listing it among their active incidents. */
const affected = (list: ReadonlyArray<Component>): Map<string, Array<string>> => {
  const byIncident = new Map<string, Array<string>>()
  const visit = (c: Child) => {
    for (const i of c.activeIncidents ?? []) {
      const id = refId(i)
      if (id !== undefined) byIncident.set(id, [...(byIncident.get(id) ?? []), c.id])
    }
  }
  for (const c of list) {
    visit(c)
    for (const child of c.children ?? []) visit(child)
  }
  return byIncident
}

const toIncident = (
  incident: typeof SummaryIncident.Type,
  components: Map<string, Array<string>>,
  now: Date,
  warnings: Array<string>
): SnapshotIncident => {
  const id = idOf(incident)
  const status = lookup<IncidentStatus>(incidentStatuses, incident.status ?? "INVESTIGATING", "investigating", warnings, "incident status")
  const started = isoOrNull(incident.started) ?? now.toISOString()
  return {
    id,
    title: incident.name,
    status,
    impact: lookup<IncidentImpact>(impacts, incident.impact ?? "PARTIALOUTAGE", "major", warnings, "incident impact"),
    created_at: started,
    // The summary carries no update times nor updates.
    updated_at: started,
    resolved_at: status === "resolved" ? started : null,
    update_count: 0,
    components: components.get(id) ?? [],
    url: incident.url ?? null,
    region: null
  }
}

const toMaintenance = (maintenance: typeof SummaryMaintenance.Type, now: Date, warnings: Array<string>): SnapshotMaintenance => {
  const start = isoOrNull(maintenance.start) ?? now.toISOString()
  // A duration past the end of time (say 1e300 minutes) gives no end rather than an invalid date.
  const end = maintenance.duration ? new Date(Date.parse(start) + Number(maintenance.duration) * 60_000) : null
  return {
    id: idOf(maintenance),
    title: maintenance.name,
    status: lookup<MaintenanceStatus>(maintenanceStatuses, maintenance.status ?? "NOTSTARTEDYET", "scheduled", warnings, "maintenance status"),
    scheduled_for: start,
    scheduled_until: end === null || Number.isNaN(end.getTime()) ? null : end.toISOString(),
    components: [],
    url: maintenance.url ?? null
  }
}

const pageIndicator = (summary: Summary): { readonly value: string; readonly text: string | null } | null => {
  const page = summary.page.status
  if (typeof page === "string") return { value: page, text: null }
  const object = page ?? summary.status
  return object ? { value: object.type, text: object.text ?? null } : null
}

const parse = Effect.fnUntraced(function*(fetched: ReadonlyArray<Fetched>, source: SourceConfig, now: Date) {
  const primary = fetched[0]
  if (primary === undefined) {
    return yield* new AdapterError({ provider, url: source.url, reason: "invalid_shape", message: "no summary was fetched" })
  }
  const summary = yield* decode(Summary, primary, "summary")
  const indicator = pageIndicator(summary)
  if (indicator === null) {
    return yield* new AdapterError({ provider, url: primary.url, reason: "invalid_shape", message: "not an Instatus summary: page.status is missing" })
  }
  // The component list is secondary: a page that does not serve it (non-2xx) still has a summary.
  const secondary = fetched[1]
  const doc = secondary && secondary.status >= 200 && secondary.status < 300
    ? yield* decode(Components, secondary, "component list")
    : []
  const list = "components" in doc ? doc.components : doc

  const warnings: Array<string> = []
  const reported = lookup<SourceStatus>(pageStatuses, indicator.value, "degraded", warnings, "page status")
  const components = toComponents(list, warnings)
  const byIncident = affected(list)
  const incidents = (summary.activeIncidents ?? [])
    .map((i) => toIncident(i, byIncident, now, warnings))
    .toSorted((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at))
  const maintenances = (summary.activeMaintenances ?? [])
    .map((m) => toMaintenance(m, now, warnings))
    .filter((m) => m.status !== "completed")
  const status = effectiveStatus({ reported, components, incidents, maintenances, regions: source.regions, now })
  return {
    provider,
    status,
    reported_status: reported,
    description: indicator.text || statusDescriptions[status],
    components,
    incidents,
    maintenances,
    regions: [],
    warnings
  }
})

const isProbeSummary = Schema.is(Schema.Struct({
  page: Schema.Struct({ status: Schema.Literals(["UP", "HASISSUES", "UNDERMAINTENANCE"]) })
}))

export const instatus = {
  id: "instatus",
  name: "Instatus",
  endpoints: (source) => [joinUrl(pageOf(source.url), summaryPath), joinUrl(pageOf(source.url), componentsPath)],
  parse,
  detect: {
    host: (url) => hostIs(url.hostname, "instatus.com"),
    probe: { path: summaryPath, accepts: isProbeSummary },
    html: (html) => /instatus/i.test(html)
  }
} as const satisfies Adapter
