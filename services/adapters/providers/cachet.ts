import { Effect, Schema } from "effect"
import type { MaintenanceStatus, Snapshot, SnapshotComponent, SnapshotIncident, SnapshotMaintenance } from "../../domain/Snapshot.ts"
import type { ComponentStatus, IncidentImpact, IncidentStatus } from "../../domain/Status.ts"
import { type Adapter, AdapterError, type Fetched, type SourceConfig } from "../Adapter.ts"
import { effectiveStatus, isoOrNull, lookup, rollUpGroups, statusDescriptions } from "../normalize.ts"
import { joinUrl, json } from "../text.ts"

/**
 * Cachet, self-hosted: 2.x serves `/api/v1/*` (`{meta: {pagination}, data}`),
 * 3.x (cachethq/core) serves JSON:API at `/api/*` with `status: {human, value}`.
 * Both are read into the same rows, then into one snapshot. Components are
 * the primary document; groups, incidents and schedules are secondary.
 */

type Provider = "cachet_v2" | "cachet_v3"

// Cachet's integers arrive as numbers, or as numeric strings from some database drivers.
const Num = Schema.Union([Schema.Number, Schema.String])
const OptionalNum = Schema.optional(Schema.NullOr(Num))
const OptionalText = Schema.optional(Schema.NullOr(Schema.String))
const Enabled = Schema.optional(Schema.NullOr(Schema.Union([Schema.Boolean, Num])))
const list = <S extends Schema.Top>(item: S) => Schema.Struct({ data: Schema.Array(item) })

// 0 is Cachet 2's own "Unknown" and 5 Cachet 3's: operational, no warning (README status rules).
const v2Statuses: Record<string, ComponentStatus> = { 0: "operational", 1: "operational", 2: "degraded", 3: "degraded", 4: "critical" }
const v3Statuses: Record<string, ComponentStatus> = {
  1: "operational",
  2: "degraded",
  3: "degraded",
  4: "critical",
  5: "operational",
  6: "maintenance"
}

/** Cachet incidents have no impact: it is read from the affected components' status codes. */
const v2Impacts: Record<string, IncidentImpact> = { 2: "minor", 3: "major", 4: "critical" }
const v3Impacts: Record<string, IncidentImpact> = { 2: "minor", 3: "major", 4: "critical", 6: "maintenance" }
const impactRank: Record<IncidentImpact, number> = { none: 0, maintenance: 1, minor: 2, major: 3, critical: 4 }
/** The impact a component status code gives an incident; "none" for other codes (own keys only: a code may be "constructor"). */
const lookupImpact = (version: Version, code: string): IncidentImpact =>
  Object.hasOwn(version.impacts, code) ? version.impacts[code]! : "none"

// 3 is "Watching", 4 "Fixed"; 0 ("Scheduled", Cachet 2.0-2.3) is a maintenance, handled apart.
const incidentStatuses: Record<string, IncidentStatus> = { 1: "investigating", 2: "identified", 3: "monitoring", 4: "resolved" }
const scheduleStatuses: Record<string, MaintenanceStatus> = { 0: "scheduled", 1: "in_progress", 2: "completed" }


/** Cachet writes "2024-06-01 12:00:00" in the app's timezone, UTC by default; Date would read it as local. */
const cachetTime = (value: string | null | undefined): string | null =>
  isoOrNull(value && /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})?$/.test(value) ? `${value.replace(" ", "T")}Z` : value)

/** Rows both versions are read into. Codes are the raw status values as strings. */
interface ComponentRow {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly code: string
  readonly order: number
  readonly group: string | null
}
interface GroupRow {
  readonly id: string
  readonly name: string
  readonly order: number
}
interface IncidentRow {
  readonly id: string
  readonly name: string
  readonly code: string
  readonly created: string | null
  readonly updated: string | null
  readonly resolved: string | null
  readonly updateCount: number
  readonly components: ReadonlyArray<string>
}
interface ScheduleRow {
  readonly id: string
  readonly name: string
  readonly code: string
  readonly start: string | null
  readonly end: string | null
  readonly components: ReadonlyArray<string>
}
interface Rows {
  readonly components: ReadonlyArray<ComponentRow>
  readonly groups: ReadonlyArray<GroupRow>
  readonly incidents: ReadonlyArray<IncidentRow>
  readonly schedules: ReadonlyArray<ScheduleRow>
}

interface Version {
  readonly provider: Provider
  readonly label: string
  readonly statuses: Readonly<Record<string, ComponentStatus>>
  readonly impacts: Readonly<Record<string, IncidentImpact>>
}
const v2: Version = { provider: "cachet_v2", label: "Cachet 2", statuses: v2Statuses, impacts: v2Impacts }
const v3: Version = { provider: "cachet_v3", label: "Cachet 3", statuses: v3Statuses, impacts: v3Impacts }

const isOk = (doc: Fetched) => doc.status >= 200 && doc.status < 300
const isDisabled = (enabled: boolean | number | string | null | undefined) => enabled === false || String(enabled) === "0"
const byOrder = <A extends { readonly order: number; readonly id: string }>(a: A, b: A) =>
  a.order - b.order || a.id.localeCompare(b.id, "en", { numeric: true })

const decode = <A>(version: Version, schema: Schema.Decoder<A>, doc: Fetched, what: string) =>
  Effect.flatMap(json(version.provider, doc), (body) =>
    Schema.decodeUnknownEffect(schema)(body).pipe(
      Effect.mapError((error) =>
        new AdapterError({
          provider: version.provider,
          url: doc.url,
          reason: "invalid_shape",
          message: `not a ${version.label} ${what}: ${error.message}`
        })
      )
    ))

/** A secondary document: absent or non-2xx reads as nothing; a 2xx one must have the right shape. */
const secondary = <A>(version: Version, schema: Schema.Decoder<A>, doc: Fetched | undefined, what: string) =>
  doc === undefined || !isOk(doc) ? Effect.succeed(null) : decode(version, schema, doc, what)

const toComponents = (rows: Rows, version: Version, warnings: Array<string>): Array<SnapshotComponent> => {
  const out: Array<SnapshotComponent> = []
  const push = (c: Omit<SnapshotComponent, "position" | "region">) => out.push({ ...c, position: out.length, region: null })
  const pushAll = (members: ReadonlyArray<ComponentRow>, parent: string | null) => {
    for (const c of members.toSorted(byOrder)) {
      const status = lookup<ComponentStatus>(version.statuses, c.code, "degraded", warnings, "component status")
      push({ id: c.id, name: c.name, description: c.description, status, parent_id: parent, is_group: false })
    }
  }
  // Group ids count from 1 like component ids: prefixed so the two never collide.
  for (const group of rows.groups.toSorted(byOrder)) {
    const members = rows.components.filter((c) => c.group === group.id)
    if (members.length === 0) continue
    const id = `group:${group.id}`
    push({ id, name: group.name, description: "", status: "operational", parent_id: null, is_group: true })
    pushAll(members, id)
  }
  const known = new Set(rows.groups.map((g) => g.id))
  pushAll(rows.components.filter((c) => c.group === null || !known.has(c.group)), null)
  return rollUpGroups(out)
}

const toIncident = (
  row: IncidentRow,
  codes: ReadonlyMap<string, string>,
  version: Version,
  source: SourceConfig,
  now: Date,
  warnings: Array<string>
): SnapshotIncident => {
  const status = lookup<IncidentStatus>(incidentStatuses, row.code, "investigating", warnings, "incident status")
  const resolved = status === "resolved"
  const components = row.components.filter((id) => codes.has(id))
  const derived = components
    .map((id) => lookupImpact(version, codes.get(id)!))
    .reduce<IncidentImpact>((worst, i) => (impactRank[i] > impactRank[worst] ? i : worst), "none")
  const created = row.created ?? now.toISOString()
  const updated = row.updated ?? created
  return {
    id: row.id,
    title: row.name,
    status,
    // An open incident says something is wrong even when its component reads fine.
    impact: derived === "none" && !resolved ? "minor" : derived,
    created_at: created,
    updated_at: updated,
    resolved_at: resolved ? (row.resolved ?? updated) : null,
    update_count: row.updateCount,
    components,
    url: joinUrl(source.url, `/incidents/${row.id}`),
    region: null
  }
}

const toMaintenance = (row: ScheduleRow, known: ReadonlySet<string>, now: Date, warnings: Array<string>): SnapshotMaintenance => ({
  id: row.id,
  title: row.name,
  status: lookup<MaintenanceStatus>(scheduleStatuses, row.code, "scheduled", warnings, "schedule status"),
  scheduled_for: row.start ?? now.toISOString(),
  scheduled_until: row.end,
  components: row.components.filter((id) => known.has(id)),
  url: null
})

const toSnapshot = (rows: Rows, version: Version, source: SourceConfig, now: Date): Snapshot => {
  const warnings: Array<string> = []
  const components = toComponents(rows, version, warnings)
  const codes = new Map(rows.components.map((c) => [c.id, c.code]))
  const incidents = rows.incidents
    .map((row) => toIncident(row, codes, version, source, now, warnings))
    .toSorted((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at))
  const known = new Set(codes.keys())
  const maintenances = rows.schedules
    .map((row) => toMaintenance(row, known, now, warnings))
    .filter((m) => m.status === "scheduled" || m.status === "in_progress")
  // Cachet has no page-level indicator in what is fetched.
  const status = effectiveStatus({ reported: null, components, incidents, maintenances, regions: source.regions, now })
  return {
    provider: version.provider,
    status,
    reported_status: null,
    description: statusDescriptions[status],
    components,
    incidents,
    maintenances,
    regions: [],
    warnings
  }
}

const missingPrimary = (version: Version, source: SourceConfig) =>
  new AdapterError({ provider: version.provider, url: source.url, reason: "invalid_shape", message: "no component list was fetched" })

// ---- Cachet 2.x ----

const V2Component = Schema.Struct({
  id: Num,
  name: Schema.String,
  description: OptionalText,
  status: Num,
  order: OptionalNum,
  /** 0 = not in a group. */
  group_id: OptionalNum,
  enabled: Enabled
})
const V2Group = Schema.Struct({ id: Num, name: Schema.String, order: OptionalNum })
const V2Incident = Schema.Struct({
  id: Num,
  name: Schema.String,
  status: Num,
  component_id: OptionalNum,
  occurred_at: OptionalText,
  scheduled_at: OptionalText,
  created_at: OptionalText,
  updated_at: OptionalText,
  /** Cachet 2.4 eager-loads the updates; the incident's own message is the first post. */
  updates: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({ status: Num, created_at: OptionalText }))))
})
const V2Schedule = Schema.Struct({ id: Num, name: Schema.String, status: Num, scheduled_at: OptionalText, completed_at: OptionalText })

const v2Incident = (i: typeof V2Incident.Type): IncidentRow => {
  const last = (i.updates ?? []).toSorted((a, b) => (cachetTime(b.created_at) ?? "").localeCompare(cachetTime(a.created_at) ?? ""))[0]
  const code = String(last?.status ?? i.status)
  const updated = [cachetTime(i.updated_at), cachetTime(last?.created_at)].filter((t) => t !== null).toSorted().at(-1) ?? null
  return {
    id: String(i.id),
    name: i.name,
    code,
    created: cachetTime(i.occurred_at ?? i.created_at),
    updated,
    resolved: code === "4" ? cachetTime(last?.created_at) ?? updated : null,
    updateCount: 1 + (i.updates?.length ?? 0),
    components: i.component_id === null || i.component_id === undefined || String(i.component_id) === "0" ? [] : [String(i.component_id)]
  }
}

/** Cachet 2.0-2.3 scheduled maintenance as incidents with status 0; only upcoming ones are current. */
const v2ScheduledIncident = (i: typeof V2Incident.Type, now: Date): Array<ScheduleRow> => {
  const start = cachetTime(i.scheduled_at ?? i.occurred_at)
  return start !== null && Date.parse(start) > now.getTime()
    ? [{ id: String(i.id), name: i.name, code: "0", start, end: null, components: v2Incident(i).components }]
    : []
}

const parseV2 = Effect.fnUntraced(function*(fetched: ReadonlyArray<Fetched>, source: SourceConfig, now: Date) {
  const [primary, groupsDoc, incidentsDoc, schedulesDoc] = fetched
  if (primary === undefined) return yield* missingPrimary(v2, source)
  const components = yield* decode(v2, list(V2Component), primary, "component list")
  const groups = yield* secondary(v2, list(V2Group), groupsDoc, "component group list")
  const incidents = (yield* secondary(v2, list(V2Incident), incidentsDoc, "incident list"))?.data ?? []
  const schedules = yield* secondary(v2, list(V2Schedule), schedulesDoc, "schedule list")
  return toSnapshot({
    components: components.data.filter((c) => !isDisabled(c.enabled)).map((c) => ({
      id: String(c.id),
      name: c.name,
      description: c.description ?? "",
      code: String(c.status),
      order: Number(c.order ?? 0),
      group: c.group_id === null || c.group_id === undefined || String(c.group_id) === "0" ? null : String(c.group_id)
    })),
    groups: (groups?.data ?? []).map((g) => ({ id: String(g.id), name: g.name, order: Number(g.order ?? 0) })),
    incidents: incidents.filter((i) => String(i.status) !== "0").map(v2Incident),
    schedules: [
      ...incidents.filter((i) => String(i.status) === "0").flatMap((i) => v2ScheduledIncident(i, now)),
      ...(schedules?.data ?? []).map((s) => ({
        id: String(s.id),
        name: s.name,
        code: String(s.status),
        start: cachetTime(s.scheduled_at),
        end: cachetTime(s.completed_at),
        components: []
      }))
    ]
  }, v2, source, now)
})

// ---- Cachet 3.x ----

const Ref = Schema.Struct({ id: Num })
const ToOne = Schema.optional(Schema.NullOr(Schema.Struct({ data: Schema.optional(Schema.NullOr(Ref)) })))
const ToMany = Schema.optional(Schema.NullOr(Schema.Struct({ data: Schema.optional(Schema.NullOr(Schema.Array(Ref))) })))
// An empty relationships map may be serialised by PHP as [].
const relationships = <F extends Schema.Struct.Fields>(fields: F) =>
  Schema.optional(Schema.NullOr(Schema.Union([Schema.Struct(fields), Schema.Array(Schema.Unknown)])))
const relationsOf = <A extends object>(value: A | ReadonlyArray<unknown> | null | undefined): Partial<A> =>
  value === null || value === undefined || Array.isArray(value) ? {} : (value as A)
const refIds = (many: { readonly data?: ReadonlyArray<{ readonly id: number | string }> | null | undefined } | null | undefined) =>
  (many?.data ?? []).map((r) => String(r.id))

/** `{human, value}`; some releases serialise the enum as its bare value. */
const V3Status = Schema.Union([Schema.Struct({ human: OptionalText, value: Num }), Num])
const statusCode = (status: typeof V3Status.Type | null | undefined): string =>
  String(typeof status === "object" && status !== null ? status.value : status)
const Stamp = Schema.optional(Schema.NullOr(Schema.Struct({ string: OptionalText })))

const V3Component = Schema.Struct({
  id: Num,
  attributes: Schema.Struct({
    name: Schema.String,
    description: OptionalText,
    order: OptionalNum,
    status: Schema.optional(Schema.NullOr(V3Status)),
    enabled: Enabled,
    component_group_id: OptionalNum
  }),
  relationships: relationships({ group: ToOne })
})
const V3Group = Schema.Struct({
  id: Num,
  attributes: Schema.Struct({ name: Schema.String, order: OptionalNum }),
  relationships: relationships({ components: ToMany })
})
const V3Incident = Schema.Struct({
  id: Num,
  attributes: Schema.Struct({
    name: Schema.String,
    status: Schema.optional(Schema.NullOr(V3Status)),
    component_id: OptionalNum,
    occurred: Stamp,
    created: Stamp,
    updated: Stamp
  }),
  relationships: relationships({ components: ToMany, updates: ToMany })
})
const V3Schedule = Schema.Struct({
  id: Num,
  attributes: Schema.Struct({ name: Schema.String, status: Schema.optional(Schema.NullOr(V3Status)), scheduled: Stamp, completed: Stamp }),
  relationships: relationships({ components: ToMany })
})

const v3Incident = (i: typeof V3Incident.Type): IncidentRow => {
  const rel = relationsOf(i.relationships)
  const a = i.attributes
  const code = statusCode(a.status)
  const updated = cachetTime(a.updated?.string)
  const direct = a.component_id === null || a.component_id === undefined ? [] : [String(a.component_id)]
  return {
    id: String(i.id),
    name: a.name,
    code,
    created: cachetTime(a.occurred?.string ?? a.created?.string),
    updated,
    resolved: code === "4" ? updated : null,
    updateCount: 1 + refIds(rel.updates).length,
    components: [...new Set([...refIds(rel.components), ...direct])]
  }
}

const parseV3 = Effect.fnUntraced(function*(fetched: ReadonlyArray<Fetched>, source: SourceConfig, now: Date) {
  const [primary, groupsDoc, incidentsDoc, schedulesDoc] = fetched
  if (primary === undefined) return yield* missingPrimary(v3, source)
  const components = yield* decode(v3, list(V3Component), primary, "component list")
  const groups = (yield* secondary(v3, list(V3Group), groupsDoc, "component group list"))?.data ?? []
  const incidents = yield* secondary(v3, list(V3Incident), incidentsDoc, "incident list")
  const schedules = yield* secondary(v3, list(V3Schedule), schedulesDoc, "schedule list")
  // Membership is on the component (attribute or included `group`) or on the group's `components`.
  const listed = new Map(groups.flatMap((g) => refIds(relationsOf(g.relationships).components).map((c) => [c, String(g.id)] as const)))
  return toSnapshot({
    components: components.data.filter((c) => !isDisabled(c.attributes.enabled)).map((c) => {
      const group = c.attributes.component_group_id ?? relationsOf(c.relationships).group?.data?.id ?? listed.get(String(c.id))
      return {
        id: String(c.id),
        name: c.attributes.name,
        description: c.attributes.description ?? "",
        code: statusCode(c.attributes.status),
        order: Number(c.attributes.order ?? 0),
        group: group === null || group === undefined ? null : String(group)
      }
    }),
    groups: groups.map((g) => ({ id: String(g.id), name: g.attributes.name, order: Number(g.attributes.order ?? 0) })),
    incidents: (incidents?.data ?? []).map(v3Incident),
    schedules: (schedules?.data ?? []).map((s) => ({
      id: String(s.id),
      name: s.attributes.name,
      code: statusCode(s.attributes.status),
      start: cachetTime(s.attributes.scheduled?.string),
      end: cachetTime(s.attributes.completed?.string),
      components: refIds(relationsOf(s.relationships).components)
    }))
  }, v3, source, now)
})

// ---- Detection ----

/** Cachet 2's paginated envelope around components with scalar statuses. */
const isV2Components = Schema.is(Schema.Struct({
  meta: Schema.Struct({ pagination: Schema.Struct({ total: Num }) }),
  data: Schema.Array(Schema.Struct({ id: Num, name: Schema.String, status: Num }))
}))

/** Cachet 3's JSON:API components; an empty list says nothing, so at least one is needed. */
const isV3Components = Schema.is(Schema.Struct({
  data: Schema.NonEmptyArray(Schema.Struct({
    type: Schema.Literal("components"),
    attributes: Schema.Struct({ name: Schema.String, status: V3Status })
  }))
}))

// Cachet 3 serves its assets from vendor/cachethq/cachet; Cachet 2 pages only name the brand.
const isV3Html = (html: string) => html.includes("vendor/cachethq/cachet")

/** `path` below the Cachet root, also when the source was added (or detected) by its component list's URL. */
const endpoint = (source: SourceConfig, path: string, query: string) => {
  const root = new URL(source.url)
  root.pathname = root.pathname.replace(/\/api(\/v1)?\/components\/?$/, "")
  return `${joinUrl(root.toString(), path)}?${query}`
}

export const cachetV2 = {
  id: "cachet_v2",
  name: "Cachet 2",
  // Default pages hold 20 items and incidents come oldest first unless sorted.
  endpoints: (source) => [
    endpoint(source, "/api/v1/components", "per_page=100"),
    endpoint(source, "/api/v1/components/groups", "per_page=100"),
    endpoint(source, "/api/v1/incidents", "sort=id&order=desc&per_page=50"),
    endpoint(source, "/api/v1/schedules", "per_page=50")
  ],
  parse: parseV2,
  detect: {
    probe: { path: "/api/v1/components", accepts: isV2Components },
    html: (html) => /cachet/i.test(html) && !isV3Html(html)
  }
} as const satisfies Adapter

export const cachetV3 = {
  id: "cachet_v3",
  name: "Cachet 3",
  endpoints: (source) => [
    endpoint(source, "/api/components", "include=group&per_page=100"),
    endpoint(source, "/api/component-groups", "include=components&per_page=100"),
    endpoint(source, "/api/incidents", "include=components,updates&per_page=50"),
    endpoint(source, "/api/schedules", "include=components&sort=-scheduled_at&per_page=50")
  ],
  parse: parseV3,
  detect: {
    probe: { path: "/api/components", accepts: isV3Components },
    html: isV3Html
  }
} as const satisfies Adapter
