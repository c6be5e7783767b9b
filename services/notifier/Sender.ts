import { Schema } from "effect"
import { type AnyChannelSettings, type ChannelType, NotificationPayload } from "../domain/Channel.ts"
import { AlertLevel } from "../domain/Rule.ts"

/** What one delivery says, whatever the channel: the webhook payload plus text for people. */
export const Message = Schema.Struct({
  /** The event type: `component.status_changed`, `monitor.down`, `incident.created`, `test`, ... */
  event: Schema.String,
  /** One line, e.g. "🔴 API is critical (was operational)". */
  title: Schema.String,
  /** A few lines for chat and e-mail bodies. */
  text: Schema.String,
  /** Link to the details in the dashboard. */
  url: Schema.String,
  /** A short link to the same place (`<PUBLIC_URL>/a/<code>`), for SMS; `url` when absent. */
  shortUrl: Schema.optionalKey(Schema.String),
  /** critical, degraded or info: colours, PagerDuty severity. */
  level: AlertLevel,
  /** The webhook payload (`NotificationPayload`: event, timestamp, stack, component, incident). */
  payload: NotificationPayload,
  /** Template values the payload does not hold (incident title and update count, duration), by placeholder name. */
  vars: Schema.optionalKey(Schema.Record(Schema.String, Schema.String))
})
export type Message = typeof Message.Type

/** Where one delivery goes: the channel's full settings, secrets included (decrypted by the caller). */
export interface Destination<T extends ChannelType = ChannelType> {
  readonly type: T
  readonly name: string
  readonly settings: AnyChannelSettings & Readonly<Record<string, unknown>>
}

export interface SendContext {
  /** Same delivery, same key, on every attempt: receivers drop copies by it. */
  readonly idempotencyKey: string
  /** Attempt deadline. */
  readonly timeoutMs: number
  /** Slack with a bot token and thread replies: the `ts` of the thread to reply in. */
  readonly threadTs?: string
}

/** The outcome of one attempt. Retryable: network errors, timeouts, 5xx and 429; not other 4xx. */
export interface SendResult {
  readonly ok: boolean
  /** HTTP status (or SMTP reply code); 0 when there was none. */
  readonly status: number
  readonly retryable: boolean
  /** From Retry-After (429/503), in milliseconds. */
  readonly retryAfterMs?: number
  /** "" when ok. */
  readonly error: string
  /** What the receiver called the message (Slack's `ts`), when it says: later replies thread under it. */
  readonly reference?: string
}

/** Sends one message to one destination. Never rejects: every failure is a SendResult. */
export type Sender = (destination: Destination, message: Message, context: SendContext) => Promise<SendResult>
