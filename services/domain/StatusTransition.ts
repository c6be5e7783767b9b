import { Schema } from "effect"

/**
 * One change of status of a source, a component or a website monitor, as
 * written to ClickHouse `status_transitions` (migrations/clickhouse/0001):
 * the analytics' record of when each subject changed, one row per change.
 */
export const StatusTransitionRow = Schema.Struct({
  /** ISO 8601 UTC with milliseconds: the check that saw the change */
  changed_at: Schema.String,
  subject_kind: Schema.Literals(["source", "monitor"]),
  /** source key or monitor id */
  subject_id: Schema.String,
  /** "" for the subject as a whole, else the component's provider id */
  component_id: Schema.String,
  previous_status: Schema.String,
  status: Schema.String,
  /** the open incident affecting a component, "" when none */
  incident_id: Schema.String,
  /** the id of the event published for this change (`sg:events`), "" when the change has none */
  event_id: Schema.String
})
export type StatusTransitionRow = typeof StatusTransitionRow.Type
