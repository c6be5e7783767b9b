import { Schema } from "effect"

// What a delivery carries: the spec's webhook payload.

/** The spec's webhook payload (Webhook payload): the body of every delivery in the outbox. */
export const NotificationPayload = Schema.Struct({
  event: Schema.String,
  timestamp: Schema.String.annotate({ format: "date-time" }),
  stack: Schema.Struct({ id: Schema.String, name: Schema.String, slug: Schema.String }),
  component: Schema.Struct({ id: Schema.String, name: Schema.String, previous_status: Schema.String, current_status: Schema.String }),
  incident: Schema.Struct({
    id: Schema.String,
    created_at: Schema.String.annotate({ format: "date-time" }),
    resolved_at: Schema.NullOr(Schema.String.annotate({ format: "date-time" })),
    /** Beyond the spec's payload: the incident's words and progress, when there is an incident. */
    title: Schema.optionalKey(Schema.String),
    status: Schema.optionalKey(Schema.String),
    impact: Schema.optionalKey(Schema.String),
    update_count: Schema.optionalKey(Schema.Number)
  }),
  /** Beyond the spec: the external service the component or incident belongs to. */
  source: Schema.optionalKey(Schema.Struct({ key: Schema.String, name: Schema.String })),
  /** Beyond the spec: monitor events (`monitor.*`); `component` then describes the monitor too. */
  monitor: Schema.optionalKey(Schema.Struct({
    id: Schema.String,
    name: Schema.String,
    url: Schema.String,
    error: Schema.String,
    http_status: Schema.Number,
    response_time_ms: Schema.Number,
    ssl_days_left: Schema.optionalKey(Schema.Number)
  })),
  /** Beyond the spec: the crowd's signal (`crowd.signal_started`, `crowd.signal_rose`); `component` then describes the source. */
  crowd: Schema.optionalKey(Schema.Struct({
    signal_id: Schema.String,
    confidence: Schema.Number,
    peak_confidence: Schema.Number,
    reason: Schema.String,
    started_at: Schema.String,
    official_status: Schema.String
  })),
  /** Beyond the spec: a grouped alert (`event: "group"`) lists every change of the window; `component` is the most severe. */
  changes: Schema.optionalKey(Schema.Array(Schema.Struct({
    event: Schema.String,
    timestamp: Schema.String,
    component: Schema.Struct({ id: Schema.String, name: Schema.String, previous_status: Schema.String, current_status: Schema.String })
  })))
}).annotate({ identifier: "NotificationPayload" })
export type NotificationPayload = typeof NotificationPayload.Type

/** Ids of the sample records of a test notification: recognisably not real. */
export const sampleId = "00000000-0000-0000-0000-000000000000"

/** The payload of a test notification: event `test`, a sample stack, component and open incident. */
export const testPayload = (now: Date): NotificationPayload => ({
  event: "test",
  timestamp: now.toISOString(),
  stack: { id: sampleId, name: "Example stack", slug: "example-stack" },
  component: { id: sampleId, name: "Example component", previous_status: "operational", current_status: "degraded" },
  incident: { id: sampleId, created_at: now.toISOString(), resolved_at: null }
})
