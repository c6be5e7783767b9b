import { Result } from "effect"
import type { SlackSettings } from "../../domain/Channel.ts"
import type { Message, Sender } from "../Sender.ts"
import { postJson } from "./http.ts"
import type { HttpOptions } from "./http.ts"
import { settingsOf } from "./settings.ts"
import { clip } from "./text.ts"

/**
 * Slack incoming webhook with Block Kit. `thread_replies` is not applied:
 * threading needs the parent message's `ts`, which incoming webhooks never
 * return (only chat.postMessage with a bot token does). See README.
 */

/** Slack's limits: header text 150 characters, section text 3,000. */
const headerMax = 150
const sectionMax = 3000

/** `&`, `<` and `>` are control characters in Slack text (links, mentions); everything else is literal. */
export const escapeSlack = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

/** `<@U123>` per user (a leading `@` dropped: Slack mentions need member ids), then `<!here>` / `<!channel>`. */
export const slackMentions = (settings: typeof SlackSettings.Type): string =>
  [
    ...settings.mention_users.map((user) => `<@${user.replace(/^@/, "")}>`),
    ...(settings.channel_mentions === "none" ? [] : [`<!${settings.channel_mentions}>`])
  ].join(" ")

/** The webhook body: fallback text, header, mrkdwn section (mentions first), a context line with the link. */
export const slackBody = (settings: typeof SlackSettings.Type, message: Message): Record<string, unknown> => {
  const mentions = slackMentions(settings)
  const text = clip(escapeSlack(message.text), sectionMax - mentions.length - 1)
  const username = settings.username ?? settings.display_name
  return {
    text: message.title,
    blocks: [
      { type: "header", text: { type: "plain_text", text: clip(message.title, headerMax), emoji: true } },
      { type: "section", text: { type: "mrkdwn", text: mentions === "" ? text : `${mentions}\n${text}` } },
      {
        type: "context",
        elements: [{ type: "mrkdwn", text: `<${message.url}|View details> · ${escapeSlack(message.payload.stack.name)} · ${message.event}` }]
      }
    ],
    // Honoured by legacy webhooks only; Slack-app webhooks post as the app, to the channel chosen at install.
    channel: settings.channel,
    ...(username === undefined ? {} : { username }),
    ...(settings.icon_emoji === undefined ? {} : { icon_emoji: settings.icon_emoji })
  }
}

export const makeSlackSender = (options: HttpOptions = {}): Sender => (destination, message, context) => {
  const settings = settingsOf("slack", destination)
  if (Result.isFailure(settings)) return Promise.resolve(settings.failure)
  return postJson(settings.success.webhook_url, slackBody(settings.success, message), context, options)
}
