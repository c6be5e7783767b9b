import { type Cause, Config, Context, Deferred, Effect, Layer, Queue, Schema, type Scope, Stream } from "effect"
import { decodeDelta, type Delta } from "../domain/Event.ts"
import { Bus } from "./Bus.ts"
import * as Metrics from "./Metrics.ts"
import { RedisKeys } from "./RedisKeys.ts"

/**
 * What one subscriber wants from `sg:deltas`: whole sources by key, some
 * components of a source (the source's own component ids, as deltas name
 * them; the source's incident changes come with them), monitors by id, or
 * every monitor of an organization.
 */
export interface LiveFilter {
  readonly sources: ReadonlySet<string>
  /** source key -> the component ids wanted of it; a delta of that source passes when one of them changed. */
  readonly components: ReadonlyMap<string, ReadonlySet<string>>
  readonly monitors: ReadonlySet<string>
  /** Every monitor delta of this organization passes. */
  readonly organizationId?: string | undefined
}

export const emptyFilter: LiveFilter = { sources: new Set(), components: new Map(), monitors: new Set() }

/** Whether `delta` is something `filter` asks for. */
export const matches = (filter: LiveFilter, delta: Delta): boolean => {
  if (delta.kind === "monitor") return filter.monitors.has(delta.id) || filter.organizationId === delta.organization_id
  // The crowd's marker is about the whole source: every board showing any of it.
  if (delta.kind === "crowd") return filter.sources.has(delta.key) || filter.components.has(delta.key)
  if (filter.sources.has(delta.key)) return true
  const wanted = filter.components.get(delta.key)
  // A board shows the incidents of every source it holds a part of: an incident change reaches it whichever components moved.
  return wanted !== undefined && (delta.incidents === true || delta.components.some((c) => wanted.has(c.id)))
}

/**
 * What a subscriber receives: a delta with its sequence number in this
 * process (an event id for server-sent events), or `resync` when it fell
 * behind and its buffer was dropped: reload the state, then apply what follows.
 */
export type LiveMessage =
  | { readonly _tag: "delta"; readonly seq: number; readonly delta: Delta }
  | { readonly _tag: "resync"; readonly seq: number }

export interface LiveSubscription {
  /** The messages as a stream; it ends when `end` or the hub's `closeAll` is called. */
  readonly messages: Stream.Stream<LiveMessage>
  /** Replaces the filter (the stack's membership changed). */
  setFilter(filter: LiveFilter): Effect.Effect<void>
  /** Ends `messages` now, dropping what is buffered (the share token was revoked). */
  readonly end: Effect.Effect<void>
}

export interface LiveHubStats {
  readonly subscribers: number
  readonly received: number
  readonly malformed: number
  readonly resyncs: number
}

/**
 * One subscription per process to `sg:deltas` (the bus: Redis or the
 * in-process one), decoded once, fanned out to any number of subscribers,
 * each with its filter and a bounded buffer of `LIVE_BUFFER` messages. A
 * subscriber whose buffer is full loses what it holds and gets `resync`
 * instead, so a slow reader costs at most its buffer, never the process's
 * memory. Malformed deltas are logged and skipped. Deltas are at most once
 * (pub/sub): whoever subscribes later or reconnects reloads state first.
 */
export class LiveHub extends Context.Service<LiveHub, {
  /** A subscriber for the current scope; it is removed when the scope closes. */
  subscribe(filter: LiveFilter): Effect.Effect<LiveSubscription, never, Scope.Scope>
  readonly stats: Effect.Effect<LiveHubStats>
  /**
   * Ends every subscriber's messages and refuses new ones (they end at once): the HTTP server
   * runs it before it waits for open responses, so shutdown does not wait for event streams.
   */
  readonly closeAll: Effect.Effect<void>
}>()("statusgrid/platform/LiveHub") {
  static readonly layer = Layer.effect(
    LiveHub,
    Effect.gen(function*() {
      const bus = yield* Bus
      const capacity = yield* Config.schema(Schema.Int.check(Schema.isGreaterThan(0)), "LIVE_BUFFER").pipe(
        Config.withDefault(256),
        Effect.orDie
      )
      interface Subscriber {
        filter: LiveFilter
        readonly queue: Queue.Queue<LiveMessage, Cause.Done>
        ended: boolean
      }
      const subscribers = new Set<Subscriber>()
      yield* Metrics.gauges([[Metrics.liveClients, {}, () => subscribers.size]])
      let seq = 0
      let received = 0
      let malformed = 0
      let resyncs = 0
      let closed = false
      const endNow = (subscriber: Subscriber) =>
        Effect.suspend(() => {
          subscriber.ended = true
          return Queue.clear(subscriber.queue).pipe(Effect.andThen(Queue.end(subscriber.queue)), Effect.asVoid)
        })

      const fanOut = (text: string) =>
        Effect.gen(function*() {
          received += 1
          const decoded = decodeDelta(text)
          if (decoded._tag === "Failure") {
            malformed += 1
            return yield* Effect.logWarning("malformed delta on the bus skipped").pipe(
              Effect.annotateLogs({ channel: RedisKeys.deltas, message: text.slice(0, 200), issue: String(decoded.failure).slice(0, 500) })
            )
          }
          const message: LiveMessage = { _tag: "delta", seq: ++seq, delta: decoded.success }
          for (const subscriber of subscribers) {
            if (subscriber.ended || !matches(subscriber.filter, decoded.success)) continue
            if (Queue.offerUnsafe(subscriber.queue, message)) continue
            // Full: what it holds is stale anyway; it reloads instead.
            resyncs += 1
            yield* Queue.clear(subscriber.queue)
            Queue.offerUnsafe(subscriber.queue, { _tag: "resync", seq: message.seq })
          }
        })

      /** Everyone reloads: deltas were missed while the subscription was down. */
      const resyncAll = Effect.suspend(() => {
        const at = ++seq
        return Effect.forEach(subscribers, (subscriber) =>
          subscriber.ended ? Effect.void : Queue.clear(subscriber.queue).pipe(
            Effect.andThen(Effect.sync(() => Queue.offerUnsafe(subscriber.queue, { _tag: "resync", seq: at })))
          ), { discard: true })
      })

      // The one subscription, held in the background: a bus that is down at start or drops the
      // subscription is retried (1 s, doubling to 30 s) without holding the process up, and the
      // subscribers resync once it is back.
      let failures = 0
      const subscribed = yield* Deferred.make<void>()
      const subscription = Effect.scoped(Effect.gen(function*() {
        const deltas = yield* bus.subscribe(RedisKeys.deltas)
        yield* Deferred.succeed(subscribed, undefined)
        if (failures > 0) {
          yield* Effect.logInfo("live updates: subscribed to the bus again; open streams resync")
          yield* resyncAll
        }
        failures = 0
        yield* Stream.runForEach(deltas, fanOut)
      }))
      yield* subscription.pipe(
        Effect.exit,
        Effect.flatMap((exit) =>
          Effect.gen(function*() {
            // It never ends by itself: a failure or an end means the bus dropped it.
            failures += 1
            if (failures === 1) {
              yield* Effect.logWarning("live updates: the bus subscription ended; retrying", exit._tag === "Failure" ? exit.cause : "ended")
            }
            yield* Effect.sleep(Math.min(1000 * 2 ** (failures - 1), 30_000))
          })
        ),
        Effect.forever,
        Effect.forkScoped
      )

      const subscribe = Effect.fn("LiveHub.subscribe")(function*(filter: LiveFilter) {
        // A stream opened as the process starts waits briefly for the bus (a bus that is down does not
        // hold it: it resyncs once the subscription is back).
        yield* Deferred.await(subscribed).pipe(Effect.timeoutOption("2 seconds"))
        const queue = yield* Queue.dropping<LiveMessage, Cause.Done>(capacity)
        const subscriber: Subscriber = { filter, queue, ended: false }
        yield* Effect.acquireRelease(
          Effect.sync(() => subscribers.add(subscriber)),
          () => Effect.sync(() => subscribers.delete(subscriber)).pipe(Effect.andThen(Queue.shutdown(queue)))
        )
        if (closed) yield* endNow(subscriber)
        return {
          messages: Stream.fromQueue(queue),
          setFilter: (next: LiveFilter) => Effect.sync(() => void (subscriber.filter = next)),
          end: endNow(subscriber)
        } satisfies LiveSubscription
      })

      return LiveHub.of({
        subscribe,
        stats: Effect.sync(() => ({ subscribers: subscribers.size, received, malformed, resyncs })),
        closeAll: Effect.suspend(() => {
          closed = true
          return Effect.forEach(subscribers, endNow, { discard: true })
        })
      })
    })
  )
}
