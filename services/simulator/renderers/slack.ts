import { joinUrl } from "../../adapters/text.ts"
import type { MaintenanceStatus } from "../../domain/Snapshot.ts"
import type { IncidentImpact } from "../../domain/Status.ts"
import { htmlPage, json, type Renderer, type SimSource } from "../Model.ts"

/**
 * Slack's `/api/v2.0.0/current`: open incidents and pending maintenances,
 * services by name, Pacific-time timestamps with their offset. Slack has no
 * in-progress maintenance state, so a running maintenance stays "scheduled".
 */

const types: Record<IncidentImpact, string> = {
  none: "notice",
  maintenance: "notice",
  minor: "incident",
  major: "incident",
  critical: "outage"
}

const maintenanceStatuses: Partial<Record<MaintenanceStatus, string>> = {
  scheduled: "scheduled",
  in_progress: "scheduled",
  verifying: "scheduled"
}

const pacificZone = new Intl.DateTimeFormat("en-US", { timeZone: "America/Los_Angeles", timeZoneName: "shortOffset" })

/** ISO 8601 in Pacific time with its offset, as Slack writes it: 2018-09-07T14:35:00-07:00. */
const slackTime = (date: Date): string => {
  const zone = pacificZone.formatToParts(date).find((p) => p.type === "timeZoneName")?.value ?? "GMT-8"
  const hours = Number(zone.replace("GMT", ""))
  const local = new Date(date.getTime() + hours * 3_600_000).toISOString().slice(0, 19)
  return `${local}${hours < 0 ? "-" : "+"}${String(Math.abs(hours)).padStart(2, "0")}:00`
}

const serviceNames = (source: SimSource, ids: ReadonlyArray<string>): Array<string> =>
  source.components.filter((c) => !c.is_group && ids.includes(c.id)).map((c) => c.name)

const current = (source: SimSource) => {
  const incidents = source.incidents.filter((i) => i.resolved_at === null).map((i) => ({
    id: i.id,
    date_created: i.created_at,
    date_updated: i.updated_at,
    title: i.title,
    type: types[i.impact],
    status: "active",
    url: joinUrl(source.baseUrl, `/${i.created_at.toISOString().slice(0, 7)}/${i.id}`),
    services: serviceNames(source, i.components),
    notes: i.updates.toReversed().map((u) => ({ date_created: slackTime(u.created_at), body: `<p>${u.body}</p>` }))
  }))
  const maintenances = source.maintenances.flatMap((m) => {
    const status = maintenanceStatuses[m.status]
    return status === undefined ? [] : [{
      id: m.id,
      date_created: m.scheduled_for,
      date_updated: m.updated_at,
      title: m.title,
      type: "notice",
      status,
      url: joinUrl(source.baseUrl, `/${m.scheduled_for.toISOString().slice(0, 7)}/${m.id}`),
      services: serviceNames(source, m.components),
      notes: []
    }]
  })
  const listed = [...incidents, ...maintenances]
  const created = listed.map((i) => i.date_created.getTime())
  const updated = listed.map((i) => i.date_updated.getTime())
  return {
    status: listed.length > 0 ? "active" : "ok",
    date_created: slackTime(new Date(created.length > 0 ? Math.min(...created) : source.updatedAt.getTime())),
    date_updated: slackTime(new Date(updated.length > 0 ? Math.max(...updated) : source.updatedAt.getTime())),
    active_incidents: listed.map((i) => ({ ...i, date_created: slackTime(i.date_created), date_updated: slackTime(i.date_updated) }))
  }
}

export const slackRenderer: Renderer = {
  provider: "slack",
  routes: { "/api/v2.0.0/current": (source) => json(current(source)) },
  page: (source) => htmlPage(`${source.name} System Status`)
}
