import { Clock, Config, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { claimDue } from "../platform/ClaimDue.ts"
import { ChannelType, NotificationPayload } from "../domain/Channel.ts"
import { JsonColumn, recordOf, rowsOf } from "../platform/Rows.ts"
import { SecretBox, secretBinding } from "../platform/SecretBox.ts"
import { type Destination, Message, type SendResult } from "./Sender.ts"

/** The rows of the queries below, decoded by Schemas compiled once (services/platform/Rows.ts). */
const deliveriesAllowanceUsedRows = rowsOf("deliveries", Schema.Struct({
  allowance: Schema.NullOr(Schema.Number),
  used: Schema.Number
}))

/** Delivery settings (README, Configuration). */
export const OutboxConfig = Config.all({
  pollMs: Config.Int("NOTIFIER_POLL_MS").pipe(Config.withDefault(500)),
  batch: Config.Int("NOTIFIER_BATCH").pipe(Config.withDefault(200)),
  /** Attempts in flight at once per process (each to a different channel and subject). */
  concurrency: Config.Int("NOTIFIER_CONCURRENCY").pipe(Config.withDefault(32)),
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
  readonly channel_id: string
  /** Deliveries of one channel and order key (the alert's subject) are sent in order, one at a time. */
  readonly order_key: string
  readonly organization_slug: string
  readonly event_type: string
  readonly idempotency_key: string
  readonly attempts: number
  readonly payload: NotificationPayload
  /** The words decided when the alert was made (rule template applied); null for test sends. */
  readonly message: Message | null
  /** Slack with a bot token: the thread this delivery replies in; null: it starts one. */
  readonly thread_ts: string | null
  readonly destination: Destination | undefined
  /** Why there is no destination (disabled channel, unreadable secrets). */
  readonly unusable: string
}

/** The last threaded delivery of the same channel and subject. */
const Previous = Schema.Struct({
  thread_ref: Schema.String,
  event_type: Schema.String,
  delivered_at: Schema.NullOr(Schema.String)
})
type Previous = typeof Previous.Type

/** The sealed secret settings of a channel: JSON of an object. */
const sealedSettings = recordOf("channels", Schema.fromJsonString(Schema.Record(Schema.String, Schema.Unknown)))

/** A delivery as the claim returns it, with its channel; jsonb columns decoded once, here. */
const decodeClaimed = rowsOf("deliveries", Schema.Struct({
  id: Schema.String,
  seq: Schema.Union([Schema.String, Schema.Number, Schema.BigInt]),
  channel_id: Schema.String,
  channel_organization_id: Schema.String,
  order_key: Schema.String,
  slug: Schema.String,
  event_type: Schema.String,
  idempotency_key: Schema.String,
  attempts: Schema.Number,
  payload: JsonColumn(NotificationPayload),
  message: Schema.NullOr(JsonColumn(Message)),
  previous: Schema.NullOr(JsonColumn(Previous)),
  type: ChannelType,
  name: Schema.String,
  enabled: Schema.Boolean,
  settings: JsonColumn(Schema.Record(Schema.String, Schema.Unknown)),
  secrets: Schema.NullOr(Schema.Uint8Array)
}))

const threadEnds = new Set(["component.recovered", "monitor.recovered", "incident.resolved"])
const threadMaxAgeMs = 24 * 3_600_000

/**
 * The thread a Slack delivery replies in: the subject's open thread, unless
 * its last message closed it (a recovery, a resolution) or is a day old;
 * then the delivery starts a new one.
 */
export const threadOf = (previous: Previous | null, now: number): string | null =>
  previous === null || threadEnds.has(previous.event_type) ||
    (previous.delivered_at !== null && now - Date.parse(previous.delivered_at) > threadMaxAgeMs)
    ? null
    : previous.thread_ref

/** The thread the next delivery of the same channel and subject replies in, after `claimed` got `result`. */
export const threadAfter = (claimed: Claimed, result: SendResult): string | null | undefined =>
  !result.ok || result.reference === undefined ? undefined
  : threadEnds.has(claimed.event_type) ? null
  : claimed.thread_ts ?? result.reference

/** One finished attempt. */
export interface Attempted {
  readonly claimed: Claimed
  readonly result: SendResult
  readonly durationMs: number
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
 * claims due deliveries in the order they were written (SKIP LOCKED, so any
 * number of processes share the work, each delivery leased for one attempt
 * at a time; a delivery waits while an earlier one of its channel and subject
 * waits for a retry or is being sent), and records each attempt's outcome:
 * delivered, retried later with backoff, or failed.
 */
export class Outbox extends Context.Service<Outbox, {
  readonly claim: Effect.Effect<ReadonlyArray<Claimed>>
  record(claimed: Claimed, result: SendResult, durationMs: number): Effect.Effect<void>
  /** Records several attempts at once. */
  recordAll(attempts: ReadonlyArray<Attempted>): Effect.Effect<void>
  /** Hands claimed deliveries back unattempted (they must not overtake an earlier one of their channel that failed). */
  release(claimed: ReadonlyArray<Claimed>): Effect.Effect<void>
  /**
   * Reserves the SMS messages (segments × numbers) an SMS delivery costs in
   * its organization's monthly allowance before it is sent; a retry keeps
   * its reservation. Returns why not when the plan's allowance has no room.
   */
  reserveSms(claimed: Claimed, messages: number): Effect.Effect<string | undefined>
  /** Deliveries waiting (`pending`) and claimed (`sending`), for the metrics; read through the partial index of open deliveries. */
  readonly depth: Effect.Effect<{ readonly pending: number; readonly sending: number }>
}>()("statusgrid/notifier/Outbox") {
  static readonly layer = Layer.effect(
    Outbox,
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const box = yield* SecretBox
      const config = yield* Effect.orDie(OutboxConfig)

      /**
       * The outbox's own bookkeeping commits without waiting for the disk: a
       * claim or an attempt's record lost in a PostgreSQL crash only means the
       * delivery is sent again after its lease, with the same idempotency key,
       * which at-least-once delivery allows. Saves the WAL flush (and its
       * stalls) on every round. The rules engine's writes stay synchronous.
       */
      const relaxed = <A, E>(statement: Effect.Effect<A, E>) =>
        sql.withTransaction(Effect.andThen(sql`SET LOCAL synchronous_commit = off`, statement))

      const claim = Effect.gen(function*() {
        const rows = yield* claimDue(sql, {
          table: "deliveries",
          alias: "d",
          key: "id",
          limit: config.batch,
          leaseMs: config.leaseMs,
          orderBy: "seq",
          // First in, first out per channel and subject: not past an earlier one that waits for a retry or is being sent.
          alsoDue: sql`AND NOT EXISTS (
            SELECT 1 FROM deliveries e
            WHERE e.channel_id = d.channel_id AND e.order_key = d.order_key AND e.status IN ('pending', 'sending')
              AND e.seq < d.seq AND e.next_attempt_at > now())`,
          join: sql`, channels c, organizations o`,
          joinOn: sql`AND c.id = d.channel_id AND o.id = d.organization_id`,
          returning: sql`d.id, d.seq, d.channel_id, c.organization_id AS channel_organization_id, d.order_key, o.slug, d.event_type, d.idempotency_key, d.attempts,
            COALESCE(d.payload, (SELECT a.payload FROM alerts a WHERE a.id = d.alert_id)) AS payload,
            COALESCE(d.message, (SELECT a.message FROM alerts a WHERE a.id = d.alert_id)) AS message,
            CASE WHEN c.type = 'slack' AND d.order_key <> '' THEN (
              SELECT jsonb_build_object('thread_ref', e.thread_ref, 'event_type', e.event_type, 'delivered_at', e.delivered_at)
              FROM deliveries e
              WHERE e.channel_id = d.channel_id AND e.order_key = d.order_key AND e.seq < d.seq AND e.thread_ref IS NOT NULL
              ORDER BY e.seq DESC LIMIT 1) END AS previous,
            c.type, c.name, c.enabled, c.settings, c.secrets`
        }).pipe(relaxed, Effect.orDie, Effect.flatMap(decodeClaimed))
        const ordered = rows.toSorted((a, b) => Number(a.seq) - Number(b.seq))
        const now = yield* Clock.currentTimeMillis
        return yield* Effect.forEach(ordered, (row) =>
          Effect.gen(function*() {
            const secrets = row.secrets === null
              ? { _tag: "Success" as const, success: "{}" }
              : yield* Effect.result(box.open(row.secrets, secretBinding("channel secrets", row.channel_organization_id, row.channel_id)))
            const usable = row.enabled && secrets._tag === "Success"
            return {
              id: row.id,
              channel_id: row.channel_id,
              order_key: row.order_key,
              organization_slug: row.slug,
              event_type: row.event_type,
              idempotency_key: row.idempotency_key,
              attempts: row.attempts,
              payload: row.payload,
              message: row.message,
              thread_ts: threadOf(row.previous, now),
              destination: usable
                ? { type: row.type, name: row.name, settings: { ...row.settings, ...sealedSettings(secrets.success) } } as Destination
                : undefined,
              unusable: !row.enabled ? "channel is disabled" : secrets._tag === "Failure" ? secrets.failure.message : ""
            } satisfies Claimed
          }))
      })

      /** The attempts and the deliveries' new states, for any number of attempts, in one statement (atomic, one round trip). */
      const recordAll = (attempts: ReadonlyArray<Attempted>) => {
        if (attempts.length === 0) return Effect.void
        const rows = attempts.map(({ claimed, durationMs, result }) => {
          const retry = !result.ok && result.retryable && claimed.attempts < config.maxAttempts
          return {
            id: claimed.id,
            status: result.ok ? "delivered" : retry ? "pending" : "failed",
            delay_ms: retry ? Math.round(nextDelayMs(claimed.attempts, result, config.backoffBaseMs, config.backoffMaxMs)) : 0,
            duration_ms: Math.max(0, Math.round(durationMs)),
            http_status: result.status >= 100 && result.status <= 599 ? result.status : null,
            error: result.ok ? null : result.error,
            thread_ref: result.ok && result.reference !== undefined ? (claimed.thread_ts ?? result.reference) : null
          }
        })
        return sql`
          WITH r AS (
            SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
              AS t(id uuid, status text, delay_ms int, duration_ms int, http_status int, error text, thread_ref text)
          ), attempt AS (
            INSERT INTO delivery_attempts (delivery_id, duration_ms, http_status, error)
            SELECT id, duration_ms, http_status, error FROM r
          )
          UPDATE deliveries d SET status = r.status,
            delivered_at = CASE WHEN r.status = 'delivered' THEN now() END,
            last_error = r.error,
            thread_ref = COALESCE(r.thread_ref, d.thread_ref),
            next_attempt_at = CASE WHEN r.status = 'pending' THEN now() + make_interval(secs => r.delay_ms / 1000.0) ELSE d.next_attempt_at END
          FROM r WHERE d.id = r.id`.pipe(relaxed, Effect.asVoid, Effect.orDie)
      }

      const release = (claimed: ReadonlyArray<Claimed>) =>
        claimed.length === 0 ? Effect.void : sql`
          UPDATE deliveries SET status = 'pending', attempts = attempts - 1, next_attempt_at = now()
          WHERE id IN ${sql.in(claimed.map((c) => c.id))} AND status = 'sending'`.pipe(Effect.asVoid, Effect.orDie)

      // One organization's reservations one at a time (a transaction-scoped advisory lock), so two
      // deliveries sent at once cannot both take the allowance's last messages.
      const reserveSms = (claimed: Claimed, messages: number) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT pg_advisory_xact_lock(hashtext('sms-allowance:' || organization_id::text)) FROM deliveries WHERE id = ${claimed.id}::uuid`
          const [row] = yield* sql`
            SELECT p.sms_per_month AS allowance,
              COALESCE((SELECT sum(e.sms_segments) FROM deliveries e
                WHERE e.organization_id = d.organization_id AND e.sms_segments > 0
                  AND e.created_at >= date_trunc('month', now()) AND e.id <> d.id), 0)::int AS used
            FROM deliveries d JOIN organizations o ON o.id = d.organization_id JOIN plans p ON p.id = o.plan_id
            WHERE d.id = ${claimed.id}::uuid`.pipe(Effect.flatMap(deliveriesAllowanceUsedRows))
          if (row === undefined) return undefined
          if (row.allowance !== null && row.used + messages > row.allowance) {
            return `the plan's SMS allowance is used up this month (${row.used} of ${row.allowance} messages sent; this one needs ${messages})`
          }
          yield* sql`UPDATE deliveries SET sms_segments = ${messages} WHERE id = ${claimed.id}::uuid`
          return undefined
        })).pipe(Effect.orDie)

      const depth = sql<{ status: string; n: number }>`
        SELECT status, count(*)::int AS n FROM deliveries WHERE status IN ('pending', 'sending') GROUP BY status`.pipe(
        Effect.map((rows) => ({
          pending: rows.find((r) => r.status === "pending")?.n ?? 0,
          sending: rows.find((r) => r.status === "sending")?.n ?? 0
        })),
        Effect.orDie
      )

      return Outbox.of({
        claim,
        record: (claimed, result, durationMs) => recordAll([{ claimed, result, durationMs }]),
        recordAll,
        release,
        reserveSms,
        depth
      })
    })
  )
}
