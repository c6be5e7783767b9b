import { Clock, Config, Effect, Layer, Result } from "effect"
import { randomBytes } from "node:crypto"
import * as Os from "node:os"
import { ackPurpose } from "../domain/api/Alerts.ts"
import { decodeStreamEvent, type StreamEvent } from "../domain/Event.ts"
import { Bus } from "../platform/Bus.ts"
import * as Metrics from "../platform/Metrics.ts"
import { SecretBox } from "../platform/SecretBox.ts"
import { RedisKeys } from "../platform/RedisKeys.ts"
import { escalateDue, flushDueGroups, type LinkContext, releaseHeld } from "./AlertStore.ts"
import { enqueueEvents } from "./Matcher.ts"
import { Wakeup } from "./Wakeup.ts"

/** The consumer group of the event stream; each process reads as its own consumer in it. */
export const group = "notifier"

export const ConsumerConfig = Config.all({
  /** Stream entries read and handled as one batch (one transaction). */
  batch: Config.Int("NOTIFIER_EVENT_BATCH").pipe(Config.withDefault(500)),
  /** Entries another consumer read but did not acknowledge for this long are taken over (that process died). */
  claimIdleMs: Config.Int("NOTIFIER_CLAIM_IDLE_MS").pipe(Config.withDefault(30_000)),
  publicUrl: Config.String("PUBLIC_URL").pipe(Config.withDefault("http://localhost:8080")),
  /** How often grouping windows and escalation steps are checked. */
  timerMs: Config.Int("NOTIFIER_TIMER_MS").pipe(Config.withDefault(500)),
  /** A held alert waits at least this long after it was held, so a recovery behind it on the stream cancels it. */
  holdSettleMs: Config.Int("NOTIFIER_HOLD_SETTLE_MS").pipe(Config.withDefault(5000))
})

/**
 * A stream entry's event, decoded by the domain Schema (services/domain/Event.ts), or the
 * reason it is not one: such an entry is logged and acknowledged, never retried forever.
 */
const eventOf = (fields: Readonly<Record<string, string>>): Result.Result<StreamEvent, string> => {
  const payload = fields["payload"]
  if (payload === undefined) return Result.fail("no payload field")
  return Result.mapError(decodeStreamEvent(payload), (error) => error.message)
}

const linkContext = Effect.gen(function*() {
  const box = yield* SecretBox
  const config = yield* Effect.orDie(ConsumerConfig)
  const context: LinkContext = { publicUrl: config.publicUrl, ackToken: (id) => box.sign(ackPurpose, id) }
  return { context, config }
})

/**
 * Reads the event stream through a consumer group and turns matching events
 * into alerts and outbox rows (services/notifier/Matcher.ts), a batch of
 * entries in one transaction, in stream order, and acknowledges the batch
 * only after its rows are written (at least once). Each process reads as
 * its own consumer, so no two handle the same entry at once. Every round
 * takes, in order: this consumer's entries read but not acknowledged (a
 * database error), entries of another consumer left unacknowledged for
 * `NOTIFIER_CLAIM_IDLE_MS` (a process that died; checked once a second),
 * then new entries. A second handling writes nothing new: deliveries are
 * keyed by event and channel, and the cooldown has recorded the first. The
 * group is created once at the stream's end; after that its position is
 * kept by the bus (Redis), so events written while no notifier runs are
 * read when one starts.
 */
const consumerLoop = Layer.effectDiscard(Effect.gen(function*() {
  const bus = yield* Bus
  const wakeup = yield* Wakeup
  const { config, context } = yield* linkContext
  const consumer = `notifier-${Os.hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`
  yield* bus.xgroupCreate(RedisKeys.events, group, "$")
  let claimedAt = 0
  const next = Effect.gen(function*() {
    const own = yield* bus.xreadgroup(RedisKeys.events, group, consumer, { count: config.batch, blockMs: 0, pending: true })
    if (own.length > 0) return own
    const now = yield* Clock.currentTimeMillis
    if (now - claimedAt >= 1000) {
      claimedAt = now
      const orphans = yield* bus.xautoclaim(RedisKeys.events, group, consumer, config.claimIdleMs, config.batch)
      if (orphans.length > 0) return orphans
    }
    return yield* bus.xreadgroup(RedisKeys.events, group, consumer, { count: config.batch, blockMs: 1000 })
  })
  const round = Effect.gen(function*() {
    const entries = yield* next
    const events: Array<StreamEvent> = []
    for (const entry of entries) {
      const event = eventOf(entry.fields)
      if (Result.isFailure(event)) {
        yield* Effect.logWarning("skipping a stream entry that is not an event").pipe(
          Effect.annotateLogs({ entry: entry.id, reason: event.failure })
        )
      } else {
        events.push(event.success)
      }
    }
    const outcomes = yield* enqueueEvents(events, context)
    Metrics.count(Metrics.notifierEvents, { outcome: "handled" }, events.length)
    if (entries.length > events.length) Metrics.count(Metrics.notifierEvents, { outcome: "malformed" }, entries.length - events.length)
    let alerts = 0
    for (const o of outcomes) for (const outcome of o) if (outcome === "alert") alerts++
    if (alerts > 0) Metrics.count(Metrics.alertsMade, {}, alerts)
    if (alerts > 0) yield* wakeup.wake
    if (entries.length > 0) yield* bus.xack(RedisKeys.events, group, entries.map((e) => e.id))
  }).pipe(Effect.catchCause((cause) => Effect.logWarning("event handling failed; retrying", cause).pipe(Effect.andThen(Effect.sleep("1 second")))))
  yield* round.pipe(Effect.forever, Effect.forkScoped)
}))

/**
 * Closes due grouping windows, sends due escalation steps and the alerts
 * schedules held whose window opened, every
 * `NOTIFIER_TIMER_MS`; rows are claimed with SKIP LOCKED, so every process
 * may run it.
 */
const timersLoop = Layer.effectDiscard(Effect.gen(function*() {
  const { config, context } = yield* linkContext
  const wakeup = yield* Wakeup
  const round = Effect.gen(function*() {
    const flushed = yield* flushDueGroups(context)
    const escalated = yield* escalateDue()
    const released = yield* releaseHeld(context, config.holdSettleMs)
    if (flushed + escalated + released > 0) yield* wakeup.wake
    yield* Effect.sleep(config.timerMs)
  }).pipe(Effect.catchCause((cause) => Effect.logWarning("notifier timers failed; retrying", cause).pipe(Effect.andThen(Effect.sleep("1 second")))))
  yield* round.pipe(Effect.forever, Effect.forkScoped)
}))

/** The rules engine of a serving process: the event consumer and the timers (needs SqlClient and Bus). */
export const layer = Layer.mergeAll(consumerLoop, timersLoop).pipe(Layer.provide(Layer.mergeAll(SecretBox.layer, Wakeup.layer)))
