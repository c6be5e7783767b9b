import type { ChannelType } from "../domain/Channel.ts"
import type { Sender } from "./Sender.ts"
import { failure } from "./channels/http.ts"
import type { HttpOptions } from "./channels/http.ts"
import { channelSenders, type SenderOptions } from "./channels/index.ts"
import { defaultPagerDutyEventsUrl } from "./channels/pagerduty.ts"
import { defaultTwilioApiUrl } from "./channels/sms.ts"

/** The sender of every channel type (the registry: channels/index.ts), built from configuration the caller reads (see README "Configuration"). */

export type { SenderOptions }
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
  const deps = { options, http, user }
  return Object.fromEntries(
    Object.entries(channelSenders).map(([type, make]) => [type, guarded(make(deps))])
  ) as Record<ChannelType, Sender>
}

/** Every sender with the defaults: the public Twilio and PagerDuty endpoints, no SMTP (e-mail fails until configured). */
export const senders: Readonly<Record<ChannelType, Sender>> = makeSenders()

/** Sends with the sender of the destination's type. */
export const send = (all: Readonly<Record<ChannelType, Sender>>): Sender => (destination, message, context) =>
  all[destination.type](destination, message, context)
