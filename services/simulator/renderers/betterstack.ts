import type { ComponentStatus, IncidentImpact } from "../../domain/Status.ts"
import {
  escapeXml,
  htmlPage,
  json,
  type Renderer,
  type SimComponent,
  type SimIncident,
  type SimMaintenance,
  type SimSource,
  xml
} from "../Model.ts"

/**
 * Better Stack's `/index.json` (JSON:API) and `/feed.rss`. Resolved reports
 * keep `ends_at: null`, as the real ones often do; the SPA shell answers every
 * other path (`catchAllHtml`).
 */

const resourceStatuses: Record<ComponentStatus, string> = {
  operational: "operational",
  degraded: "degraded",
  critical: "downtime",
  maintenance: "maintenance"
}

// Better Stack has one degraded state for minor and major alike.
const affectedStatuses: Record<IncidentImpact, string | null> = {
  none: null,
  minor: "degraded",
  major: "degraded",
  critical: "downtime",
  maintenance: "maintenance"
}

const trimmedBase = (source: SimSource) => source.baseUrl.replace(/\/+$/, "")
const isOpen = (i: SimIncident) => i.resolved_at === null
const leaves = (source: SimSource) => source.components.filter((c) => !c.is_group).toSorted((a, b) => a.position - b.position)

const aggregateState = (source: SimSource): string => {
  const states = [
    ...leaves(source).map((c) => resourceStatuses[c.status]),
    ...source.incidents.filter(isOpen).map((i) => affectedStatuses[i.impact] ?? "degraded")
  ]
  if (states.includes("downtime")) return "downtime"
  if (states.includes("degraded")) return "degraded"
  if (states.includes("maintenance") || source.maintenances.some((m) => m.status === "in_progress")) return "maintenance"
  return "operational"
}

/** A flat source still needs a section; an unnamed one shows its resources ungrouped. */
const sectionsOf = (source: SimSource): Array<{ id: string; name: string; position: number }> => {
  const groups = source.components.filter((c) => c.is_group).toSorted((a, b) => a.position - b.position)
  return groups.length > 0 ? groups.map((g) => ({ id: g.id, name: g.name, position: g.position })) : [{ id: `${source.key}-main`, name: "", position: 0 }]
}

const resource = (source: SimSource, c: SimComponent, now: Date) => ({
  type: "status_page_resource",
  id: c.id,
  attributes: {
    public_name: c.name,
    explanation: c.description === "" ? null : c.description,
    status: resourceStatuses[c.status],
    status_page_section_id: c.parent_id ?? sectionsOf(source)[0]!.id,
    resource_type: "Monitor",
    widget_type: "history",
    position: c.position,
    availability: c.status === "critical" ? 0.9912 : c.status === "degraded" ? 0.9991 : 1.0,
    status_history: [{ day: now.toISOString().slice(0, 10), status: resourceStatuses[c.status], downtime_duration: 0, maintenance_duration: 0 }]
  }
})

const affected = (ids: ReadonlyArray<string>, status: string | null) =>
  status === null ? [] : ids.map((id) => ({ status_page_resource_id: id, status }))

const incidentReport = (i: SimIncident) => ({
  type: "status_report",
  id: i.id,
  attributes: {
    title: i.title,
    report_type: "manual",
    starts_at: i.created_at.toISOString(),
    ends_at: null,
    aggregate_state: isOpen(i) ? (i.status === "postmortem" ? "resolved" : i.status) : "resolved",
    affected_resources: affected(i.components, isOpen(i) ? affectedStatuses[i.impact] : "resolved")
  },
  relationships: { status_updates: { data: i.updates.map((u) => ({ id: u.id, type: "status_update" })) } }
})

const incidentUpdates = (i: SimIncident) =>
  i.updates.map((u) => ({
    type: "status_update",
    id: u.id,
    attributes: {
      message: u.body,
      published_at: u.created_at.toISOString(),
      affected_resources: affected(i.components, u.status === "resolved" || u.status === "postmortem" ? "resolved" : affectedStatuses[i.impact])
    }
  }))

const maintenanceReport = (m: SimMaintenance) => ({
  type: "status_report",
  id: m.id,
  attributes: {
    title: m.title,
    report_type: "maintenance",
    starts_at: m.scheduled_for.toISOString(),
    ends_at: m.scheduled_until?.toISOString() ?? null,
    aggregate_state: m.status === "completed" ? "resolved" : "maintenance",
    affected_resources: affected(m.components, "maintenance")
  },
  relationships: { status_updates: { data: [] } }
})

const index = (source: SimSource, now: Date) => {
  const sections = sectionsOf(source)
  const maintenances = source.maintenances.filter((m) => m.status !== "cancelled")
  const reports = [...source.incidents.toReversed().map(incidentReport), ...maintenances.map(maintenanceReport)]
  return {
    data: {
      id: source.key,
      type: "status_page",
      attributes: {
        company_name: source.name,
        company_url: source.baseUrl,
        contact_url: null,
        logo_url: null,
        timezone: "UTC",
        subdomain: source.key,
        custom_domain: null,
        announcement: null,
        aggregate_state: aggregateState(source),
        created_at: source.updatedAt.toISOString(),
        updated_at: source.updatedAt.toISOString()
      },
      relationships: {
        sections: { data: sections.map((s) => ({ id: s.id, type: "status_page_section" })) },
        resources: { data: leaves(source).map((c) => ({ id: c.id, type: "status_page_resource" })) },
        status_reports: { data: reports.map((r) => ({ id: r.id, type: "status_report" })) }
      }
    },
    included: [
      ...sections.map((s) => ({ type: "status_page_section", id: s.id, attributes: { name: s.name, position: s.position } })),
      ...leaves(source).map((c) => resource(source, c, now)),
      ...reports,
      ...source.incidents.toReversed().flatMap(incidentUpdates)
    ]
  }
}

const rfc822 = (d: Date) => d.toUTCString().replace("GMT", "+0000")

const feed = (source: SimSource, now: Date) => {
  const items = source.incidents.toReversed().map((i) => {
    const last = i.updates.at(-1)
    const state = isOpen(i) ? i.status[0]!.toUpperCase() + i.status.slice(1) : "Resolved"
    const link = `${trimmedBase(source)}/incidents/${i.id}`
    return `<item><title>${escapeXml(`[${state}] ${i.title}`)}</title>` +
      `<description>${escapeXml(last?.body ?? i.title)}</description>` +
      `<pubDate>${rfc822(last?.created_at ?? i.updated_at)}</pubDate><link>${escapeXml(link)}</link><guid>${escapeXml(link)}</guid></item>`
  })
  return `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel>` +
    `<title>${escapeXml(`${source.name} Status`)}</title>` +
    `<description>${escapeXml(`Status updates for ${source.name} services`)}</description>` +
    `<link>${escapeXml(source.baseUrl)}</link><lastBuildDate>${rfc822(now)}</lastBuildDate>${items.join("")}</channel></rss>`
}

export const betterstackRenderer: Renderer = {
  provider: "betterstack",
  routes: {
    "/index.json": (source, now) => json(index(source, now)),
    "/feed.rss": (source, now) => xml(feed(source, now))
  },
  page: (source) =>
    htmlPage(
      `${source.name} Status`,
      `<link rel="alternate" type="application/rss+xml" title="${escapeXml(source.name)} Status" href="${escapeXml(trimmedBase(source))}/feed.rss">` +
        `<script src="https://uptime.betterstack.com/status-page.js" defer></script>`,
      `<div id="status-page-app"></div><footer><a href="https://betterstack.com/uptime">Powered by Better Stack</a></footer>`
    ),
  catchAllHtml: true
}
