import { Array as Arr, Clock, Config, Effect, Layer, Result, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { randomBytes } from "node:crypto"
import * as Os from "node:os"
import { followMs } from "../domain/CrowdRecord.ts"
import { decodeStreamEvent, type StreamEvent } from "../domain/Event.ts"
import { Bus } from "../platform/Bus.ts"
import { RedisKeys } from "../platform/RedisKeys.ts"
import { rowsOf } from "../platform/Rows.ts"
import { CrowdReports } from "./CrowdReports.ts"
import { CrowdSignals } from "./CrowdSignals.ts"

/** The crowd's consumer group on the event stream (beside the notifier's). */
export const group = "crowd"

export const CrowdWorkerConfig = Config.all({
  /** How often open signals are scored again (they end as their reports age) and refused events handed over. */
  sweepMs: Config.Int("CROWD_SWEEP_MS").pipe(Config.withDefault(30_000))
})

/** An official onset an event marks (decision 0015): the status page leaving operational, or an incident opened. */
export const onsetOf = (event: StreamEvent): { readonly key: string; readonly kind: "status" | "incident"; readonly at: number } | undefined => {
  if (!("source" in event) || "crowd" in event) return undefined
  const at = Date.parse(event.timestamp)
  if (Number.isNaN(at)) return undefined
  if (
    event.type === "source.status_changed" && event.previous_status === "operational" &&
    (event.current_status === "degraded" || event.current_status === "down")
  ) {
    return { key: event.source.key, kind: "status", at }
  }
  if (event.type === "incident.created" && event.incident !== undefined && event.incident.impact !== "maintenance") {
    return { key: event.source.key, kind: "incident", at }
  }
  return undefined
}

const insertedRows = rowsOf("crowd_onsets", Schema.Struct({ id: Schema.String, signal_id: Schema.NullOr(Schema.String) }))

/**
 * Records the official onset an event marks, once per event id, with the signal that led it:
 * the earliest one of the source that started within `followMs` before it while the official
 * status was operational and led no other onset. An onset within `followMs` after another of the
 * same source is the same trouble and is not recorded. Returns the row, if one was written.
 */
export const recordOnset = Effect.fn("CrowdWorker.recordOnset")(function*(event: StreamEvent) {
  const onset = onsetOf(event)
  if (onset === undefined) return undefined
  const sql = yield* SqlClient
  const at = new Date(onset.at)
  const followStart = new Date(onset.at - followMs)
  const [row] = yield* sql`
    INSERT INTO crowd_onsets (source_id, event_id, kind, at, signal_id)
    SELECT s.id, ${event.id}, ${onset.kind}, ${at}, (
      SELECT g.id FROM crowd_signals g
      WHERE g.source_id = s.id AND g.official_status = 'operational'
        AND g.started_at <= ${at} AND g.started_at > ${followStart}
        AND NOT EXISTS (SELECT 1 FROM crowd_onsets o WHERE o.signal_id = g.id)
      ORDER BY g.started_at LIMIT 1)
    FROM sources s
    WHERE s.key = ${onset.key}
      AND NOT EXISTS (SELECT 1 FROM crowd_onsets o WHERE o.source_id = s.id AND o.at > ${followStart} AND o.at <= ${at})
    ON CONFLICT DO NOTHING
    RETURNING id, signal_id`.pipe(Effect.flatMap(insertedRows))
  return row
}, Effect.orDie)

/**
 * Reads the event stream as the `crowd` consumer group (each process its own consumer; its own
 * unacknowledged entries first after a failure, then new ones) and records official onsets.
 * Entries that are not events are logged and acknowledged.
 */
const onsetsLoop = Layer.effectDiscard(Effect.gen(function*() {
  const bus = yield* Bus
  const consumer = `crowd-${Os.hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`
  yield* bus.xgroupCreate(RedisKeys.events, group, "$")
  const round = Effect.gen(function*() {
    const own = yield* bus.xreadgroup(RedisKeys.events, group, consumer, { count: 500, blockMs: 0, pending: true })
    const entries = own.length > 0 ? own : yield* bus.xreadgroup(RedisKeys.events, group, consumer, { count: 500, blockMs: 1000 })
    for (const entry of entries) {
      const payload = entry.fields["payload"]
      const event = payload === undefined ? undefined : decodeStreamEvent(payload)
      if (event !== undefined && Result.isSuccess(event)) yield* recordOnset(event.success)
    }
    if (entries.length > 0) yield* bus.xack(RedisKeys.events, group, entries.map((e) => e.id))
  }).pipe(Effect.catchCause((cause) => Effect.logWarning("crowd onsets: event handling failed; retrying", cause).pipe(Effect.andThen(Effect.sleep("1 second")))))
  yield* round.pipe(Effect.forever, Effect.forkScoped)
}))

/** Open signals a sweep scores together at most. */
const sweepChunk = 50

/**
 * Every `CROWD_SWEEP_MS`: scores each source with an open signal again (so a signal ends when its
 * reports age out of the window, without a new report), and hands the bus what it refused before.
 * Every process may run it: PostgreSQL lets one end a signal.
 */
export const sweepOnce = Effect.fn("CrowdWorker.sweep")(function*(at?: number) {
  const signals = yield* CrowdSignals
  const reports = yield* CrowdReports
  const now = at ?? (yield* Clock.currentTimeMillis)
  const open = yield* signals.openSources
  // Scored `sweepChunk` at a time, each chunk as a batch of reports is, so that the report batches
  // of a burst that opened hundreds of signals never wait behind all of them at once. A source no
  // longer public (disabled) is left out and keeps its signal until it is shown again.
  for (const chunk of Arr.chunksOf(open, sweepChunk)) {
    const scores = yield* reports.scores(chunk.map((source) => source.key), now)
    yield* signals.observeAll(chunk.flatMap((source) => {
      const score = scores.get(source.key)
      return score === undefined ? [] : [{ source, score }]
    }), now)
    yield* Effect.yieldNow
  }
  return { scored: open.length, published: yield* signals.publishPending }
})

const sweepLoop = Layer.effectDiscard(Effect.gen(function*() {
  const config = yield* Effect.orDie(CrowdWorkerConfig)
  const round = sweepOnce().pipe(
    Effect.andThen(Effect.sleep(config.sweepMs)),
    Effect.catchCause((cause) => Effect.logWarning("crowd sweep failed; retrying", cause).pipe(Effect.andThen(Effect.sleep("5 seconds"))))
  )
  yield* round.pipe(Effect.forever, Effect.forkScoped)
}))

/** The crowd's background work in a serving process (needs SqlClient, Bus, CrowdReports, CrowdSignals). */
export const layer = Layer.mergeAll(onsetsLoop, sweepLoop)
