import type { MaintenanceStatus } from "../../domain/Snapshot.ts"
import type { ComponentStatus, IncidentImpact, IncidentStatus } from "../../domain/Status.ts"
import { htmlPage, json, type Renderer, type SimComponent, type SimIncident, type SimSource } from "../Model.ts"

/** Instatus's `/summary.json` and `/v2/components.json` (the `{components}` shape with `group: {name}`). */

const componentStatuses: Record<ComponentStatus, string> = {
  operational: "OPERATIONAL",
  degraded: "DEGRADEDPERFORMANCE",
  critical: "MAJOROUTAGE",
  maintenance: "UNDERMAINTENANCE"
}

const incidentStatuses: Record<IncidentStatus, string> = {
  investigating: "INVESTIGATING",
  identified: "IDENTIFIED",
  monitoring: "MONITORING",
  resolved: "RESOLVED",
  postmortem: "RESOLVED"
}

const impacts: Record<IncidentImpact, string> = {
  none: "OPERATIONAL",
  minor: "DEGRADEDPERFORMANCE",
  major: "PARTIALOUTAGE",
  critical: "MAJOROUTAGE",
  maintenance: "UNDERMAINTENANCE"
}

// Only upcoming and active maintenances are listed.
const maintenanceStatuses: Partial<Record<MaintenanceStatus, string>> = {
  scheduled: "NOTSTARTEDYET",
  in_progress: "INPROGRESS",
  verifying: "INPROGRESS"
}

const days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
const pad = (n: number) => String(n).padStart(2, "0")

/** JavaScript's Date#toString in UTC, which is how Instatus serialises `started`/`start`. */
const jsDate = (d: Date): string =>
  `${days[d.getUTCDay()]} ${months[d.getUTCMonth()]} ${pad(d.getUTCDate())} ${d.getUTCFullYear()} ` +
  `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} GMT+0000 (Coordinated Universal Time)`

const pageUrl = (source: SimSource, path: string) => `${source.baseUrl.replace(/\/+$/, "")}${path}`

const openIncidents = (source: SimSource) => source.incidents.filter((i) => i.resolved_at === null).toReversed()
const activeMaintenances = (source: SimSource) => source.maintenances.filter((m) => maintenanceStatuses[m.status] !== undefined)

const pageStatus = (source: SimSource): string => {
  const leaves = source.components.filter((c) => !c.is_group)
  if (openIncidents(source).length > 0 || leaves.some((c) => c.status === "degraded" || c.status === "critical")) return "HASISSUES"
  if (source.maintenances.some((m) => m.status === "in_progress") || leaves.some((c) => c.status === "maintenance")) {
    return "UNDERMAINTENANCE"
  }
  return "UP"
}

const page = (source: SimSource) => ({ name: source.name, url: source.baseUrl, status: pageStatus(source) })

const summaryIncident = (source: SimSource, i: SimIncident) => ({
  name: i.title,
  started: jsDate(i.created_at),
  status: incidentStatuses[i.status],
  impact: impacts[i.impact],
  url: pageUrl(source, `/incident/${i.id}`)
})

const summary = (source: SimSource) => {
  const incidents = openIncidents(source)
  const maintenances = activeMaintenances(source)
  return {
    page: page(source),
    ...(incidents.length > 0 ? { activeIncidents: incidents.map((i) => summaryIncident(source, i)) } : {}),
    ...(maintenances.length > 0
      ? {
        activeMaintenances: maintenances.map((m) => ({
          name: m.title,
          start: jsDate(m.scheduled_for),
          status: maintenanceStatuses[m.status],
          duration: m.scheduled_until ? String(Math.round((m.scheduled_until.getTime() - m.scheduled_for.getTime()) / 60_000)) : "60",
          url: pageUrl(source, `/maintenance/${m.id}`)
        }))
      }
      : {})
  }
}

const component = (source: SimSource, c: SimComponent) => {
  const group = source.components.find((g) => g.id === c.parent_id)
  const incidents = openIncidents(source).filter((i) => i.components.includes(c.id))
  return {
    id: c.id,
    name: c.name,
    description: c.description,
    status: componentStatuses[c.status],
    group: group ? { name: group.name } : null,
    ...(incidents.length > 0
      ? { activeIncidents: incidents.map((i) => ({ id: i.id, ...summaryIncident(source, i), started: i.created_at.toISOString() })) }
      : {})
  }
}

export const instatusRenderer: Renderer = {
  provider: "instatus",
  routes: {
    "/summary.json": (source) => json(summary(source)),
    "/v2/components.json": (source) =>
      json({
        page: page(source),
        components: source.components.filter((c) => !c.is_group).toSorted((a, b) => a.position - b.position).map((c) => component(source, c))
      })
  },
  page: (source) =>
    htmlPage(
      source.name,
      `<meta name="generator" content="Instatus"><link rel="preconnect" href="https://cdn.instatus.com">`,
      `<footer><a href="https://instatus.com">Powered by Instatus</a></footer>`
    )
}
