import type { IncidentImpact } from "../../domain/Status.ts"
import { gcpRegions } from "../../catalog/Synthetic.ts"
import { fnv1a, prng } from "../../platform/Prng.ts"
import { escapeXml, htmlPage, json, type Renderer, type SimIncident, type SimSource } from "../Model.ts"

/**
 * Google Cloud's incidents.json: the model's incidents plus a deterministic
 * tail of resolved history, because the real document lists every incident
 * for years (~1 MB) and adapters must cope with that volume.
 */

const tailSize = 200
/** One historical incident per slot; slots are fixed in time, so a tail incident keeps its id and times across polls. */
const slotMs = 2.4 * 24 * 60 * 60 * 1000

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
const randomId = (random: () => number, length: number): string =>
  Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]!).join("")

/** GCP writes UTC with an explicit offset and no milliseconds. */
const gcpTime = (date: Date): string => date.toISOString().replace(/\.\d{3}Z$/, "+00:00")

const regionTitles: Record<string, string> = {
  "us-central1": "Iowa",
  "us-east1": "South Carolina",
  "europe-west1": "Belgium",
  "europe-west4": "Netherlands",
  "asia-east1": "Taiwan",
  "asia-northeast1": "Tokyo"
}
const location = (id: string) => ({
  title: id === "global" ? "Global" : regionTitles[id] ? `${regionTitles[id]} (${id})` : id,
  id
})

const statusImpacts: Record<IncidentImpact, string> = {
  none: "SERVICE_INFORMATION",
  minor: "SERVICE_DISRUPTION",
  major: "SERVICE_DISRUPTION",
  critical: "SERVICE_OUTAGE",
  maintenance: "SERVICE_INFORMATION"
}
const severities: Record<IncidentImpact, string> = { none: "low", minor: "medium", major: "medium", critical: "high", maintenance: "low" }

/** An incident in GCP's terms, from the model or from the historical tail. */
interface Draft {
  readonly id: string
  readonly title: string
  readonly impact: IncidentImpact
  readonly begin: Date
  readonly end: Date | null
  /** Oldest first; `available` marks the update that announced recovery. */
  readonly updates: ReadonlyArray<{ readonly when: Date; readonly text: string; readonly available: boolean }>
  readonly products: ReadonlyArray<{ readonly id: string; readonly title: string }>
  readonly locations: ReadonlyArray<string>
}

const render = (draft: Draft) => {
  const locations = draft.locations.map(location)
  const updates = draft.updates.toReversed().map((u) => ({
    created: gcpTime(u.when),
    modified: gcpTime(u.when),
    when: gcpTime(u.when),
    text: u.text,
    status: u.available ? "AVAILABLE" : statusImpacts[draft.impact],
    affected_locations: locations
  }))
  const single = draft.products.length === 1 ? draft.products[0]! : null
  return {
    id: draft.id,
    number: `${fnv1a(draft.id)}${fnv1a(draft.title)}`,
    begin: gcpTime(draft.begin),
    created: gcpTime(draft.begin),
    end: draft.end === null ? null : gcpTime(draft.end),
    modified: updates[0]?.modified ?? gcpTime(draft.begin),
    external_desc: draft.title,
    updates,
    most_recent_update: updates[0] ?? null,
    status_impact: statusImpacts[draft.impact],
    severity: severities[draft.impact],
    service_key: single ? single.title.toLowerCase().replace(/[^a-z0-9]+/g, "-") : "zall",
    service_name: single ? single.title : "Multiple Products",
    affected_products: draft.products.map((p) => ({ title: p.title, id: p.id, current_title: p.title })),
    uri: `incidents/${draft.id}`,
    currently_affected_locations: draft.end === null ? locations : [],
    previously_affected_locations: draft.end === null ? [] : locations
  }
}

const fromModel = (source: SimSource, incident: SimIncident): Draft => {
  const affected = source.components.filter((c) => !c.is_group && incident.components.includes(c.id))
  const regions = [...new Set([incident.region, ...affected.map((c) => c.region)].filter((r): r is string => r !== null))]
  const updates = incident.updates.length > 0
    ? incident.updates.map((u) => ({ when: u.created_at, text: u.body, available: u.status === "resolved" }))
    : [{ when: incident.created_at, text: incident.title, available: false }]
  return {
    id: incident.id,
    title: incident.title,
    impact: incident.impact,
    begin: incident.created_at,
    end: incident.resolved_at,
    updates,
    products: affected.map((c) => ({ id: c.id, title: c.name })),
    locations: regions.length > 0 ? regions : ["global"]
  }
}

const productTitles = [
  "Google Compute Engine", "Google Kubernetes Engine", "Cloud Storage", "BigQuery", "Cloud SQL", "Cloud Run",
  "Vertex AI", "Cloud Load Balancing", "Cloud Networking", "Cloud Pub/Sub", "Cloud Spanner", "Cloud Functions",
  "AlloyDB for PostgreSQL", "Identity and Access Management", "Cloud Logging", "Cloud Monitoring",
  "Artifact Registry", "Cloud Build", "Firestore", "Memorystore"
]
const titles = [
  (p: string) => `Elevated error rates for ${p}`,
  (p: string) => `Increased latency affecting ${p}`,
  (p: string) => `Customers of ${p} may experience failures creating new resources`,
  (p: string) => `Connectivity issues affecting ${p}`
]

const updateText = (product: string, title: string, begin: Date, when: Date, available: boolean): string =>
  available
    ? `The issue with ${product} has been resolved for all affected users as of ${when.toUTCString()}. ` +
      "We will publish an analysis of this incident once we have completed our internal investigation. " +
      "We thank you for your patience while we worked on resolving the issue."
    : `**Summary:** ${title}\n**Description:** We are experiencing an issue with ${product} beginning at ` +
      `${begin.toUTCString()}. Our engineering team continues to investigate the issue. We will provide an update ` +
      "by the time of the next scheduled update with current details. We apologize to all who are affected by " +
      "the disruption.\n**Diagnosis:** Customers may observe elevated error rates and increased latency when " +
      "calling the affected APIs. Requests retried with exponential backoff are likely to succeed.\n" +
      "**Workaround:** None at this time."

/** The historical incident of one time slot, the same for the same source key and slot. */
const historical = (key: string, slot: number): Draft => {
  const random = prng(fnv1a(`${key}:${slot}`))
  const productCount = random() < 0.8 ? 1 : 2 + Math.floor(random() * 2)
  const products = Array.from({ length: productCount }, () => {
    const title = productTitles[Math.floor(random() * productTitles.length)]!
    return { id: randomId(prng(fnv1a(`${key}/${title}`)), 20), title }
  }).filter((p, i, all) => all.findIndex((q) => q.id === p.id) === i)
  const product = products.length === 1 ? products[0]!.title : "Multiple Products"
  const title = titles[Math.floor(random() * titles.length)]!(product)
  const roll = random()
  const impact: IncidentImpact = roll < 0.2 ? "critical" : roll < 0.7 ? "minor" : "none"
  const begin = new Date(Math.floor((slot * slotMs + random() * slotMs * 0.5) / 60000) * 60000)
  const end = new Date(begin.getTime() + Math.floor(20 + random() * 600) * 60000)
  const steps = 1 + Math.floor(random() * 5)
  const updates = Array.from({ length: steps + 1 }, (_, i) => {
    const when = new Date(begin.getTime() + Math.floor(((end.getTime() - begin.getTime()) * i) / steps))
    return { when, text: updateText(product, title, begin, when, i === steps), available: i === steps }
  })
  const locations = random() < 0.15
    ? ["global"]
    : [...new Set(Array.from({ length: 1 + Math.floor(random() * 3) }, () => gcpRegions[Math.floor(random() * gcpRegions.length)]!))]
  return { id: randomId(random, 20), title, impact, begin, end, updates, products, locations }
}

const incidents = (source: SimSource, now: Date) => {
  // The newest slot starts at least half a slot before now, so its incident (at most ~10 h long) has ended.
  const newest = Math.floor(now.getTime() / slotMs) - 1
  const tail = Array.from({ length: tailSize }, (_, k) => historical(source.key, newest - k))
  return [...source.incidents.map((i) => fromModel(source, i)), ...tail]
    .toSorted((a, b) => b.begin.getTime() - a.begin.getTime())
    .map(render)
}

export const gcpRenderer: Renderer = {
  provider: "gcp",
  routes: { "/incidents.json": (source, now) => json(incidents(source, now)) },
  page: (source) =>
    htmlPage(
      `${source.name} Service Health`,
      "",
      `<ul>${
        source.incidents.filter((i) => i.resolved_at === null).map((i) => `<li>${escapeXml(i.title)}</li>`).join("")
      }</ul>`
    )
}
