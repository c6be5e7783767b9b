import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { type CrowdRecord, crowdRecord, recordDays } from "../domain/CrowdRecord.ts"
import { crowdDefaults, signalOn } from "../domain/CrowdScore.ts"
import type { CrowdDelta, CrowdEvent } from "../domain/Event.ts"
import { Bus } from "../platform/Bus.ts"
import { writeEvent } from "../platform/EventStream.ts"
import { RedisKeys } from "../platform/RedisKeys.ts"
import { rowsOf } from "../platform/Rows.ts"
import { NullOr } from "../domain/NullOr.ts"

/** The figures a signal is started, raised or ended on (a source's score of the moment). */
export interface SignalScore {
  readonly confidence: number
  readonly counted: number
  readonly reason: string
}

/** A source's open signal, as the API and the pages show it. */
export interface OpenSignal {
  readonly id: string
  readonly started_at: string
  readonly start_confidence: number
  readonly peak_confidence: number
  readonly reason: string
}

const SignalRow = Schema.Struct({
  id: Schema.String,
  source_id: Schema.String,
  source_key: Schema.String,
  source_name: Schema.String,
  source_status: Schema.String,
  started_at: Schema.Date,
  ended_at: NullOr(Schema.Date),
  start_confidence: Schema.Number,
  peak_confidence: Schema.Number,
  end_confidence: Schema.NullOr(Schema.Number),
  reason: Schema.String,
  start_published: Schema.Boolean,
  end_published: Schema.Boolean
})
type SignalRow = typeof SignalRow.Type
const signalRows = rowsOf("crowd_signals", SignalRow)
const factRows = rowsOf("crowd_signals", Schema.Struct({ id: Schema.String, started_at: Schema.Date, official_status: Schema.String }))
const onsetRows = rowsOf("crowd_onsets", Schema.Struct({ at: Schema.Date, signal_id: Schema.NullOr(Schema.String) }))
const idRows = rowsOf("crowd_signals", Schema.Struct({ id: Schema.String }))
const sourceRows = rowsOf("sources", Schema.Struct({ id: Schema.String, key: Schema.String }))

const signalColumns = (sql: SqlClient) => sql.literal(`
  g.id, g.source_id, s.key AS source_key, s.name AS source_name, s.status AS source_status, g.started_at, g.ended_at,
  g.start_confidence, g.peak_confidence, g.end_confidence, g.reason, g.start_published, g.end_published`)

/** Whether `score` changes anything for a source whose open signal is `open` (starts, raises or ends it). */
const changes = (score: SignalScore, open: { readonly peak_confidence: number } | undefined) =>
  open === undefined ? signalOn(false, score, crowdDefaults) : !signalOn(true, score, crowdDefaults) || score.confidence > open.peak_confidence

const openSignalOf = (row: SignalRow): OpenSignal => ({
  id: row.id,
  started_at: row.started_at.toISOString(),
  start_confidence: row.start_confidence,
  peak_confidence: row.peak_confidence,
  reason: row.reason
})

const eventOf = (row: SignalRow, type: CrowdEvent["type"]): CrowdEvent => ({
  id: `crowd:${row.id}:${type === "crowd.signal_started" ? "started" : "ended"}`,
  type,
  timestamp: (type === "crowd.signal_started" ? row.started_at : row.ended_at ?? row.started_at).toISOString(),
  source: { key: row.source_key, name: row.source_name },
  crowd: {
    signal_id: row.id,
    confidence: type === "crowd.signal_started" ? row.start_confidence : row.end_confidence ?? row.peak_confidence,
    peak_confidence: row.peak_confidence,
    previous_peak: null,
    reason: row.reason,
    started_at: row.started_at.toISOString(),
    ended_at: row.ended_at === null ? null : row.ended_at.toISOString(),
    official_status: row.source_status
  }
})

/**
 * The crowd's signals (services/crowd/README.md "The signal", decision 0015):
 * a source's signal starts when a score crosses the model's start threshold
 * (`signalOn`) and ends when one falls below its end threshold. PostgreSQL
 * decides which process starts or ends it (one open signal per source, a
 * conditional update to end it); that process then writes
 * `crowd.signal_started` / `crowd.signal_ended` on `sg:events` and the source's
 * field of `sg:crowd:signals` (the open signals, for pages and other
 * processes). What the bus refused is handed over again by `publishPending`.
 */
export class CrowdSignals extends Context.Service<CrowdSignals, {
  /** After a score of a source at `now`: starts its signal, raises its peak, or ends it. */
  observe(source: { readonly id: string }, score: SignalScore, now: number): Effect.Effect<void>
  /**
   * `observe` for the scores of many sources at `now` (a batch of reports), reading their open signals
   * at once; returns each source's open signal after (by id; null: none).
   */
  observeAll(
    scores: ReadonlyArray<{ readonly source: { readonly id: string }; readonly score: SignalScore }>,
    now: number
  ): Effect.Effect<ReadonlyMap<string, OpenSignal | null>>
  /** Sources with an open signal (ids), for the sweep to score again as reports age. */
  readonly openSources: Effect.Effect<ReadonlyArray<{ readonly id: string; readonly key: string }>>
  /** Hands the bus the events and state it refused before; returns how many were handed. */
  readonly publishPending: Effect.Effect<number>
  /** A source's open signal, or null. */
  open(sourceId: string): Effect.Effect<OpenSignal | null>
  /** The open signals of these sources (by key), for boards' markers. */
  openFor(sourceKeys: ReadonlyArray<string>): Effect.Effect<ReadonlyMap<string, OpenSignal>>
  /** A source's record over the last `recordDays` at `now` (CrowdRecord). */
  record(sourceId: string, now: number): Effect.Effect<CrowdRecord>
}>()("statusgrid/crowd/CrowdSignals") {
  static readonly layer = Layer.effect(CrowdSignals, Effect.gen(function*() {
    const sql = yield* SqlClient
    const bus = yield* Bus
    const columns = signalColumns(sql)

    const read = (id: string) =>
      sql`SELECT ${columns} FROM crowd_signals g JOIN sources s ON s.id = g.source_id WHERE g.id = ${id}`.pipe(
        Effect.flatMap(signalRows),
        Effect.map((rows) => rows[0])
      )

    /** Open pages show or drop the marker (`sg:deltas`, at most once: pages read the state when they (re)connect). */
    const liveDelta = (row: SignalRow, signal: CrowdDelta["signal"]) => {
      const delta: CrowdDelta = { kind: "crowd", key: row.source_key, signal, at: (row.ended_at ?? row.started_at).toISOString() }
      return bus.publish(RedisKeys.deltas, JSON.stringify(delta)).pipe(Effect.asVoid)
    }

    /** The event and the Redis state of a start or an end; marks the row published once the bus took both. */
    const publish = (row: SignalRow) =>
      Effect.gen(function*() {
        const ended = row.ended_at !== null
        if (!row.start_published) {
          const event = eventOf(row, "crowd.signal_started")
          yield* writeEvent(bus, event)
          if (!ended) {
            yield* bus.hset(RedisKeys.crowdSignals, {
              [row.source_key]: JSON.stringify({ signal_id: row.id, started_at: event.crowd.started_at, confidence: row.peak_confidence, reason: row.reason })
            })
          }
          yield* sql`UPDATE crowd_signals SET start_published = true WHERE id = ${row.id}`
          if (!ended) yield* liveDelta(row, { id: row.id, started_at: event.crowd.started_at, peak_confidence: row.peak_confidence })
        }
        if (ended && !row.end_published) {
          const event = eventOf(row, "crowd.signal_ended")
          yield* writeEvent(bus, event)
          yield* bus.hdel(RedisKeys.crowdSignals, [row.source_key])
          yield* sql`UPDATE crowd_signals SET end_published = true WHERE id = ${row.id}`
          yield* liveDelta(row, null)
        }
        return 1
      }).pipe(
        Effect.catchTag("BusError", (error) =>
          Effect.logWarning("crowd signal: the bus refused it; handed over again by the sweep", error).pipe(Effect.as(0)))
      )

    /** Starts, raises or ends the signal of `source`, whose open signal was read as `open`. */
    const decide = Effect.fnUntraced(function*(
      source: { readonly id: string },
      score: SignalScore,
      now: number,
      open: { readonly id: string; readonly peak_confidence: number } | undefined
    ) {
      if (open === undefined) {
        if (!signalOn(false, score, crowdDefaults)) return
        // One open signal per source: the partial unique index lets one process win.
        const [started] = yield* sql`
          INSERT INTO crowd_signals (source_id, started_at, start_confidence, peak_confidence, reason, official_status)
          SELECT ${source.id}, ${new Date(now)}, ${score.confidence}, ${score.confidence}, ${score.reason}, s.status
          FROM sources s WHERE s.id = ${source.id}
          ON CONFLICT DO NOTHING
          RETURNING id`.pipe(Effect.flatMap(idRows))
        if (started === undefined) return
        const row = yield* read(started.id)
        if (row !== undefined) yield* publish(row)
        return
      }
      if (signalOn(true, score, crowdDefaults)) {
        if (score.confidence <= open.peak_confidence) return
        // The process whose update raised the peak into a higher tenth announces the rise (rules with a higher minimum).
        const [raised] = yield* sql`
          UPDATE crowd_signals g SET peak_confidence = ${score.confidence}
          FROM (SELECT id, peak_confidence AS before FROM crowd_signals WHERE id = ${open.id} FOR UPDATE) b
          WHERE g.id = b.id AND g.peak_confidence < ${score.confidence}
          RETURNING b.before`.pipe(Effect.flatMap(rowsOf("crowd_signals", Schema.Struct({ before: Schema.Number }))))
        if (raised === undefined || Math.floor(score.confidence / 10) <= Math.floor(raised.before / 10)) return
        const row = yield* read(open.id)
        if (row === undefined || !row.start_published) return
        const event = { ...eventOf(row, "crowd.signal_started"), type: "crowd.signal_rose" as const }
        const rose: CrowdEvent = {
          ...event,
          id: `crowd:${row.id}:rose:${Math.floor(score.confidence / 10) * 10}`,
          timestamp: new Date(now).toISOString(),
          crowd: { ...event.crowd, confidence: score.confidence, peak_confidence: score.confidence, previous_peak: raised.before }
        }
        yield* writeEvent(bus, rose).pipe(
          Effect.catchTag("BusError", (error) => Effect.logWarning("crowd signal: the bus refused a rise; rules above the old peak miss it", error))
        )
        return
      }
      const [ended] = yield* sql`
        UPDATE crowd_signals SET ended_at = greatest(started_at, ${new Date(now)}), end_confidence = ${score.confidence}
        WHERE id = ${open.id} AND ended_at IS NULL
        RETURNING id`.pipe(Effect.flatMap(idRows))
      if (ended === undefined) return
      const row = yield* read(ended.id)
      if (row !== undefined) yield* publish(row)
    })

    const observe = Effect.fn("CrowdSignals.observe")(function*(source: { readonly id: string }, score: SignalScore, now: number) {
      const [open] = yield* sql`
        SELECT id, peak_confidence FROM crowd_signals WHERE source_id = ${source.id} AND ended_at IS NULL`.pipe(
          Effect.flatMap(rowsOf("crowd_signals", Schema.Struct({ id: Schema.String, peak_confidence: Schema.Number })))
        )
      yield* decide(source, score, now, open)
    }, Effect.orDie)

    /** The open signals of these sources, with their sources' figures. */
    const openRows = (sourceIds: ReadonlyArray<string>) =>
      sql`
        SELECT ${columns} FROM crowd_signals g JOIN sources s ON s.id = g.source_id
        WHERE g.source_id IN ${sql.in(sourceIds)} AND g.ended_at IS NULL`.pipe(Effect.flatMap(signalRows))

    const observeAll = Effect.fn("CrowdSignals.observeAll")(function*(
      scores: ReadonlyArray<{ readonly source: { readonly id: string }; readonly score: SignalScore }>,
      now: number
    ) {
      const ids = [...new Set(scores.map((s) => s.source.id))]
      const after = new Map<string, OpenSignal | null>(ids.map((id) => [id, null]))
      if (ids.length === 0) return after
      const rows = yield* openRows(ids)
      const openOf = new Map(rows.map((row) => [row.source_id, row]))
      for (const row of rows) after.set(row.source_id, openSignalOf(row))
      // Most scores change nothing; those that do go through PostgreSQL (sources side by side), and their
      // sources' signals are read again.
      const changed = scores.filter(({ score, source }) => changes(score, openOf.get(source.id)))
      yield* Effect.forEach(changed, ({ score, source }) => decide(source, score, now, openOf.get(source.id)), { concurrency: 8, discard: true })
      if (changed.length === 0) return after
      const again = [...new Set(changed.map((c) => c.source.id))]
      for (const id of again) after.set(id, null)
      for (const row of yield* openRows(again)) after.set(row.source_id, openSignalOf(row))
      return after
    }, Effect.orDie)

    const openSources = sql`
      SELECT s.id, s.key FROM crowd_signals g JOIN sources s ON s.id = g.source_id WHERE g.ended_at IS NULL`.pipe(
        Effect.flatMap(sourceRows),
        Effect.orDie
      )

    // Rows the bus refused, once the process that wrote them has had its chance (30 s): the
    // events' ids are the signal's, so a consumer that sees one twice drops the second.
    const publishPending = Effect.gen(function*() {
      const rows = yield* sql`
        SELECT ${columns} FROM crowd_signals g JOIN sources s ON s.id = g.source_id
        WHERE (NOT g.start_published AND g.started_at < now() - interval '30 seconds')
          OR (g.ended_at IS NOT NULL AND NOT g.end_published AND g.ended_at < now() - interval '30 seconds')
        ORDER BY g.started_at LIMIT 500`.pipe(Effect.flatMap(signalRows))
      let handed = 0
      for (const row of rows) handed += yield* publish(row)
      return handed
    }).pipe(Effect.orDie)

    const open = Effect.fn("CrowdSignals.open")(function*(sourceId: string) {
      const [row] = yield* openRows([sourceId])
      return row === undefined ? null : openSignalOf(row)
    }, Effect.orDie)

    const openFor = Effect.fn("CrowdSignals.openFor")(function*(sourceKeys: ReadonlyArray<string>) {
      if (sourceKeys.length === 0) return new Map<string, OpenSignal>()
      const rows = yield* sql`
        SELECT ${columns} FROM crowd_signals g JOIN sources s ON s.id = g.source_id
        WHERE s.key IN ${sql.in(sourceKeys)} AND g.ended_at IS NULL`.pipe(Effect.flatMap(signalRows))
      return new Map(rows.map((row) => [row.source_key, openSignalOf(row)]))
    }, Effect.orDie)

    const record = Effect.fn("CrowdSignals.record")(function*(sourceId: string, now: number) {
      const since = new Date(now - recordDays * 86_400_000)
      const [signals, onsets] = yield* Effect.all([
        sql`SELECT id, started_at, official_status FROM crowd_signals
          WHERE source_id = ${sourceId} AND started_at > ${since} AND started_at <= ${new Date(now)}`.pipe(Effect.flatMap(factRows)),
        sql`SELECT at, signal_id FROM crowd_onsets
          WHERE source_id = ${sourceId} AND at > ${since} AND at <= ${new Date(now)}`.pipe(Effect.flatMap(onsetRows))
      ], { concurrency: 2 })
      return crowdRecord(
        signals.map((s) => ({ id: s.id, startedAt: s.started_at.getTime(), officialStatus: s.official_status })),
        onsets.map((o) => ({ at: o.at.getTime(), signalId: o.signal_id })),
        now
      )
    }, Effect.orDie)

    return CrowdSignals.of({ observe, observeAll, openSources, publishPending, open, openFor, record })
  }))
}
