import { azureRegionNames } from "../../adapters/providers/azure.ts"
import { joinUrl } from "../../adapters/text.ts"
import type { IncidentStatus } from "../../domain/Status.ts"
import { escapeXml, htmlPage, type Renderer, type SimIncident, type SimSource, xml } from "../Model.ts"

/**
 * Azure's status feed: current issues only (an empty channel when healthy),
 * titled "<service> - <region> - <stage>", region also as a category, no
 * severity. Resolved model incidents are not listed.
 */

const statusPage = "https://azure.status.microsoft/en-us/status/"
const feedPath = "/en-us/status/feed/"
const regionNames = new Map(Object.entries(azureRegionNames).map(([name, id]) => [id, name]))

const stages: Record<IncidentStatus, string> = {
  investigating: "Investigating",
  identified: "Mitigation in progress",
  monitoring: "Mitigated",
  resolved: "Resolved",
  postmortem: "Resolved"
}

/** Azure writes RFC 1123 dates in UTC with a "Z" zone. */
const azureTime = (date: Date): string => date.toUTCString().replace("GMT", "Z")

const item = (source: SimSource, incident: SimIncident): string => {
  const affected = source.components.filter((c) => !c.is_group && incident.components.includes(c.id))
  const service = affected.length === 1 ? affected[0]!.name.replace(/\s*\([^)]*\)/g, "") : "Multiple services"
  const regionId = incident.region ?? affected.find((c) => c.region !== null)?.region ?? null
  const region = regionId === null ? null : regionNames.get(regionId) ?? regionId
  const where = region === null ? "" : ` in ${region}`
  const start = incident.created_at
  const latest = incident.updates.at(-1)?.body ?? incident.title
  const summary = `<p>Starting at ${start.toISOString().slice(11, 16)} UTC on ${start.toUTCString().slice(5, 16)}, ` +
    `customers using ${service}${where} may experience issues. ${latest}</p>`
  return `<item><title>${escapeXml([service, region, stages[incident.status]].filter((s) => s !== null).join(" - "))}</title>` +
    `<description>${escapeXml(summary)}</description><link>${statusPage}</link>` +
    `<pubDate>${azureTime(incident.updated_at)}</pubDate>${region === null ? "" : `<category>${escapeXml(region)}</category>`}` +
    `<guid isPermaLink="false">${escapeXml(incident.id)}</guid></item>`
}

export const azureRenderer: Renderer = {
  provider: "azure",
  routes: {
    [feedPath]: (source, now) =>
      xml(
        `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Azure Status</title>` +
          `<link>${statusPage}</link><lastBuildDate>${azureTime(now)}</lastBuildDate>` +
          source.incidents.filter((i) => i.resolved_at === null).map((i) => item(source, i)).join("") +
          `</channel></rss>`
      )
  },
  page: (source) =>
    htmlPage(
      "Azure status",
      `<link rel="alternate" type="application/rss+xml" title="Azure Status" href="${escapeXml(joinUrl(source.baseUrl, feedPath))}">`
    )
}
