import type { MaintenanceStatus } from "../domain/Snapshot.ts"
import type { ComponentStatus, IncidentImpact, IncidentStatus } from "../domain/Status.ts"

/**
 * The simulator's state of one upstream status page, independent of format.
 * Renderers (renderers/<provider>.ts) turn it into each provider's payloads;
 * the control API mutates it. Times are Date objects; renderers format them.
 */
export interface SimComponent {
  id: string
  name: string
  description: string
  status: ComponentStatus
  /** id of the group containing it, or null */
  parent_id: string | null
  is_group: boolean
  position: number
  /** provider region id (e.g. us-east-1, europe-west1) for regional providers, else null */
  region: string | null
}

export interface SimIncidentUpdate {
  id: string
  status: IncidentStatus
  body: string
  created_at: Date
}

export interface SimIncident {
  id: string
  title: string
  status: IncidentStatus
  impact: IncidentImpact
  created_at: Date
  updated_at: Date
  resolved_at: Date | null
  /** newest last */
  updates: Array<SimIncidentUpdate>
  /** ids of affected components */
  components: Array<string>
  region: string | null
}

export interface SimMaintenance {
  id: string
  title: string
  status: MaintenanceStatus
  scheduled_for: Date
  scheduled_until: Date | null
  components: Array<string>
  created_at: Date
  updated_at: Date
}

export interface SimSource {
  key: string
  name: string
  /** wire value of the provider whose format is served */
  provider: string
  /** absolute URL of the page, e.g. http://127.0.0.1:4100/s/github */
  baseUrl: string
  components: Array<SimComponent>
  /** open and resolved, oldest first */
  incidents: Array<SimIncident>
  maintenances: Array<SimMaintenance>
  /** regions this source spans (regional providers), else [] */
  regions: Array<string>
  /** bumped on every change; part of the ETag */
  version: number
  /** time of the last change; Last-Modified */
  updatedAt: Date
}

/** What a renderer serves for one path of a source. */
export interface Rendered {
  readonly contentType: string
  readonly body: string | Uint8Array
}

/**
 * One provider's wire format, as served by the simulator. `routes` maps a
 * path relative to the source's base URL (e.g. "/api/v2/summary.json") to its
 * payload. `page` is the HTML served at the base URL itself (carrying the
 * provider's HTML markers and feed links, as the real pages do). With
 * `catchAllHtml`, any other path answers 200 with `page` (SPA hosts do that),
 * otherwise 404.
 */
export interface Renderer {
  readonly provider: string
  readonly routes: Readonly<Record<string, (source: SimSource, now: Date) => Rendered>>
  readonly page: (source: SimSource, now: Date) => string
  readonly catchAllHtml?: boolean
}

export const json = (value: unknown): Rendered => ({
  contentType: "application/json; charset=utf-8",
  body: JSON.stringify(value)
})

export const xml = (body: string, contentType = "application/rss+xml; charset=utf-8"): Rendered => ({ contentType, body })

export const escapeXml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;")

/** A minimal HTML page with a title, optional <head> extras and body. */
export const htmlPage = (title: string, head = "", body = ""): string =>
  `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${escapeXml(title)}</title>${head}</head>` +
  `<body><h1>${escapeXml(title)}</h1>${body}</body></html>`
