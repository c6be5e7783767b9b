import type { AnyChannelSettings, ChannelType, NotificationPayload } from "../domain/Channel.ts"

/** What one delivery says, whatever the channel: the spec's webhook payload plus text for people. */
export interface Message {
  /** The event type: `component.status_changed`, `monitor.down`, `incident.created`, `test`, ... */
  readonly event: string
  /** One line, e.g. "🔴 API is critical (was operational)". */
  readonly title: string
  /** A few lines for chat and e-mail bodies. */
  readonly text: string
  /** Link to the details in the dashboard. */
  readonly url: string
  /** A short link to the same place (`<PUBLIC_URL>/a/<code>`), for SMS; `url` when absent. */
  readonly shortUrl?: string
  /** critical, degraded or info: colours, PagerDuty severity. */
  readonly level: "critical" | "degraded" | "info"
  /** The spec's webhook payload (event, timestamp, stack, component, incident). */
  readonly payload: NotificationPayload
  /** Template values the payload does not hold (incident title and update count, duration), by placeholder name. */
  readonly vars?: Readonly<Record<string, string>>
}

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
