import type { MonitorEvent, StatusEvent } from "../domain/Event.ts"
import type { MonitorState } from "../domain/Monitor.ts"
import type { StatusTransitionRow } from "../domain/StatusTransition.ts"

/**
 * The `status_transitions` rows of a source check: one per
 * `source.status_changed` and `component.status_changed` event, with its id,
 * so rows and events describe the same changes.
 */
export const sourceTransitions = (events: ReadonlyArray<StatusEvent>): Array<StatusTransitionRow> => {
  const rows: Array<StatusTransitionRow> = []
  for (const event of events) {
    if (event.type === "source.status_changed" && event.previous_status !== undefined && event.current_status !== undefined) {
      rows.push({
        changed_at: event.timestamp,
        subject_kind: "source",
        subject_id: event.source.key,
        component_id: "",
        previous_status: event.previous_status,
        status: event.current_status,
        incident_id: "",
        event_id: event.id
      })
    } else if (event.type === "component.status_changed" && event.component !== undefined) {
      rows.push({
        changed_at: event.timestamp,
        subject_kind: "source",
        subject_id: event.source.key,
        component_id: event.component.id,
        previous_status: event.component.previous_status,
        status: event.component.current_status,
        incident_id: event.incident?.id ?? "",
        event_id: event.id
      })
    }
  }
  return rows
}

/**
 * The `status_transitions` row of a monitor check whose state changed (none
 * otherwise), with the id of the event announcing it (`monitor.down`,
 * `.degraded`, `.recovered`); a change without one (pending → up) has "".
 */
export const monitorTransitions = (
  monitorId: string,
  previous: MonitorState,
  next: MonitorState,
  events: ReadonlyArray<MonitorEvent>,
  at: string
): Array<StatusTransitionRow> => {
  if (previous === next) return []
  const event = events.find((e) => e.type !== "monitor.ssl_expiring" && e.current_state === next)
  return [{
    changed_at: at,
    subject_kind: "monitor",
    subject_id: monitorId,
    component_id: "",
    previous_status: previous,
    status: next,
    incident_id: "",
    event_id: event?.id ?? ""
  }]
}
