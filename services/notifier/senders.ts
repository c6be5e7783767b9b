import type { ChannelType } from "../domain/Channel.ts"
import type { Sender } from "./Sender.ts"
import { makeDiscordSender } from "./channels/discord.ts"
import { makeEmailSender } from "./channels/email.ts"
import { failure } from "./channels/http.ts"
import type { HttpOptions } from "./channels/http.ts"
import { defaultPagerDutyEventsUrl, makePagerDutySender } from "./channels/pagerduty.ts"
import { makeSlackSender } from "./channels/slack.ts"
import { defaultTwilioApiUrl, makeSmsSender } from "./channels/sms.ts"
import { makeTeamsSender } from "./channels/teams.ts"
import { makeWebhookSender } from "./channels/webhook.ts"

/** The sender of every channel type, built from configuration the caller reads (see README "Configuration"). */

export interface SenderOptions {
  /** SMTP_URL, e.g. `smtp://user:pass@host:587`. Unset: e-mail deliveries fail without retry. */
  readonly smtpUrl?: string
  /** SMTP_FROM, e.g. `statusgrid <alerts@example.com>`. */
  readonly smtpFrom?: string
  /** Connection and per-reply SMTP timeout. Default 10,000 ms. */
  readonly smtpTimeoutMs?: number
  /** TWILIO_API_URL. Default https://api.twilio.com. */
  readonly twilioApiUrl?: string
  /** PAGERDUTY_EVENTS_URL. Default https://events.pagerduty.com/v2/enqueue. */
  readonly pagerdutyEventsUrl?: string
  /** SLACK_API_URL, for channels with a bot token. Default https://slack.com/api. */
  readonly slackApiUrl?: string
  /** undici dispatcher for every HTTP channel (a test CA, a proxy). Default the global one. */
  readonly dispatcher?: HttpOptions["dispatcher"]
  /**
   * undici dispatcher for the URLs organizations choose (webhook, Slack,
   * Discord, Teams), e.g. `guardedAgent()` of Egress.ts; default `dispatcher`.
   * Twilio and PagerDuty endpoints are the operator's and use `dispatcher`.
   */
  readonly userDispatcher?: HttpOptions["dispatcher"]
  /** Clock for webhook timestamps and Retry-After dates. Default Date.now. */
  readonly now?: () => number
}

export { defaultPagerDutyEventsUrl, defaultTwilioApiUrl }

/**
 * A sender that keeps the "never rejects" promise even if the channel code
 * throws (a bug): retryable, as the deliverer treats a rejection, so the
 * outbox's attempt limit decides and nothing is lost silently.
 */
const guarded = (sender: Sender): Sender => async (destination, message, context) => {
  try {
    return await sender(destination, message, context)
  } catch (error) {
    return failure(0, true, `internal error: ${error instanceof Error ? error.message : String(error)}`)
  }
}

export const makeSenders = (options: SenderOptions = {}): Readonly<Record<ChannelType, Sender>> => {
  const http: HttpOptions = {
    ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher }),
    ...(options.now === undefined ? {} : { now: options.now })
  }
  const user: HttpOptions = options.userDispatcher === undefined ? http : { ...http, dispatcher: options.userDispatcher }
  const email = {
    ...(options.smtpUrl === undefined ? {} : { smtpUrl: options.smtpUrl }),
    ...(options.smtpFrom === undefined ? {} : { smtpFrom: options.smtpFrom }),
    ...(options.smtpTimeoutMs === undefined ? {} : { smtpTimeoutMs: options.smtpTimeoutMs })
  }
  return {
    email: guarded(makeEmailSender(email)),
    slack: guarded(makeSlackSender(user, { ...(options.slackApiUrl === undefined ? {} : { apiUrl: options.slackApiUrl }), options: http })),
    discord: guarded(makeDiscordSender(user)),
    teams: guarded(makeTeamsSender(user)),
    sms: guarded(makeSmsSender({ ...http, ...(options.twilioApiUrl === undefined ? {} : { apiUrl: options.twilioApiUrl }) })),
    webhook: guarded(makeWebhookSender(user)),
    pagerduty: guarded(makePagerDutySender({ ...http, ...(options.pagerdutyEventsUrl === undefined ? {} : { eventsUrl: options.pagerdutyEventsUrl }) }))
  }
}

/** Every sender with the defaults: the public Twilio and PagerDuty endpoints, no SMTP (e-mail fails until configured). */
export const senders: Readonly<Record<ChannelType, Sender>> = makeSenders()

/** Sends with the sender of the destination's type. */
export const send = (all: Readonly<Record<ChannelType, Sender>>): Sender => (destination, message, context) =>
  all[destination.type](destination, message, context)
