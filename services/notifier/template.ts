import { renderTemplate, templatePlaceholders } from "../domain/Channel.ts"
import type { Message } from "./Sender.ts"

/**
 * Custom templates of notification rules: `{name}`
 * placeholders replaced by the values of one message.
 */

export type TemplatePlaceholder = (typeof templatePlaceholders)[number]
export type TemplateVars = Readonly<Record<TemplatePlaceholder, string>>

/** Rendering is the domain's, shared with the portal's rule editor preview. */
export { renderTemplate }

const emojis: Readonly<Record<string, string>> = {
  operational: "🟢",
  up: "🟢",
  degraded: "🟡",
  critical: "🔴",
  down: "🔴",
  maintenance: "🔧",
  paused: "⏸️",
  pending: "⚪"
}

/** The emoji of a component status or monitor state; ⚪ for anything else. */
export const statusEmoji = (status: string): string => emojis[status] ?? "⚪"

/** "45s", "12m 5s", "2h 5m", "3d": the largest unit and the next one when not zero. */
export const formatDuration = (ms: number): string => {
  let rest = Math.max(0, Math.round(ms / 1000))
  const counts = ([["d", 86_400], ["h", 3_600], ["m", 60], ["s", 1]] as const).map(([unit, size]) => {
    const n = Math.floor(rest / size)
    rest -= n * size
    return { unit, n }
  })
  const first = counts.findIndex((c) => c.n > 0)
  if (first === -1) return "0s"
  return counts.slice(first, first + 2).filter((c, i) => i === 0 || c.n > 0).map((c) => `${c.n}${c.unit}`).join(" ")
}

/** How long the payload's incident lasted (created to resolved) or has lasted (created to the event); "" when unknown. */
const incidentDuration = (message: Message): string => {
  const { incident, timestamp } = message.payload
  const start = Date.parse(incident.created_at)
  const end = Date.parse(incident.resolved_at ?? timestamp)
  return Number.isNaN(start) || Number.isNaN(end) || end < start ? "" : formatDuration(end - start)
}

/**
 * Values the notifier may add to a message beyond the payload (incident title
 * and update count are not in the webhook payload): read from an
 * optional `vars` record of strings on the message, ignored when malformed.
 */
const extraVars = (message: Message): Partial<Record<TemplatePlaceholder, string>> => {
  const vars: unknown = Reflect.get(message, "vars")
  if (typeof vars !== "object" || vars === null) return {}
  const out: Partial<Record<TemplatePlaceholder, string>> = {}
  for (const name of templatePlaceholders) {
    const value: unknown = Reflect.get(vars, name)
    if (typeof value === "string") out[name] = value
  }
  return out
}

/**
 * Every placeholder's value for `message`: from the payload, `duration` from
 * the incident's times, `stack_url` the message's link; `message.vars` (when
 * the notifier sets it) overrides any of them.
 */
export const templateVars = (message: Message): TemplateVars => {
  const { component, stack } = message.payload
  return {
    status_emoji: statusEmoji(component.current_status),
    component_name: component.name,
    status: component.current_status,
    stack_name: stack.name,
    previous_status: component.previous_status,
    current_status: component.current_status,
    duration: incidentDuration(message),
    incident_title: "",
    incident_update_count: "",
    stack_url: message.url,
    ...extraVars(message)
  }
}
