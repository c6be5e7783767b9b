import type { CrowdEvent, MonitorEvent, StatusEvent, StreamEvent } from "../domain/Event.ts"
import type { AlertLevel, Trigger } from "../domain/Rule.ts"

/**
 * What one event on the stream means to notification rules: the trigger it
 * fires, its alert level, and what it is about (services/notifier/README.md,
 * "Rules engine" has the tables).
 */
export type Candidate =
  | {
    readonly kind: "component"
    readonly event: StatusEvent & { readonly component: NonNullable<StatusEvent["component"]> }
    readonly trigger: Trigger
    readonly level: AlertLevel
    /** What the cooldown compares: a second alert within it needs a different status. */
    readonly status: string
    /** The subject is back to normal: open escalations about it stop. */
    readonly recovery: boolean
  }
  | {
    readonly kind: "incident"
    readonly event: StatusEvent & { readonly incident: NonNullable<StatusEvent["incident"]> }
    readonly trigger: Trigger
    readonly level: AlertLevel
    readonly status: string
    readonly recovery: boolean
  }
  | {
    /** A source's own status (sources without components: health checks, feeds, manual custom sources). */
    readonly kind: "source"
    readonly event: StatusEvent & { readonly previous_status: string; readonly current_status: string }
    readonly trigger: Trigger
    readonly level: AlertLevel
    readonly status: string
    readonly recovery: boolean
  }
  | {
    /** The crowd's signal on a source started or rose (services/crowd, decision 0015): users report problems. */
    readonly kind: "crowd"
    readonly event: CrowdEvent
    readonly trigger: Trigger
    readonly level: AlertLevel
    readonly status: string
    readonly recovery: boolean
  }
  | {
    readonly kind: "monitor"
    readonly event: MonitorEvent
    readonly trigger: Trigger
    readonly level: AlertLevel
    readonly status: string
    readonly recovery: boolean
  }

/**
 * The rule trigger a component status change fires, if any.
 * A source's own status uses the same triggers: its `down` is `component.critical`.
 */
export const componentTrigger = (previous: string, current: string): Trigger | undefined =>
  current === "critical" || current === "down" ? "component.critical"
  : current === "degraded" ? "component.degraded"
  : current === "maintenance" ? "component.maintenance"
  : current === "operational" && previous !== "operational" ? "component.recovered"
  : undefined

/** Component triggers: critical is critical, degraded is degraded, recovering and maintenance are information. */
const componentLevel = (trigger: Trigger): AlertLevel =>
  trigger === "component.critical" ? "critical" : trigger === "component.degraded" ? "degraded" : "info"

/** An incident's level from its impact (Statuspage's scale); a resolution is information. */
export const incidentLevel = (impact: string, resolved: boolean): AlertLevel =>
  resolved ? "info" : impact === "critical" || impact === "major" ? "critical" : impact === "minor" ? "degraded" : "info"

/** Monitor events: down is critical, degraded and an expiring certificate are degraded, recovery is information. */
const monitorLevel: Readonly<Record<MonitorEvent["type"], AlertLevel>> = {
  "monitor.down": "critical",
  "monitor.degraded": "degraded",
  "monitor.ssl_expiring": "degraded",
  "monitor.recovered": "info"
}

const isMonitorEvent = (event: StreamEvent): event is MonitorEvent => "monitor" in event
const isCrowdEvent = (event: StreamEvent): event is CrowdEvent => "crowd" in event

/**
 * The candidate alert of an event, or undefined for events no rule can
 * trigger on (maintenance). A source's own status change is a candidate; the
 * matcher places it only for sources without components (whose components'
 * changes speak for them otherwise).
 */
export const candidateOf = (event: StreamEvent): Candidate | undefined => {
  if (isCrowdEvent(event)) {
    // A start or a rise is a warning (users, not the provider, say so); the end is not sent (it stops nothing either).
    if (event.type === "crowd.signal_ended") return undefined
    return { kind: "crowd", event, trigger: "crowd.signal", level: "degraded", status: `signal:${event.crowd.signal_id}`, recovery: false }
  }
  if (isMonitorEvent(event)) {
    return {
      kind: "monitor",
      event,
      trigger: event.type,
      level: monitorLevel[event.type],
      status: event.type === "monitor.ssl_expiring" ? `ssl:${event.ssl?.days_left ?? ""}` : event.current_state,
      recovery: event.type === "monitor.recovered"
    }
  }
  if (event.type === "component.status_changed" && event.component !== undefined) {
    const { component } = event
    const trigger = componentTrigger(component.previous_status, component.current_status)
    if (trigger === undefined) return undefined
    return {
      kind: "component",
      event: { ...event, component },
      trigger,
      level: componentLevel(trigger),
      status: component.current_status,
      recovery: trigger === "component.recovered"
    }
  }
  if (event.type === "source.status_changed" && event.previous_status !== undefined && event.current_status !== undefined) {
    const { previous_status, current_status } = event
    const trigger = componentTrigger(previous_status, current_status)
    if (trigger === undefined) return undefined
    return {
      kind: "source",
      event: { ...event, previous_status, current_status },
      trigger,
      level: componentLevel(trigger),
      status: current_status,
      recovery: trigger === "component.recovered"
    }
  }
  if (
    (event.type === "incident.created" || event.type === "incident.updated" || event.type === "incident.resolved") &&
    event.incident !== undefined
  ) {
    const { incident } = event
    const resolved = event.type === "incident.resolved"
    return {
      kind: "incident",
      event: { ...event, incident },
      trigger: event.type,
      level: incidentLevel(incident.impact, resolved),
      status: `${incident.status}:${incident.impact}`,
      recovery: resolved
    }
  }
  return undefined
}

/** The subject of a candidate, as stored in `alerts.subject` and `rule_subject_state`. */
export const subjectOf = (candidate: Candidate, componentUuid: string | null): string =>
  candidate.kind === "monitor" ? `monitor:${candidate.event.monitor.id}`
  : candidate.kind === "incident" ? `incident:${candidate.event.source.key}:${candidate.event.incident.id}`
  : candidate.kind === "source" ? `source:${candidate.event.source.key}`
  : candidate.kind === "crowd" ? `crowd:${candidate.event.source.key}`
  : `component:${componentUuid ?? `${candidate.event.source.key}:${candidate.event.component.id}`}`

const severity: Readonly<Record<AlertLevel, number>> = { critical: 3, degraded: 2, info: 1 }

/** Orders levels: positive when `a` is more severe than `b`. */
export const compareLevels = (a: AlertLevel, b: AlertLevel): number => severity[a] - severity[b]
