import type { ChannelType } from "#services/domain/Channel.ts"

/**
 * The form of each channel type: which settings a person fills in (the
 * Schema of services/domain/Channel/Settings.ts checks them and applies the
 * defaults of the rest; the API takes every setting). `list`: one value per
 * line or comma; `lines`: "Name: value" per line; `secret`: never shown back,
 * blank on edit keeps the stored one.
 */
export interface ChannelField {
  readonly name: string
  readonly label: string
  readonly kind: "text" | "secret" | "list" | "lines" | "checkbox" | "number" | "select"
  readonly hint?: string
  readonly required?: boolean
  readonly options?: ReadonlyArray<string>
}

/** Types a person creates on the channels page (Web Push channels come from a browser's subscription, on the profile). */
export const formChannelTypes = ["email", "slack", "discord", "teams", "sms", "webhook", "pagerduty"] as const satisfies ReadonlyArray<ChannelType>
export type FormChannelType = (typeof formChannelTypes)[number]

export const channelTypeLabels: Readonly<Record<ChannelType, string>> = {
  email: "E-mail",
  slack: "Slack",
  discord: "Discord",
  teams: "Microsoft Teams",
  sms: "SMS (Twilio)",
  webhook: "Webhook",
  pagerduty: "PagerDuty",
  webpush: "Web Push"
}

export const channelFields: Readonly<Record<FormChannelType, ReadonlyArray<ChannelField>>> = {
  email: [
    { name: "recipients", label: "Recipients", kind: "list", required: true, hint: "E-mail addresses, one per line or separated by commas." },
    { name: "subject_template", label: "Subject template", kind: "text", hint: "Optional, e.g. “[statusgrid] {{title}}”; blank: the alert's title." }
  ],
  slack: [
    { name: "channel", label: "Slack channel", kind: "text", required: true, hint: "Where the messages go, e.g. #ops." },
    { name: "webhook_url", label: "Incoming-webhook URL", kind: "secret", hint: "https://hooks.slack.com/services/…; or a bot token below." },
    { name: "bot_token", label: "Bot token", kind: "secret", hint: "xoxb-…, instead of the webhook: replies in threads." },
    { name: "mention_users", label: "Mention", kind: "list", hint: "Slack user ids (U…) or @here / @channel, comma-separated." },
    { name: "thread_replies", label: "Reply in the thread of a subject's first alert (bot token)", kind: "checkbox" }
  ],
  discord: [
    { name: "webhook_url", label: "Webhook URL", kind: "secret", required: true, hint: "https://discord.com/api/webhooks/…" },
    { name: "mention_roles", label: "Mention roles", kind: "list", hint: "Role ids, comma-separated." }
  ],
  teams: [
    { name: "webhook_url", label: "Webhook URL", kind: "secret", required: true, hint: "The Workflows (or incoming-webhook) URL of the channel." },
    { name: "card_title", label: "Card title", kind: "text", hint: "Default: statusgrid." }
  ],
  sms: [
    { name: "phone_numbers", label: "Phone numbers", kind: "list", required: true, hint: "In international form (+14155550100), one per line or comma." },
    { name: "account_sid", label: "Twilio account SID", kind: "text", required: true, hint: "AC followed by 32 hexadecimal digits." },
    { name: "auth_token", label: "Twilio auth token", kind: "secret", required: true },
    { name: "from_number", label: "From number", kind: "text", required: true, hint: "Your Twilio number, e.g. +15005550006." },
    { name: "max_length", label: "Longest message (characters)", kind: "number", hint: "Longer texts are cut before the link. Default 160 (one SMS), at most 1600." }
  ],
  webhook: [
    { name: "url", label: "URL", kind: "text", required: true, hint: "Where statusgrid POSTs the JSON event, signed with X-Service-Signature." },
    { name: "method", label: "Method", kind: "select", options: ["POST", "PUT", "PATCH"] },
    { name: "headers", label: "Headers", kind: "lines", hint: "Optional, one “Name: value” per line (kept secret)." },
    { name: "signing_secret", label: "Signing secret", kind: "secret", hint: "Blank on create: one is generated and shown once." }
  ],
  pagerduty: [
    { name: "routing_key", label: "Integration (routing) key", kind: "secret", required: true, hint: "The 32-character Events API v2 key of the service." }
  ]
}

export const isFormChannelType = (type: string | null): type is FormChannelType => (formChannelTypes as ReadonlyArray<string>).includes(type ?? "")
