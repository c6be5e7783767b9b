import { Clock, Context, DateTime, Effect, Layer, Schema } from "effect"
import {
  type CellStatus,
  type HistoryCell,
  type HistorySubject,
  type HistoryWindow,
  type StatusStrip,
  type Uptime,
  uptimeDays
} from "../domain/History.ts"
import { maxCheckLog, type MonitorCheckLogEntry } from "../domain/api/Monitors.ts"
import { ClickHouse, type ClickHouseError } from "../platform/ClickHouse.ts"
import { rollupParams, rollupRows } from "./Rollups.ts"

/** ClickHouse did not answer a history read; the pages that show history show the rest without it. */
export class HistoryUnavailable extends Schema.TaggedError<HistoryUnavailable>()("HistoryUnavailable", {
  cause: Schema.Defect()
}) {}

const hourMs = 3_600_000
const dayMs = 86_400_000

/**
 * One subject's rollup rows, summed over their unmerged parts: `[t, checks, down, degraded,
 * maintenance, errors]` per hour or day, `t` its start in Unix seconds (0 in the uptime query,
 * which does not group by time). One row per subject with an array, not one per cell: a 500-component
 * stack's 90 days are 45,000 cells, and per-cell objects cost more to send and decode than the query.
 */
const SubjectRows = Schema.Struct({
  kind: Schema.Literals(["source", "monitor"]),
  subject_id: Schema.String,
  component_id: Schema.String,
  cells: Schema.Array(Schema.Tuple([Schema.Number, Schema.Number, Schema.Number, Schema.Number, Schema.Number, Schema.Number]))
})
type SubjectRows = typeof SubjectRows.Type
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(SubjectRows))

/** A monitor's check as `monitorChecks` selects it (`t`: Unix milliseconds). */
const decodeChecks = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({
  t: Schema.Number,
  status: Schema.String,
  latency_ms: Schema.Number,
  http_status: Schema.Number,
  error: Schema.String,
  dns_ms: Schema.Number,
  connect_ms: Schema.Number,
  tls_ms: Schema.Number,
  first_byte_ms: Schema.Number,
  tls_days_left: Schema.NullOr(Schema.Number)
})))

/** The counts a cell or an uptime figure is computed from. */
interface Counts {
  readonly checks: number
  readonly down: number
  readonly degraded: number
  readonly maintenance: number
  /** Source checks whose page could not be fetched or read (status `unknown`). */
  readonly unread: number
}

const none: Counts = { checks: 0, down: 0, degraded: 0, maintenance: 0, unread: 0 }

const add = (a: Counts, b: Counts): Counts => ({
  checks: a.checks + b.checks,
  down: a.down + b.down,
  degraded: a.degraded + b.degraded,
  maintenance: a.maintenance + b.maintenance,
  unread: a.unread + b.unread
})

/**
 * A failed source check writes status `unknown` with its error for the
 * source, and no component rows (poller/Shard.ts), so a source's
 * `error_checks` are exactly its unread checks. A monitor's failed check is
 * `down`: its errors are outages, not unread.
 */
const countsOf = (kind: SubjectRows["kind"], cell: SubjectRows["cells"][number]): Counts => ({
  checks: cell[1],
  down: cell[2],
  degraded: cell[3],
  maintenance: cell[4],
  unread: kind === "source" ? cell[5] : 0
})

const counted = (c: Counts) => Math.max(0, c.checks - c.maintenance - c.unread)

/** Checks not down / counted checks, in percent; maintenance and unread checks do not count. */
const percent = (c: Counts): number | null => {
  const n = counted(c)
  return n === 0 ? null : (Math.max(0, n - c.down) / n) * 100
}

/** The most significant status seen: down, then degraded, then maintenance, then operational. */
const statusOf = (c: Counts): CellStatus =>
  c.down > 0 ? "down" : c.degraded > 0 ? "degraded" : c.maintenance > 0 ? "maintenance" : counted(c) > 0 ? "operational" : "no_data"

const uptimeOf = (c: Counts, fromMs: number, toMs: number): Uptime => ({
  percent: percent(c),
  checks: c.checks,
  counted_checks: counted(c),
  down_checks: c.down,
  maintenance_checks: c.maintenance,
  unread_checks: c.unread,
  from: DateTime.makeUnsafe(fromMs),
  to: DateTime.makeUnsafe(toMs)
})

/**
 * A query over the rows of `subjects`, whose SQL filters with `subjectsWhere`
 * (three IN lists: kinds, ids, components, so it may match other subjects too:
 * callers pick theirs by key), its rows decoded with `decode`.
 */
export const querySubjects = <A>(
  ch: ClickHouse["Service"],
  query: string,
  subjects: ReadonlyArray<HistorySubject>,
  params: Record<string, unknown>,
  decode: (rows: unknown) => Effect.Effect<A, unknown>
): Effect.Effect<A, HistoryUnavailable> =>
  ch.query(query, {
    kinds: [...new Set(subjects.map((s) => s.kind))],
    ids: [...new Set(subjects.map((s) => s.id))],
    components: [...new Set(subjects.map((s) => s.component))],
    ...params
  }).pipe(
    Effect.mapError((cause: ClickHouseError) => new HistoryUnavailable({ cause })),
    Effect.flatMap((rows) => decode(rows).pipe(Effect.orDie))
  )

export const subjectsWhere = `subject_kind IN {kinds:Array(String)} AND subject_id IN {ids:Array(String)}
  AND component_id IN {components:Array(String)}`

/** One subject's key in the maps the readers build from rows. */
export const subjectKey = (kind: string, id: string, component: string) => `${kind}\u0000${id}\u0000${component}`

/** The cells of a window ending with the current hour or day, at `now`. */
const windowAt = (window: HistoryWindow, now: number) => {
  const size = window === "24h" ? hourMs : dayMs
  const count = window === "24h" ? 24 : 90
  const last = Math.floor(now / size) * size
  return { size, count, from: last - (count - 1) * size, to: last + size }
}

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/** `subject key → (t in ms → counts)`. */
const index = (rows: ReadonlyArray<SubjectRows>) => {
  const bySubject = new Map<string, Map<number, Counts>>()
  for (const row of rows) {
    const key = subjectKey(row.kind, row.subject_id, row.component_id)
    let cells = bySubject.get(key)
    if (cells === undefined) bySubject.set(key, cells = new Map())
    for (const cell of row.cells) {
      const at = cell[0] * 1000
      cells.set(at, add(cells.get(at) ?? none, countsOf(row.kind, cell)))
    }
  }
  return bySubject
}

const total = (cells: Map<number, Counts> | undefined, from: number, to: number) => {
  let sum = none
  for (const [at, c] of cells ?? []) if (at >= from && at < to) sum = add(sum, c)
  return sum
}

const uptimeRange = (now: number, days: number) => {
  const today = Math.floor(now / dayMs) * dayMs
  return { from: today - (days - 1) * dayMs, to: today + dayMs }
}

const sums = `sum(checks) AS checks, sum(down_checks) AS down, sum(degraded_checks) AS degraded,
  sum(maintenance_checks) AS maintenance, sum(error_checks) AS errors`
/**
 * The per-cell sums of `inner`, gathered into one row per subject. Arrays (all UInt64), not tuples: a
 * server with `enable_named_columns_in_function_tuple` would send a tuple of columns as an object.
 */
const perSubject = (inner: string) =>
  `SELECT kind, subject_id, component_id, groupArray([t, checks, down, degraded, maintenance, errors]) AS cells
  FROM (${inner}) GROUP BY kind, subject_id, component_id`

/**
 * Status history of sources, their components and website monitors, read
 * from the hourly and daily rollups of `check_results`
 * (migrations/clickhouse/0001). Every read is one query for all the subjects
 * asked for (plus one for the 30-day uptime of a 24-hour window): a stack
 * costs one round trip, not one per component (figures: `statusgrid bench
 * history`). The same SQL runs on chDB and on a ClickHouse server.
 */
export class StatusHistory extends Context.Service<StatusHistory, {
  /** Each subject's strip over `window`, in the order asked. */
  forSubjects(
    subjects: ReadonlyArray<HistorySubject>,
    window: HistoryWindow
  ): Effect.Effect<ReadonlyArray<StatusStrip>, HistoryUnavailable>
  /** A source's strip and its components' (by provider id), in one read. */
  forSource(
    key: string,
    components: ReadonlyArray<string>,
    window: HistoryWindow
  ): Effect.Effect<{ readonly source: StatusStrip; readonly components: ReadonlyArray<StatusStrip> }, HistoryUnavailable>
  /** Each subject's uptime over the last `days` UTC days, today included (default 30), in the order asked. */
  uptime(subjects: ReadonlyArray<HistorySubject>, days?: number): Effect.Effect<ReadonlyArray<Uptime>, HistoryUnavailable>
  /** A website monitor's latest checks (`check_results`), newest first: the check log and its response-time chart. */
  /** A monitor's checks, newest first: the latest `limit`, or those before `before` (epoch ms). */
  monitorChecks(id: string, limit: number, before?: number): Effect.Effect<ReadonlyArray<MonitorCheckLogEntry>, HistoryUnavailable>
}>()("statusgrid/history/StatusHistory") {
  static readonly layer = Layer.effect(StatusHistory, Effect.gen(function*() {
    const ch = yield* ClickHouse

    /** Rows of `subjects` (and of other subjects the IN lists happen to match; callers pick theirs by key). */
    const read = (query: string, subjects: ReadonlyArray<HistorySubject>, params: Record<string, unknown>) =>
      querySubjects(ch, query, subjects, params, decodeRows)

    const hourly = (subjects: ReadonlyArray<HistorySubject>, from: number, to: number) =>
      read(
        perSubject(`SELECT toString(subject_kind) AS kind, subject_id, component_id, toUInt64(toUnixTimestamp(hour)) AS t, ${sums}
        FROM (${rollupRows("check_rollup_hourly", "hour", "hour >= toDateTime({from:UInt32}, 'UTC') AND hour < toDateTime({to:UInt32}, 'UTC')")})
        GROUP BY subject_kind, subject_id, component_id, hour`),
        subjects,
        { from: from / 1000, to: to / 1000, ...rollupParams(subjects) }
      )

    /** Per day, or (`perDay` false) one row per subject over the whole range. */
    const daily = (subjects: ReadonlyArray<HistorySubject>, from: number, to: number, perDay: boolean) =>
      read(
        perSubject(`SELECT toString(subject_kind) AS kind, subject_id, component_id, ${perDay ? "toUInt64(toUInt32(day) * 86400)" : "toUInt64(0)"} AS t, ${sums}
        FROM (${rollupRows("check_rollup_daily", "day", "day >= toDate({from:String}) AND day < toDate({to:String})")})
        GROUP BY subject_kind, subject_id, component_id${perDay ? ", day" : ""}`),
        subjects,
        { from: isoDay(from), to: isoDay(to), ...rollupParams(subjects) }
      )

    const forSubjects = Effect.fn("StatusHistory.forSubjects")(function*(
      subjects: ReadonlyArray<HistorySubject>,
      window: HistoryWindow
    ) {
      if (subjects.length === 0) return []
      const now = yield* Clock.currentTimeMillis
      const w = windowAt(window, now)
      const month = uptimeRange(now, uptimeDays)
      // The 90-day strip's daily rows hold the 30 days of the uptime figure; the 24-hour strip reads them apart.
      const [cellRows, monthRows] = window === "90d"
        ? yield* daily(subjects, w.from, w.to, true).pipe(Effect.map((rows) => [rows, rows] as const))
        : yield* Effect.all([hourly(subjects, w.from, w.to), daily(subjects, month.from, month.to, false)], {
          concurrency: 2
        })
      const cells = index(cellRows)
      const months = window === "90d" ? cells : index(monthRows)
      return subjects.map((s): StatusStrip => {
        const key = subjectKey(s.kind, s.id, s.component)
        const mine = cells.get(key)
        const strip: Array<HistoryCell> = []
        for (let i = 0; i < w.count; i++) {
          const start = w.from + i * w.size
          const c = mine?.get(start) ?? none
          strip.push({ start: DateTime.makeUnsafe(start), status: statusOf(c), checks: c.checks, uptime: percent(c) })
        }
        return {
          window,
          cell: window === "24h" ? "1h" : "1d",
          cells: strip,
          uptime: uptimeOf(total(mine, w.from, w.to), w.from, w.to),
          // Without per-day rows (24h), the one row of the range sits at t = 0.
          uptime_30d: uptimeOf(
            window === "90d" ? total(months.get(key), month.from, month.to) : total(months.get(key), 0, 1),
            month.from,
            month.to
          )
        }
      })
    })

    const forSource = Effect.fn("StatusHistory.forSource")(function*(
      key: string,
      components: ReadonlyArray<string>,
      window: HistoryWindow
    ) {
      const subjects: Array<HistorySubject> = [
        { kind: "source", id: key, component: "" },
        ...components.map((component) => ({ kind: "source" as const, id: key, component }))
      ]
      const [source, ...rest] = yield* forSubjects(subjects, window)
      return { source: source!, components: rest }
    })

    const uptime = Effect.fn("StatusHistory.uptime")(function*(subjects: ReadonlyArray<HistorySubject>, days: number = uptimeDays) {
      if (subjects.length === 0) return []
      const now = yield* Clock.currentTimeMillis
      const range = uptimeRange(now, Math.max(1, Math.floor(days)))
      const rows = index(yield* daily(subjects, range.from, range.to, false))
      return subjects.map((s) => uptimeOf(total(rows.get(subjectKey(s.kind, s.id, s.component)), 0, 1), range.from, range.to))
    })

    const monitorChecks = Effect.fn("StatusHistory.monitorChecks")(function*(id: string, limit: number, before?: number) {
      const rows = yield* ch.query(
        `SELECT toFloat64(toUnixTimestamp64Milli(checked_at)) AS t, status, latency_ms, http_status, error,
           dns_ms, connect_ms, tls_ms, first_byte_ms, tls_days_left
         FROM check_results
         WHERE subject_kind = 'monitor' AND subject_id = {id:String} AND component_id = ''
           ${before === undefined ? "" : "AND checked_at < fromUnixTimestamp64Milli(toInt64({before:Float64}), 'UTC')"}
         ORDER BY checked_at DESC LIMIT {limit:UInt32}`,
        { id, limit: Math.max(1, Math.min(maxCheckLog, Math.floor(limit))), ...(before === undefined ? {} : { before }) }
      ).pipe(
        Effect.mapError((cause: ClickHouseError) => new HistoryUnavailable({ cause })),
        Effect.flatMap((rows) => decodeChecks(rows).pipe(Effect.orDie))
      )
      return rows.map(({ t, ...row }): MonitorCheckLogEntry => ({ checked_at: new Date(t).toISOString(), ...row }))
    })

    return StatusHistory.of({ forSubjects, forSource, uptime, monitorChecks })
  }))
}
