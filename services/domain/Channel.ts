import { Effect, Result, Schema, SchemaIssue, SchemaTransformation } from "effect"
import { noNul, Text } from "./Text.ts"

/**
 * Notification channels (spec: Channel settings): one settings schema per
 * type, which of its fields are secrets, and how secrets are shown masked.
 * Secrets are stored encrypted apart from the other settings and never
 * returned; the API shows the masked view (`viewSettings`).
 */

/** One problem with one input field, named as on the wire (`settings.webhook_url`, `schedule.timezone`). */
export interface FieldIssue {
  readonly field: string
  readonly message: string
}

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


const parseUrl = (s: string): URL | undefined => {
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
// Templates: the placeholders a notification text may use (spec: Notification rule, custom templates).

export const templatePlaceholders = [
  "status_emoji",
  "component_name",
  "status",
  "stack_name",
  "previous_status",
  "current_status",
  "duration",
  "incident_title",
  "incident_update_count",
  "stack_url"
] as const
const knownPlaceholders: ReadonlySet<string> = new Set(templatePlaceholders)

/** `{name}` is a placeholder; other braces are text. */
const placeholderPattern = /\{([A-Za-z0-9_.-]+)\}/g

/** The `{...}` placeholders of a template that are not in `templatePlaceholders`. */
export const unknownPlaceholders = (template: string): ReadonlyArray<string> =>
  [...new Set([...template.matchAll(placeholderPattern)].map((m) => m[1]!).filter((name) => !knownPlaceholders.has(name)))]

/** Template text with only known placeholders. */
export const TemplateText = (max: number) =>
  Schema.String.check(
    Schema.isBetweenLength(1, max, { message: `must be 1 to ${max} characters` }),
    noNul,
    Schema.makeFilter((s: string) => {
      const unknown = unknownPlaceholders(s)
      return unknown.length === 0 ||
        `uses unknown placeholder${unknown.length > 1 ? "s" : ""} ${unknown.map((n) => `{${n}}`).join(", ")}; ` +
          `known: ${templatePlaceholders.map((n) => `{${n}}`).join(" ")}`
    })
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
    description: "HMAC-SHA256 key of X-Service-Signature. Secret. When absent on create, 32 random bytes (hex) are generated and shown once."
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
// Validation with field names.

const formatter = SchemaIssue.makeFormatterStandardSchemaV1({
  // Optional fields' type errors read "Expected boolean | undefined": the `undefined` is noise to API users.
  leafHook: (issue) => SchemaIssue.defaultLeafHook(issue).replace(/ \| undefined$/, "")
})

const pathOf = (prefix: string, path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined): string =>
  [prefix, ...(path ?? []).map((s) => String(typeof s === "object" && s !== null ? s.key : s))].filter((s) => s !== "").join(".")

/**
 * Decodes `input` with `schema` (unknown fields are errors), or gives the
 * first problem with its field as a dotted path under `prefix`.
 */
export const decodeFields = <S extends Schema.ConstraintDecoder<unknown>>(
  schema: S,
  input: unknown,
  prefix: string,
  what = "a known field"
): Result.Result<S["Type"], FieldIssue> => {
  const decoded = Schema.decodeUnknownResult(schema)(input, { errors: "first", onExcessProperty: "error" })
  if (Result.isSuccess(decoded)) return Result.succeed(decoded.success)
  const [issue] = formatter(decoded.failure.issue).issues
  const field = pathOf(prefix, issue?.path)
  const message = issue === undefined
    ? "is invalid"
    : issue.message === "Expected no excess property"
    ? `is not ${what}`
    : issue.message === "Missing key"
    ? "is required"
    : issue.message
  return Result.fail({ field: field === "" ? "body" : field, message })
}

/** Settings of a `type` channel, validated, defaults applied; fields named `settings.<field>`. */
export const decodeChannelSettings = <T extends ChannelType>(type: T, input: unknown): Result.Result<ChannelSettings[T], FieldIssue> =>
  decodeFields(channelSettings[type] as Schema.ConstraintDecoder<unknown>, input, "settings", `a setting of ${type} channels`) as Result.Result<
    ChannelSettings[T],
    FieldIssue
  >

// ---------------------------------------------------------------------------
// Secrets apart, and masked.

/** A URL secret as `https://host/…/abcd` (its last 4 characters, when the rest is long enough to stay secret). */
export const maskUrl = (value: string): string => {
  const url = parseUrl(value)
  if (url === undefined) return "…"
  const rest = value.length - url.origin.length
  return rest > 16 ? `${url.origin}/…/${value.slice(-4)}` : `${url.origin}/…`
}

/** A token as `…abcd` (its last 4 characters when it has at least 16). */
export const maskToken = (value: string): string => (value.length >= 16 ? `…${value.slice(-4)}` : "…")

const maskValue = (field: string, value: unknown): unknown => {
  if (field === "headers" && typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.keys(value).map((name) => [name, "…"]))
  }
  if (typeof value !== "string") return "…"
  return field.endsWith("_url") || field === "endpoint" ? maskUrl(value) : maskToken(value)
}

/**
 * Splits validated settings into what is stored in clear (`view`: every
 * setting, secret fields masked; what the API shows) and what is stored
 * encrypted (`secrets`). Full settings again: `{ ...view, ...secrets }`.
 */
export const splitSecrets = (type: ChannelType, settings: Readonly<Record<string, unknown>>) => {
  const view: Record<string, unknown> = {}
  const secrets: Record<string, unknown> = {}
  for (const [field, value] of Object.entries(settings)) {
    if (secretFields[type].includes(field)) {
      secrets[field] = value
      view[field] = maskValue(field, value)
    } else {
      view[field] = value
    }
  }
  return { view, secrets }
}

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

// ---------------------------------------------------------------------------
// The registry of channel types (services/notifier/README.md, "Adding a channel type").

/** Whether two key sets are equal; `unknown` when they are, else a type no value has, naming the difference. */
type SameKeys<S, V> = [Exclude<keyof S, keyof V>, Exclude<keyof V, keyof S>] extends [never, never] ? unknown
  : { readonly "view and settings must have the same fields": [Exclude<keyof S, keyof V>, Exclude<keyof V, keyof S>] }

/**
 * What the domain knows of one channel type: its settings as given on create
 * (validated, defaults applied), the same settings as the API shows them
 * (`view`, secret fields masked), which fields are secrets (stored encrypted,
 * shown masked), and the API record's name. The compiler checks that `view`
 * has the fields of `settings` and that `secrets` names fields of them.
 */
export interface ChannelKind<S extends Schema.Top, V extends Schema.Top, X extends Schema.Struct.Fields> {
  readonly settings: S
  readonly view: V
  readonly secrets: ReadonlyArray<keyof S["Type"] & string>
  /** Identifier of the API record, e.g. `SlackChannel`. */
  readonly record: string
  /** Fields of the API record beyond the common ones (the webhook's signing secret, shown once). */
  readonly extra: X
}

const kind = <S extends Schema.Top, V extends Schema.Top, X extends Schema.Struct.Fields = {}>(
  k: Omit<ChannelKind<S, V, X>, "extra"> & { readonly extra?: X } & { readonly view: SameKeys<S["Type"], V["Type"]> }
): ChannelKind<S, V, X> => ({ ...k, extra: k.extra ?? ({} as X) })

/**
 * Every channel type. The type union, the settings decoders, masking, the API
 * records (domain/api/Notifications.ts) and the notifier's senders
 * (notifier/channels/index.ts, which the compiler makes list every key here)
 * all come from this table.
 *
 * team chat = slack, community chat = discord, enterprise chat = teams, on-call paging = pagerduty,
 * mobile push = webpush (a browser's or phone's push subscription).
 */
export const channelKinds = {
  email: kind({ settings: EmailSettings, view: EmailSettingsView, secrets: [], record: "EmailChannel" }),
  slack: kind({ settings: SlackSettings, view: SlackSettingsView, secrets: ["webhook_url", "bot_token"], record: "SlackChannel" }),
  discord: kind({ settings: DiscordSettings, view: DiscordSettingsView, secrets: ["webhook_url"], record: "DiscordChannel" }),
  teams: kind({ settings: TeamsSettings, view: TeamsSettingsView, secrets: ["webhook_url"], record: "TeamsChannel" }),
  sms: kind({ settings: SmsSettings, view: SmsSettingsView, secrets: ["auth_token"], record: "SmsChannel" }),
  webhook: kind({
    settings: WebhookSettings,
    view: WebhookSettingsView,
    secrets: ["headers", "signing_secret"],
    record: "WebhookChannel",
    extra: {
      signing_secret: Schema.optionalKey(Schema.String.annotate({
        description: "Only in the response that created the channel, when the signing secret was generated: shown once."
      }))
    }
  }),
  pagerduty: kind({ settings: PagerDutySettings, view: PagerDutySettingsView, secrets: ["routing_key"], record: "PagerDutyChannel" }),
  webpush: kind({ settings: WebPushSettings, view: WebPushSettingsView, secrets: ["endpoint", "keys"], record: "WebPushChannel" })
}

export type ChannelType = keyof typeof channelKinds
export const channelTypes = Object.keys(channelKinds) as ReadonlyArray<ChannelType>
export const ChannelType = Schema.Literals(channelTypes)

const mapKinds = <F>(f: (k: (typeof channelKinds)[ChannelType]) => F) =>
  Object.fromEntries(channelTypes.map((t) => [t, f(channelKinds[t])]))

export const channelSettings = mapKinds((k) => k.settings) as { readonly [T in ChannelType]: (typeof channelKinds)[T]["settings"] }
export const channelSettingsView = mapKinds((k) => k.view) as { readonly [T in ChannelType]: (typeof channelKinds)[T]["view"] }

export type ChannelSettings = { readonly [T in ChannelType]: (typeof channelSettings)[T]["Type"] }
export type AnyChannelSettings = ChannelSettings[ChannelType]

/** The fields of each type's settings that are secrets: stored encrypted (`channels.secrets`), shown masked. */
export const secretFields = mapKinds((k) => k.secrets as ReadonlyArray<string>) as { readonly [T in ChannelType]: ReadonlyArray<string> }

// ---------------------------------------------------------------------------
// What a delivery carries: the spec's webhook payload.

/** The spec's webhook payload (Webhook payload): the body of every delivery in the outbox. */
export const NotificationPayload = Schema.Struct({
  event: Schema.String,
  timestamp: Schema.String.annotate({ format: "date-time" }),
  stack: Schema.Struct({ id: Schema.String, name: Schema.String, slug: Schema.String }),
  component: Schema.Struct({ id: Schema.String, name: Schema.String, previous_status: Schema.String, current_status: Schema.String }),
  incident: Schema.Struct({
    id: Schema.String,
    created_at: Schema.String.annotate({ format: "date-time" }),
    resolved_at: Schema.NullOr(Schema.String.annotate({ format: "date-time" })),
    /** Beyond the spec's payload: the incident's words and progress, when there is an incident. */
    title: Schema.optionalKey(Schema.String),
    status: Schema.optionalKey(Schema.String),
    impact: Schema.optionalKey(Schema.String),
    update_count: Schema.optionalKey(Schema.Number)
  }),
  /** Beyond the spec: the external service the component or incident belongs to. */
  source: Schema.optionalKey(Schema.Struct({ key: Schema.String, name: Schema.String })),
  /** Beyond the spec: monitor events (`monitor.*`); `component` then describes the monitor too. */
  monitor: Schema.optionalKey(Schema.Struct({
    id: Schema.String,
    name: Schema.String,
    url: Schema.String,
    error: Schema.String,
    http_status: Schema.Number,
    response_time_ms: Schema.Number,
    ssl_days_left: Schema.optionalKey(Schema.Number)
  })),
  /** Beyond the spec: a grouped alert (`event: "group"`) lists every change of the window; `component` is the most severe. */
  changes: Schema.optionalKey(Schema.Array(Schema.Struct({
    event: Schema.String,
    timestamp: Schema.String,
    component: Schema.Struct({ id: Schema.String, name: Schema.String, previous_status: Schema.String, current_status: Schema.String })
  })))
}).annotate({ identifier: "NotificationPayload" })
export type NotificationPayload = typeof NotificationPayload.Type

/** Ids of the sample records of a test notification: recognisably not real. */
export const sampleId = "00000000-0000-0000-0000-000000000000"

/** The payload of a test notification: event `test`, a sample stack, component and open incident. */
export const testPayload = (now: Date): NotificationPayload => ({
  event: "test",
  timestamp: now.toISOString(),
  stack: { id: sampleId, name: "Example stack", slug: "example-stack" },
  component: { id: sampleId, name: "Example component", previous_status: "operational", current_status: "degraded" },
  incident: { id: sampleId, created_at: now.toISOString(), resolved_at: null }
})
