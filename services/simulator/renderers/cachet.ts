import type { MaintenanceStatus } from "../../domain/Snapshot.ts"
import type { ComponentStatus, IncidentStatus } from "../../domain/Status.ts"
import { escapeXml, htmlPage, json, type Renderer, type SimComponent, type SimIncident, type SimMaintenance, type SimSource } from "../Model.ts"

/**
 * Cachet 2.x (`/api/v1/*`, paginated `{meta, data}` with integer statuses) and
 * Cachet 3.x (JSON:API at `/api/*`, statuses as `{human, value}`). Model ids
 * are served as they are, where Cachet would use integers.
 */

// Cachet 2 has no maintenance status for components: its schedules carry maintenance.
const v2Statuses: Record<ComponentStatus, number> = { operational: 1, degraded: 2, critical: 4, maintenance: 1 }
const v2StatusNames: Record<number, string> = { 0: "Unknown", 1: "Operational", 2: "Performance Issues", 3: "Partial Outage", 4: "Major Outage" }
const v3Statuses: Record<ComponentStatus, number> = { operational: 1, degraded: 2, critical: 4, maintenance: 6 }
const v3StatusNames: Record<number, string> = {
  1: "Operational",
  2: "Performance Issues",
  3: "Partial Outage",
  4: "Major Outage",
  5: "Unknown",
  6: "Under Maintenance"
}

const incidentStatuses: Record<IncidentStatus, number> = { investigating: 1, identified: 2, monitoring: 3, resolved: 4, postmortem: 4 }
const incidentStatusNames: Record<number, string> = { 1: "Investigating", 2: "Identified", 3: "Watching", 4: "Fixed" }

// Cancelled maintenances are not served.
const scheduleStatuses: Partial<Record<MaintenanceStatus, number>> = { scheduled: 0, in_progress: 1, verifying: 1, completed: 2 }
const scheduleStatusNames: Record<number, string> = { 0: "Upcoming", 1: "In Progress", 2: "Complete" }

/** Laravel's toDateTimeString, in UTC. */
const dateTime = (d: Date) => d.toISOString().slice(0, 19).replace("T", " ")

/** Carbon's diffForHumans, coarsely. */
const ago = (d: Date, now: Date): string => {
  const seconds = Math.round((now.getTime() - d.getTime()) / 1000)
  const units: ReadonlyArray<[string, number]> = [["day", 86_400], ["hour", 3_600], ["minute", 60], ["second", 1]]
  const [unit, size] = units.find(([, s]) => Math.abs(seconds) >= s) ?? ["second", 1]
  const n = Math.max(1, Math.floor(Math.abs(seconds) / size))
  return `${n} ${unit}${n === 1 ? "" : "s"} ${seconds >= 0 ? "ago" : "from now"}`
}
const stamp = (d: Date | null, now: Date) => ({ human: d ? ago(d, now) : null, string: d ? dateTime(d) : null })

const base = (source: SimSource) => source.baseUrl.replace(/\/+$/, "")
const byPosition = (a: SimComponent, b: SimComponent) => a.position - b.position
const leaves = (source: SimSource) => source.components.filter((c) => !c.is_group).toSorted(byPosition)
const groups = (source: SimSource) => source.components.filter((c) => c.is_group).toSorted(byPosition)
const newestFirst = (source: SimSource) => source.incidents.toReversed()
const schedules = (source: SimSource) => source.maintenances.filter((m) => scheduleStatuses[m.status] !== undefined)

const pong = () => json({ data: "Pong!" })

// ---- Cachet 2.x ----

const paginated = (data: ReadonlyArray<unknown>, perPage: number) =>
  json({
    meta: {
      pagination: {
        total: data.length,
        count: data.length,
        per_page: perPage,
        current_page: 1,
        total_pages: 1,
        links: { next_page: null, previous_page: null }
      }
    },
    data
  })

const v2Component = (source: SimSource, c: SimComponent) => ({
  id: c.id,
  name: c.name,
  description: c.description,
  link: "",
  status: v2Statuses[c.status],
  order: c.position,
  group_id: c.parent_id ?? 0,
  enabled: true,
  meta: null,
  created_at: dateTime(source.updatedAt),
  updated_at: dateTime(source.updatedAt),
  deleted_at: null,
  status_name: v2StatusNames[v2Statuses[c.status]],
  tags: {}
})

const v2Incident = (source: SimSource, i: SimIncident) => {
  const status = incidentStatuses[i.status]
  return {
    id: i.id,
    // Cachet 2 links an incident to one component at most.
    component_id: i.components[0] ?? 0,
    name: i.title,
    status,
    visible: 1,
    stickied: false,
    notifications: true,
    message: i.updates[0]?.body ?? i.title,
    occurred_at: dateTime(i.created_at),
    created_at: dateTime(i.created_at),
    updated_at: dateTime(i.updated_at),
    deleted_at: null,
    is_resolved: status === 4,
    human_status: incidentStatusNames[status],
    // The first post is the incident's own message; later ones are updates, newest first.
    updates: i.updates.slice(1).toReversed().map((u) => ({
      id: u.id,
      incident_id: i.id,
      status: incidentStatuses[u.status],
      message: u.body,
      user_id: 1,
      created_at: dateTime(u.created_at),
      updated_at: dateTime(u.created_at),
      human_status: incidentStatusNames[incidentStatuses[u.status]],
      permalink: `${base(source)}/incidents/${i.id}#update-${u.id}`
    })),
    meta: []
  }
}

const v2Schedule = (m: SimMaintenance) => {
  const status = scheduleStatuses[m.status]!
  return {
    id: m.id,
    name: m.title,
    message: m.title,
    status,
    scheduled_at: dateTime(m.scheduled_for),
    completed_at: m.scheduled_until ? dateTime(m.scheduled_until) : null,
    created_at: dateTime(m.created_at),
    updated_at: dateTime(m.updated_at),
    deleted_at: null,
    human_status: scheduleStatusNames[status]
  }
}

export const cachetV2Renderer: Renderer = {
  provider: "cachet_v2",
  routes: {
    "/api/v1/ping": pong,
    "/api/v1/components": (source) => paginated(leaves(source).map((c) => v2Component(source, c)), 100),
    "/api/v1/components/groups": (source) =>
      paginated(
        groups(source).map((g) => ({
          id: g.id,
          name: g.name,
          order: g.position,
          collapsed: 0,
          visible: 1,
          created_at: dateTime(source.updatedAt),
          updated_at: dateTime(source.updatedAt),
          lowest_human_status: v2StatusNames[v2Statuses[g.status]]
        })),
        100
      ),
    "/api/v1/incidents": (source) => paginated(newestFirst(source).map((i) => v2Incident(source, i)), 50),
    "/api/v1/schedules": (source) => paginated(schedules(source).map(v2Schedule), 50)
  },
  page: (source) =>
    htmlPage(
      source.name,
      `<meta name="description" content="${escapeXml(source.name)} status page">`,
      `<footer>Powered by <a href="https://cachethq.io">Cachet</a></footer>`
    )
}

// ---- Cachet 3.x ----

const v3Status = (value: number, names: Record<number, string>) => ({ human: names[value] ?? "Unknown", value })
const refs = (type: string, ids: ReadonlyArray<string>) => ({ data: ids.map((id) => ({ type, id })) })

/** Laravel's simplePaginate envelope around a JSON:API collection. */
const collection = (source: SimSource, path: string, data: ReadonlyArray<unknown>, perPage: number, included: ReadonlyArray<unknown> = []) =>
  json({
    data,
    ...(included.length > 0 ? { included } : {}),
    links: { first: `${base(source)}${path}?page=1`, last: null, prev: null, next: null },
    meta: { current_page: 1, from: data.length > 0 ? 1 : null, path: `${base(source)}${path}`, per_page: perPage, to: data.length > 0 ? data.length : null }
  })

const v3Component = (source: SimSource, c: SimComponent, now: Date) => ({
  id: c.id,
  type: "components",
  attributes: {
    id: c.id,
    name: c.name,
    description: c.description,
    link: null,
    order: c.position,
    status: v3Status(v3Statuses[c.status], v3StatusNames),
    latest_status: v3Status(v3Statuses[c.status], v3StatusNames),
    enabled: true,
    created: stamp(source.updatedAt, now),
    updated: stamp(source.updatedAt, now)
  },
  relationships: { group: { data: c.parent_id ? { type: "componentGroups", id: c.parent_id } : null } }
})

const v3Group = (source: SimSource, g: SimComponent, now: Date) => ({
  id: g.id,
  type: "componentGroups",
  attributes: { id: g.id, name: g.name, order: g.position, collapsed: 0, visible: 1, created: stamp(source.updatedAt, now), updated: stamp(source.updatedAt, now) },
  relationships: { components: refs("components", source.components.filter((c) => c.parent_id === g.id).map((c) => c.id)) }
})

const v3Incident = (i: SimIncident, now: Date) => ({
  id: i.id,
  type: "incidents",
  attributes: {
    id: i.id,
    guid: `${i.id}-guid`,
    name: i.title,
    message: i.updates[0]?.body ?? i.title,
    component_id: null,
    visible: 1,
    stickied: false,
    notifications: true,
    status: v3Status(incidentStatuses[i.status], incidentStatusNames),
    occurred: stamp(i.created_at, now),
    created: stamp(i.created_at, now),
    updated: stamp(i.updated_at, now)
  },
  relationships: { components: refs("components", i.components), updates: refs("updates", i.updates.slice(1).map((u) => u.id)) }
})

const v3Update = (u: SimIncident["updates"][number], now: Date) => ({
  id: u.id,
  type: "updates",
  attributes: { id: u.id, message: u.body, status: v3Status(incidentStatuses[u.status], incidentStatusNames), created: stamp(u.created_at, now) }
})

const v3Schedule = (m: SimMaintenance, now: Date) => ({
  id: m.id,
  type: "schedules",
  attributes: {
    id: m.id,
    name: m.title,
    message: m.title,
    status: v3Status(scheduleStatuses[m.status]!, scheduleStatusNames),
    scheduled: stamp(m.scheduled_for, now),
    completed: stamp(m.scheduled_until, now),
    created: stamp(m.created_at, now),
    updated: stamp(m.updated_at, now)
  },
  relationships: { components: refs("components", m.components) }
})

export const cachetV3Renderer: Renderer = {
  provider: "cachet_v3",
  routes: {
    "/api/ping": pong,
    "/api/components": (source, now) =>
      collection(
        source,
        "/api/components",
        leaves(source).map((c) => v3Component(source, c, now)),
        100,
        groups(source).map((g) => v3Group(source, g, now))
      ),
    "/api/component-groups": (source, now) => collection(source, "/api/component-groups", groups(source).map((g) => v3Group(source, g, now)), 100),
    "/api/incidents": (source, now) =>
      collection(
        source,
        "/api/incidents",
        newestFirst(source).map((i) => v3Incident(i, now)),
        50,
        newestFirst(source).flatMap((i) => i.updates.slice(1).map((u) => v3Update(u, now)))
      ),
    "/api/schedules": (source, now) => collection(source, "/api/schedules", schedules(source).map((m) => v3Schedule(m, now)), 50)
  },
  page: (source) =>
    htmlPage(
      source.name,
      `<link rel="shortcut icon" href="/vendor/cachethq/cachet/favicon.ico">` +
        `<link rel="stylesheet" href="/vendor/cachethq/cachet/build/assets/cachet.css">`,
      `<footer>Powered by <a href="https://cachethq.io">Cachet</a></footer>`
    )
}
