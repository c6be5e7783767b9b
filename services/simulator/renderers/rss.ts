import type { MaintenanceStatus } from "../../domain/Snapshot.ts"
import type { IncidentImpact, IncidentStatus } from "../../domain/Status.ts"
import { joinUrl } from "../../adapters/text.ts"
import { escapeXml, htmlPage, type Renderer, type SimIncident, type SimMaintenance, type SimSource, xml } from "../Model.ts"

/**
 * A generic status history feed, as Atom (`/history.atom`) and RSS 2.0
 * (`/feed.rss`): one entry per incident update and per maintenance, titled
 * "[Investigating] <title>", with Statuspage-style HTML content. Feeds carry
 * no impact field, so the content says it in words the rss adapter reads.
 */

const statusLabels: Record<IncidentStatus, string> = {
  investigating: "Investigating",
  identified: "Identified",
  monitoring: "Monitoring",
  resolved: "Resolved",
  postmortem: "Postmortem"
}

const maintenanceLabels: Record<MaintenanceStatus, string> = {
  scheduled: "Scheduled",
  in_progress: "In progress",
  verifying: "Verifying",
  completed: "Completed",
  cancelled: "Cancelled"
}

const impactSentences: Record<IncidentImpact, string> = {
  none: "No customer impact is expected.",
  minor: "Some customers may see degraded performance.",
  major: "Some customers may see a partial outage.",
  critical: "Customers may experience an outage.",
  maintenance: "This work is part of scheduled maintenance."
}

const maintenanceBodies: Record<MaintenanceStatus, string> = {
  scheduled: "We will be performing scheduled maintenance.",
  in_progress: "Scheduled maintenance is currently in progress. We will provide updates as necessary.",
  verifying: "Verification is currently underway for the maintenance items.",
  completed: "The scheduled maintenance has been completed.",
  cancelled: "The scheduled maintenance has been cancelled."
}

const monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
const hhmm = (d: Date): string => d.toISOString().slice(11, 16)
/** Statuspage's "Jan <var data-var='date'>15</var>" day stamp. */
const dayOf = (d: Date): string => `${monthNames[d.getUTCMonth()]} <var data-var='date'>${d.getUTCDate()}</var>`
const timeOf = (d: Date): string => `<var data-var='time'>${hhmm(d)}</var>`
const stamp = (d: Date): string => `${dayOf(d)}, ${timeOf(d)} UTC`

/** "Apr 7, 13:00 - 17:00 UTC", or with the end's day when the window crosses midnight. */
const windowText = (m: SimMaintenance): string => {
  const start = `${dayOf(m.scheduled_for)}, ${timeOf(m.scheduled_for)}`
  if (m.scheduled_until === null) return `${start} UTC`
  const sameDay = m.scheduled_until.toISOString().slice(0, 10) === m.scheduled_for.toISOString().slice(0, 10)
  return `${start} - ${sameDay ? "" : `${dayOf(m.scheduled_until)}, `}${timeOf(m.scheduled_until)} UTC`
}

/** RFC 822 with a numeric zone, as RSS readers expect. */
export const rfc822 = (d: Date): string => d.toUTCString().replace("GMT", "+0000")

interface Entry {
  readonly id: string
  readonly title: string
  readonly link: string
  readonly published: Date
  readonly updated: Date
  readonly categories: ReadonlyArray<string>
  readonly html: string
}

const componentNames = (source: SimSource, ids: ReadonlyArray<string>): Array<string> =>
  source.components.filter((c) => ids.includes(c.id) && !c.is_group).map((c) => c.name)

const incidentEntries = (source: SimSource, tag: string, incident: SimIncident): Array<Entry> => {
  const names = componentNames(source, incident.components)
  const updates = incident.updates.length > 0
    ? incident.updates
    : [{ id: incident.id, status: incident.status, body: incident.title, created_at: incident.created_at }]
  return updates.map((u) => ({
    id: `${tag}IncidentUpdate/${u.id}`,
    title: `[${statusLabels[u.status]}] ${incident.title}`,
    link: joinUrl(source.baseUrl, `/incidents/${incident.id}`),
    published: u.created_at,
    updated: u.created_at,
    categories: names,
    html: `<p><small>${stamp(u.created_at)}</small><br><strong>${statusLabels[u.status]}</strong> - ${escapeXml(u.body)}</p>` +
      `<p>${impactSentences[incident.impact]}</p>` +
      (names.length > 0 ? `<p>This incident affected: ${escapeXml(names.join(", "))}.</p>` : "")
  }))
}

const maintenanceEntry = (source: SimSource, tag: string, m: SimMaintenance): Entry => {
  const label = maintenanceLabels[m.status]
  return {
    id: `${tag}Maintenance/${m.id}`,
    title: `[${label}] ${m.title}`,
    link: joinUrl(source.baseUrl, `/incidents/${m.id}`),
    published: m.created_at,
    updated: m.updated_at,
    categories: componentNames(source, m.components),
    html: `<p><strong>THIS IS A SCHEDULED EVENT ${windowText(m)}</strong></p>` +
      `<p><small>${stamp(m.updated_at)}</small><br><strong>${label}</strong> - ${maintenanceBodies[m.status]}</p>`
  }
}

/** Every entry of the history, newest first. */
const entriesOf = (source: SimSource): Array<Entry> => {
  const tag = `tag:${new URL(source.baseUrl).host},2005:`
  return [
    ...source.incidents.flatMap((i) => incidentEntries(source, tag, i)),
    ...source.maintenances.map((m) => maintenanceEntry(source, tag, m))
  ].toSorted((a, b) => b.updated.getTime() - a.updated.getTime() || a.id.localeCompare(b.id))
}

const feedUpdated = (source: SimSource, entries: ReadonlyArray<Entry>): Date => entries[0]?.updated ?? source.updatedAt

const atom = (source: SimSource): string => {
  const entries = entriesOf(source)
  const base = escapeXml(source.baseUrl)
  const body = entries.map((e) =>
    `  <entry>\n` +
    `    <id>${escapeXml(e.id)}</id>\n` +
    `    <published>${e.published.toISOString()}</published>\n` +
    `    <updated>${e.updated.toISOString()}</updated>\n` +
    `    <link rel="alternate" type="text/html" href="${escapeXml(e.link)}"/>\n` +
    `    <title>${escapeXml(e.title)}</title>\n` +
    e.categories.map((c) => `    <category term="${escapeXml(c)}"/>\n`).join("") +
    `    <content type="html">${escapeXml(e.html)}</content>\n` +
    `  </entry>\n`
  ).join("")
  return `<?xml version="1.0" encoding="UTF-8"?>\n<feed xml:lang="en-US" xmlns="http://www.w3.org/2005/Atom">\n` +
    `  <id>tag:${escapeXml(new URL(source.baseUrl).host)},2005:/history</id>\n` +
    `  <link rel="alternate" type="text/html" href="${base}"/>\n` +
    `  <link rel="self" type="application/atom+xml" href="${escapeXml(joinUrl(source.baseUrl, "/history.atom"))}"/>\n` +
    `  <title>${escapeXml(source.name)} Status - Incident History</title>\n` +
    `  <updated>${feedUpdated(source, entries).toISOString()}</updated>\n` +
    `  <author>\n    <name>${escapeXml(source.name)}</name>\n  </author>\n` +
    body +
    `</feed>\n`
}

const rss = (source: SimSource): string => {
  const entries = entriesOf(source)
  const items = entries.map((e) =>
    `    <item>\n` +
    `      <title>${escapeXml(e.title)}</title>\n` +
    `      <description>${escapeXml(e.html)}</description>\n` +
    `      <pubDate>${rfc822(e.updated)}</pubDate>\n` +
    `      <link>${escapeXml(e.link)}</link>\n` +
    `      <guid isPermaLink="false">${escapeXml(e.id)}</guid>\n` +
    e.categories.map((c) => `      <category>${escapeXml(c)}</category>\n`).join("") +
    `    </item>\n`
  ).join("")
  return `<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/">\n  <channel>\n` +
    `    <title>${escapeXml(source.name)} Status - Incident History</title>\n` +
    `    <link>${escapeXml(source.baseUrl)}</link>\n` +
    `    <description>${escapeXml(source.name)} status updates</description>\n` +
    `    <pubDate>${rfc822(feedUpdated(source, entries))}</pubDate>\n` +
    items +
    `  </channel>\n</rss>\n`
}

export const rssRenderer: Renderer = {
  provider: "rss",
  routes: {
    "/history.atom": (source) => xml(atom(source), "application/atom+xml; charset=utf-8"),
    "/feed.rss": (source) => xml(rss(source))
  },
  page: (source) =>
    htmlPage(
      `${source.name} Status`,
      `<link rel="alternate" type="application/atom+xml" title="${escapeXml(source.name)} Status History" ` +
        `href="${escapeXml(joinUrl(source.baseUrl, "/history.atom"))}">` +
        `<link rel="alternate" type="application/rss+xml" title="${escapeXml(source.name)} Status History" ` +
        `href="${escapeXml(joinUrl(source.baseUrl, "/feed.rss"))}">`,
      `<p>Subscribe to updates via <a href="${escapeXml(joinUrl(source.baseUrl, "/history.atom"))}">Atom</a>.</p>`
    )
}
