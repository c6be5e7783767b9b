import { Result } from "effect"
import type { Destination, SendResult, Sender } from "../Sender.ts"
import type { Message } from "../Sender.ts"
import { failure, ok, sendHttp } from "./http.ts"
import type { HttpOptions } from "./http.ts"
import { settingsOf } from "./settings.ts"
import { charLength, clip } from "./text.ts"

/**
 * SMS through Twilio's Messages API, one request per number. The body fits
 * `max_length` characters with the link whole: the text is cut, never the link.
 */

export const defaultTwilioApiUrl = "https://api.twilio.com"

/**
 * The message's title and text on one line, cut with "…" so that
 * text + " " + link (the short link, else the URL) is at most `maxLength`
 * characters (code points). When the
 * link alone does not fit, the link alone is sent (a cut link is useless).
 */
export const smsBody = (message: Message, maxLength: number): string => {
  const text = `${message.title} ${message.text}`.replace(/\s+/g, " ").trim()
  const link = message.shortUrl ?? message.url
  const room = maxLength - charLength(link) - 1
  if (link === "") return clip(text, maxLength)
  if (room < 1) return link
  return `${clip(text, room)} ${link}`
}

/** The GSM 03.38 default alphabet: one septet each. */
const gsmBasic = new Set(
  "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
)
/** Its extension table: an escape and the character, two septets each. */
const gsmExtended = new Set("^{}\\[~]|€\f")

/**
 * The segments one SMS of `body` is billed as. Bodies written entirely in
 * the GSM-7 alphabet count septets (an extension character is two): up to
 * 160 in one message, else 153 per segment (the rest is the concatenation
 * header). Any other character makes the whole body UCS-2, counted in UTF-16
 * units (an emoji is two): up to 70 in one message, else 67 per segment.
 */
export const smsSegments = (body: string): number => {
  let septets = 0
  let gsm = true
  for (const ch of body) {
    if (gsmBasic.has(ch)) septets += 1
    else if (gsmExtended.has(ch)) septets += 2
    else {
      gsm = false
      break
    }
  }
  if (body === "") return 1
  if (gsm) return septets <= 160 ? 1 : Math.ceil(septets / 153)
  return body.length <= 70 ? 1 : Math.ceil(body.length / 67)
}

/**
 * The messages a delivery of `message` to an SMS destination costs: its
 * body's segments for each number. Undefined when the settings are invalid
 * (the sender fails such a delivery without sending anything).
 */
export const smsCost = (destination: Destination, message: Message): number | undefined => {
  const settings = settingsOf("sms", destination)
  if (Result.isFailure(settings)) return undefined
  return smsSegments(smsBody(message, settings.success.max_length)) * settings.success.phone_numbers.length
}

const messagesUrl = (apiUrl: string, accountSid: string): string =>
  `${apiUrl.replace(/\/+$/, "")}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Messages.json`

/**
 * All numbers' results as one: ok when every number is; otherwise the first
 * failure's status, retryable when any failure is (the whole delivery is
 * retried), the longest Retry-After, and every failed number in `error`.
 */
export const combineResults = (numbers: ReadonlyArray<string>, results: ReadonlyArray<SendResult>): SendResult => {
  const failed = results.map((r, i) => ({ r, number: numbers[i]! })).filter(({ r }) => !r.ok)
  if (failed.length === 0) return { ...ok, status: results[0]?.status ?? 0 }
  const waits = failed.map(({ r }) => r.retryAfterMs).filter((ms) => ms !== undefined)
  return failure(
    failed[0]!.r.status,
    failed.some(({ r }) => r.retryable),
    failed.map(({ number, r }) => `${number}: ${r.error}`).join("; "),
    waits.length === 0 ? undefined : Math.max(...waits)
  )
}

export const makeSmsSender = (options: HttpOptions & { readonly apiUrl?: string } = {}): Sender =>
async (destination, message, context) => {
  const settings = settingsOf("sms", destination)
  if (Result.isFailure(settings)) return settings.failure
  const { account_sid, auth_token, from_number, max_length, phone_numbers } = settings.success
  const body = smsBody(message, max_length)
  const url = messagesUrl(options.apiUrl ?? defaultTwilioApiUrl, account_sid)
  const authorization = `Basic ${Buffer.from(`${account_sid}:${auth_token}`).toString("base64")}`
  const results = await Promise.all(phone_numbers.map((to) =>
    sendHttp({
      url,
      method: "POST",
      headers: {
        authorization,
        "content-type": "application/x-www-form-urlencoded",
        // Per number, so each number's message has its own token across retries of the delivery.
        "i-twilio-idempotency-token": `${context.idempotencyKey}:${to}`
      },
      body: new URLSearchParams({ To: to, From: from_number, Body: body }).toString(),
      timeoutMs: context.timeoutMs
    }, options)
  ))
  return combineResults(phone_numbers, results)
}
