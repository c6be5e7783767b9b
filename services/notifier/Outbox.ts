import { Config, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { ChannelType, NotificationPayload } from "../domain/Channel.ts"
import { SecretBox } from "../platform/SecretBox.ts"
import type { Destination, Message, SendResult } from "./Sender.ts"

/** Delivery settings (README, Configuration). */
export const OutboxConfig = Config.all({
  pollMs: Config.Int("NOTIFIER_POLL_MS").pipe(Config.withDefault(500)),
  batch: Config.Int("NOTIFIER_BATCH").pipe(Config.withDefault(50)),
  /** A claimed delivery is someone else's to retry if its sender has not finished by then (a crash). */
  leaseMs: Config.Int("NOTIFIER_LEASE_MS").pipe(Config.withDefault(60_000)),
  maxAttempts: Config.Int("NOTIFIER_MAX_ATTEMPTS").pipe(Config.withDefault(8)),
  backoffBaseMs: Config.Int("NOTIFIER_BACKOFF_BASE_MS").pipe(Config.withDefault(1_000)),
  backoffMaxMs: Config.Int("NOTIFIER_BACKOFF_MAX_MS").pipe(Config.withDefault(600_000)),
  publicUrl: Config.String("PUBLIC_URL").pipe(Config.withDefault("http://localhost:8080"))
})
export type OutboxConfig = typeof OutboxConfig extends Config.Config<infer A> ? A : never

/** A delivery claimed for one attempt, with where it goes. */
export interface Claimed {
  readonly id: string
  readonly organization_slug: string
  readonly event_type: string
  readonly idempotency_key: string
  readonly attempts: number
  readonly payload: NotificationPayload
  /** The words decided when the alert was made (rule template applied); null for test sends. */
  readonly message: Message | null
  readonly destination: Destination | undefined
  /** Why there is no destination (disabled channel, unreadable secrets). */
  readonly unusable: string
}

/** Exponential backoff with full jitter, at least what Retry-After asked for. */
export const nextDelayMs = (attempts: number, result: SendResult, base: number, max: number, random = Math.random): number => {
  const exponential = Math.min(max, base * 2 ** Math.max(0, attempts - 1))
  const jittered = exponential / 2 + random() * (exponential / 2)
  return Math.min(max, Math.max(jittered, result.retryAfterMs ?? 0))
}

const statusEmoji: Record<string, string> = { operational: "🟢", degraded: "🟡", critical: "🔴", down: "🔴", maintenance: "🔧" }

/** The words of a delivery for people, from the stored payload. */
export const messageOf = (payload: NotificationPayload, eventType: string, dashboardUrl: string): Message => {
  const { component, stack } = payload
  const current = component.current_status
  const level = current === "critical" || current === "down" ? "critical" : current === "degraded" ? "degraded" : "info"
  const title = eventType === "test"
    ? `Test notification from statusgrid: ${component.name} is ${current}`
    : `${statusEmoji[current] ?? "•"} ${component.name} is ${current} (was ${component.previous_status})`
  return {
    event: payload.event,
    title,
    text: `${component.name} in ${stack.name}: ${component.previous_status} → ${current}.`,
    url: dashboardUrl,
    level,
    payload
  }
}

/**
 * The delivery outbox in PostgreSQL (`deliveries`, `delivery_attempts`):
 * claims due deliveries (SKIP LOCKED, so any number of processes share the
 * work, each delivery leased for one attempt at a time), and records each
 * attempt's outcome: delivered, retried later with backoff, or failed.
 */
export class Outbox extends Context.Service<Outbox, {
  readonly claim: Effect.Effect<ReadonlyArray<Claimed>>
  record(claimed: Claimed, result: SendResult, durationMs: number): Effect.Effect<void>
}>()("statusgrid/notifier/Outbox") {
  static readonly layer = Layer.effect(
    Outbox,
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const box = yield* SecretBox
      const config = yield* Effect.orDie(OutboxConfig)

      const claim = Effect.gen(function*() {
        const rows = yield* sql<{
          id: string
          slug: string
          event_type: string
          idempotency_key: string
          attempts: number
          payload: NotificationPayload | string
          message: Message | string | null
          type: ChannelType
          name: string
          enabled: boolean
          settings: Record<string, unknown> | string
          secrets: Uint8Array | null
        }>`
          WITH due AS (
            SELECT id FROM deliveries
            WHERE status IN ('pending', 'sending') AND next_attempt_at <= now()
            ORDER BY next_attempt_at LIMIT ${config.batch}
            FOR UPDATE SKIP LOCKED
          )
          UPDATE deliveries AS d
          SET status = 'sending', attempts = d.attempts + 1,
              next_attempt_at = now() + ${`${config.leaseMs} milliseconds`}::interval
          FROM due, channels c, organizations o
          WHERE d.id = due.id AND c.id = d.channel_id AND o.id = d.organization_id
          RETURNING d.id, o.slug, d.event_type, d.idempotency_key, d.attempts, d.payload, d.message,
            c.type, c.name, c.enabled, c.settings, c.secrets`.pipe(Effect.orDie)
        return yield* Effect.forEach(rows, (row) =>
          Effect.gen(function*() {
            const settings = typeof row.settings === "string" ? JSON.parse(row.settings) as Record<string, unknown> : row.settings
            const secrets = row.secrets === null
              ? { _tag: "Success" as const, success: "{}" }
              : yield* Effect.result(box.open(row.secrets))
            const usable = row.enabled && secrets._tag === "Success"
            return {
              id: row.id,
              organization_slug: row.slug,
              event_type: row.event_type,
              idempotency_key: row.idempotency_key,
              attempts: row.attempts,
              payload: typeof row.payload === "string" ? JSON.parse(row.payload) as NotificationPayload : row.payload,
              message: typeof row.message === "string" ? JSON.parse(row.message) as Message : row.message,
              destination: usable
                ? { type: row.type, name: row.name, settings: { ...settings, ...JSON.parse(secrets.success) } } as Destination
                : undefined,
              unusable: !row.enabled ? "channel is disabled" : secrets._tag === "Failure" ? secrets.failure.message : ""
            } satisfies Claimed
          }))
      })

      const record = (claimed: Claimed, result: SendResult, durationMs: number) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`
            INSERT INTO delivery_attempts (delivery_id, duration_ms, http_status, error)
            VALUES (${claimed.id}::uuid, ${Math.max(0, Math.round(durationMs))},
              ${result.status >= 100 && result.status <= 599 ? result.status : null}, ${result.ok ? null : result.error})`
          if (result.ok) {
            yield* sql`UPDATE deliveries SET status = 'delivered', delivered_at = now(), last_error = NULL
              WHERE id = ${claimed.id}::uuid`
          } else if (result.retryable && claimed.attempts < config.maxAttempts) {
            const delay = nextDelayMs(claimed.attempts, result, config.backoffBaseMs, config.backoffMaxMs)
            yield* sql`UPDATE deliveries SET status = 'pending', last_error = ${result.error},
                next_attempt_at = now() + ${`${Math.round(delay)} milliseconds`}::interval
              WHERE id = ${claimed.id}::uuid`
          } else {
            yield* sql`UPDATE deliveries SET status = 'failed', last_error = ${result.error} WHERE id = ${claimed.id}::uuid`
          }
        })).pipe(Effect.orDie)

      return Outbox.of({ claim, record })
    })
  )
}
