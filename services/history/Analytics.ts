import { Clock, Context, DateTime, Effect, Layer, Result, Schema } from "effect"
import {
  defaultAnalyticsDays,
  maxAnalyticsDays,
  type MonitorAnalytics,
  type RegionAnalytics,
  type ResponseTimes as WireResponseTimes,
  type SubjectAnalytics as WireSubjectAnalytics
} from "../domain/Analytics.ts"
import type { IncidentFigures } from "../domain/IncidentFigures.ts"
import type { HistorySubject } from "../domain/History.ts"
import {
  type Change,
  type Durations,
  durationsOf,
  hourOfWeek,
  levelOf,
  levels,
  meanTimeToResolution,
  type Outage,
  outagesOf,
  type Period,
  periodsOf,
  type Range,
  type SubjectKind,
  uptimeOf
} from "../domain/StatusDurations.ts"
import { ClickHouse } from "../platform/ClickHouse.ts"
import { type HistoryUnavailable, querySubjects, subjectKey, subjectsWhere } from "./StatusHistory.ts"
import { rollupParams, rollupRows } from "./Rollups.ts"

/**
 * Analytics from status durations (services/domain/StatusDurations.ts): a
 * subject's time at each level over any range, its uptime, outages, mean
 * time to resolution and the hour-of-week of its outages, rebuilt from
 * `status_transitions`, with the hours without any check whose answer
 * was read (`check_rollup_hourly`) as gaps. Three queries for any number of subjects.
 *
 * The status at the range's start: the last change before it; else the
 * status before the first change inside it (`previous_status`); else, for a
 * subject that never changed, the one status its checks in the range saw
 * (from the rollup's counts). Never a guess of "up" without a check.
 */

export interface SubjectAnalytics {
  readonly subject: HistorySubject
  readonly from: number
  /** The range's end, or now when the range reaches into the future. */
  readonly to: number
  readonly durations: Durations
  readonly uptime: number | null
  readonly outages: ReadonlyArray<Outage>
  readonly mttr_ms: number | null
  /** Outage starts by UTC weekday (Monday first) × hour. */
  readonly hour_of_week: ReadonlyArray<ReadonlyArray<number>>
  /** The range cut into periods of one level (what a stack's history is built from). */
  readonly periods: ReadonlyArray<Period>
}

const hourMs = 3_600_000
const dayMs = 86_400_000

const decodeLast = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({
  kind: Schema.String,
  subject_id: Schema.String,
  component_id: Schema.String,
  status: Schema.String
})))

const decodeChanges = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({
  kind: Schema.String,
  subject_id: Schema.String,
  component_id: Schema.String,
  /** `[t ms, status, previous_status]`, oldest first */
  changes: Schema.Array(Schema.Tuple([Schema.Number, Schema.String, Schema.String]))
})))

/**
 * Per subject over the range: its hourly rollups' sums, and the hours in which a check was read as the edges of
 * their runs (the first and last such hour, and each pair of read hours with unread ones between): what the gaps
 * and a history without changes need, a few numbers rather than every hour of the range.
 */
const CoverageRow = Schema.Struct({
  kind: Schema.String,
  subject_id: Schema.String,
  component_id: Schema.String,
  checks: Schema.Number,
  down: Schema.Number,
  degraded: Schema.Number,
  maintenance: Schema.Number,
  errors: Schema.Number,
  first: Schema.NullOr(Schema.Number),
  last: Schema.NullOr(Schema.Number),
  jumps: Schema.Array(Schema.Tuple([Schema.Number, Schema.Number]))
})
type Coverage = typeof CoverageRow.Type
const decodeCoverage = Schema.decodeUnknownEffect(Schema.Array(CoverageRow))

const subjectKindOf = (s: HistorySubject): SubjectKind => (s.kind === "monitor" ? "monitor" : s.component === "" ? "source" : "component")

/** The status of a subject that did not change over the range, from its checks' counts (null: none was read). */
const constantStatus = (kind: SubjectKind, c: Coverage | undefined): string | null => {
  if (c === undefined) return null
  const read = kind === "source" ? c.checks - c.errors : c.checks
  if (c.down > 0) return kind === "component" ? "critical" : "down"
  if (c.degraded > 0) return "degraded"
  if (c.maintenance > 0) return "maintenance"
  return read > 0 ? (kind === "monitor" ? "up" : "operational") : null
}

/**
 * The range's clock hours in which no check was read (merged into stretches), the current hour left out: from the
 * range's first hour to the first read one, between the ends of each jump, and after the last read one.
 */
const gapsOf = (c: Coverage | undefined, range: Range, now: number): Array<Range> => {
  const start = Math.floor(range.from / hourMs) * hourMs
  // Hours `h` with h < range.to and h < the current hour: up to (not including) this one.
  const end = Math.ceil(Math.min(range.to, Math.floor(now / hourMs) * hourMs) / hourMs) * hourMs
  const missing: Array<Range> = c === undefined || c.first === null || c.last === null
    ? [{ from: start, to: end }]
    : [
      { from: start, to: c.first * 1000 },
      ...c.jumps.map(([a, b]) => ({ from: a * 1000 + hourMs, to: b * 1000 })),
      { from: c.last * 1000 + hourMs, to: end }
    ]
  return missing.flatMap((m) => {
    const from = Math.max(m.from, start)
    const to = Math.min(m.to, end)
    return to > from ? [{ from, to }] : []
  })
}

export interface ResponseTimePoint {
  readonly at: number
  readonly checks: number
  readonly mean: number
  readonly p50: number
  readonly p95: number
  readonly p99: number
  readonly max: number
}

export interface ResponseTimes {
  /** Each hour of the range with checks; empty when the range is longer than `hourlyResponseDays`. */
  readonly hourly: ReadonlyArray<ResponseTimePoint>
  /** Each UTC day of the range with checks, from the same hours merged. */
  readonly daily: ReadonlyArray<ResponseTimePoint>
}

/** The longest range whose hours are listed one by one (31 days: 744 points). */
export const hourlyResponseDays = 31

const decodePoints = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({
  t: Schema.Number,
  checks: Schema.Number,
  total: Schema.Number,
  max: Schema.Number,
  q: Schema.Array(Schema.Number)
})))

export class Analytics extends Context.Service<Analytics, {
  /** Each subject's analytics over `[from, to)` (epoch ms; `to` capped at now), in the order asked. */
  forSubjects(subjects: ReadonlyArray<HistorySubject>, range: Range): Effect.Effect<ReadonlyArray<SubjectAnalytics>, HistoryUnavailable>
  /**
   * A subject's response times over the hours of the range (`check_rollup_hourly`'s
   * t-digests merged by hour and by day): a monitor's requests, or a source's
   * status-page fetches (its own row, component '').
   */
  responseTimes(subject: HistorySubject, range: Range): Effect.Effect<ResponseTimes, HistoryUnavailable>
}>()("statusgrid/history/Analytics") {
  static readonly layer = Layer.effect(Analytics, Effect.gen(function*() {
    const ch = yield* ClickHouse

    const forSubjects = Effect.fn("Analytics.forSubjects")(function*(subjects: ReadonlyArray<HistorySubject>, asked: Range) {
      if (subjects.length === 0) return []
      const now = yield* Clock.currentTimeMillis
      const range = { from: asked.from, to: Math.max(asked.from, Math.min(asked.to, now)) }
      const [last, changes, coverage] = yield* Effect.all([
        querySubjects(
          ch,
          `SELECT toString(subject_kind) AS kind, subject_id, component_id, argMax(status, changed_at) AS status
           FROM status_transitions
           WHERE ${subjectsWhere} AND changed_at < fromUnixTimestamp64Milli(toInt64({from:Float64}), 'UTC')
           GROUP BY subject_kind, subject_id, component_id`,
          subjects,
          range,
          decodeLast
        ),
        querySubjects(
          ch,
          `SELECT kind, subject_id, component_id, arraySort((x) -> x.1, groupArray((t, status, previous_status))) AS changes FROM (
             SELECT toString(subject_kind) AS kind, subject_id, component_id,
               toFloat64(toUnixTimestamp64Milli(changed_at)) AS t, toString(status) AS status, toString(previous_status) AS previous_status
             FROM status_transitions
             WHERE ${subjectsWhere} AND changed_at >= fromUnixTimestamp64Milli(toInt64({from:Float64}), 'UTC')
               AND changed_at < fromUnixTimestamp64Milli(toInt64({to:Float64}), 'UTC'))
           GROUP BY kind, subject_id, component_id`,
          subjects,
          range,
          decodeChanges
        ),
        querySubjects(
          ch,
          `SELECT kind, subject_id, component_id, sum(checks) AS checks, sum(down) AS down, sum(degraded) AS degraded,
             sum(maintenance) AS maintenance, sum(errors) AS errors,
             arraySort(groupArrayIf(t, read > 0)) AS covered,
             if(empty(covered), NULL, covered[1]) AS first, if(empty(covered), NULL, covered[-1]) AS last,
             arrayFilter((x) -> x.2 - x.1 > 3600, arrayZip(arrayPopBack(covered), arrayPopFront(covered))) AS jumps
           FROM (
             SELECT toString(subject_kind) AS kind, subject_id, component_id, toUInt64(toUnixTimestamp(hour)) AS t,
               sum(checks) AS checks, sum(down_checks) AS down, sum(degraded_checks) AS degraded,
               sum(maintenance_checks) AS maintenance, sum(error_checks) AS errors,
               -- a source's own row counts the checks whose page was read; a component's or a monitor's, every check
               if(kind = 'source' AND component_id = '', checks - errors, checks) AS read
             FROM (${rollupRows("check_rollup_hourly", "hour", `hour >= toStartOfHour(toDateTime(toUInt32({from:Float64} / 1000), 'UTC'))
               AND hour < toDateTime(toUInt32(ceil({to:Float64} / 1000)), 'UTC')`)})
             GROUP BY subject_kind, subject_id, component_id, hour
             HAVING checks > 0)
           GROUP BY kind, subject_id, component_id`,
          subjects,
          { ...range, ...rollupParams(subjects) },
          decodeCoverage
        )
      ], { concurrency: 3 })

      const lastBy = new Map(last.map((r) => [subjectKey(r.kind, r.subject_id, r.component_id), r.status]))
      const changesBy = new Map(changes.map((r) => [subjectKey(r.kind, r.subject_id, r.component_id), r.changes]))
      const coverageBy = new Map(coverage.map((r) => [subjectKey(r.kind, r.subject_id, r.component_id), r]))

      return subjects.map((subject): SubjectAnalytics => {
        const key = subjectKey(subject.kind, subject.id, subject.component)
        const kind = subjectKindOf(subject)
        const mine = changesBy.get(key) ?? []
        const seen = coverageBy.get(key)
        const firstBefore = mine[0]?.[2]
        const initial = lastBy.get(key)
          ?? (firstBefore !== undefined && levelOf(kind, firstBefore) !== "unknown" ? firstBefore : undefined)
          ?? (mine.length === 0 ? constantStatus(kind, seen) : null)
        const periods = periodsOf(
          kind,
          initial,
          mine.map(([at, status]): Change => ({ at, status })),
          range,
          gapsOf(seen, range, now)
        )
        const durations = durationsOf(periods)
        const outages = outagesOf(periods, range, initial, kind)
        return {
          subject,
          from: range.from,
          to: range.to,
          durations,
          uptime: uptimeOf(durations),
          outages,
          mttr_ms: meanTimeToResolution(outages),
          hour_of_week: hourOfWeek(outages.filter((o) => !o.cut).map((o) => o.start)),
          periods
        }
      })
    })

    const points = (subject: HistorySubject, range: Range, bucket: "hour" | "toDate(hour)") =>
      querySubjects(
        ch,
        `SELECT toUInt64(toUnixTimestamp(toDateTime(${bucket}, 'UTC'))) AS t, sum(checks) AS checks, sum(latency_sum) AS total,
           max(latency_max) AS max, quantilesTDigestMerge(0.5, 0.95, 0.99)(latency_quantiles) AS q
         FROM check_rollup_hourly
         WHERE subject_kind = {kind:String} AND subject_id = {id:String} AND component_id = {component:String}
           AND hour >= toStartOfHour(toDateTime(toUInt32({from:Float64} / 1000), 'UTC'))
           AND hour < toDateTime(toUInt32(ceil({to:Float64} / 1000)), 'UTC')
         GROUP BY t HAVING checks > 0 ORDER BY t`,
        [subject],
        { kind: subject.kind, id: subject.id, component: subject.component, from: range.from, to: range.to },
        decodePoints
      ).pipe(Effect.map((rows) =>
        rows.map((r): ResponseTimePoint => ({
          at: r.t * 1000,
          checks: r.checks,
          mean: r.total / r.checks,
          p50: r.q[0] ?? 0,
          p95: r.q[1] ?? 0,
          p99: r.q[2] ?? 0,
          max: r.max
        }))
      ))

    const responseTimes = Effect.fn("Analytics.responseTimes")(function*(subject: HistorySubject, asked: Range) {
      const now = yield* Clock.currentTimeMillis
      const range = { from: asked.from, to: Math.max(asked.from, Math.min(asked.to, now)) }
      const [hourly, daily] = yield* Effect.all([
        range.to - range.from > hourlyResponseDays * dayMs ? Effect.succeed([]) : points(subject, range, "hour"),
        points(subject, range, "toDate(hour)")
      ], { concurrency: 2 })
      return { hourly, daily }
    })

    return Analytics.of({ forSubjects, responseTimes })
  }))
}

/** A range asked through `?from=&to=` (services/domain/Analytics.ts), or which parameter is wrong and why. */
export const analyticsRange = (
  query: { readonly from?: DateTime.Utc | undefined; readonly to?: DateTime.Utc | undefined },
  now: number
): Result.Result<Range, { readonly field: "from" | "to"; readonly message: string }> => {
  const to = Math.min(query.to === undefined ? now : DateTime.toEpochMillis(query.to), now)
  const from = query.from === undefined ? to - defaultAnalyticsDays * dayMs : DateTime.toEpochMillis(query.from)
  if (query.to !== undefined && query.from !== undefined && DateTime.toEpochMillis(query.to) <= from) {
    return Result.fail({ field: "from", message: "from must be before to" })
  }
  if (from >= now) return Result.fail({ field: "from", message: "from must be in the past" })
  if (from < now - maxAnalyticsDays * dayMs) {
    return Result.fail({ field: "from", message: `from must be within the last ${maxAnalyticsDays} days` })
  }
  return Result.succeed({ from, to: Math.max(from, to) })
}

const isoOf = (ms: number) => new Date(ms).toISOString()

/** A subject's figures as the API sends them. */
export const wireAnalytics = (a: Pick<SubjectAnalytics, "uptime" | "durations" | "outages" | "mttr_ms" | "hour_of_week">): WireSubjectAnalytics => ({
  uptime: a.uptime,
  durations_ms: a.durations,
  outages: a.outages.map((o) => ({ start: isoOf(o.start), end: o.end === null ? null : isoOf(o.end), duration_ms: o.duration_ms, cut: o.cut })),
  outage_count: a.outages.length,
  mttr_ms: a.mttr_ms,
  hour_of_week: a.hour_of_week
})

export const wireRange = (a: Pick<SubjectAnalytics, "from" | "to">) => ({ from: isoOf(a.from), to: isoOf(a.to) })

const wirePoint = (p: ResponseTimePoint) => ({
  at: isoOf(p.at),
  checks: p.checks,
  mean_ms: p.mean,
  p50_ms: p.p50,
  p95_ms: p.p95,
  p99_ms: p.p99,
  max_ms: p.max
})

export const wireResponseTimes = (r: ResponseTimes): WireResponseTimes => ({ hourly: r.hourly.map(wirePoint), daily: r.daily.map(wirePoint) })

/**
 * A source's regions: each region its components or its incidents name, with
 * the region's components' time at each level summed (component-time: two
 * components down for an hour are two hours down of their combined time) and
 * the incidents naming it. Components without a region are left out.
 */
export const regionsOf = (
  components: ReadonlyArray<{ readonly region: string | null; readonly analytics: SubjectAnalytics }>,
  incidents: IncidentFigures
): Array<RegionAnalytics> => {
  const names = new Set([...components.flatMap((c) => (c.region === null ? [] : [c.region])), ...incidents.regions.map((r) => r.region)])
  return [...names].toSorted().map((region) => {
    const mine = components.filter((c) => c.region === region)
    const durations = { down: 0, degraded: 0, maintenance: 0, operational: 0, unknown: 0 }
    for (const c of mine) for (const level of levels) durations[level] += c.analytics.durations[level]
    return {
      region,
      components: mine.length,
      uptime: mine.length === 0 ? null : uptimeOf(durations),
      durations_ms: durations,
      outage_count: mine.reduce((n, c) => n + c.analytics.outages.length, 0),
      incidents: incidents.regions.find((r) => r.region === region)?.incidents ?? 0
    }
  })
}

/**
 * A monitor's figures as `GET /monitors/{id}/analytics` and the portal's page
 * send them (the caller has checked the monitor is the principal's).
 */
export const monitorAnalytics = Effect.fn("Analytics.monitor")(function*(id: string, range: Range) {
  const analytics = yield* Analytics
  const subject: HistorySubject = { kind: "monitor", id, component: "" }
  const [[figures], times] = yield* Effect.all([analytics.forSubjects([subject], range), analytics.responseTimes(subject, range)], { concurrency: 2 })
  return { id, ...wireRange(figures!), analytics: wireAnalytics(figures!), response_times: wireResponseTimes(times) } satisfies MonitorAnalytics
})
