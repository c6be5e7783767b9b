import { Context, Effect, Layer, Schedule } from "effect"
import type { ChannelType } from "../domain/Channel.ts"
import * as Metrics from "../platform/Metrics.ts"
import { SecretBox } from "../platform/SecretBox.ts"
import * as InvitationMailer from "./InvitationMailer.ts"
import { Wakeup } from "./Wakeup.ts"
import { type Attempted, type Claimed, Outbox, OutboxConfig, messageOf, threadAfter } from "./Outbox.ts"
import { smsCost } from "./channels/sms.ts"
import type { Destination, Message, Sender, SendResult } from "./Sender.ts"
import { senderConfig } from "./channels/index.ts"
import { makeSenders } from "./senders.ts"

/** One sender per channel type (services/notifier/senders.ts). */
export class Senders extends Context.Service<Senders, Readonly<Record<ChannelType, Sender>>>()("statusgrid/notifier/Senders") {
  /** The senders with the operator's SMTP server and provider endpoints (README, Configuration). */
  static readonly layer = Layer.effect(Senders, senderConfig.pipe(Effect.map(makeSenders), Effect.orDie))
}

const attemptTimeoutMs = 10_000

/**
 * One attempt of a claimed delivery. An SMS first reserves what it costs
 * (segments × numbers) in the plan's monthly allowance; without room it
 * fails for good, unsent.
 */
const attempt = Effect.fn("Deliverer.attempt")(function*(outbox: Outbox["Service"], senders: Readonly<Record<ChannelType, Sender>>, claimed: Claimed, publicUrl: string) {
  const destination = claimed.destination
  yield* Effect.annotateCurrentSpan({
    "statusgrid.delivery.id": claimed.id,
    "statusgrid.delivery.attempt": claimed.attempts,
    "statusgrid.event.type": claimed.event_type,
    "statusgrid.channel.type": destination?.type ?? "unusable"
  })
  if (destination === undefined) {
    return { result: { ok: false, status: 0, retryable: false, error: claimed.unusable } satisfies SendResult, ms: 0 }
  }
  const message = claimed.message ?? messageOf(claimed.payload, claimed.event_type, `${publicUrl}/dashboard/${claimed.organization_slug}`)
  const messages = destination.type === "sms" ? smsCost(destination, message) : undefined
  const refused = messages === undefined ? undefined : yield* outbox.reserveSms(claimed, messages)
  if (refused !== undefined) return { result: { ok: false, status: 0, retryable: false, error: refused } satisfies SendResult, ms: 0 }
  return yield* send(senders, { ...claimed, destination }, message)
})

const send = (senders: Readonly<Record<ChannelType, Sender>>, claimed: Claimed & { readonly destination: Destination }, message: Message) =>
  Effect.promise(async (): Promise<{ result: SendResult; ms: number }> => {
    const started = performance.now()
    try {
      const result = await senders[claimed.destination.type](claimed.destination, message, {
        idempotencyKey: claimed.idempotency_key,
        timeoutMs: attemptTimeoutMs,
        ...(claimed.thread_ts === null ? {} : { threadTs: claimed.thread_ts })
      })
      return { result, ms: performance.now() - started }
    } catch (error) {
      // Senders never reject by contract; a bug in one is a failed attempt to retry, not a lost delivery.
      return { result: { ok: false, status: 0, retryable: true, error: `sender failed: ${String(error)}` }, ms: performance.now() - started }
    }
  })

/**
 * The delivery worker: claims due deliveries from the outbox and sends each
 * through its channel's sender, recording every attempt. Runs in every
 * serving process; the outbox's SKIP LOCKED claims share the work, and a
 * process killed mid-send leaves its claims to be retried after the lease,
 * with the same idempotency key.
 */
export const layer = Layer.effectDiscard(Effect.gen(function*() {
  const outbox = yield* Outbox
  const senders = yield* Senders
  const config = yield* Effect.orDie(OutboxConfig)
  const wakeup = yield* Wakeup
  const round = Effect.gen(function*() {
    const claimed = yield* outbox.claim
    // Queues at once; each channel and subject's deliveries one after another, in order, stopping at one that must be retried.
    const queues = new Map<string, Array<Claimed>>()
    for (const c of claimed) {
      const key = `${c.channel_id}|${c.order_key}`
      queues.set(key, [...(queues.get(key) ?? []), c])
    }
    // The round's attempts are recorded together; a crash before that resends them after the lease, with the same keys.
    const done: Array<Attempted> = []
    const released: Array<Claimed> = []
    yield* Effect.forEach(queues.values(), (queue) =>
      Effect.gen(function*() {
        // Slack threads: what the previous message of this queue started or closed decides where the next one goes.
        let thread: string | null | undefined
        for (const [i, queued] of queue.entries()) {
          const c = thread === undefined ? queued : { ...queued, thread_ts: thread }
          const { ms, result } = yield* attempt(outbox, senders, c, config.publicUrl)
          const channel = c.destination?.type ?? "unusable"
          Metrics.count(Metrics.deliveries, { channel, outcome: result.ok ? "delivered" : result.retryable ? "retryable_error" : "failed" })
          Metrics.observe(Metrics.deliverySeconds, { channel }, ms / 1000)
          done.push({ claimed: c, result, durationMs: ms })
          const next = threadAfter(c, result)
          if (next !== undefined) thread = next
          if (!result.ok && result.retryable) {
            released.push(...queue.slice(i + 1))
            return
          }
        }
      }), { concurrency: config.concurrency, discard: true })
    yield* outbox.recordAll(done)
    yield* outbox.release(released)
    if (claimed.length === 0) yield* wakeup.wait(config.pollMs)
  }).pipe(Effect.catchCause((cause) => Effect.logWarning("delivery round failed", cause).pipe(Effect.andThen(Effect.sleep("1 second")))))
  yield* round.pipe(Effect.forever, Effect.forkScoped)
  // The outbox's depth for the metrics, every 5 s (a scrape reads the last figures, never the database).
  const depth = { pending: 0, sending: 0 }
  yield* Metrics.gauges([
    [Metrics.outboxDepth, { status: "pending" }, () => depth.pending],
    [Metrics.outboxDepth, { status: "sending" }, () => depth.sending]
  ])
  yield* outbox.depth.pipe(
    Effect.tap((now) => Effect.sync(() => Object.assign(depth, now))),
    Effect.catchCause(() => Effect.void),
    Effect.repeat(Schedule.spaced("5 seconds")),
    Effect.forkScoped
  )
}))

/**
 * The worker with its outbox and senders, and the invitation mail worker,
 * for a serving process (needs SqlClient). `Wakeup.layer` is the same value here and in Consumer.layer, so
 * built together they share one instance: the consumer wakes this worker.
 */
export const serviceLayer = Layer.mergeAll(
  layer.pipe(Layer.provide(Layer.mergeAll(Outbox.layer.pipe(Layer.provide(SecretBox.layer)), Senders.layer, Wakeup.layer))),
  InvitationMailer.layer
)
