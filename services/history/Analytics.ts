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

const decodeHours = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({
  kind: Schema.String,
  subject_id: Schema.String,
  component_id: Schema.String,
  /** `[hour start in Unix seconds, checks, down, degraded, maintenance, errors]` of the hours with checks */
  hours: Schema.Array(Schema.Tuple([Schema.Number, Schema.Number, Schema.Number, Schema.Number, Schema.Number, Schema.Number]))
})))

const subjectKindOf = (s: HistorySubject): SubjectKind => (s.kind === "monitor" ? "monitor" : s.component === "" ? "source" : "component")

/** The one status checks saw over hours that had no change: the most significant one, by the history's order. */
const constantStatus = (kind: SubjectKind, hours: ReadonlyArray<readonly [number, number, number, number, number, number]>): string | null => {
  let checks = 0, down = 0, degraded = 0, maintenance = 0, errors = 0
  for (const h of hours) {
    checks += h[1]
    down += h[2]
    degraded += h[3]
    maintenance += h[4]
    errors += h[5]
  }
  const read = kind === "monitor" ? checks : checks - errors
  if (down > 0) return kind === "component" ? "critical" : "down"
  if (degraded > 0) return "degraded"
  if (maintenance > 0) return "maintenance"
  return read > 0 ? (kind === "monitor" ? "up" : "operational") : null
}

/**
 * Checks of an hour whose answer was read: a source check whose page could not
 * be fetched or read writes status `unknown` with its error and no change
 * (poller/SourceCheck.ts), so a source's `error_checks` are unread; a
 * monitor's failed check is a `down` it saw.
 */
const readChecks = (kind: SubjectKind, h: readonly [number, number, number, number, number, number]) => (kind === "source" ? h[1] - h[5] : h[1])

/** The range's hours that have no check, as gaps (the current hour is never a gap: its checks are still coming). */
const gapsOf = (covered: ReadonlySet<number>, range: Range, now: number): Array<Range> => {
  const gaps: Array<Range> = []
  const current = Math.floor(now / hourMs) * hourMs
  for (let h = Math.floor(range.from / hourMs) * hourMs; h < range.to; h += hourMs) {
    if (covered.has(h) || h >= current) continue
    const last = gaps.at(-1)
    if (last !== undefined && last.to === h) gaps[gaps.length - 1] = { from: last.from, to: h + hourMs }
    else gaps.push({ from: h, to: h + hourMs })
  }
  return gaps
}

/** Response times of one hour or day: checks, mean and max, and the t-digest's percentiles (ms). */
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
      const [last, changes, hours] = yield* Effect.all([
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
          `SELECT kind, subject_id, component_id, groupArray([t, checks, down, degraded, maintenance, errors]) AS hours FROM (
             SELECT toString(subject_kind) AS kind, subject_id, component_id, toUInt64(toUnixTimestamp(hour)) AS t,
               sum(checks) AS checks, sum(down_checks) AS down, sum(degraded_checks) AS degraded,
               sum(maintenance_checks) AS maintenance, sum(error_checks) AS errors
             FROM check_rollup_hourly
             WHERE ${subjectsWhere} AND hour >= toStartOfHour(toDateTime(toUInt32({from:Float64} / 1000), 'UTC'))
               AND hour < toDateTime(toUInt32(ceil({to:Float64} / 1000)), 'UTC')
             GROUP BY subject_kind, subject_id, component_id, hour
             HAVING checks > 0)
           GROUP BY kind, subject_id, component_id`,
          subjects,
          range,
          decodeHours
        )
      ], { concurrency: 3 })

      const lastBy = new Map(last.map((r) => [subjectKey(r.kind, r.subject_id, r.component_id), r.status]))
      const changesBy = new Map(changes.map((r) => [subjectKey(r.kind, r.subject_id, r.component_id), r.changes]))
      const hoursBy = new Map(hours.map((r) => [subjectKey(r.kind, r.subject_id, r.component_id), r.hours]))

      return subjects.map((subject): SubjectAnalytics => {
        const key = subjectKey(subject.kind, subject.id, subject.component)
        const kind = subjectKindOf(subject)
        const mine = changesBy.get(key) ?? []
        const seen = hoursBy.get(key) ?? []
        const firstBefore = mine[0]?.[2]
        const initial = lastBy.get(key)
          ?? (firstBefore !== undefined && levelOf(kind, firstBefore) !== "unknown" ? firstBefore : undefined)
          ?? (mine.length === 0 ? constantStatus(kind, seen) : null)
        const periods = periodsOf(
          kind,
          initial,
          mine.map(([at, status]): Change => ({ at, status })),
          range,
          gapsOf(new Set(seen.filter((h) => readChecks(kind, h) > 0).map((h) => h[0] * 1000)), range, now)
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
