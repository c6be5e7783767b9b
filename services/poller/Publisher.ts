import { Context, Effect, Layer } from "effect"
import type { MonitorEvent, StatusEvent } from "../domain/Event.ts"
import type { MonitorState } from "../domain/Monitor.ts"
import type { Snapshot } from "../domain/Snapshot.ts"
import { Bus } from "../platform/Bus.ts"

/** Key names of the Redis layout (README, "Redis layout"). */
export const RedisKeys = {
  source: (key: string) => `sg:source:${key}`,
  sourceComponents: (key: string) => `sg:source:${key}:components`,
  monitor: (id: string) => `sg:monitor:${id}`,
  deltas: "sg:deltas",
  events: "sg:events"
} as const

/** The event stream keeps about this many entries (MAXLEN ~). */
const eventsMaxLen = 1_000_000

/** A delta message on `sg:deltas`. */
export interface SourceDelta {
  readonly kind: "source"
  readonly key: string
  readonly status: string
  readonly previous_status: string | null
  readonly components: ReadonlyArray<{ readonly id: string; readonly status: string }>
  readonly events: ReadonlyArray<string>
  readonly at: string
}

/** A delta message on `sg:deltas` for a website monitor whose state changed. */
export interface MonitorDelta {
  readonly kind: "monitor"
  readonly id: string
  readonly organization_id: string
  readonly state: MonitorState
  readonly previous_state: MonitorState
  readonly events: ReadonlyArray<string>
  readonly at: string
}

/** What one monitor check leaves on the bus. */
export interface MonitorChecked {
  readonly id: string
  readonly organization_id: string
  readonly previous: MonitorState
  readonly state: MonitorState
  readonly response_ms: number
  readonly http_status: number
  readonly error: string
  readonly events: ReadonlyArray<MonitorEvent>
  readonly at: string
}

/**
 * Where the poller's news goes on the bus: the current state of each source
 * and its components (hashes), a delta message per change (pub/sub), and the
 * events of the change (stream, for the notifier).
 */
export class Publisher extends Context.Service<Publisher, {
  /** A check that found nothing new: only the check time moves. */
  touched(key: string, at: Date): Effect.Effect<void>
  /** A changed snapshot: state, delta and events. */
  changed(
    key: string,
    previous: Snapshot | undefined,
    snapshot: Snapshot,
    events: ReadonlyArray<StatusEvent>,
    at: Date
  ): Effect.Effect<void>
  /** A monitor check: its live state always; a delta and events when something changed. */
  monitorChecked(check: MonitorChecked): Effect.Effect<void>
}>()("statusgrid/poller/Publisher") {
  static readonly layer = Layer.effect(
    Publisher,
    Effect.gen(function*() {
      const bus = yield* Bus
      const monitorChecked = (check: MonitorChecked) =>
        Effect.gen(function*() {
          yield* bus.hset(RedisKeys.monitor(check.id), {
            state: check.state,
            last_checked_at: check.at,
            response_ms: String(Math.round(check.response_ms)),
            http_status: String(check.http_status),
            error: check.error
          })
          if (check.events.length === 0 && check.previous === check.state) return
          for (const event of check.events) {
            yield* bus.xadd(RedisKeys.events, { id: event.id, type: event.type, payload: JSON.stringify(event) }, eventsMaxLen)
          }
          const delta: MonitorDelta = {
            kind: "monitor",
            id: check.id,
            organization_id: check.organization_id,
            state: check.state,
            previous_state: check.previous,
            events: check.events.map((e) => e.id),
            at: check.at
          }
          yield* bus.publish(RedisKeys.deltas, JSON.stringify(delta))
        }).pipe(Effect.orDie)

      return Publisher.of({
        monitorChecked,
        touched: (key, at) => bus.hset(RedisKeys.source(key), { last_checked_at: at.toISOString() }).pipe(Effect.orDie),
        changed: (key, previous, snapshot, events, at) =>
          Effect.gen(function*() {
            const when = at.toISOString()
            yield* bus.hset(RedisKeys.source(key), {
              status: snapshot.status,
              description: snapshot.description,
              last_checked_at: when,
              last_changed_at: when,
              components_count: String(snapshot.components.filter((c) => !c.is_group).length),
              incidents_count: String(snapshot.incidents.filter((i) => i.resolved_at === null).length)
            })
            const components = Object.fromEntries(snapshot.components.map((c) => [
              c.id,
              JSON.stringify({ status: c.status, name: c.name, parent_id: c.parent_id, updated_at: when })
            ]))
            if (Object.keys(components).length > 0) yield* bus.hset(RedisKeys.sourceComponents(key), components)
            const gone = (previous?.components ?? []).filter((c) => !snapshot.components.some((n) => n.id === c.id))
            yield* bus.hdel(RedisKeys.sourceComponents(key), gone.map((c) => c.id))
            const before = new Map((previous?.components ?? []).map((c) => [c.id, c.status]))
            const delta: SourceDelta = {
              kind: "source",
              key,
              status: snapshot.status,
              previous_status: previous?.status ?? null,
              components: snapshot.components.filter((c) => before.get(c.id) !== c.status).map((c) => ({ id: c.id, status: c.status })),
              events: events.map((e) => e.id),
              at: when
            }
            for (const event of events) {
              yield* bus.xadd(RedisKeys.events, { id: event.id, type: event.type, payload: JSON.stringify(event) }, eventsMaxLen)
            }
            yield* bus.publish(RedisKeys.deltas, JSON.stringify(delta))
          }).pipe(Effect.orDie)
      })
    })
  )
}
