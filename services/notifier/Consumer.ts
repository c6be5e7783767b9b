import { Effect, Layer } from "effect"
import type { StatusEvent } from "../domain/Event.ts"
import { Bus } from "../platform/Bus.ts"
import { RedisKeys } from "../poller/Publisher.ts"
import { enqueueComponentChange } from "./Matcher.ts"

/** The consumer group of the event stream; every process reads as the one consumer of that name. */
export const group = "notifier"
const consumer = "notifier"

/** One stream entry into the outbox; events without rule triggers yet (monitor, incident) are skipped. */
const handle = (fields: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    if (fields["type"] !== "component.status_changed" || fields["payload"] === undefined) return
    yield* enqueueComponentChange(JSON.parse(fields["payload"]) as StatusEvent)
  })

/**
 * Reads the event stream through a consumer group and turns matching events
 * into outbox rows, acknowledging each entry only after its rows are written
 * (at least once). Entries read but not acknowledged (a crash, a database
 * error) are read again first on every round; a second handling writes
 * nothing new, as deliveries are keyed by event and channel. All processes
 * read as one consumer, so a process that dies leaves no entries behind.
 */
export const layer = Layer.effectDiscard(Effect.gen(function*() {
  const bus = yield* Bus
  yield* bus.xgroupCreate(RedisKeys.events, group, "$")
  const round = Effect.gen(function*() {
    const pending = yield* bus.xreadgroup(RedisKeys.events, group, consumer, { count: 100, blockMs: 0, pending: true })
    const entries = pending.length > 0 ? pending : yield* bus.xreadgroup(RedisKeys.events, group, consumer, { count: 100, blockMs: 1000 })
    for (const entry of entries) {
      yield* handle(entry.fields)
      yield* bus.xack(RedisKeys.events, group, [entry.id])
    }
  }).pipe(Effect.catchCause((cause) => Effect.logWarning("event handling failed; retrying", cause).pipe(Effect.andThen(Effect.sleep("1 second")))))
  yield* round.pipe(Effect.forever, Effect.forkScoped)
}))
