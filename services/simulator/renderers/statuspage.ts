import type { MaintenanceStatus } from "../../domain/Snapshot.ts"
import type { ComponentStatus } from "../../domain/Status.ts"
import { worstComponent } from "../../adapters/normalize.ts"
import {
  escapeXml,
  htmlPage,
  json,
  type Renderer,
  type SimComponent,
  type SimIncident,
  type SimMaintenance,
  type SimSource
} from "../Model.ts"
import { fnv1a } from "../../platform/Prng.ts"

/**
 * Atlassian Statuspage's `/api/v2/summary.json`, shaped like a real page's
 * (test/fixtures/statuspage/statuspage-summary.json), and its HTML page with
 * Statuspage's markers. GitHub is the same format under GitHub's page id.
 */

/** A 12-character lower-case id like Statuspage's, derived from `seed`. */
const shortId = (seed: string): string =>
  (fnv1a(seed).toString(36) + fnv1a(`~${seed}`).toString(36)).padEnd(12, "0").slice(0, 12)

export const isOpen = (incident: SimIncident): boolean => incident.resolved_at === null

/** What summary.json lists: upcoming and running maintenances. */
export const isPending = (maintenance: SimMaintenance): boolean =>
  maintenance.status !== "completed" && maintenance.status !== "cancelled"

const inProgress: ReadonlyArray<MaintenanceStatus> = ["in_progress", "verifying"]

/**
 * The page indicator Statuspage would show for the model: the worse of the
 * leaf components (any degraded → minor, any critical → major, all critical →
 * critical) and the open incidents' impacts; maintenance only when nothing is
 * wrong and a maintenance runs or a component is under maintenance.
 */
export const indicatorOf = (source: SimSource): { indicator: string; description: string } => {
  const levels = ["none", "minor", "major", "critical"]
  const leaves = source.components.filter((c) => !c.is_group)
  const critical = leaves.filter((c) => c.status === "critical").length
  let level = leaves.length > 0 && critical === leaves.length ? 3 : critical > 0 ? 2 : leaves.some((c) => c.status === "degraded") ? 1 : 0
  for (const incident of source.incidents.filter(isOpen)) level = Math.max(level, levels.indexOf(incident.impact))
  const maintenance = source.maintenances.some((m) => inProgress.includes(m.status)) ||
    leaves.some((c) => c.status === "maintenance")
  if (level === 0 && maintenance) return { indicator: "maintenance", description: "Service Under Maintenance" }
  const descriptions = ["All Systems Operational", "Partially Degraded Service", "Partial System Outage", "Major Service Outage"]
  return { indicator: levels[level]!, description: descriptions[level]! }
}

const componentStatuses: Record<ComponentStatus, string> = {
  operational: "operational",
  degraded: "degraded_performance",
  critical: "major_outage",
  maintenance: "under_maintenance"
}

const componentLabels: Record<ComponentStatus, string> = {
  operational: "Operational",
  degraded: "Degraded Performance",
  critical: "Major Outage",
  maintenance: "Under Maintenance"
}

const maintenanceBodies: Record<MaintenanceStatus, string> = {
  scheduled: "We will be performing scheduled maintenance.",
  in_progress: "Scheduled maintenance is currently in progress. We will provide updates as necessary.",
  verifying: "Verification is currently underway for the maintenance items.",
  completed: "The scheduled maintenance has been completed.",
  cancelled: "The scheduled maintenance has been cancelled."
}

/** The model has no component creation times; a fixed one keeps renders deterministic. */
const componentsCreated = "2019-01-01T00:00:00.000Z"

interface Page {
  readonly id: string
  readonly url: string
}

const byPosition = (a: SimComponent, b: SimComponent) => a.position - b.position

const childrenOf = (source: SimSource, group: SimComponent): Array<SimComponent> =>
  source.components.filter((c) => c.parent_id === group.id).toSorted(byPosition)

/** Statuspage shows a group in its worst child's status. */
const shownStatus = (source: SimSource, c: SimComponent): ComponentStatus =>
  c.is_group ? worstComponent([c.status, ...childrenOf(source, c).map((child) => child.status)]) : c.status

const componentJson = (source: SimSource, page: Page, c: SimComponent) => ({
  id: c.id,
  name: c.name,
  status: componentStatuses[shownStatus(source, c)],
  created_at: componentsCreated,
  updated_at: source.updatedAt.toISOString(),
  position: c.position + 1,
  description: c.description || null,
  showcase: false,
  start_date: null,
  group_id: c.parent_id,
  page_id: page.id,
  group: c.is_group,
  only_show_if_degraded: false,
  ...(c.is_group
    ? { components: childrenOf(source, c).map((child) => child.id) }
    : {})
})

const affected = (source: SimSource, ids: ReadonlyArray<string>): Array<SimComponent> =>
  source.components.filter((c) => ids.includes(c.id))

const affectedComponents = (components: ReadonlyArray<SimComponent>) =>
  components.map((c) => ({ code: c.id, name: c.name, old_status: "operational", new_status: componentStatuses[c.status] }))

const incidentJson = (source: SimSource, page: Page, incident: SimIncident) => {
  const components = affected(source, incident.components)
  const monitoring = incident.updates.find((u) => u.status === "monitoring")
  return {
    id: incident.id,
    name: incident.title,
    status: incident.status,
    created_at: incident.created_at.toISOString(),
    updated_at: incident.updated_at.toISOString(),
    monitoring_at: monitoring ? monitoring.created_at.toISOString() : null,
    resolved_at: null,
    impact: incident.impact,
    shortlink: `https://stspg.io/${shortId(incident.id)}`,
    started_at: incident.created_at.toISOString(),
    page_id: page.id,
    // Statuspage lists updates newest first; the model keeps them oldest first.
    incident_updates: incident.updates.toReversed().map((u) => ({
      id: u.id,
      status: u.status,
      body: u.body,
      incident_id: incident.id,
      created_at: u.created_at.toISOString(),
      updated_at: u.created_at.toISOString(),
      display_at: u.created_at.toISOString(),
      affected_components: affectedComponents(components),
      deliver_notifications: true,
      custom_tweet: null,
      tweet_id: null
    })),
    components: components.map((c) => componentJson(source, page, c))
  }
}

const maintenanceJson = (source: SimSource, page: Page, maintenance: SimMaintenance) => {
  const components = affected(source, maintenance.components)
  return {
    id: maintenance.id,
    name: maintenance.title,
    status: maintenance.status,
    created_at: maintenance.created_at.toISOString(),
    updated_at: maintenance.updated_at.toISOString(),
    monitoring_at: null,
    resolved_at: null,
    impact: "maintenance",
    shortlink: `https://stspg.io/${shortId(maintenance.id)}`,
    started_at: maintenance.created_at.toISOString(),
    page_id: page.id,
    scheduled_for: maintenance.scheduled_for.toISOString(),
    scheduled_until: maintenance.scheduled_until?.toISOString() ?? null,
    incident_updates: [{
      id: shortId(`${maintenance.id}:${maintenance.status}`),
      status: maintenance.status,
      body: maintenanceBodies[maintenance.status],
      incident_id: maintenance.id,
      created_at: maintenance.updated_at.toISOString(),
      updated_at: maintenance.updated_at.toISOString(),
      display_at: maintenance.updated_at.toISOString(),
      affected_components: affectedComponents(components),
      deliver_notifications: true
    }],
    components: components.map((c) => componentJson(source, page, c))
  }
}

const newestFirst = (a: SimIncident, b: SimIncident) => b.created_at.getTime() - a.created_at.getTime()

const summary = (source: SimSource, page: Page) => ({
  page: { id: page.id, name: source.name, url: page.url, time_zone: "Etc/UTC", updated_at: source.updatedAt.toISOString() },
  status: indicatorOf(source),
  components: source.components.toSorted(byPosition).map((c) => componentJson(source, page, c)),
  incidents: source.incidents.filter(isOpen).toSorted(newestFirst).map((i) => incidentJson(source, page, i)),
  scheduled_maintenances: source.maintenances.filter(isPending).map((m) => maintenanceJson(source, page, m))
})

/** The page's base URL without a trailing slash, for absolute links. */
export const baseOf = (source: SimSource): string => source.baseUrl.replace(/\/+$/, "")

/** The HTML status page, with Statuspage's asset CDN, colour data, layout classes and feed links. */
const statuspageHtml = (source: SimSource): string => {
  const base = escapeXml(baseOf(source))
  const name = escapeXml(source.name)
  const { indicator, description } = indicatorOf(source)
  const head = `<meta name="issued" content="${Math.floor(source.updatedAt.getTime() / 1000)}">` +
    `<link rel="stylesheet" href="https://dka575ofm4ao0.cloudfront.net/assets/status/status_manifest.css">` +
    `<link rel="alternate" type="application/atom+xml" title="${name} Status History" href="${base}/history.atom">` +
    `<link rel="alternate" type="application/rss+xml" title="${name} Status History" href="${base}/history.rss">` +
    `<script>window.pageColorData = {"blue":"#3498DB","green":"#2FCC66","yellow":"#F1C40F","orange":"#E67E22","red":"#E74C3C"};</script>`
  const rows = source.components.toSorted(byPosition).map((c) => {
    const status = shownStatus(source, c)
    return `<div class="component-inner-container status-${componentStatuses[status]}" data-component-id="${escapeXml(c.id)}">` +
      `<span class="name">${escapeXml(c.name)}</span><span class="component-status">${componentLabels[status]}</span></div>`
  }).join("")
  const body = `<div class="layout-content status status-index starter">` +
    `<div class="page-status status-${indicator}"><h2 class="status">${escapeXml(description)}</h2></div>` +
    `<div class="components-container">${rows}</div></div>` +
    `<div class="powered-by"><a href="https://www.atlassian.com/software/statuspage">Powered by Atlassian Statuspage</a></div>`
  return htmlPage(`${source.name} Status`, head, body)
}

const statuspageFormat = (provider: string, pageOf: (source: SimSource) => Page): Renderer => ({
  provider,
  routes: { "/api/v2/summary.json": (source) => json(summary(source, pageOf(source))) },
  page: statuspageHtml
})

export const statuspageRenderer = statuspageFormat("statuspage_io", (source) => ({
  id: shortId(`page:${source.key}`),
  url: baseOf(source)
}))

/** GitHub's real page identity, which the github adapter's probe recognises. */
export const githubRenderer = statuspageFormat("github", () => ({ id: "kctbh9vrtdwd", url: "https://www.githubstatus.com" }))
