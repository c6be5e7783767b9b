import { Config, Effect, Option, Redacted } from "effect"
import type { ChannelType } from "../../domain/Channel.ts"
import { AllowAddressesConfig } from "../../platform/Outbound.ts"
import { guardedAgent } from "../Egress.ts"
import type { Sender } from "../Sender.ts"
import { makeDiscordSender } from "./discord.ts"
import { makeEmailSender } from "./email.ts"
import type { HttpOptions } from "./http.ts"
import { makePagerDutySender } from "./pagerduty.ts"
import { makeSlackSender } from "./slack.ts"
import { makeSmsSender } from "./sms.ts"
import { makeTeamsSender } from "./teams.ts"
import { makeWebhookSender } from "./webhook.ts"
import { makeWebPushSender, vapidConfig, type VapidKeys } from "./webpush.ts"

/**
 * The notifier's registry of channel types: the sender of each type of
 * `channelKinds` (domain/Channel.ts), and the operator's settings the senders
 * need. The type of `channelSenders` lists every `ChannelType`, so a type
 * added to the domain without a sender here does not compile. The recipe is
 * in ../README.md ("Adding a channel type").
 */

/** The operator's settings of the senders (README "Configuration"); each read from the environment by `senderConfig`. */
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
  /** VAPID keys of Web Push (VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY, VAPID_SUBJECT, else DATA_DIR/vapid.json). Unset: Web Push deliveries fail without retry. */
  readonly vapid?: VapidKeys
  /** undici dispatcher for every HTTP channel (a test CA, a proxy). Default the global one. */
  readonly dispatcher?: HttpOptions["dispatcher"]
  /**
   * undici dispatcher for the URLs organizations choose (webhook, Slack,
   * Discord, Teams, Web Push endpoints), e.g. `guardedAgent()` of Egress.ts; default `dispatcher`.
   * Twilio and PagerDuty endpoints are the operator's and use `dispatcher`.
   */
  readonly userDispatcher?: HttpOptions["dispatcher"]
  /** Clock for webhook timestamps and Retry-After dates. Default Date.now. */
  readonly now?: () => number
}

/** What a sender is built from: the options, and HTTP options for the operator's endpoints (`http`) and for URLs organizations choose (`user`: the address guard). */
export interface SenderDeps {
  readonly options: SenderOptions
  readonly http: HttpOptions
  readonly user: HttpOptions
}

const defined = <K extends string, V>(key: K, value: V | undefined): { readonly [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { readonly [P in K]?: V }

/** One line per channel type. */
export const channelSenders: { readonly [T in ChannelType]: (deps: SenderDeps) => Sender } = {
  email: ({ options }) =>
    makeEmailSender({ ...defined("smtpUrl", options.smtpUrl), ...defined("smtpFrom", options.smtpFrom), ...defined("smtpTimeoutMs", options.smtpTimeoutMs) }),
  slack: ({ http, options, user }) => makeSlackSender(user, { ...defined("apiUrl", options.slackApiUrl), options: http }),
  discord: ({ user }) => makeDiscordSender(user),
  teams: ({ user }) => makeTeamsSender(user),
  sms: ({ http, options }) => makeSmsSender({ ...http, ...defined("apiUrl", options.twilioApiUrl) }),
  webhook: ({ user }) => makeWebhookSender(user),
  pagerduty: ({ http, options }) => makePagerDutySender({ ...http, ...defined("eventsUrl", options.pagerdutyEventsUrl) }),
  webpush: ({ options, user }) => makeWebPushSender(user, options.vapid)
}

/** The senders' settings from the environment (README "Configuration"), read once by the notifier's `Senders` layer. */
export const senderConfig = Effect.gen(function*() {
  const smtpUrl = yield* Config.option(Config.Redacted("SMTP_URL"))
  const smtpFrom = yield* Config.option(Config.String("SMTP_FROM"))
  const twilioApiUrl = yield* Config.option(Config.String("TWILIO_API_URL"))
  const pagerdutyEventsUrl = yield* Config.option(Config.String("PAGERDUTY_EVENTS_URL"))
  const slackApiUrl = yield* Config.option(Config.String("SLACK_API_URL"))
  const allowPrivate = yield* Config.Boolean("NOTIFIER_ALLOW_PRIVATE").pipe(Config.withDefault(false))
  const allowAddresses = yield* AllowAddressesConfig
  const vapid = yield* vapidConfig
  return {
    vapid,
    ...(allowPrivate ? {} : { userDispatcher: guardedAgent(allowAddresses) }),
    ...defined("smtpUrl", Option.getOrUndefined(Option.map(smtpUrl, Redacted.value))),
    ...defined("smtpFrom", Option.getOrUndefined(smtpFrom)),
    ...defined("twilioApiUrl", Option.getOrUndefined(twilioApiUrl)),
    ...defined("pagerdutyEventsUrl", Option.getOrUndefined(pagerdutyEventsUrl)),
    ...defined("slackApiUrl", Option.getOrUndefined(slackApiUrl))
  } satisfies SenderOptions as SenderOptions
})
