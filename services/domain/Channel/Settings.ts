import { Effect, Schema, SchemaTransformation } from "effect"
import { Text } from "../Text.ts"
import { TemplateText } from "./Templates.ts"

/**
 * The settings of each channel type (spec: Channel settings): as given on create (validated, defaults
 * applied) and as the API shows them (the view: the same fields, secrets masked). The registry that
 * ties them to a type is `../Channel.ts`.
 */

export const channelLimits = {
  nameLength: 200,
  urlLength: 2048,
  recipients: 50,
  phoneNumbers: 20,
  mentions: 50,
  headers: 20,
  headerValueLength: 4096,
  smsMaxLength: 1600,
  smsDefaultLength: 160
} as const

/** Optional on input, `value` when absent. */
const withDefault = <S extends Schema.Constraint>(self: S, value: S["Type"]) =>
  Schema.withDecodingDefaultType<S, never>(Effect.succeed(value))(self)

export const parseUrl = (s: string): URL | undefined => {
  try {
    return new URL(s)
  } catch {
    return undefined
  }
}

/** An absolute URL with one of `protocols`, a host, and no credentials (they would be shown in the settings). */
const UrlOf = (protocols: ReadonlyArray<"http:" | "https:">) => {
  const schemes = protocols.map((p) => p.slice(0, -1)).join(" or ")
  return Schema.Trim.check(
    Schema.isBetweenLength(1, channelLimits.urlLength, { message: `must be 1 to ${channelLimits.urlLength} characters` }),
    Schema.makeFilter((s: string) => {
      const url = parseUrl(s)
      if (url === undefined || url.hostname === "") return `must be an absolute ${schemes} URL`
      if (!(protocols as ReadonlyArray<string>).includes(url.protocol)) return `must use ${schemes}, not ${url.protocol.slice(0, -1)}`
      if (url.username !== "" || url.password !== "") return "must not contain credentials (user:password@)"
      return true
    })
  )
}
const HttpsUrl = UrlOf(["https:"])
const HttpUrl = UrlOf(["http:", "https:"])

export const HexColor = Schema.String.check(Schema.isPattern(/^#[0-9a-fA-F]{6}$/, { message: "must be a hex color #rrggbb" }))

/** The WHATWG HTML definition of a valid e-mail address. */
const emailPattern =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/
export const isEmailAddress = (s: string): boolean => s.length <= 254 && emailPattern.test(s)

/** E.164: `+`, then 8 to 15 digits, the first not 0 (country codes never start with 0). */
const e164 = /^\+[1-9][0-9]{7,14}$/
const E164 = Schema.String.check(Schema.isPattern(e164, { message: "must be in international format: + then 8 to 15 digits, e.g. +14155550100" }))

const quoted = (s: string) => JSON.stringify(s.length > 60 ? `${s.slice(0, 60)}…` : s)

/** Recipients as a comma-separated string or an array; each a valid address, 1 to 50, duplicates dropped. */
const Recipients = Schema.Union([Schema.String, Schema.Array(Schema.String)]).pipe(
  Schema.decodeTo(
    Schema.Array(Schema.String).check(Schema.makeFilter((list: ReadonlyArray<string>) => {
      if (list.length === 0) return "must list at least one address"
      if (list.length > channelLimits.recipients) return `must list at most ${channelLimits.recipients} addresses (${list.length} given)`
      const bad = list.find((a) => !isEmailAddress(a))
      return bad === undefined || `${quoted(bad)} is not a valid e-mail address`
    })),
    SchemaTransformation.transform<ReadonlyArray<string>, string | ReadonlyArray<string>>({
      decode: (v) => {
        const all = (typeof v === "string" ? v.split(",") : v).map((a) => a.trim()).filter((a) => a !== "")
        const seen = new Set<string>()
        return all.filter((a) => !seen.has(a.toLowerCase()) && seen.add(a.toLowerCase()) !== undefined)
      },
      encode: (list) => list
    })
  )
).annotate({ description: "Comma-separated addresses, or an array of them; 1 to 50." })

const Mentions = (what: string) =>
  Schema.Array(Text(100)).check(
    Schema.isMaxLength(channelLimits.mentions, { message: `at most ${channelLimits.mentions} ${what}` }),
    Schema.isUnique({ message: `${what} must be distinct` })
  )

// ---------------------------------------------------------------------------
// Settings per channel type, as given on create (defaults applied on decoding).

export const SlackSettings = Schema.Struct({
  channel: Text(80).annotate({ description: "Channel the messages go to, e.g. #ops (with bot_token: a channel name or id)." }),
  webhook_url: Schema.optionalKey(HttpsUrl.annotate({ description: "Incoming-webhook URL. Secret: stored encrypted, shown masked." })),
  bot_token: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^xoxb-[A-Za-z0-9-]{10,250}$/, { message: "must be a Slack bot token (xoxb-…)" })).annotate({
    description: "Bot token for chat.postMessage, instead of the webhook: needed for thread replies. Secret: stored encrypted, shown masked."
  })),
  mention_users: withDefault(Mentions("mention_users"), []),
  thread_replies: withDefault(Schema.Boolean, false).annotate({
    description: "With bot_token: a subject's later alerts (its updates and recovery) reply in the thread of its first one."
  }),
  display_name: Schema.optionalKey(Text(80)),
  username: Schema.optionalKey(Text(80)),
  icon_emoji: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^:[a-z0-9_+'-]{1,100}:$/, { message: "must be an emoji code such as :rotating_light:" }))),
  channel_mentions: withDefault(Schema.Literals(["here", "channel", "none"]), "none")
}).check(Schema.makeFilter((s) =>
  s.webhook_url !== undefined || s.bot_token !== undefined || { path: ["webhook_url"], issue: "is required (or bot_token)" }
)).annotate({ identifier: "SlackSettings" })

export const DiscordSettings = Schema.Struct({
  webhook_url: HttpsUrl.annotate({ description: "Webhook URL. Secret: stored encrypted, shown masked." }),
  mention_roles: withDefault(Mentions("mention_roles"), []),
  embed_color: withDefault(HexColor, "#5865f2")
}).annotate({ identifier: "DiscordSettings" })

export const TeamsCardStyle = Schema.Literals(["default", "emphasis", "good", "attention", "warning", "accent"])

export const TeamsSettings = Schema.Struct({
  webhook_url: HttpsUrl.annotate({ description: "Workflow/incoming-webhook URL. Secret: stored encrypted, shown masked." }),
  card_title: withDefault(Text(200), "statusgrid"),
  adaptive_cards: withDefault(Schema.Boolean, true),
  card_style: withDefault(TeamsCardStyle, "default")
}).annotate({ identifier: "TeamsSettings" })

export const EmailBranding = Schema.Struct({
  logo_url: Schema.optionalKey(HttpsUrl),
  accent_color: Schema.optionalKey(HexColor),
  footer: Schema.optionalKey(Text(500))
}).annotate({ identifier: "EmailBranding" })

export const EmailSettings = Schema.Struct({
  recipients: Recipients,
  subject_template: Schema.optionalKey(TemplateText(200)),
  include_components: withDefault(Schema.Boolean, true),
  branding: Schema.optionalKey(EmailBranding)
}).annotate({ identifier: "EmailSettings" })

export const SmsSettings = Schema.Struct({
  phone_numbers: Schema.Array(E164).check(
    Schema.isBetweenLength(1, channelLimits.phoneNumbers, { message: `must list 1 to ${channelLimits.phoneNumbers} numbers` }),
    Schema.isUnique({ message: "numbers must be distinct" })
  ),
  account_sid: Schema.String.check(Schema.isPattern(/^AC[0-9a-fA-F]{32}$/, { message: "must be AC followed by 32 hexadecimal digits" })),
  auth_token: Schema.String.check(Schema.isPattern(/^[\x21-\x7e]{1,200}$/, { message: "must be 1 to 200 printable characters without spaces" }))
    .annotate({ description: "Secret: stored encrypted, shown masked." }),
  from_number: E164,
  max_length: withDefault(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: channelLimits.smsMaxLength }, { message: `must be an integer from 1 to ${channelLimits.smsMaxLength}` })),
    channelLimits.smsDefaultLength
  )
}).annotate({ identifier: "SmsSettings" })

export const WebhookMethod = Schema.Literals(["POST", "PUT", "PATCH", "GET", "DELETE"])

/** Headers the delivery sets itself: framing, and the signature (spec: X-Service-Signature). */
export const reservedWebhookHeaders: ReadonlySet<string> = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "x-service-signature"
])
const headerName = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const headerValue = /^[\t\x20-\x7e\x80-\xff]*$/

export const WebhookHeaders = Schema.Record(Schema.String, Schema.String).check(
  Schema.makeFilter((headers: Readonly<Record<string, string>>) => {
    const names = Object.keys(headers)
    if (names.length > channelLimits.headers) return `at most ${channelLimits.headers} headers`
    const issues: Array<Schema.FilterIssue> = []
    const seen = new Set<string>()
    for (const name of names) {
      const lower = name.toLowerCase()
      const value = headers[name]!
      if (!headerName.test(name)) issues.push({ path: [name], issue: "is not a valid header name" })
      else if (reservedWebhookHeaders.has(lower)) issues.push({ path: [name], issue: "is set by the delivery itself and cannot be given" })
      else if (seen.has(lower)) issues.push({ path: [name], issue: "is given twice (header names are case-insensitive)" })
      else if (!headerValue.test(value)) issues.push({ path: [name], issue: "value must not contain line breaks or control characters" })
      else if (value.length > channelLimits.headerValueLength) issues.push({ path: [name], issue: `value is longer than ${channelLimits.headerValueLength} characters` })
      seen.add(lower)
    }
    return issues
  })
).annotate({ description: "Extra request headers. Their values are secrets: stored encrypted, shown masked." })

export const WebhookSettings = Schema.Struct({
  url: HttpUrl,
  method: withDefault(WebhookMethod, "POST"),
  headers: withDefault(WebhookHeaders, {}),
  signing_secret: Schema.optionalKey(
    Schema.String.check(Schema.isPattern(/^[\x21-\x7e]{16,256}$/, { message: "must be 16 to 256 printable characters without spaces" }))
  ).annotate({
    description: "HMAC-SHA256 key of X-Service-Signature (its UTF-8 bytes) and of webhook-signature (Standard Webhooks: the bytes after whsec_ for a whsec_<base64> secret, else its UTF-8 bytes). Secret. When absent on create, whsec_ + base64 of 32 random bytes is generated and shown once."
  })
}).annotate({ identifier: "WebhookSettings" })

export const PagerDutySeverity = Schema.Literals(["critical", "error", "warning", "info"])

export const defaultSeverityMap = { critical: "critical", degraded: "warning", info: "info" } as const

export const PagerDutySettings = Schema.Struct({
  routing_key: Schema.String.check(Schema.isPattern(/^[A-Za-z0-9]{32}$/, { message: "must be the 32-character integration (routing) key" }))
    .annotate({ description: "Events API v2 integration key. Secret: stored encrypted, shown masked." }),
  severity_map: withDefault(
    Schema.Struct({
      critical: withDefault(PagerDutySeverity, defaultSeverityMap.critical),
      degraded: withDefault(PagerDutySeverity, defaultSeverityMap.degraded),
      info: withDefault(PagerDutySeverity, defaultSeverityMap.info)
    }),
    defaultSeverityMap
  ).annotate({ description: "PagerDuty severity of each alert level." })
}).annotate({ identifier: "PagerDutySettings" })

/**
 * A browser's push subscription (`PushSubscription.toJSON()`): the push
 * service's endpoint and the keys the message is encrypted for (RFC 8291).
 */
export const WebPushSettings = Schema.Struct({
  endpoint: HttpsUrl.annotate({ description: "The push service URL of the subscription. Secret: stored encrypted, shown masked." }),
  keys: Schema.Struct({
    p256dh: Schema.String.check(Schema.isPattern(/^B[A-Za-z0-9_-]{86}$/, {
      message: "must be the subscription's P-256 public key: 65 bytes, base64url without padding"
    })),
    auth: Schema.String.check(Schema.isPattern(/^[A-Za-z0-9_-]{21}[AQgw]$/, {
      message: "must be the subscription's auth secret: 16 bytes, base64url without padding"
    }))
  }).annotate({ description: "The subscription's keys. Secret: stored encrypted, shown masked." })
}).annotate({ identifier: "WebPushSettings" })

// ---------------------------------------------------------------------------
// The settings as the API shows them: the same fields, secrets masked.

const Masked = Schema.String.annotate({ description: "Secret, masked." })

export const SlackSettingsView = Schema.Struct({
  channel: Schema.String,
  webhook_url: Schema.optionalKey(Masked),
  bot_token: Schema.optionalKey(Masked),
  mention_users: Schema.Array(Schema.String),
  thread_replies: Schema.Boolean,
  display_name: Schema.optionalKey(Schema.String),
  username: Schema.optionalKey(Schema.String),
  icon_emoji: Schema.optionalKey(Schema.String),
  channel_mentions: Schema.Literals(["here", "channel", "none"])
}).annotate({ identifier: "SlackSettingsView" })

export const DiscordSettingsView = Schema.Struct({
  webhook_url: Masked,
  mention_roles: Schema.Array(Schema.String),
  embed_color: Schema.String
}).annotate({ identifier: "DiscordSettingsView" })

export const TeamsSettingsView = Schema.Struct({
  webhook_url: Masked,
  card_title: Schema.String,
  adaptive_cards: Schema.Boolean,
  card_style: TeamsCardStyle
}).annotate({ identifier: "TeamsSettingsView" })

export const EmailSettingsView = Schema.Struct({
  recipients: Schema.Array(Schema.String),
  subject_template: Schema.optionalKey(Schema.String),
  include_components: Schema.Boolean,
  branding: Schema.optionalKey(Schema.Struct({
    logo_url: Schema.optionalKey(Schema.String),
    accent_color: Schema.optionalKey(Schema.String),
    footer: Schema.optionalKey(Schema.String)
  }))
}).annotate({ identifier: "EmailSettingsView" })

export const SmsSettingsView = Schema.Struct({
  phone_numbers: Schema.Array(Schema.String),
  account_sid: Schema.String,
  auth_token: Masked,
  from_number: Schema.String,
  max_length: Schema.Int
}).annotate({ identifier: "SmsSettingsView" })

export const WebhookSettingsView = Schema.Struct({
  url: Schema.String,
  method: WebhookMethod,
  headers: Schema.Record(Schema.String, Masked),
  signing_secret: Masked
}).annotate({ identifier: "WebhookSettingsView" })

export const PagerDutySettingsView = Schema.Struct({
  routing_key: Masked,
  severity_map: Schema.Struct({ critical: PagerDutySeverity, degraded: PagerDutySeverity, info: PagerDutySeverity })
}).annotate({ identifier: "PagerDutySettingsView" })

export const WebPushSettingsView = Schema.Struct({
  endpoint: Masked,
  keys: Masked
}).annotate({ identifier: "WebPushSettingsView" })
