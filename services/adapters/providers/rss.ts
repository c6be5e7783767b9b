import { Effect } from "effect"
import type {
  MaintenanceStatus,
  Snapshot,
  SnapshotComponent,
  SnapshotIncident,
  SnapshotMaintenance
} from "../../domain/Snapshot.ts"
import type { ComponentStatus, IncidentImpact, IncidentStatus, SourceStatus } from "../../domain/Status.ts"
import { type Adapter, AdapterError, type Fetched, type SourceConfig } from "../Adapter.ts"
import { type Feed, feed, type FeedItem } from "../feed.ts"
import { effectiveStatus, statusDescriptions, worstComponent } from "../normalize.ts"

/**
 * Any RSS 2.0 or Atom feed, read as incident history: items are grouped into
 * incidents, and the newest item of each says whether it is still open. The
 * generic fallback after the specific providers, so every rule is a keyword
 * heuristic (see the tests for the wordings it knows).
 */

const dayMs = 24 * 60 * 60 * 1000
/** An unresolved incident quiet for longer is history: feeds often never post the resolution. */
const staleAfterMs = 7 * dayMs
const keepResolvedMs = 30 * dayMs

/** Lifecycle words of incidents and maintenances, as status feeds write them. */
type Phase =
  | "investigating"
  | "identified"
  | "monitoring"
  | "resolved"
  | "postmortem"
  | "scheduled"
  | "in_progress"
  | "verifying"
  | "completed"

// "Update" repeats the previous state, so it marks an update but names no phase.
const markers: Record<string, Phase | "update"> = {
  investigating: "investigating",
  identified: "identified",
  monitoring: "monitoring",
  update: "update",
  resolved: "resolved",
  fixed: "resolved",
  postmortem: "postmortem",
  scheduled: "scheduled",
  "in progress": "in_progress",
  verifying: "verifying",
  completed: "completed",
  cancelled: "completed",
  canceled: "completed"
}
/** The marker a word (any case) names; own keys only, so "[constructor]" names none. */
const markerOf = (word: string): Phase | "update" | undefined => {
  const key = word.toLowerCase()
  return Object.hasOwn(markers, key) ? markers[key] : undefined
}
const capitalize = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1)
/** "[Investigating] X", "Resolved - X", "Update: X" at the start of a title. */
const titlePrefix = new RegExp(`^\\s*(?:\\[\\s*([^\\]]*?)\\s*\\]|(${Object.keys(markers).join("|")})\\s*[-:\\u2013])\\s*`, "i")
/** Statuspage-style update lines in a summary ("<strong>Resolved</strong> - text"), newest first. */
const summaryMarker = new RegExp(`(?:^|\\s)(${Object.keys(markers).map(capitalize).join("|")})\\s+-\\s`, "g")

/** Without a marker, the earliest of these words in the text names the phase. */
const phaseWords: ReadonlyArray<readonly [RegExp, Phase]> = [
  [/\b(?:resolved|completed|fixed|operating normally)\b/i, "resolved"],
  [/\bpost-?mortem\b/i, "postmortem"],
  [/\bmonitoring\b/i, "monitoring"],
  [/\bidentified\b/i, "identified"],
  [/\binvestigating\b/i, "investigating"]
]

const closing = new Set<Phase>(["resolved", "postmortem", "completed"])
const maintenancePhases = new Set<Phase>(["scheduled", "in_progress", "verifying"])
const incidentPhases = new Set<Phase>(["investigating", "identified", "monitoring", "postmortem"])

// A planned-work phase shown on an incident (when no window could be read) keeps its meaning.
const incidentStatuses: Record<Phase, IncidentStatus> = {
  investigating: "investigating",
  identified: "identified",
  monitoring: "monitoring",
  resolved: "resolved",
  postmortem: "postmortem",
  scheduled: "identified",
  in_progress: "identified",
  verifying: "monitoring",
  completed: "resolved"
}

const maintenanceWords = /\b(?:maintenance|scheduled)\b/i
// "Partial outage" is degraded under the status rules, so it must not read as critical.
const criticalWords = /\b(?<!(?:partial|minor) )outages?\b|\bdown\b|\bunavailable\b/i

/** One feed item, classified. */
interface Entry {
  readonly item: FeedItem
  /** Epoch ms of the item's last change. */
  readonly at: number
  readonly phase: Phase
  readonly explicitPhases: ReadonlyArray<Phase>
  /** Title without status prefixes, for display; `key` is its normalized form. */
  readonly title: string
  readonly key: string
  readonly text: string
  /** Updates the item carries (Statuspage entries hold the whole trail). */
  readonly updates: number
}

const isPhase = (marker: Phase | "update" | undefined): marker is Phase => marker !== undefined && marker !== "update"

const classify = (item: FeedItem, at: number): Entry => {
  // An update trail is newest first and kept current; a title prefix may date from the first post.
  const trail = [...item.summary.matchAll(summaryMarker)].map((m) => markerOf(m[1]!))
  const explicit = trail.filter(isPhase)
  let title = item.title
  for (let m = titlePrefix.exec(title); m !== null && m[0] !== ""; m = titlePrefix.exec(title)) {
    const marker = markerOf(m[1] ?? m[2] ?? "")
    if (isPhase(marker)) explicit.push(marker)
    title = title.slice(m[0].length)
  }
  const text = `${item.title} ${item.summary}`
  return {
    item,
    at,
    phase: explicit[0] ?? phaseFromWords(text),
    explicitPhases: explicit,
    title: title.trim() || item.title || item.summary.slice(0, 120),
    key: title.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim(),
    text,
    updates: Math.max(1, trail.length)
  }
}

const phaseFromWords = (text: string): Phase => {
  let best: { index: number; phase: Phase } | null = null
  for (const [pattern, phase] of phaseWords) {
    const index = text.search(pattern)
    if (index >= 0 && (best === null || index < best.index)) best = { index, phase }
  }
  return best?.phase ?? "investigating"
}

/**
 * Groups entries (oldest first) into incidents: by normalized title, or by a
 * shared item link. A closed incident takes only further closing items (a
 * postmortem); anything else with its title starts a new incident.
 */
const groupEntries = (entries: ReadonlyArray<Entry>, feedLink: string): Array<Array<Entry>> => {
  const groups: Array<Array<Entry>> = []
  const byKey = new Map<string, Array<Entry>>()
  for (const entry of entries) {
    const keys = [...(usableLink(entry.item.link, feedLink) ? [`link:${entry.item.link}`] : []), ...(entry.key ? [`title:${entry.key}`] : [])]
    const found = keys.map((k) => byKey.get(k)).find((g) => g !== undefined)
    const joins = found !== undefined && (!closing.has(found[found.length - 1]!.phase) || closing.has(entry.phase))
    const group = joins ? found : []
    if (!joins) groups.push(group)
    group.push(entry)
    for (const k of keys) byKey.set(k, group)
  }
  return groups
}

/** Feeds that link every item to the page itself give links that say nothing about the incident. */
const usableLink = (link: string, feedLink: string): boolean => {
  if (link === "" || link === feedLink || !URL.canParse(link)) return false
  return new URL(link).pathname.replace(/\/+$/, "") !== ""
}

const months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
const isoDate = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})/g
/** Statuspage: "THIS IS A SCHEDULED EVENT Apr 7, 13:00 - 17:00 UTC" (also "Apr 7, 22:00 UTC - Apr 8, 02:00 UTC"). */
const scheduledEvent =
  /SCHEDULED EVENT\s+([A-Z][a-z]{2})\s+(\d{1,2})\s*,\s*(\d{1,2}):(\d{2})(?:\s*UTC)?(?:\s*-\s*(?:([A-Z][a-z]{2})\s+(\d{1,2})\s*,\s*)?(\d{1,2}):(\d{2}))?\s*UTC/

interface Window {
  readonly start: number
  readonly end: number | null
}

/** The maintenance window a text names, if any. Statuspage omits the year: the one nearest the item's date. */
const windowOf = (text: string, at: number): Window | null => {
  const event = scheduledEvent.exec(text)
  if (event !== null) {
    const [, month, day, hour, minute, endMonth, endDay, endHour, endMinute] = event
    const year = new Date(at).getUTCFullYear()
    const date = (mon: string, d: string, h: string, min: string): number => {
      const m = months.indexOf(mon.toLowerCase())
      const candidates = [year - 1, year, year + 1].map((y) => Date.UTC(y, m, Number(d), Number(h), Number(min)))
      return candidates.reduce((a, b) => (Math.abs(b - at) < Math.abs(a - at) ? b : a))
    }
    const start = date(month!, day!, hour!, minute!)
    if (endHour === undefined) return { start, end: null }
    const end = date(endMonth ?? month!, endDay ?? day!, endHour, endMinute!)
    return { start, end: end < start ? end + dayMs : end }
  }
  const dates = [...text.matchAll(isoDate)].map((m) => Date.parse(m[0])).filter((t) => !Number.isNaN(t))
  return dates.length > 0 ? { start: dates[0]!, end: dates[1] ?? null } : null
}

const impactOf = (group: ReadonlyArray<Entry>, text: string): IncidentImpact => {
  const phases = group.flatMap((e) => e.explicitPhases)
  const planned = phases.some((p) => maintenancePhases.has(p)) ||
    (!phases.some((p) => incidentPhases.has(p)) && maintenanceWords.test(text))
  if (planned) return "maintenance"
  if (criticalWords.test(text)) return "critical"
  // "Degraded", "delays", "elevated errors", "slow", "partial" read minor, and so does an incident
  // with no such word: on a status feed it still means something is wrong.
  return "minor"
}

const iso = (ms: number): string => new Date(ms).toISOString()

interface Reading {
  readonly incidents: Array<SnapshotIncident>
  readonly maintenances: Array<SnapshotMaintenance>
}

const readGroup = (group: ReadonlyArray<Entry>, now: Date, into: Reading): void => {
  const first = group[0]!
  const newest = group[group.length - 1]!
  const text = group.map((e) => e.text).join(" ")
  const impact = impactOf(group, text)
  const closed = closing.has(newest.phase)
  const window = impact === "maintenance"
    ? group.map((e) => windowOf(e.text, e.at)).findLast((w) => w !== null) ?? null
    : null
  const fresh = now.getTime() - newest.at < staleAfterMs
  // A window with no stated end lasts while the feed keeps it fresh.
  const inWindow = window !== null && !closed &&
    (window.end === null ? window.start > now.getTime() || fresh : window.end >= now.getTime())
  const components = [...new Set(group.flatMap((e) => e.item.categories))]
  const url = newest.item.link || null
  if (inWindow) {
    const status: MaintenanceStatus = window.start > now.getTime()
      ? "scheduled"
      : newest.phase === "verifying" ? "verifying" : "in_progress"
    into.maintenances.push({
      id: first.item.id,
      title: newest.title,
      status,
      scheduled_for: iso(window.start),
      scheduled_until: window.end === null ? null : iso(window.end),
      components,
      url
    })
    return
  }
  // Planned work whose window is over is history, whatever its last item said.
  const open = !closed && fresh && window === null
  const resolvedAt = open ? null : newest.at
  if (resolvedAt !== null && now.getTime() - resolvedAt > keepResolvedMs) return
  into.incidents.push({
    id: first.item.id,
    title: newest.title,
    status: open ? incidentStatuses[newest.phase] : newest.phase === "postmortem" ? "postmortem" : "resolved",
    impact,
    created_at: iso(Date.parse(first.item.published ?? "") || first.at),
    updated_at: iso(newest.at),
    resolved_at: resolvedAt === null ? null : iso(resolvedAt),
    update_count: group.reduce((n, e) => n + e.updates, 0),
    components,
    url,
    region: null
  })
}

const impactStatus: Record<IncidentImpact, ComponentStatus> = {
  none: "operational",
  minor: "degraded",
  major: "degraded",
  critical: "critical",
  maintenance: "maintenance"
}

/** Item categories, when the feed has them, as flat components: affected ones take their open incidents' impact. */
const toComponents = (doc: Feed, reading: Reading): Array<SnapshotComponent> => {
  const names = [...new Set(doc.items.flatMap((i) => i.categories))]
  return names.map((name, position) => {
    const statuses = [
      ...reading.incidents.filter((i) => i.resolved_at === null && i.components.includes(name)).map((i) => impactStatus[i.impact]),
      ...reading.maintenances
        .filter((m) => (m.status === "in_progress" || m.status === "verifying") && m.components.includes(name))
        .map((): ComponentStatus => "maintenance")
    ]
    return {
      id: name,
      name,
      description: "",
      status: worstComponent(statuses),
      parent_id: null,
      is_group: false,
      position,
      region: null
    }
  })
}


/** A generated description for feeds that state none: the status, and the newest open incident. */
export const describeStatus = (status: SourceStatus, incidents: ReadonlyArray<SnapshotIncident>): string => {
  const open = incidents.find((i) => i.resolved_at === null)
  return status !== "operational" && open ? `${statusDescriptions[status]}: ${open.title}` : statusDescriptions[status]
}

/** Items with a usable date, oldest first (ties keep the feed's newest-first order, reversed). */
export const datedItems = (doc: Feed, warnings: Array<string>): Array<{ item: FeedItem; at: number }> => {
  const dated = doc.items
    .map((item, index) => ({ item, index, at: Date.parse(item.updated ?? item.published ?? "") }))
    .filter((d) => !Number.isNaN(d.at))
  if (dated.length < doc.items.length) {
    warnings.push(`${doc.items.length - dated.length} feed item(s) without a date ignored`)
  }
  return dated.toSorted((a, b) => a.at - b.at || b.index - a.index).map(({ at, item }) => ({ item, at }))
}

/** The feed a poll fetched: the first document (the source URL itself). */
export const primaryFeed = (provider: string, fetched: ReadonlyArray<Fetched>, source: SourceConfig) => {
  const primary = fetched[0]
  return primary === undefined
    ? Effect.fail(new AdapterError({ provider, url: source.url, reason: "invalid_shape", message: "no feed was fetched" }))
    : feed(provider, primary)
}

const toSnapshot = (doc: Feed, source: SourceConfig, now: Date): Snapshot => {
  const warnings: Array<string> = []
  const entries = datedItems(doc, warnings).map(({ at, item }) => classify(item, at))
  const reading: Reading = { incidents: [], maintenances: [] }
  for (const group of groupEntries(entries, doc.link)) readGroup(group, now, reading)
  const incidents = reading.incidents.toSorted((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at))
  const maintenances = reading.maintenances.toSorted((a, b) => Date.parse(a.scheduled_for) - Date.parse(b.scheduled_for))
  const components = toComponents(doc, reading)
  const status = effectiveStatus({ reported: null, components, incidents, maintenances, regions: source.regions, now })
  return {
    provider: "rss",
    status,
    reported_status: null,
    description: describeStatus(status, incidents),
    components,
    incidents,
    maintenances,
    regions: [],
    warnings
  }
}

export const rss = {
  id: "rss",
  name: "RSS/Atom feed",
  endpoints: (source) => [source.url],
  parse: (fetched, source, now) => Effect.map(primaryFeed("rss", fetched, source), (doc) => toSnapshot(doc, source, now)),
  // The generic fallback: detect.ts asks every specific provider first.
  detect: { feed: (_doc: Feed) => true }
} as const satisfies Adapter
