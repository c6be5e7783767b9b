import { Effect, Schema } from "effect"
import type { MaintenanceStatus, SnapshotComponent, SnapshotIncident, SnapshotMaintenance } from "../../domain/Snapshot.ts"
import type { ComponentStatus, IncidentImpact, IncidentStatus, SourceStatus } from "../../domain/Status.ts"
import { type Adapter, AdapterError, type Fetched, type SourceConfig } from "../Adapter.ts"
import { effectiveStatus, isoOrNull, lookup, rollUpGroups, statusDescriptions } from "../normalize.ts"
import { joinUrl, json } from "../text.ts"
import { hostIs } from "../hosts.ts"

/**
 * Better Stack (Better Uptime) status pages: `/index.json`, a JSON:API document
 * whose `included[]` holds sections (groups), resources (components), status
 * reports (incidents and maintenances) and their status updates. The pages are
 * SPAs answering 200 HTML on every path, so only the JSON shape counts.
 */

const provider = "betterstack"
const indexPath = "/index.json"

/** The page URL, also when the source was added (or detected) by its index.json URL. */
const pageOf = (url: string): string => {
  const page = new URL(url)
  page.pathname = page.pathname.replace(/\/index\.json$/, "")
  return page.toString()
}

const Id = Schema.Union([Schema.String, Schema.Number])
const OptionalText = Schema.optional(Schema.NullOr(Schema.String))
const OptionalNumber = Schema.optional(Schema.NullOr(Schema.Number))
const Refs = Schema.optional(Schema.NullOr(Schema.Struct({ data: Schema.NullOr(Schema.Array(Schema.Struct({ id: Id }))) })))
const Affected = Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({ status_page_resource_id: Id, status: Schema.String }))))

const Index = Schema.Struct({
  data: Schema.Struct({
    id: Id,
    type: Schema.Literal("status_page"),
    attributes: Schema.Struct({ company_name: OptionalText, aggregate_state: Schema.String })
  }),
  included: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({
    id: Id,
    type: Schema.String,
    attributes: Schema.optional(Schema.Unknown),
    relationships: Schema.optional(Schema.Unknown)
  }))))
})
type Included = NonNullable<typeof Index.Type.included>[number]

const Section = Schema.Struct({ name: OptionalText, position: OptionalNumber })

const Resource = Schema.Struct({
  public_name: Schema.String,
  status: Schema.String,
  status_page_section_id: Schema.optional(Schema.NullOr(Id)),
  explanation: OptionalText,
  position: OptionalNumber
})

const Report = Schema.Struct({
  title: Schema.String,
  report_type: OptionalText,
  starts_at: Schema.String,
  ends_at: OptionalText,
  aggregate_state: OptionalText,
  affected_resources: Affected
})

const ReportRelationships = Schema.optional(Schema.NullOr(Schema.Struct({ status_updates: Refs })))

const Update = Schema.Struct({ published_at: OptionalText, affected_resources: Affected })

const aggregateStates: Record<string, SourceStatus> = {
  operational: "operational",
  degraded: "degraded",
  downtime: "down",
  maintenance: "maintenance"
}

// not_monitored is the provider's own "no data": operational, no warning (README status rules).
const resourceStatuses: Record<string, ComponentStatus> = {
  operational: "operational",
  not_monitored: "operational",
  degraded: "degraded",
  downtime: "critical",
  maintenance: "maintenance"
}

// A report's aggregate_state is either its lifecycle or the state of what it affects.
const reportStates: Record<string, IncidentStatus> = {
  investigating: "investigating",
  identified: "identified",
  monitoring: "monitoring",
  resolved: "resolved",
  operational: "resolved",
  degraded: "investigating",
  downtime: "investigating",
  maintenance: "investigating"
}

// Affected-resource states; Better Stack has one "degraded", read as Statuspage's minor.
const affectedImpacts: Record<string, IncidentImpact> = {
  resolved: "none",
  operational: "none",
  not_monitored: "none",
  degraded: "minor",
  downtime: "critical",
  maintenance: "maintenance"
}
const impactRank: Record<IncidentImpact, number> = { none: 0, maintenance: 1, minor: 2, major: 3, critical: 4 }


const invalid = (url: string, message: string) => new AdapterError({ provider, url, reason: "invalid_shape", message })

/** Decodes one `included[]` item's attributes, naming the item when they are not the expected shape. */
const decodeItem = <A>(schema: Schema.Decoder<A>, item: Included, value: unknown, url: string) =>
  Schema.decodeUnknownEffect(schema)(value).pipe(
    Effect.mapError((error) => invalid(url, `Better Stack ${item.type} ${item.id}: ${error.message}`))
  )

const byPosition = <A extends { readonly position?: number | null | undefined }>(a: A, b: A) => (a.position ?? 0) - (b.position ?? 0)

/** Sections with a name become groups; a resource in an unnamed section stands on its own. */
const toComponents = (
  sections: ReadonlyArray<{ readonly id: string } & typeof Section.Type>,
  resources: ReadonlyArray<{ readonly id: string } & typeof Resource.Type>,
  warnings: Array<string>
): Array<SnapshotComponent> => {
  const out: Array<SnapshotComponent> = []
  const push = (c: Omit<SnapshotComponent, "position" | "region">) => out.push({ ...c, position: out.length, region: null })
  const pushResources = (list: ReadonlyArray<{ readonly id: string } & typeof Resource.Type>, parent: string | null) => {
    for (const r of list.toSorted(byPosition)) {
      push({
        id: r.id,
        name: r.public_name.trim(),
        description: r.explanation ?? "",
        status: lookup<ComponentStatus>(resourceStatuses, r.status, "degraded", warnings, "resource status"),
        parent_id: parent,
        is_group: false
      })
    }
  }
  const sectionIds = new Set(sections.map((s) => s.id))
  for (const section of sections.toSorted(byPosition)) {
    const members = resources.filter((r) => String(r.status_page_section_id) === section.id)
    const name = section.name?.trim() ?? ""
    // Section ids live apart from resource ids, hence the prefix.
    const id = name === "" ? null : `section:${section.id}`
    if (id !== null) push({ id, name, description: "", status: "operational", parent_id: null, is_group: true })
    pushResources(members, id)
  }
  pushResources(resources.filter((r) => !sectionIds.has(String(r.status_page_section_id))), null)
  return rollUpGroups(out)
}

interface ReportItem {
  readonly id: string
  readonly report: typeof Report.Type
  readonly updates: ReadonlyArray<typeof Update.Type>
}

const worstImpact = (impacts: ReadonlyArray<IncidentImpact>): IncidentImpact =>
  impacts.reduce<IncidentImpact>((worst, i) => (impactRank[i] > impactRank[worst] ? i : worst), "none")

const latest = (times: ReadonlyArray<string | null>): string | null =>
  times.filter((t): t is string => t !== null).toSorted().at(-1) ?? null

const toIncident = ({ id, report, updates }: ReportItem, known: Set<string>, now: Date, warnings: Array<string>): SnapshotIncident => {
  const created = isoOrNull(report.starts_at) ?? now.toISOString()
  const endsAt = isoOrNull(report.ends_at)
  const updated = latest([created, ...updates.map((u) => isoOrNull(u.published_at))]) ?? created
  // ends_at stays null on many resolved reports: the aggregate state decides, an end in the past also closes it.
  const stated = lookup<IncidentStatus>(reportStates, report.aggregate_state ?? "investigating", "investigating", warnings, "report state")
  const resolved = stated === "resolved" || (endsAt !== null && Date.parse(endsAt) <= now.getTime())
  const affected = [...(report.affected_resources ?? []), ...updates.flatMap((u) => u.affected_resources ?? [])]
  // The worst state the report or any of its updates gave a resource (or the report itself, when a state).
  const states = [...affected.map((a) => a.status), ...[report.aggregate_state].filter((s) => s === "degraded" || s === "downtime")]
  const impact = worstImpact(states.map((s) => lookup<IncidentImpact>(affectedImpacts, s, "minor", warnings, "affected resource status")))
  return {
    id,
    title: report.title,
    status: resolved ? "resolved" : stated,
    // An open report that names no harm still says something is wrong.
    impact: impact === "none" && !resolved ? "minor" : impact,
    created_at: created,
    updated_at: updated,
    resolved_at: resolved ? (endsAt ?? updated) : null,
    update_count: updates.length,
    components: [...new Set(affected.map((a) => String(a.status_page_resource_id)))].filter((c) => known.has(c)),
    url: null,
    region: null
  }
}

const toMaintenance = ({ id, report }: ReportItem, known: Set<string>, now: Date): SnapshotMaintenance => {
  const start = isoOrNull(report.starts_at) ?? now.toISOString()
  const end = isoOrNull(report.ends_at)
  const over = report.aggregate_state === "resolved" || report.aggregate_state === "operational" ||
    (end !== null && Date.parse(end) <= now.getTime())
  const status: MaintenanceStatus = over ? "completed" : Date.parse(start) > now.getTime() ? "scheduled" : "in_progress"
  return {
    id,
    title: report.title,
    status,
    scheduled_for: start,
    scheduled_until: end,
    components: (report.affected_resources ?? []).map((a) => String(a.status_page_resource_id)).filter((c) => known.has(c)),
    url: null
  }
}

const parse = Effect.fnUntraced(function*(fetched: ReadonlyArray<Fetched>, source: SourceConfig, now: Date) {
  const primary = fetched[0]
  if (primary === undefined) return yield* invalid(source.url, "no index.json was fetched")
  const body = yield* json(provider, primary)
  const index = yield* Schema.decodeUnknownEffect(Index)(body).pipe(
    Effect.mapError((error) => invalid(primary.url, `not a Better Stack index.json: ${error.message}`))
  )
  const included = index.included ?? []
  const ofType = (type: string) => included.filter((item) => item.type === type)

  const sections = yield* Effect.forEach(ofType("status_page_section"), (item) =>
    Effect.map(decodeItem(Section, item, item.attributes, primary.url), (s) => ({ ...s, id: String(item.id) })))
  const resources = yield* Effect.forEach(ofType("status_page_resource"), (item) =>
    Effect.map(decodeItem(Resource, item, item.attributes, primary.url), (r) => ({ ...r, id: String(item.id) })))
  const updates = new Map<string, typeof Update.Type>()
  for (const item of ofType("status_update")) updates.set(String(item.id), yield* decodeItem(Update, item, item.attributes, primary.url))
  const reports = yield* Effect.forEach(ofType("status_report"), (item) =>
    Effect.gen(function*() {
      const report = yield* decodeItem(Report, item, item.attributes, primary.url)
      const relationships = yield* decodeItem(ReportRelationships, item, item.relationships, primary.url)
      const refs = relationships?.status_updates?.data ?? []
      return { id: String(item.id), report, updates: refs.flatMap((r) => updates.get(String(r.id)) ?? []) }
    }))

  const warnings: Array<string> = []
  const reported = lookup<SourceStatus>(aggregateStates, index.data.attributes.aggregate_state, "degraded", warnings, "aggregate_state")
  const components = toComponents(sections, resources, warnings)
  const known = new Set(components.map((c) => c.id))
  const incidents = reports
    .filter((r) => r.report.report_type !== "maintenance")
    .map((r) => toIncident(r, known, now, warnings))
    .toSorted((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at))
  const maintenances = reports
    .filter((r) => r.report.report_type === "maintenance")
    .map((r) => toMaintenance(r, known, now))
    .filter((m) => m.status !== "completed")
  const status = effectiveStatus({ reported, components, incidents, maintenances, regions: source.regions, now })
  return {
    provider,
    status,
    reported_status: reported,
    description: statusDescriptions[status],
    components,
    incidents,
    maintenances,
    regions: [],
    warnings
  }
})

const isIndex = Schema.is(Schema.Struct({
  data: Schema.Struct({ type: Schema.Literal("status_page"), attributes: Schema.Struct({ aggregate_state: Schema.String }) })
}))

const ownHost = (hostname: string) =>
  ["betteruptime.com", "betterstack.com"].some((domain) => hostIs(hostname, domain))

export const betterstack = {
  id: "betterstack",
  name: "Better Stack",
  endpoints: (source) => [joinUrl(pageOf(source.url), indexPath)],
  parse,
  detect: {
    host: (url) => ownHost(url.hostname),
    probe: { path: indexPath, accepts: isIndex },
    html: (html) => /betterstack|betteruptime/i.test(html)
  }
} as const satisfies Adapter
