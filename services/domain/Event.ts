import { Schema } from "effect"

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
  /** Same change, same id: consumers de-duplicate on it (two runners may observe one change during a hand-over). */
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
    update_count: Schema.Number
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
