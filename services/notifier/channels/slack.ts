import { Result } from "effect"
import type { SlackSettings } from "../../domain/Channel.ts"
import type { Message, Sender, SendResult } from "../Sender.ts"
import { failure, ok, postJson, sendHttp } from "./http.ts"
import type { HttpOptions } from "./http.ts"
import { settingsOf } from "./settings.ts"
import { clip } from "./text.ts"

/**
 * Slack with Block Kit: through the incoming webhook, or with a bot token
 * through the Web API's chat.postMessage, which answers the message's `ts`
 * so that later alerts of the same subject reply in its thread
 * (`thread_replies`; incoming webhooks cannot thread). See README.
 */

export const defaultSlackApiUrl = "https://slack.com/api"

/** Web API errors worth another attempt; every other `{ok:false}` is final (bad token, unknown channel, ...). */
const retryableSlackErrors = new Set(["ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"])

/** chat.postMessage's answer: 200 with `{ok, ts}` or `{ok:false, error}`. */
export const slackApiResult = (body: string): SendResult => {
  try {
    const answer = JSON.parse(body) as { ok?: unknown; ts?: unknown; error?: unknown }
    if (answer.ok === true && typeof answer.ts === "string") return { ...ok, status: 200, reference: answer.ts }
    const error = typeof answer.error === "string" ? answer.error : "no ts in the answer"
    return failure(200, retryableSlackErrors.has(error), `Slack API: ${error}`)
  } catch {
    return failure(200, true, "Slack API: the answer is not JSON")
  }
}

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

/**
 * `webhookOptions` for the incoming webhook (a URL the organization chose);
 * `apiOptions` for the Web API at `apiUrl` (the operator's).
 */
export const makeSlackSender = (webhookOptions: HttpOptions = {}, api: { readonly apiUrl?: string; readonly options?: HttpOptions } = {}): Sender =>
(destination, message, context) => {
  const settings = settingsOf("slack", destination)
  if (Result.isFailure(settings)) return Promise.resolve(settings.failure)
  const { bot_token, thread_replies, webhook_url } = settings.success
  const body = slackBody(settings.success, message)
  if (bot_token === undefined) return postJson(webhook_url ?? "", body, context, webhookOptions)
  return sendHttp({
    url: `${(api.apiUrl ?? defaultSlackApiUrl).replace(/\/$/, "")}/chat.postMessage`,
    method: "POST",
    headers: { "content-type": "application/json; charset=utf-8", authorization: `Bearer ${bot_token}` },
    body: JSON.stringify(thread_replies && context.threadTs !== undefined ? { ...body, thread_ts: context.threadTs } : body),
    timeoutMs: context.timeoutMs,
    inspect: slackApiResult
  }, api.options ?? {})
}
