import { Schema } from "effect"
import { NotificationPayload } from "../domain/Channel.ts"
import { AlertLevel, type RuleTemplate } from "../domain/Rule.ts"
import { type Candidate, compareLevels } from "./Candidate.ts"
import { Message } from "./Sender.ts"
import { formatDuration, renderTemplate, statusEmoji, templateVars } from "./template.ts"

/** Where a candidate sits in one organization: the stack it is shown in (if any) and its component or monitor. */
export interface Placement {
  readonly organization_slug: string
  readonly stack_id: string | null
  readonly stack_name: string
  readonly stack_slug: string
  /** The component's uuid (component and incident events placed through a component). */
  readonly component_uuid: string | null
}

/** Links into the dashboard (the portal serves these paths). */
export const links = (publicUrl: string, organizationSlug: string) => {
  const base = `${publicUrl.replace(/\/$/, "")}/dashboard/${encodeURIComponent(organizationSlug)}`
  return {
    dashboard: base,
    stack: (slug: string) => `${base}/stacks/${encodeURIComponent(slug)}`,
    monitor: (id: string) => `${base}/monitors/${encodeURIComponent(id)}`
  }
}

const noStack = { id: "", name: "", slug: "" }

/** The webhook payload of a candidate in one placement: its documented fields, plus `source`, `monitor` and incident details. */
export const payloadOf = (candidate: Candidate, placement: Placement): NotificationPayload => {
  const stack = placement.stack_id === null ? noStack : { id: placement.stack_id, name: placement.stack_name, slug: placement.stack_slug }
  switch (candidate.kind) {
    case "component": {
      const e = candidate.event
      return {
        event: "component.status_changed",
        timestamp: e.timestamp,
        stack,
        component: { ...e.component, id: placement.component_uuid ?? e.component.id },
        incident: e.incident === undefined
          ? { id: "", created_at: e.timestamp, resolved_at: null }
          : { ...e.incident },
        source: e.source
      }
    }
    case "incident": {
      const e = candidate.event
      return {
        event: e.type,
        timestamp: e.timestamp,
        stack,
        component: { id: placement.component_uuid ?? e.source.key, name: e.source.name, previous_status: "", current_status: e.incident.status },
        incident: { ...e.incident },
        source: e.source
      }
    }
    case "source": {
      const e = candidate.event
      return {
        event: "source.status_changed",
        timestamp: e.timestamp,
        stack,
        component: { id: e.source.key, name: e.source.name, previous_status: e.previous_status, current_status: e.current_status },
        incident: { id: "", created_at: e.timestamp, resolved_at: null },
        source: e.source
      }
    }
    case "crowd": {
      const e = candidate.event
      return {
        event: e.type,
        timestamp: e.timestamp,
        stack,
        component: { id: e.source.key, name: e.source.name, previous_status: e.crowd.official_status, current_status: "users_report_problems" },
        incident: { id: "", created_at: e.crowd.started_at, resolved_at: null },
        source: e.source,
        crowd: {
          signal_id: e.crowd.signal_id,
          confidence: e.crowd.confidence,
          peak_confidence: e.crowd.peak_confidence,
          reason: e.crowd.reason,
          started_at: e.crowd.started_at,
          official_status: e.crowd.official_status
        }
      }
    }
    case "monitor": {
      const e = candidate.event
      const since = e.duration_ms === undefined || e.duration_ms === null
        ? e.timestamp
        : new Date(Date.parse(e.timestamp) - e.duration_ms).toISOString()
      return {
        event: e.type,
        timestamp: e.timestamp,
        stack,
        component: { id: e.monitor.id, name: e.monitor.name, previous_status: e.previous_state, current_status: e.current_state },
        incident: { id: "", created_at: since, resolved_at: e.type === "monitor.recovered" ? e.timestamp : null },
        monitor: {
          ...e.monitor,
          error: e.error,
          http_status: e.http_status,
          response_time_ms: e.response_time_ms,
          ...(e.ssl === undefined ? {} : { ssl_days_left: e.ssl.days_left })
        }
      }
    }
  }
}

const durationOf = (payload: NotificationPayload): string => {
  const start = Date.parse(payload.incident.created_at)
  const end = Date.parse(payload.incident.resolved_at ?? payload.timestamp)
  return Number.isNaN(start) || Number.isNaN(end) || end < start ? "" : formatDuration(end - start)
}

/** The default words of a candidate (title and text), before any rule template. */
const defaultWords = (candidate: Candidate, payload: NotificationPayload): { title: string; text: string } => {
  const where = payload.stack.name === "" ? "" : ` in ${payload.stack.name}`
  switch (candidate.kind) {
    case "component": {
      const { component, incident } = candidate.event
      const lines = [`${component.name}${where}: ${component.previous_status} → ${component.current_status}.`]
      if (incident !== undefined) lines.push(`Incident: ${incident.title} (${incident.status}).`)
      if (candidate.recovery && incident?.created_at !== undefined) lines.push(`Duration: ${durationOf(payload)}.`)
      return {
        title: `${statusEmoji(component.current_status)} ${component.name} is ${component.current_status} (was ${component.previous_status})`,
        text: lines.join("\n")
      }
    }
    case "incident": {
      const { incident, source } = candidate.event
      const verb = candidate.trigger === "incident.created" ? "New incident" : candidate.trigger === "incident.resolved" ? "Resolved" : "Incident update"
      const emoji = candidate.trigger === "incident.resolved" ? "🟢" : candidate.level === "critical" ? "🔴" : candidate.level === "degraded" ? "🟡" : "🔵"
      const lines = [`${source.name}${where}: ${incident.title}.`, `Status ${incident.status}, impact ${incident.impact}, ${incident.update_count} update(s).`]
      if (candidate.recovery) lines.push(`Duration: ${durationOf(payload)}.`)
      return { title: `${emoji} ${verb} at ${source.name}: ${incident.title}`, text: lines.join("\n") }
    }
    case "source": {
      const { current_status, previous_status, source } = candidate.event
      return {
        title: `${statusEmoji(current_status)} ${source.name} is ${current_status} (was ${previous_status})`,
        text: `${source.name}${where}: ${previous_status} → ${current_status}.`
      }
    }
    case "crowd": {
      const { source, crowd } = candidate.event
      return {
        title: `🟣 Users report problems with ${source.name} (${crowd.confidence} % confidence)`,
        text: `${source.name}${where}: ${crowd.reason} The official status is ${crowd.official_status}: statusgrid users, not ${source.name}, say so.`
      }
    }
    case "monitor": {
      const e = candidate.event
      const name = e.monitor.name
      const answer = e.http_status > 0 ? `HTTP ${e.http_status}, ${e.response_time_ms} ms` : "no response"
      if (e.type === "monitor.ssl_expiring") {
        return {
          title: `🟡 ${name}: TLS certificate expires in ${e.ssl?.days_left ?? "?"} days`,
          text: `${e.monitor.url}${where}: the certificate (${e.ssl?.subject ?? ""}, issued by ${e.ssl?.issuer ?? ""}) is valid until ${e.ssl?.valid_to ?? "?"}.`
        }
      }
      if (e.type === "monitor.recovered") {
        return {
          title: `🟢 ${name} is up again`,
          text: `${e.monitor.url}${where}: ${e.previous_state} → up (${answer}). Duration: ${durationOf(payload)}.`
        }
      }
      return {
        title: `${statusEmoji(e.current_state)} ${name} is ${e.current_state}`,
        text: `${e.monitor.url}${where}: ${e.error === "" ? e.current_state : e.error} (${answer}).`
      }
    }
  }
}

/**
 * The message of a candidate for one rule: the default words, or the rule's
 * template rendered with every placeholder's value (`vars` keeps the values
 * that are not in the payload for the senders' own templates).
 */
export const messageOf = (
  candidate: Candidate,
  payload: NotificationPayload,
  url: string,
  template: RuleTemplate | null
): Message => {
  const words = defaultWords(candidate, payload)
  const incident = candidate.kind === "monitor" || candidate.kind === "crowd" ? undefined : candidate.event.incident
  const base: Message = {
    event: payload.event,
    ...words,
    url,
    level: candidate.level,
    payload,
    vars: {
      duration: durationOf(payload),
      incident_title: incident?.title ?? "",
      incident_update_count: incident === undefined ? "" : String(incident.update_count),
      status: candidate.kind === "incident" ? candidate.event.incident.status : payload.component.current_status
    }
  }
  return template === null ? base : applyTemplate(base, template)
}

/** A rule's template applied: the subject (when given) is the title, the body the text. */
export const applyTemplate = (message: Message, template: RuleTemplate): Message => {
  const vars = templateVars(message)
  return {
    ...message,
    title: template.subject === undefined ? message.title : renderTemplate(template.subject, vars),
    text: renderTemplate(template.body, vars)
  }
}

/** One grouped item: an alert that waited in a stack's window. */
export const GroupItem = Schema.Struct({
  event_id: Schema.String,
  trigger: Schema.String,
  level: AlertLevel,
  subject: Schema.String,
  payload: NotificationPayload,
  message: Message
})
export type GroupItem = typeof GroupItem.Type

/**
 * The one alert of a stack's window: titled by the count and the worst level,
 * the text one line per change, the payload the most severe change's with
 * `event: "group"` and every change under `changes`.
 */
export const groupMessage = (items: ReadonlyArray<GroupItem>, stack: { readonly name: string }, url: string): Message => {
  const worst = items.reduce((a, b) => (compareLevels(b.level, a.level) > 0 ? b : a))
  const emoji = worst.level === "critical" ? "🔴" : worst.level === "degraded" ? "🟡" : "🟢"
  const payload: NotificationPayload = {
    ...worst.payload,
    event: "group",
    changes: items.map((i) => ({ event: i.payload.event, timestamp: i.payload.timestamp, component: i.payload.component }))
  }
  return {
    event: "group",
    title: `${emoji} ${items.length} changes in ${stack.name}`,
    text: items.map((i) => i.message.title).join("\n"),
    url,
    level: worst.level,
    payload,
    vars: worst.message.vars ?? {}
  }
}

/** An escalation step's copy of an alert's message. */
export const escalationMessage = (message: Message, step: number): Message => ({
  ...message,
  title: `[Escalation ${step}] ${message.title}`,
  text: `Not acknowledged yet.\n${message.text}`
})

/** The message with the link that acknowledges its alert. */
export const withAckLink = (message: Message, ackUrl: string): Message => ({
  ...message,
  text: `${message.text}\nAcknowledge: ${ackUrl}`
})
