import { Schema } from "effect"
import { createHash } from "node:crypto"
import type { StatusEvent } from "./Event.ts"
import { Snapshot, SnapshotComponent, SnapshotIncident, SnapshotMaintenance, Timestamp } from "./Snapshot.ts"
import { SourceStatus } from "./Status.ts"

export interface SourceRef {
  readonly key: string
  readonly name: string
}

/**
 * Since when the source and each of its components have been in their current status (the time the
 * change into it was observed, or the first observation). A status change's event id includes the
 * time its previous status began: the same change observed twice (before and after a restart, by two
 * runners during a hand-over) has one id, and the same flip happening again later has another.
 */
export const Since = Schema.Struct({
  source: Timestamp,
  components: Schema.Record(Schema.String, Timestamp)
})
export type Since = typeof Since.Type

/**
 * What a shard knows of a source between checks: its last snapshot and since when each status has
 * held. Saved in PostgreSQL with every changed snapshot (`source_observations`), so that the first
 * snapshot after a shard starts is compared with it rather than with nothing.
 */
export const Observation = Schema.Struct({ snapshot: Snapshot, since: Since })
export type Observation = typeof Observation.Type

const maintenanceOf = (m: Compared["maintenances"][number]) => ({
  id: m.id,
  title: m.title,
  status: m.status,
  scheduled_for: m.scheduled_for,
  scheduled_until: m.scheduled_until
})

const incidentOf = (i: Compared["incidents"][number]) => ({
  id: i.id,
  title: i.title,
  status: i.status,
  impact: i.impact,
  created_at: i.created_at,
  resolved_at: i.resolved_at,
  update_count: i.update_count,
  components: i.components
})

/**
 * What comparing a snapshot with the next one reads of it (`eventsBetween`, `sinceOf`, the publisher's
 * delta) and what a check's row repeats when the source answers 304: its statuses and the facts of its
 * incidents and maintenances, without their wording (component descriptions, incident updates). A
 * shard keeps this of each source's last snapshot rather than the snapshot (decision 0028); every
 * `Snapshot` is one.
 */
export const Compared = Schema.Struct({
  status: SourceStatus,
  components: Schema.Array(Schema.Struct({
    id: SnapshotComponent.fields.id,
    status: SnapshotComponent.fields.status,
    is_group: SnapshotComponent.fields.is_group,
    region: SnapshotComponent.fields.region
  })),
  incidents: Schema.Array(Schema.Struct({
    id: SnapshotIncident.fields.id,
    title: SnapshotIncident.fields.title,
    status: SnapshotIncident.fields.status,
    impact: SnapshotIncident.fields.impact,
    created_at: SnapshotIncident.fields.created_at,
    resolved_at: SnapshotIncident.fields.resolved_at,
    update_count: SnapshotIncident.fields.update_count,
    components: SnapshotIncident.fields.components
  })),
  maintenances: Schema.Array(Schema.Struct({
    id: SnapshotMaintenance.fields.id,
    title: SnapshotMaintenance.fields.title,
    status: SnapshotMaintenance.fields.status,
    scheduled_for: SnapshotMaintenance.fields.scheduled_for,
    scheduled_until: SnapshotMaintenance.fields.scheduled_until
  }))
})
export type Compared = typeof Compared.Type

/** An observation as comparing it reads it: its `Compared` and since when each status has held. */
export interface Observed {
  readonly snapshot: Compared
  readonly since: Since
}

/**
 * What a shard keeps of a source's last observation (decision 0028): its `Compared`, with since when
 * the source's status and each component's have held, in place of the snapshot and its `Since` (a
 * record keyed by component id, which V8 keeps as a dictionary, 1-2 KB a source).
 */
export interface Kept extends Compared {
  readonly since: Timestamp
  /** `since` null where the observation's `Since` had no entry for the component (as `eventsBetween` reads it). */
  readonly components: ReadonlyArray<Compared["components"][number] & { readonly since: Timestamp | null }>
}

/** `observation` as a shard keeps it: new objects holding only what comparing reads, equal times shared. */
export const keep = ({ snapshot, since }: Observed): Kept => {
  const times = new Map<string, string>()
  const shared = (time: string | undefined): string | null => {
    if (time === undefined) return null
    const known = times.get(time)
    if (known !== undefined) return known
    times.set(time, time)
    return time
  }
  return {
    status: snapshot.status,
    since: since.source,
    components: snapshot.components.map((c) => ({ id: c.id, status: c.status, is_group: c.is_group, region: c.region, since: shared(since.components[c.id]) })),
    incidents: snapshot.incidents.map(incidentOf),
    maintenances: snapshot.maintenances.map(maintenanceOf)
  }
}

/** What `keep` kept, as the observation `eventsBetween` and `sinceOf` compare with (built only when a snapshot changed). */
export const observedOf = (kept: Kept): Observed => {
  const components: Record<string, Timestamp> = {}
  for (const c of kept.components) if (c.since !== null) components[c.id] = c.since
  return { snapshot: kept, since: { source: kept.since, components } }
}

/** A stable id for one observed change, so that the same change seen twice gets the same id. */
const eventId = (parts: ReadonlyArray<string | number | null>): string =>
  createHash("sha256").update(parts.join("\u0000")).digest("base64url").slice(0, 22)

/**
 * What of a snapshot makes a change (not its wording or warnings), hashed: a shard keeps one per
 * source, so it is a short digest rather than the string itself.
 */
export const fingerprint = (snapshot: Snapshot): string =>
  createHash("sha1").update(JSON.stringify([
    snapshot.status,
    snapshot.components.map((c) => [c.id, c.status, c.name, c.parent_id]),
    snapshot.incidents.map((i) => [i.id, i.status, i.impact, i.update_count, i.resolved_at]),
    snapshot.maintenances.map((m) => [m.id, m.status, m.scheduled_for, m.scheduled_until]),
    snapshot.regions.map((r) => [r.region, r.status])
  ])).digest("base64")

/** The `since` of `next`: unchanged statuses keep theirs, changed and new ones start at `at`. */
export const sinceOf = (previous: Observed | undefined, next: Snapshot, at: Date): Since => {
  const timestamp = at.toISOString()
  if (!previous) {
    return { source: timestamp, components: Object.fromEntries(next.components.map((c) => [c.id, timestamp])) }
  }
  const before = new Map(previous.snapshot.components.map((c) => [c.id, c.status]))
  return {
    source: previous.snapshot.status === next.status ? previous.since.source : timestamp,
    components: Object.fromEntries(next.components.map((c) => [
      c.id,
      before.get(c.id) === c.status ? previous.since.components[c.id] ?? timestamp : timestamp
    ]))
  }
}

/**
 * What a check observed: the events since the previous observation and the new observation. The
 * first observation of a source (no previous) yields no events: it is what the source already was.
 */
export const observe = (
  source: SourceRef,
  previous: Observed | undefined,
  next: Snapshot,
  at: Date
): { readonly events: Array<StatusEvent>; readonly observation: Observation } => ({
  events: previous ? eventsBetween(source, previous, next, at) : [],
  observation: { snapshot: next, since: sinceOf(previous, next, at) }
})

/**
 * The events between two observations of one source: status changes of the
 * source and of each component (with the open incident affecting it), and
 * incident and maintenance lifecycle. Ids depend on what changed, never on
 * when it was observed: status changes on the subject, both statuses and when
 * the previous one began; incidents and maintenances on the provider's id and
 * lifecycle step (status, update count).
 */
export const eventsBetween = (
  source: SourceRef,
  observed: Observed,
  next: Snapshot,
  at: Date
): Array<StatusEvent> => {
  const previous = observed.snapshot
  const timestamp = at.toISOString()
  const ref = { key: source.key, name: source.name }
  const events: Array<StatusEvent> = []
  const prevOpenIds = new Set(previous.incidents.filter((i) => i.resolved_at === null).map((i) => i.id))

  if (previous.status !== next.status) {
    events.push({
      id: eventId([source.key, "source", previous.status, next.status, observed.since.source]),
      type: "source.status_changed",
      timestamp,
      source: ref,
      previous_status: previous.status,
      current_status: next.status
    })
  }

  const before = new Map(previous.components.map((c) => [c.id, c]))
  for (const c of next.components) {
    const old = before.get(c.id)
    if (!old || old.status === c.status) continue
    const related = next.incidents.find((i) => i.components.includes(c.id) && i.resolved_at === null) ??
      next.incidents.find((i) => i.components.includes(c.id))
    events.push({
      id: eventId([source.key, "component", c.id, old.status, c.status, observed.since.components[c.id] ?? null]),
      type: "component.status_changed",
      timestamp,
      source: ref,
      component: { id: c.id, name: c.name, previous_status: old.status, current_status: c.status },
      ...(related ? { incident: incidentOf(related) } : {})
    })
  }

  const prevIncidents = new Map(previous.incidents.map((i) => [i.id, i]))
  for (const i of next.incidents) {
    const old = prevIncidents.get(i.id)
    let type: StatusEvent["type"] | undefined
    if (!old) type = i.resolved_at === null ? "incident.created" : undefined
    else if (i.resolved_at !== null && old.resolved_at === null) type = "incident.resolved"
    else if (old.update_count !== i.update_count || old.status !== i.status || old.impact !== i.impact) {
      type = "incident.updated"
    }
    if (type) {
      events.push({
        id: eventId([source.key, type, i.id, i.status, i.update_count]),
        type,
        timestamp,
        source: ref,
        incident: incidentOf(i)
      })
    }
  }
  // An open incident that disappeared from the feed (providers drop resolved ones) is resolved.
  for (const id of prevOpenIds) {
    if (next.incidents.some((i) => i.id === id)) continue
    const old = prevIncidents.get(id)!
    events.push({
      id: eventId([source.key, "incident.resolved", id, "gone"]),
      type: "incident.resolved",
      timestamp,
      source: ref,
      incident: { ...incidentOf(old), status: "resolved", resolved_at: timestamp }
    })
  }

  const prevMaint = new Map(previous.maintenances.map((m) => [m.id, m]))
  for (const m of next.maintenances) {
    const old = prevMaint.get(m.id)
    const active = m.status === "in_progress" || m.status === "verifying"
    const wasActive = old !== undefined && (old.status === "in_progress" || old.status === "verifying")
    const type: StatusEvent["type"] | undefined = !old
      ? active ? "maintenance.started" : m.status === "scheduled" ? "maintenance.scheduled" : undefined
      : active && !wasActive
      ? "maintenance.started"
      : m.status === "completed" && old.status !== "completed"
      ? "maintenance.completed"
      : undefined
    if (type) {
      events.push({
        id: eventId([source.key, type, m.id, m.status]),
        type,
        timestamp,
        source: ref,
        maintenance: maintenanceOf(m)
      })
    }
  }
  for (const [id, old] of prevMaint) {
    const wasActive = old.status === "in_progress" || old.status === "verifying"
    if (wasActive && !next.maintenances.some((m) => m.id === id)) {
      events.push({
        id: eventId([source.key, "maintenance.completed", id, "gone"]),
        type: "maintenance.completed",
        timestamp,
        source: ref,
        maintenance: { ...maintenanceOf(old), status: "completed" }
      })
    }
  }
  return events
}
