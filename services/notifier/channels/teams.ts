import { Result } from "effect"
import type { TeamsSettings } from "../../domain/Channel.ts"
import type { Message, Sender } from "../Sender.ts"
import { postJson } from "./http.ts"
import type { HttpOptions } from "./http.ts"
import { settingsOf } from "./settings.ts"

/**
 * Microsoft Teams webhook: an Adaptive Card 1.4 in a `message` envelope (what
 * Workflows webhooks accept), or the legacy MessageCard when
 * `adaptive_cards` is false (old Office 365 connectors).
 */

const levelColors: Readonly<Record<Message["level"], string>> = { critical: "D13438", degraded: "FFB900", info: "0078D4" }

const facts = (message: Message): ReadonlyArray<{ readonly title: string; readonly value: string }> => {
  const { component, stack } = message.payload
  return [
    { title: "Component", value: component.name },
    { title: "Stack", value: stack.name },
    { title: "Status", value: component.previous_status === "" ? component.current_status : `${component.previous_status} → ${component.current_status}` },
    { title: "Event", value: message.event }
  ].filter((f) => f.value !== "")
}

export const adaptiveCardBody = (settings: typeof TeamsSettings.Type, message: Message): Record<string, unknown> => ({
  type: "message",
  attachments: [{
    contentType: "application/vnd.microsoft.card.adaptive",
    contentUrl: null,
    content: {
      $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
      type: "AdaptiveCard",
      version: "1.4",
      body: [
        {
          // card_style colours the header band; the message title goes under the channel's card title.
          type: "Container",
          style: settings.card_style,
          bleed: true,
          items: [
            { type: "TextBlock", text: settings.card_title, size: "Medium", weight: "Bolder", wrap: true },
            { type: "TextBlock", text: message.title, weight: "Bolder", wrap: true }
          ]
        },
        { type: "TextBlock", text: message.text, wrap: true },
        { type: "FactSet", facts: facts(message) }
      ],
      actions: [{ type: "Action.OpenUrl", title: "View details", url: message.url }]
    }
  }]
})

export const messageCardBody = (settings: typeof TeamsSettings.Type, message: Message): Record<string, unknown> => ({
  "@type": "MessageCard",
  "@context": "https://schema.org/extensions",
  themeColor: levelColors[message.level],
  summary: message.title,
  title: settings.card_title,
  text: message.title,
  sections: [{ text: message.text, facts: facts(message).map((f) => ({ name: f.title, value: f.value })) }],
  potentialAction: [{ "@type": "OpenUri", name: "View details", targets: [{ os: "default", uri: message.url }] }]
})

export const makeTeamsSender = (options: HttpOptions = {}): Sender => (destination, message, context) => {
  const settings = settingsOf("teams", destination)
  if (Result.isFailure(settings)) return Promise.resolve(settings.failure)
  const body = settings.success.adaptive_cards ? adaptiveCardBody(settings.success, message) : messageCardBody(settings.success, message)
  return postJson(settings.success.webhook_url, body, context, options)
}
