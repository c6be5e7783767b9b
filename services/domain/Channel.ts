import { type Result, Schema } from "effect"
import { decodeFields, type FieldIssue } from "./Channel/Fields.ts"
import { splitBySecretFields } from "./Channel/Masking.ts"
import {
  DiscordSettings,
  DiscordSettingsView,
  EmailSettings,
  EmailSettingsView,
  PagerDutySettings,
  PagerDutySettingsView,
  SlackSettings,
  SlackSettingsView,
  SmsSettings,
  SmsSettingsView,
  TeamsSettings,
  TeamsSettingsView,
  WebhookSettings,
  WebhookSettingsView,
  WebPushSettings,
  WebPushSettingsView
} from "./Channel/Settings.ts"

/**
 * Notification channels (spec: Channel settings): the registry of channel types. Each type's settings
 * schema and its masked view are in `Channel/Settings.ts`, how secrets are shown masked in
 * `Channel/Masking.ts`, the placeholders of custom templates in `Channel/Templates.ts`, field-named
 * decoding in `Channel/Fields.ts`, what a delivery carries in `Channel/Payload.ts`; this module
 * re-exports them. Secrets are stored encrypted apart from the other settings and never returned; the
 * API shows the masked view.
 */

export * from "./Channel/Fields.ts"
export * from "./Channel/Masking.ts"
export * from "./Channel/Payload.ts"
export * from "./Channel/Settings.ts"
export * from "./Channel/Templates.ts"

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

/** Settings of a `type` channel, validated, defaults applied; fields named `settings.<field>`. */
export const decodeChannelSettings = <T extends ChannelType>(type: T, input: unknown): Result.Result<ChannelSettings[T], FieldIssue> =>
  decodeFields(channelSettings[type] as Schema.ConstraintDecoder<unknown>, input, "settings", `a setting of ${type} channels`) as Result.Result<
    ChannelSettings[T],
    FieldIssue
  >

/**
 * Splits validated settings into what is stored in clear (`view`: every
 * setting, secret fields masked; what the API shows) and what is stored
 * encrypted (`secrets`). Full settings again: `{ ...view, ...secrets }`.
 */
export const splitSecrets = (type: ChannelType, settings: Readonly<Record<string, unknown>>) =>
  splitBySecretFields(secretFields[type], settings)
