import { Schema } from "effect"

/** A source's overall status. */
export const SourceStatus = Schema.Literals(["operational", "degraded", "down", "maintenance"])
export type SourceStatus = typeof SourceStatus.Type

/** A component's status, as in triggers and webhook payloads. */
export const ComponentStatus = Schema.Literals(["operational", "degraded", "critical", "maintenance"])
export type ComponentStatus = typeof ComponentStatus.Type

/** A website monitor's state; `pending` until its first check. */
export const MonitorState = Schema.Literals(["pending", "up", "degraded", "down", "paused"])
export type MonitorState = typeof MonitorState.Type

export const IncidentStatus = Schema.Literals(["investigating", "identified", "monitoring", "resolved", "postmortem"])
export type IncidentStatus = typeof IncidentStatus.Type

export const IncidentImpact = Schema.Literals(["none", "minor", "major", "critical", "maintenance"])
export type IncidentImpact = typeof IncidentImpact.Type
