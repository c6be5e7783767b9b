import { Effect, Schema } from "effect"
import type { Snapshot, SnapshotComponent, SnapshotIncident, SnapshotIncidentUpdate } from "../../domain/Snapshot.ts"
import type { IncidentImpact } from "../../domain/Status.ts"
import { type Adapter, AdapterError, type Fetched, type SourceConfig } from "../Adapter.ts"
import { countsForSource, impactToSource, incidentSnapshot, isoOrNull, lookup, sourceToComponent, worstComponent } from "../normalize.ts"
import { joinUrl, json } from "../text.ts"
import { hostIs } from "../hosts.ts"

/**
 * Google Cloud's `incidents.json` (Google Workspace serves the same schema
 * under /appsstatus/dashboard/): every incident, open and historical. Open ⇔
 * `end` is null. There is no component list or page indicator: components are
 * the products named by recent incidents, regions their locations.
 */

const provider = "gcp"
const incidentsPath = "/incidents.json"
/** How far back resolved incidents (and the products they name) are kept. */
const historyMs = 30 * 24 * 60 * 60 * 1000

const Location = Schema.Struct({ id: Schema.String, title: Schema.optional(Schema.String) })
const Locations = Schema.optional(Schema.NullOr(Schema.Array(Location)))
const Update = Schema.Struct({
  when: Schema.optional(Schema.String),
  status: Schema.optional(Schema.String),
  text: Schema.optional(Schema.NullOr(Schema.String))
})

const Incident = Schema.Struct({
  id: Schema.String,
  begin: Schema.String,
  end: Schema.optional(Schema.NullOr(Schema.String)),
  modified: Schema.optional(Schema.String),
  external_desc: Schema.String,
  updates: Schema.optional(Schema.NullOr(Schema.Array(Update))),
  most_recent_update: Schema.optional(Schema.NullOr(Update)),
  status_impact: Schema.String,
  affected_products: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({ id: Schema.String, title: Schema.String })))),
  uri: Schema.optional(Schema.String),
  currently_affected_locations: Locations,
  previously_affected_locations: Locations
})
type Incident = typeof Incident.Type

// SERVICE_INFORMATION is a notice: listed, but it changes no status.
const impacts: Record<string, IncidentImpact> = {
  SERVICE_INFORMATION: "none",
  SERVICE_DISRUPTION: "minor",
  SERVICE_OUTAGE: "critical"
}


/** The incidents.json of a page; a URL that already names a .json document is kept. */
const endpoints = (source: SourceConfig): ReadonlyArray<string> =>
  [new URL(source.url).pathname.endsWith(".json") ? source.url : joinUrl(source.url, incidentsPath)]

/** Location ids an incident is about: where it is now, or was for an ended one. */
const locationsOf = (incident: Incident): Array<string> => {
  const current = incident.currently_affected_locations ?? []
  return (current.length > 0 ? current : incident.previously_affected_locations ?? []).map((l) => l.id)
}

/**
 * The snapshot region of an incident: null for a global or multi-location one
 * (it counts everywhere); with a region filter, a listed location if any, else
 * the first one, so that it does not count for this source.
 */
const regionOf = (locations: ReadonlyArray<string>, filter: ReadonlyArray<string>): string | null => {
  if (locations.length === 0 || locations.includes("global")) return null
  if (filter.length > 0) return locations.find((l) => filter.includes(l)) ?? locations[0]!
  return locations.length === 1 ? locations[0]! : null
}

/**
 * The updates of an incident, oldest first. GCP gives them no id: the time of each stands for it
 * (stable across polls); one without a readable time is left out. AVAILABLE says the service is back.
 */
const toUpdates = (raw: Incident): Array<SnapshotIncidentUpdate> =>
  (raw.updates ?? []).flatMap((u) => {
    const at = isoOrNull(u.when)
    return at === null ? [] : [{
      id: at,
      status: u.status === "AVAILABLE" ? "resolved" as const : "investigating" as const,
      body: u.text ?? "",
      created_at: at
    }]
  }).toSorted((a, b) => a.created_at.localeCompare(b.created_at))

interface Row {
  readonly incident: SnapshotIncident
  readonly locations: ReadonlyArray<string>
  readonly products: ReadonlyArray<{ readonly id: string; readonly title: string }>
}

const toRow = (raw: Incident, pageUrl: string, filter: ReadonlyArray<string>, warnings: Array<string>): Row | null => {
  const createdAt = isoOrNull(raw.begin)
  if (createdAt === null) {
    warnings.push(`GCP incident ${raw.id} has an unreadable begin ${JSON.stringify(raw.begin)}, skipped`)
    return null
  }
  const resolvedAt = isoOrNull(raw.end)
  // An open incident whose latest update says AVAILABLE has recovered and only awaits closing.
  const recovered = resolvedAt === null && raw.most_recent_update?.status === "AVAILABLE"
  const all = locationsOf(raw)
  const products = raw.affected_products ?? []
  return {
    locations: all.filter((l) => l !== "global"),
    products,
    incident: {
      id: raw.id,
      title: raw.external_desc,
      status: resolvedAt !== null ? "resolved" : recovered ? "monitoring" : "investigating",
      impact: recovered ? "none" : lookup<IncidentImpact>(impacts, raw.status_impact, "minor", warnings, "GCP status_impact"),
      created_at: createdAt,
      updated_at: isoOrNull(raw.modified) ?? isoOrNull(raw.most_recent_update?.when) ?? createdAt,
      resolved_at: resolvedAt,
      update_count: raw.updates?.length ?? 0,
      components: products.map((p) => p.id),
      url: raw.uri && URL.canParse(raw.uri, pageUrl) ? new URL(raw.uri, pageUrl).toString() : null,
      region: regionOf(all, filter),
      updates: toUpdates(raw)
    }
  }
}

/** One component per product named by a kept incident, alphabetical; status from open incidents that count. */
const toComponents = (rows: ReadonlyArray<Row>, counted: ReadonlyArray<SnapshotIncident>): Array<SnapshotComponent> => {
  const titles = new Map<string, string>()
  for (const row of rows) for (const p of row.products) if (!titles.has(p.id)) titles.set(p.id, p.title)
  return [...titles]
    .toSorted(([, a], [, b]) => a.localeCompare(b))
    .map(([id, name], position) => ({
      id,
      name,
      description: "",
      status: worstComponent(counted.filter((i) => i.components.includes(id)).map((i) => sourceToComponent(impactToSource(i.impact)))),
      parent_id: null,
      is_group: false,
      position,
      region: null
    }))
}

const toSnapshot = (raw: ReadonlyArray<Incident>, pageUrl: string, source: SourceConfig, now: Date): Snapshot => {
  const warnings: Array<string> = []
  const filter = source.regions ?? []
  const rows = raw
    .map((i) => toRow(i, pageUrl, filter, warnings))
    .filter((r): r is Row => r !== null)
    .filter((r) => r.incident.resolved_at === null || now.getTime() - Date.parse(r.incident.resolved_at) <= historyMs)
    .toSorted((a, b) => Date.parse(b.incident.created_at) - Date.parse(a.incident.created_at))
  const incidents = rows.map((r) => r.incident)
  const counted = incidents.filter((i) => i.resolved_at === null && countsForSource(i, source.regions, now))
  const components = toComponents(rows, counted)
  // A multi-location incident marks each of its locations, though its own region is null.
  const perLocation = rows.flatMap((r) => r.locations.map((region) => ({ ...r.incident, region })))
  const known = filter.length > 0 ? filter : [...new Set(rows.flatMap((r) => r.locations))]
  return incidentSnapshot({
    provider,
    components,
    incidents,
    regionIncidents: perLocation,
    knownRegions: known,
    sourceRegions: source.regions,
    now,
    warnings
  })
}

const parse = Effect.fnUntraced(function*(fetched: ReadonlyArray<Fetched>, source: SourceConfig, now: Date) {
  const primary = fetched[0]
  if (primary === undefined) {
    return yield* new AdapterError({ provider, url: source.url, reason: "invalid_shape", message: "no incidents.json was fetched" })
  }
  const body = yield* json(provider, primary)
  const incidents = yield* Schema.decodeUnknownEffect(Schema.Array(Incident))(body).pipe(
    Effect.mapError((error) =>
      new AdapterError({
        provider,
        url: primary.url,
        reason: "invalid_shape",
        message: `not a Google Cloud incidents.json: ${error.message}`
      })
    )
  )
  return toSnapshot(incidents, primary.url, source, now)
})

/** The least an incidents.json carries; other providers' arrays lack `begin` and `affected_products`. */
const isProbeIncidents = Schema.is(Schema.NonEmptyArray(Schema.Struct({
  id: Schema.String,
  begin: Schema.String,
  service_name: Schema.String,
  affected_products: Schema.Array(Schema.Unknown)
})))


export const gcp = {
  id: provider,
  name: "Google Cloud",
  endpoints,
  parse,
  detect: {
    host: (url) =>
      hostIs(url.hostname, "status.cloud.google.com") ||
      ((url.hostname === "www.google.com" || url.hostname === "google.com") && url.pathname.startsWith("/appsstatus")),
    probe: { path: incidentsPath, accepts: isProbeIncidents }
  }
} as const satisfies Adapter
