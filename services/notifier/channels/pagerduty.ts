import { Result } from "effect"
import type { PagerDutySettings } from "../../domain/Channel.ts"
import type { Message, Sender } from "../Sender.ts"
import { postJson } from "./http.ts"
import type { HttpOptions } from "./http.ts"
import { settingsOf } from "./settings.ts"
import { clip } from "./text.ts"

/**
 * PagerDuty Events API v2. One alert per component (or per incident for
 * incident events): triggers share a dedup_key, so repeats update the open
 * alert, and a recovery or resolution resolves it.
 */

export const defaultPagerDutyEventsUrl = "https://events.pagerduty.com/v2/enqueue"

/** PagerDuty's limits: summary 1,024 characters, dedup_key 255. */
const summaryMax = 1024
const dedupMax = 255

const recoveredStatuses: ReadonlySet<string> = new Set(["operational", "up"])

/** Whether the message ends the alert: a recovery, a resolved incident, or a component back to operational. */
export const isResolution = (message: Message): boolean =>
  message.event.endsWith(".recovered") ||
  message.event.endsWith(".resolved") ||
  (message.event.endsWith(".status_changed") && recoveredStatuses.has(message.payload.component.current_status))

/** Stable per component, or per incident for incident.* events; a test gets its own so it never resolves a real alert. */
export const dedupKey = (message: Message, idempotencyKey: string): string => {
  const { component, incident } = message.payload
  const key = message.event === "test"
    ? `statusgrid:test:${idempotencyKey}`
    : message.event.startsWith("incident.") && incident.id !== ""
    ? `statusgrid:incident:${incident.id}`
    : `statusgrid:component:${component.id}`
  return key.slice(0, dedupMax)
}

export const pagerDutyBody = (
  settings: typeof PagerDutySettings.Type,
  message: Message,
  idempotencyKey: string
): Record<string, unknown> => {
  const dedup_key = dedupKey(message, idempotencyKey)
  // PagerDuty ignores the payload of a resolve; only the key matters.
  if (isResolution(message)) return { routing_key: settings.routing_key, event_action: "resolve", dedup_key }
  return {
    routing_key: settings.routing_key,
    event_action: "trigger",
    dedup_key,
    payload: {
      summary: clip(message.title, summaryMax),
      source: "statusgrid",
      severity: settings.severity_map[message.level],
      timestamp: message.payload.timestamp,
      component: message.payload.component.name,
      group: message.payload.stack.name,
      class: message.event,
      custom_details: message.payload
    },
    client: "statusgrid",
    client_url: message.url,
    links: [{ href: message.url, text: "View in statusgrid" }]
  }
}

export const makePagerDutySender = (options: HttpOptions & { readonly eventsUrl?: string } = {}): Sender =>
(destination, message, context) => {
  const settings = settingsOf("pagerduty", destination)
  if (Result.isFailure(settings)) return Promise.resolve(settings.failure)
  const body = pagerDutyBody(settings.success, message, context.idempotencyKey)
  return postJson(options.eventsUrl ?? defaultPagerDutyEventsUrl, body, context, options)
}
