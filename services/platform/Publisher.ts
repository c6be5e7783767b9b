import { Cause, Clock, Config, Context, Effect, Layer, Option, Queue, Schema } from "effect"
import { positiveInt } from "./Settings.ts"
import * as Path from "node:path"
import { type MonitorDelta, MonitorEvent, type SourceDelta, StatusEvent } from "../domain/Event.ts"
import { MonitorState } from "../domain/Monitor.ts"
import { Compared } from "../domain/Changes.ts"
import { Snapshot } from "../domain/Snapshot.ts"
import { Bus, type BusError } from "./Bus.ts"
import { RedisKeys } from "./RedisKeys.ts"
import { writeEvent } from "./EventStream.ts"
import * as Handover from "./Handover.ts"
import * as Metrics from "./Metrics.ts"

/** Changes the drain applies at once (of distinct sources and monitors). */
const drainBatch = 64

/** Unchanged checks (only their time moves) are written at most this often, each time in one batch. */
const touchEveryMs = 250

/** Delta messages on `sg:deltas`: their Schemas are in services/domain/Event.ts. */
export type { MonitorDelta, SourceDelta } from "../domain/Event.ts"

/** What one monitor check leaves on the bus. */
export const MonitorChecked = Schema.Struct({
  id: Schema.String,
  organization_id: Schema.String,
  previous: MonitorState,
  state: MonitorState,
  response_ms: Schema.Number,
  http_status: Schema.Number,
  error: Schema.String,
  events: Schema.Array(MonitorEvent),
  at: Schema.String
})
export type MonitorChecked = typeof MonitorChecked.Type

/** A change waiting to be handed to the bus (kept in memory, or spilled to disk as JSON). */
export const PendingChange = Schema.Union([
  Schema.Struct({
    kind: Schema.Literal("source"),
    key: Schema.String,
    /** What the delta reads of the snapshot before (a full one, spilled by an earlier version, decodes as one). */
    previous: Schema.NullOr(Compared),
    snapshot: Snapshot,
    events: Schema.Array(StatusEvent),
    at: Schema.String
  }),
  Schema.Struct({ kind: Schema.Literal("monitor"), check: MonitorChecked })
])
export type PendingChange = typeof PendingChange.Type

/** Changes accepted but not yet on the bus. */
export interface PublisherBacklog {
  readonly memory: number
  readonly spilled: number
  /** the bus has refused the oldest change since this time (ms since the epoch); null when healthy */
  readonly failingSince: number | null
}

/**
 * Where the poller's news goes on the bus: the current state of each source
 * and its components (hashes), a delta message per change (pub/sub), and the
 * events of the change (stream, for the notifier).
 *
 * A change is handed over, not published on the caller's fiber: `handOver`
 * puts it at the end of an ordered queue (memory up to `PUBLISH_MEMORY_CHANGES`,
 * then files in `PUBLISH_SPILL_DIR`) and returns; one drain fiber applies the
 * changes to the bus in order (oldest first, up to 64 of distinct sources and
 * monitors at once, so one subject's changes never overtake each other), each
 * step once (a failed change is retried
 * from the step that failed, with backoff from 100 ms to
 * `PUBLISH_RETRY_MAX_MS`), so a Redis outage delays changes but loses none.
 * Checks that changed nothing (`touched`, a monitor's live numbers) are kept
 * latest per subject and written once the queue is empty, at most every
 * 250 ms and in one round trip, never ahead of a change of the same subject.
 * Shutdown spills what is left; the next start applies it first. Guarantee: at least once — a step whose reply was lost
 * with the connection is applied again.
 */
export class Publisher extends Context.Service<Publisher, {
  /** A check that found nothing new: only the check time moves. */
  touched(key: string, at: Date): Effect.Effect<void>
  /** Accepts a changed snapshot (state, delta, events) for the bus; fails only when neither memory nor disk takes it. */
  handOver(
    key: string,
    previous: Compared | undefined,
    snapshot: Snapshot,
    events: ReadonlyArray<StatusEvent>,
    at: Date
  ): Effect.Effect<void, Handover.HandoverFailed>
  /** `handOver`, dying when the change cannot be kept. */
  changed(
    key: string,
    previous: Compared | undefined,
    snapshot: Snapshot,
    events: ReadonlyArray<StatusEvent>,
    at: Date
  ): Effect.Effect<void>
  /** A monitor check: its live state always; a delta and events (handed over like source changes) when something changed. */
  monitorChecked(check: MonitorChecked): Effect.Effect<void, Handover.HandoverFailed>
  readonly backlog: Effect.Effect<PublisherBacklog>
}>()("statusgrid/platform/Publisher") {
  static readonly layer = Layer.effect(
    Publisher,
    Effect.gen(function*() {
      const bus = yield* Bus
      const options = yield* optionsFromConfig.pipe(Effect.orDie)
      const queue = yield* Handover.make({
        dir: options.spillDir,
        memoryItems: options.memoryChanges,
        fileItems: options.fileChanges,
        decode: Schema.decodeUnknownSync(PendingChange)
      })
      /** Latest unchanged check per source and per monitor, written once no change is waiting. */
      let touches = new Map<string, string>()
      let lives = new Map<string, MonitorChecked>()
      const wake = yield* Queue.sliding<void>(1)
      let failingSince: number | null = null
      yield* Metrics.gauges([
        [Metrics.publishBacklog, { where: "memory" }, () => queue.size().memory],
        [Metrics.publishBacklog, { where: "spilled" }, () => queue.size().spilled]
      ])

      const liveFields = (check: MonitorChecked) => ({
        state: check.state,
        last_checked_at: check.at,
        response_ms: String(Math.round(check.response_ms)),
        http_status: String(check.http_status),
        error: check.error
      })
      const writeLive = (check: MonitorChecked) => bus.hset(RedisKeys.monitor(check.id), liveFields(check))
      /** When unchanged checks were last written: they go out at most every `touchEveryMs`, in one batch. */
      let lastTouches = 0

      /** The bus steps of one change, in order; a retry starts at the first one not done. */
      const stepsOf = (change: PendingChange): Array<Effect.Effect<unknown, BusError>> => {
        if (change.kind === "monitor") {
          const { check } = change
          const delta: MonitorDelta = {
            kind: "monitor",
            id: check.id,
            organization_id: check.organization_id,
            state: check.state,
            previous_state: check.previous,
            events: check.events.map((e) => e.id),
            at: check.at
          }
          return [
            writeLive(check),
            ...check.events.map((event) =>
              writeEvent(bus, event)
            ),
            bus.publish(RedisKeys.deltas, JSON.stringify(delta))
          ]
        }
        const { key, previous, snapshot, events, at: when } = change
        const components = Object.fromEntries(snapshot.components.map((c) => [
          c.id,
          JSON.stringify({ status: c.status, name: c.name, parent_id: c.parent_id, updated_at: when })
        ]))
        const gone = (previous?.components ?? []).filter((c) => !snapshot.components.some((n) => n.id === c.id))
        const before = new Map((previous?.components ?? []).map((c) => [c.id, c.status]))
        const delta: SourceDelta = {
          kind: "source",
          key,
          status: snapshot.status,
          previous_status: previous?.status ?? null,
          components: snapshot.components.filter((c) => before.get(c.id) !== c.status).map((c) => ({ id: c.id, status: c.status })),
          events: events.map((e) => e.id),
          ...(events.some((e) => e.type.startsWith("incident.") || e.type.startsWith("maintenance.")) ? { incidents: true } : {}),
          at: when
        }
        return [
          bus.hset(RedisKeys.source(key), {
            status: snapshot.status,
            description: snapshot.description,
            last_checked_at: when,
            last_changed_at: when,
            components_count: String(snapshot.components.filter((c) => !c.is_group).length),
            incidents_count: String(snapshot.incidents.filter((i) => i.resolved_at === null).length)
          }),
          ...(Object.keys(components).length > 0 ? [bus.hset(RedisKeys.sourceComponents(key), components)] : []),
          bus.hdel(RedisKeys.sourceComponents(key), gone.map((c) => c.id)),
          ...events.map((event) =>
            writeEvent(bus, event)
          ),
          bus.publish(RedisKeys.deltas, JSON.stringify(delta))
        ]
      }

      /** Latest unchanged checks in two round trips (sources, monitors); what the bus refused waits for the next round unless replaced. */
      const writeTouches = Effect.gen(function*() {
        const sources = touches
        const monitors = lives
        touches = new Map()
        lives = new Map()
        const wroteSources = yield* bus.hsetMany([...sources].map(([key, at]) => [RedisKeys.source(key), { last_checked_at: at }] as const)).pipe(
          Effect.as(true),
          Effect.catch(() => Effect.succeed(false))
        )
        const wroteMonitors = yield* bus.hsetMany([...monitors.values()].map((check) => [RedisKeys.monitor(check.id), liveFields(check)] as const)).pipe(
          Effect.as(true),
          Effect.catch(() => Effect.succeed(false))
        )
        if (!wroteSources) for (const [key, at] of sources) if (!touches.has(key)) touches.set(key, at)
        if (!wroteMonitors) for (const [id, check] of monitors) if (!lives.has(id)) lives.set(id, check)
        lastTouches = yield* Clock.currentTimeMillis
        return wroteSources && wroteMonitors
      })

      // The drain: the oldest changes of distinct subjects at once (up to `drainBatch`), the steps of each
      // change in order and each step once; a subject's changes never overtake each other. Backoff while
      // the bus refuses.
      /** Steps already applied of changes not yet shifted (a change after a failed one may be complete). */
      const progress = new WeakMap<PendingChange, number>()
      const subjectOf = (change: PendingChange) => (change.kind === "source" ? `s:${change.key}` : `m:${change.check.id}`)
      const apply = Effect.fnUntraced(function*(change: PendingChange) {
        const steps = stepsOf(change)
        for (let done = progress.get(change) ?? 0; done < steps.length; done++) {
          const step = yield* steps[done]!.pipe(Effect.exit)
          if (step._tag === "Failure") {
            progress.set(change, done)
            return step.cause
          }
        }
        progress.set(change, steps.length)
        Metrics.count(Metrics.changesPublished, { kind: change.kind })
        const events = change.kind === "monitor" ? change.check.events.length : change.events.length
        if (events > 0) Metrics.count(Metrics.eventsPublished, {}, events)
        return undefined
      })
      let attempt = 0
      let heldSince = 0
      let lastReport = 0
      const recovered = Effect.gen(function*() {
        if (failingSince === null) return
        const now = yield* Clock.currentTimeMillis
        const size = queue.size()
        yield* Effect.logInfo("bus is back: handing over held changes").pipe(
          Effect.annotateLogs({ down_ms: now - failingSince, waiting: size.memory + size.spilled })
        )
        failingSince = null
        attempt = 0
      })
      const refused = Effect.fnUntraced(function*(cause: Cause.Cause<unknown>) {
        Metrics.count(Metrics.publishFailures, {})
        const now = yield* Clock.currentTimeMillis
        if (failingSince === null) {
          failingSince = now
          heldSince = now
          lastReport = now
          yield* Effect.logWarning("bus unavailable: holding changes until it returns", cause)
        } else if (now - lastReport >= 30_000) {
          lastReport = now
          const size = queue.size()
          yield* Effect.logWarning("bus still unavailable", Cause.squash(cause)).pipe(
            Effect.annotateLogs({ down_ms: now - heldSince, waiting: size.memory + size.spilled })
          )
        }
        attempt += 1
        yield* Effect.sleep(Math.min(100 * 2 ** Math.min(attempt - 1, 10), options.retryMaxMs))
      })
      const drainOnce = Effect.gen(function*() {
        const oldest = yield* queue.peek(drainBatch)
        if (oldest.length === 0) {
          const sinceTouches = (yield* Clock.currentTimeMillis) - lastTouches
          if (touches.size + lives.size > 0 && sinceTouches < touchEveryMs) {
            // A change wakes the drain at once; unchanged checks gather for the next batch meanwhile
            // (only the first of a batch wakes the drain: one wake per check was one timer per check).
            yield* Queue.take(wake).pipe(Effect.timeoutOption(touchEveryMs - sinceTouches))
            return
          }
          if (touches.size + lives.size > 0) {
            const ok = yield* writeTouches
            if (!ok) return yield* refused(Cause.fail("unchanged checks not written"))
            yield* recovered
          }
          yield* Queue.take(wake).pipe(Effect.timeoutOption("1 second"))
          return
        }
        const subjects = new Set<string>()
        const batch: Array<PendingChange> = []
        for (const change of oldest) {
          const subject = subjectOf(change)
          if (subjects.has(subject)) break
          subjects.add(subject)
          batch.push(change)
        }
        const failures = yield* Effect.forEach(batch, apply, { concurrency: "unbounded" })
        const applied = failures.findIndex((cause) => cause !== undefined)
        yield* queue.shift(applied === -1 ? batch.length : applied)
        const failure = failures.find((cause) => cause !== undefined)
        if (failure !== undefined) return yield* refused(failure)
        yield* recovered
      })
      yield* drainOnce.pipe(
        Effect.catchCause((cause) => Effect.logError("hand-over failed", cause).pipe(Effect.andThen(Effect.sleep("1 second")))),
        Effect.forever,
        Effect.forkScoped
      )

      const offer = (change: PendingChange) =>
        queue.offer(change).pipe(Effect.andThen(Queue.offer(wake, undefined)), Effect.asVoid)

      const handOver = (key: string, previous: Compared | undefined, snapshot: Snapshot, events: ReadonlyArray<StatusEvent>, at: Date) =>
        offer({ kind: "source", key, previous: previous ?? null, snapshot, events, at: at.toISOString() })

      return Publisher.of({
        touched: (key, at) =>
          Effect.sync(() => {
            const first = touches.size + lives.size === 0
            touches.set(key, at.toISOString())
            if (first) Queue.offerUnsafe(wake, undefined)
          }),
        handOver,
        changed: (key, previous, snapshot, events, at) => handOver(key, previous, snapshot, events, at).pipe(Effect.orDie),
        monitorChecked: (check) =>
          check.events.length === 0 && check.previous === check.state
            ? Effect.sync(() => {
              const first = touches.size + lives.size === 0
              lives.set(check.id, check)
              if (first) Queue.offerUnsafe(wake, undefined)
            })
            : Effect.sync(() => lives.delete(check.id)).pipe(Effect.andThen(offer({ kind: "monitor", check }))),
        backlog: Effect.sync(() => {
          const size = queue.size()
          return { memory: size.memory, spilled: size.spilled, failingSince }
        })
      })
    })
  )
}

const optionsFromConfig = Effect.gen(function*() {
  const spillDir = yield* Config.option(Config.String("PUBLISH_SPILL_DIR"))
  const dataDir = yield* Config.String("DATA_DIR").pipe(Config.withDefault("./data"))
  const memoryChanges = yield* positiveInt("PUBLISH_MEMORY_CHANGES", 10_000)
  return {
    spillDir: Option.getOrElse(spillDir, () => Path.join(dataDir, "handover")),
    memoryChanges,
    // Changes per spill file: what a crash may lose beyond memory; a fraction of the memory bound, at most 500.
    fileChanges: Math.max(1, Math.min(500, Math.floor(memoryChanges / 4))),
    retryMaxMs: yield* positiveInt("PUBLISH_RETRY_MAX_MS", 2_000)
  }
})
