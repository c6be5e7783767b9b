import type { ComponentStatus } from "../../domain/Status.ts"
import { escapeXml, htmlPage, json, type Renderer, type SimSource } from "../Model.ts"
import { fnv1a } from "../../platform/Prng.ts"
import { baseOf, indicatorOf, isOpen, isPending } from "./statuspage.ts"

/**
 * An incident.io page's Statuspage-compatible `/api/v2/summary.json`, with
 * its differences from Statuspage (test/fixtures/incidentio/): null for an
 * empty list, flat components (groups left out), ULID ids, `full_outage`, no
 * incident components, null shortlinks, timestamps without milliseconds.
 */

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

/** A deterministic ULID-shaped id for a model id: "01" then 24 Crockford characters of its hashes. */
export const ulidFor = (id: string): string => {
  let out = "01"
  for (let round = 0; out.length < 26; round++) {
    let h = fnv1a(`${round}:${id}`)
    for (let k = 0; k < 6 && out.length < 26; k++) {
      out += crockford[h & 31]
      h >>>= 5
    }
  }
  return out
}

const componentStatuses: Record<ComponentStatus, string> = {
  operational: "operational",
  degraded: "degraded_performance",
  critical: "full_outage",
  maintenance: "under_maintenance"
}

const time = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, "Z")

/** incident.io sends null, not [], for an empty list. */
const listOrNull = <A>(items: ReadonlyArray<A>): ReadonlyArray<A> | null => (items.length > 0 ? items : null)

const summary = (source: SimSource) => {
  const pageId = ulidFor(`page:${source.key}`)
  const leaves = source.components.filter((c) => !c.is_group).toSorted((a, b) => a.position - b.position)
  const incidents = source.incidents.filter(isOpen).toSorted((a, b) => b.created_at.getTime() - a.created_at.getTime())
  return {
    page: { id: pageId, name: source.name, url: baseOf(source), updated_at: time(source.updatedAt) },
    status: indicatorOf(source),
    components: listOrNull(leaves.map((c, position) => ({
      id: ulidFor(c.id),
      name: c.name,
      status: componentStatuses[c.status],
      position,
      description: c.description || null,
      created_at: "2024-01-01T00:00:00Z",
      updated_at: time(source.updatedAt),
      page_id: pageId,
      only_show_if_degraded: false,
      group_id: null
    }))),
    incidents: listOrNull(incidents.map((i) => ({
      id: ulidFor(i.id),
      name: i.title,
      status: i.status,
      impact: i.impact,
      created_at: time(i.created_at),
      updated_at: time(i.updated_at),
      started_at: time(i.created_at),
      monitoring_at: null,
      resolved_at: null,
      shortlink: null,
      page_id: pageId,
      incident_updates: i.updates.toReversed().map((u) => ({
        id: ulidFor(u.id),
        status: u.status,
        body: u.body,
        display_at: time(u.created_at),
        created_at: time(u.created_at),
        updated_at: time(u.created_at),
        incident_id: ulidFor(i.id),
        affected_components: null
      }))
    }))),
    scheduled_maintenances: listOrNull(source.maintenances.filter(isPending).map((m) => ({
      id: ulidFor(m.id),
      name: m.title,
      status: m.status,
      impact: "maintenance",
      created_at: time(m.created_at),
      updated_at: time(m.updated_at),
      scheduled_for: time(m.scheduled_for),
      scheduled_until: m.scheduled_until ? time(m.scheduled_until) : null,
      monitoring_at: null,
      resolved_at: null,
      shortlink: null,
      page_id: pageId,
      incident_updates: []
    })))
  }
}

/** The HTML page: no Statuspage markers, a "Powered by incident.io" footer. */
const page = (source: SimSource): string => {
  const { description } = indicatorOf(source)
  const rows = source.components.filter((c) => !c.is_group).map((c) =>
    `<li data-component-id="${ulidFor(c.id)}">${escapeXml(c.name)}: ${componentStatuses[c.status]}</li>`
  ).join("")
  return htmlPage(
    `${source.name} Status`,
    `<meta name="description" content="${escapeXml(`Welcome to ${source.name}'s status page.`)}">`,
    `<main><p>${escapeXml(description)}</p><ul>${rows}</ul></main>` +
      `<footer><a href="https://incident.io/status-pages">Powered by incident.io</a></footer>`
  )
}

export const incidentIoRenderer: Renderer = {
  provider: "incident_io",
  routes: { "/api/v2/summary.json": (source) => json(summary(source)) },
  page
}
