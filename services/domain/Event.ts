import { Schema } from "effect"
import { MonitorState } from "./Monitor.ts"

/** Event types on the event stream (`sg:events`); the notifier matches rules against them. */
export const EventType = Schema.Literals([
  "source.status_changed",
  "component.status_changed",
  "incident.created",
  "incident.updated",
  "incident.resolved",
  "maintenance.scheduled",
  "maintenance.started",
  "maintenance.completed"
])
export type EventType = typeof EventType.Type

export const StatusEvent = Schema.Struct({
  /**
   * Same change, same id: consumers de-duplicate on it (two runners may observe one change during a
   * hand-over, a process before and after a restart). Decision 0005 says what the ids hash.
   */
  id: Schema.String,
  type: EventType,
  timestamp: Schema.String,
  source: Schema.Struct({ key: Schema.String, name: Schema.String }),
  /** source.status_changed and component.status_changed */
  previous_status: Schema.optional(Schema.String),
  current_status: Schema.optional(Schema.String),
  component: Schema.optional(Schema.Struct({
    id: Schema.String,
    name: Schema.String,
    previous_status: Schema.String,
    current_status: Schema.String
  })),
  incident: Schema.optional(Schema.Struct({
    id: Schema.String,
    title: Schema.String,
    status: Schema.String,
    impact: Schema.String,
    created_at: Schema.String,
    resolved_at: Schema.NullOr(Schema.String),
    update_count: Schema.Number,
    /** Ids of the components the incident affects (the source's own ids, as `component.id`); absent or empty: not said. */
    components: Schema.optional(Schema.Array(Schema.String))
  })),
  maintenance: Schema.optional(Schema.Struct({
    id: Schema.String,
    title: Schema.String,
    status: Schema.String,
    scheduled_for: Schema.String,
    scheduled_until: Schema.NullOr(Schema.String)
  }))
})
export type StatusEvent = typeof StatusEvent.Type

/** Event types of website monitors (services/monitors/README.md has the state table). */
export const MonitorEventType = Schema.Literals([
  "monitor.down",
  "monitor.degraded",
  "monitor.recovered",
  "monitor.ssl_expiring"
])
export type MonitorEventType = typeof MonitorEventType.Type

/** A website monitor's event; `id`, `type` and `timestamp` mean what they mean in `StatusEvent`. */
export const MonitorEvent = Schema.Struct({
  /** Same monitor, same transition out of a state begun at the same time: same id, whichever check saw it. */
  id: Schema.String,
  type: MonitorEventType,
  timestamp: Schema.String,
  monitor: Schema.Struct({ id: Schema.String, name: Schema.String, url: Schema.String }),
  previous_state: MonitorState,
  current_state: MonitorState,
  /** The check's error ("expected 200-299, got 503"); "" when it succeeded. */
  error: Schema.String,
  /** 0 when there was no response. */
  http_status: Schema.Number,
  response_time_ms: Schema.Number,
  /** monitor.recovered: how long the monitor was in previous_state; null when unknown. */
  duration_ms: Schema.optional(Schema.NullOr(Schema.Number)),
  /** monitor.ssl_expiring */
  ssl: Schema.optional(Schema.Struct({
    threshold_days: Schema.Number,
    days_left: Schema.Number,
    valid_to: Schema.String,
    issuer: Schema.String,
    subject: Schema.String
  }))
})
export type MonitorEvent = typeof MonitorEvent.Type

/** Event types of the crowd's signal (services/crowd/README.md, decision 0015). */
export const CrowdEventType = Schema.Literals(["crowd.signal_started", "crowd.signal_rose", "crowd.signal_ended"])
export type CrowdEventType = typeof CrowdEventType.Type

/**
 * The crowd's signal on a source started or ended: users report problems the
 * official status may not show. It never changes the source's status. `id`
 * is the signal's id with the type (one event per start and per end; a
 * `crowd.signal_rose` when an open signal's peak first reaches another tenth:
 * 80, 90 or 100 %, so rules with a higher minimum confidence hear of it).
 */
export const CrowdEvent = Schema.Struct({
  id: Schema.String,
  type: CrowdEventType,
  timestamp: Schema.String,
  source: Schema.Struct({ key: Schema.String, name: Schema.String }),
  crowd: Schema.Struct({
    signal_id: Schema.String,
    /** The score now: at the start, the one that crossed the threshold; at the end, the one below it. */
    confidence: Schema.Number,
    /** The highest confidence while the signal was on. */
    peak_confidence: Schema.Number,
    /** crowd.signal_rose: the peak before this rise; null otherwise. */
    previous_peak: Schema.NullOr(Schema.Number),
    reason: Schema.String,
    started_at: Schema.String,
    ended_at: Schema.NullOr(Schema.String),
    /** The source's official status when the event was written. */
    official_status: Schema.String
  })
})
export type CrowdEvent = typeof CrowdEvent.Type

/** Everything on the event stream; the notifier tells them apart by `type` (or by `source`, `monitor`, `crowd`). */
export const StreamEvent = Schema.Union([StatusEvent, MonitorEvent, CrowdEvent])
export type StreamEvent = typeof StreamEvent.Type

/** A delta message on `sg:deltas`: a source's new status. */
export const SourceDelta = Schema.Struct({
  kind: Schema.Literal("source"),
  key: Schema.String,
  status: Schema.String,
  previous_status: Schema.NullOr(Schema.String),
  components: Schema.Array(Schema.Struct({ id: Schema.String, status: Schema.String })),
  /** Ids of the events written to `sg:events` with this change. */
  events: Schema.Array(Schema.String),
  /**
   * true when the change opened, updated or resolved an incident or a maintenance (its events say
   * so): live pages read their incident lists again at once, whatever the statuses did. Absent: no.
   */
  incidents: Schema.optional(Schema.Boolean),
  at: Schema.String
})
export type SourceDelta = typeof SourceDelta.Type

/** A delta message on `sg:deltas` for a website monitor whose state changed. */
export const MonitorDelta = Schema.Struct({
  kind: Schema.Literal("monitor"),
  id: Schema.String,
  organization_id: Schema.String,
  state: MonitorState,
  previous_state: MonitorState,
  events: Schema.Array(Schema.String),
  at: Schema.String
})
export type MonitorDelta = typeof MonitorDelta.Type

/**
 * A delta message on `sg:deltas` when a source's crowd signal starts (`signal`) or ends (null):
 * live pages show or drop the "users report problems" marker (services/crowd). It says nothing of
 * the official status.
 */
export const CrowdDelta = Schema.Struct({
  kind: Schema.Literal("crowd"),
  key: Schema.String,
  signal: Schema.NullOr(Schema.Struct({ id: Schema.String, started_at: Schema.String, peak_confidence: Schema.Number })),
  at: Schema.String
})
export type CrowdDelta = typeof CrowdDelta.Type

/** Everything on `sg:deltas`, told apart by `kind`. */
export const Delta = Schema.Union([SourceDelta, MonitorDelta, CrowdDelta])
export type Delta = typeof Delta.Type

/** Decodes the JSON text of an `sg:events` entry's `payload` field (compiled once). */
export const decodeStreamEvent = Schema.decodeUnknownResult(Schema.fromJsonString(StreamEvent))

/** Decodes the JSON text of an `sg:deltas` message (compiled once). */
export const decodeDelta = Schema.decodeUnknownResult(Schema.fromJsonString(Delta))
