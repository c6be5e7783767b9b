import { joinUrl } from "../../adapters/text.ts"
import type { IncidentImpact } from "../../domain/Status.ts"
import {
  escapeXml,
  htmlPage,
  type Rendered,
  type Renderer,
  type SimComponent,
  type SimIncident,
  type SimSource,
  xml
} from "../Model.ts"

/**
 * The AWS Health Dashboard: the all-services RSS history (one item per update,
 * Pacific-time dates, guid `<link>#<service>[-<region>]_<unixts>`) and the
 * UTF-16 current-events JSON. A model component is a service-region: a slug of
 * its name plus its region.
 */

const dashboard = "http://status.aws.amazon.com/"

/** A component's name without its "(region)" part. */
const serviceName = (component: SimComponent): string => component.name.replace(/\s*\([^)]*\)/g, "")

/** The service-region id the feed uses for a model component, e.g. "api-us-east-1". */
export const awsServiceId = (component: SimComponent): string => {
  const slug = serviceName(component).toLowerCase().replace(/[^a-z0-9]/g, "")
  return component.region ? `${slug}-${component.region}` : slug
}

const prefixes: Record<IncidentImpact, string> = {
  none: "Informational message",
  maintenance: "Informational message",
  minor: "Performance issues",
  major: "Performance issues",
  critical: "Service disruption"
}
/** Current-events status codes: 1 informational, 2 degraded, 3 disruption. */
const codes: Record<IncidentImpact, string> = { none: "1", maintenance: "1", minor: "2", major: "2", critical: "3" }

const regionNames: Record<string, string> = {
  "us-east-1": "N. Virginia",
  "us-west-2": "Oregon",
  "eu-west-1": "Ireland",
  "eu-central-1": "Frankfurt",
  "ap-southeast-1": "Singapore",
  "ap-northeast-1": "Tokyo"
}

const unix = (date: Date): number => Math.floor(date.getTime() / 1000)

const pacificZone = new Intl.DateTimeFormat("en-US", { timeZone: "America/Los_Angeles", timeZoneName: "shortOffset" })

/** RFC 822 in Pacific time with its abbreviation, as AWS writes it: "Fri, 10 Feb 2023 15:48:00 PST". */
const pacific = (date: Date): string => {
  const zone = pacificZone.formatToParts(date).find((p) => p.type === "timeZoneName")?.value ?? "GMT-8"
  const hours = Number(zone.replace("GMT", ""))
  return new Date(date.getTime() + hours * 3_600_000).toUTCString().replace("GMT", hours === -7 ? "PDT" : "PST")
}

const cdata = (s: string): string => `<![CDATA[${s.replaceAll("]]>", "]]]]><![CDATA[>")}]]>`

/** The service-regions an incident is filed under: its leaf components, else "multiple services" in its region. */
const serviceIds = (source: SimSource, incident: SimIncident): Array<{ readonly id: string; readonly name: string }> => {
  const affected = source.components.filter((c) => !c.is_group && incident.components.includes(c.id))
  if (affected.length > 0) return affected.map((c) => ({ id: awsServiceId(c), name: serviceName(c) }))
  return [{ id: incident.region ? `multipleservices-${incident.region}` : "multipleservices", name: "Multiple services" }]
}

interface Item {
  readonly service: string
  readonly at: Date
  readonly title: string
  readonly body: string
}

/** One item per problem update, and an "operating normally" item once resolved. */
const itemsOf = (source: SimSource, incident: SimIncident): Array<Item> => {
  const problems = incident.updates.filter((u) => u.status !== "resolved")
  const updates = problems.length > 0 ? problems : [{ created_at: incident.created_at, body: incident.title }]
  return serviceIds(source, incident).flatMap(({ id }) => [
    ...updates.map((u) => ({ service: id, at: u.created_at, title: `${prefixes[incident.impact]}: ${incident.title}`, body: u.body })),
    ...(incident.resolved_at === null ? [] : [{
      service: id,
      at: incident.resolved_at,
      title: `Service is operating normally: [RESOLVED] ${incident.title}`,
      body: incident.updates.findLast((u) => u.status === "resolved")?.body ??
        "The issue has been resolved and the service is operating normally."
    }])
  ])
}

const rss = (source: SimSource, now: Date): Rendered => {
  const items = source.incidents
    .flatMap((i) => itemsOf(source, i))
    .toSorted((a, b) => b.at.getTime() - a.at.getTime() || a.service.localeCompare(b.service))
    .map((item) =>
      `<item><title>${cdata(item.title)}</title><link>${dashboard}</link><pubDate>${pacific(item.at)}</pubDate>` +
      `<guid isPermaLink="false">${dashboard}#${item.service}_${unix(item.at)}</guid>` +
      `<description>${cdata(item.body)}</description></item>`
    )
  return xml(
    `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel>` +
      `<title>${cdata("Amazon Web Services Service Status")}</title><link>${dashboard}</link><language>en-us</language>` +
      `<lastBuildDate>${pacific(now)}</lastBuildDate><generator>AWS Service Health Dashboard RSS Generator</generator>` +
      `<description>${cdata("Amazon Web Services Service Status")}</description><ttl>5</ttl>${items.join("")}` +
      `</channel></rss>`
  )
}

const event = (source: SimSource, incident: SimIncident) => {
  const services = serviceIds(source, incident)
  const primary = services[0]!
  const kind = primary.name.toUpperCase().replace(/[^A-Z0-9]+/g, "_")
  const code = codes[incident.impact]
  const start = unix(incident.created_at)
  return {
    date: String(start),
    arn: `arn:aws:health:${incident.region ?? "global"}::event/${kind}/AWS_${kind}_OPERATIONAL_ISSUE/${incident.id}`,
    region_name: incident.region ? regionNames[incident.region] ?? incident.region : "Global",
    status: code,
    service: primary.id,
    service_name: primary.name,
    summary: incident.title,
    event_log: incident.updates.toReversed().map((u) => ({
      summary: incident.title,
      message: u.body,
      status: Number(code),
      timestamp: unix(u.created_at)
    })),
    impacted_services: Object.fromEntries(services.map((s) => [s.id, { service_name: s.name, current: code, max: code }])),
    impacted_service_status_changes: services.map((s) => ({
      service: s.id,
      service_name: s.name,
      previous_status: "0",
      current_status: code,
      timestamp: start
    }))
  }
}

/** Open events only, as UTF-16LE with a byte-order mark, like health.aws.amazon.com. */
const currentEvents = (source: SimSource): Rendered => {
  const text = JSON.stringify(source.incidents.filter((i) => i.resolved_at === null).map((i) => event(source, i)))
  return { contentType: "application/json;charset=utf-16", body: new Uint8Array(Buffer.from(`\ufeff${text}`, "utf16le")) }
}

export const awsRenderer: Renderer = {
  provider: "aws",
  routes: {
    "/rss/all.rss": rss,
    "/public/currentevents": currentEvents
  },
  page: (source) =>
    htmlPage(
      "AWS Health Dashboard",
      `<link rel="alternate" type="application/rss+xml" title="All AWS services" href="${
        escapeXml(joinUrl(source.baseUrl, "/rss/all.rss"))
      }">`
    )
}
