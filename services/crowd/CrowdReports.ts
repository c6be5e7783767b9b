import { Clock, Config, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import {
  type CrowdComponentScore,
  type CrowdRegionScore,
  type CrowdReportAccepted,
  type CrowdRecordView,
  type CrowdSourceScore,
  crowdSymptoms
} from "../domain/api/Crowd.ts"
import { InvalidParameter, NotFound, RateLimited } from "../domain/api/Errors.ts"
import { crowdDefaults, crowdReason, crowdScore, hourOfWeekOf, usualByHourOfWeek, windowNetworks } from "../domain/CrowdScore.ts"
import { recordSentence } from "../domain/CrowdRecord.ts"
import { SourceKey } from "../domain/Source.ts"
import { Bus } from "../platform/Bus.ts"
import { RedisKeys } from "../platform/RedisKeys.ts"
import { rowsOf } from "../platform/Rows.ts"
import { SecretBox } from "../platform/SecretBox.ts"
import { publicSourceCondition } from "../platform/SourceRow.ts"
import { CrowdSignals } from "./CrowdSignals.ts"
import { canonicalAddress, networkOf } from "./Network.ts"

const notFound = (key: string) => new NotFound({ field: "key", message: `no source with key ${JSON.stringify(key.slice(0, 200))}` })

/** Highest confidence first, then most reporters. */
const byConfidence = <A extends { readonly confidence: number; readonly reporters: number }>(a: A, b: A) =>
  b.confidence - a.confidence || b.reporters - a.reporters

/** A report as the API or the portal hands it over; `address` and `userId` are hashed, never stored. */
export interface ReportInput {
  readonly sourceKey: string
  readonly symptom: string
  readonly componentId?: string | undefined
  readonly region?: string | undefined
  /** The client's address (the socket's peer). */
  readonly address: string
  /** The signed-in person, when there is one: then they are the reporter, wherever they report from. */
  readonly userId?: string | undefined
}

/** What the corroboration of a score is asked about: a source at one moment (its components and regions take the same). */
export interface CorroborationScope {
  readonly sourceId: string
  readonly at: number
}

/** How recent a monitor's failure must be to corroborate reports (it began with the trouble). */
export const corroborationMs = 60 * 60_000

/**
 * Organizations whose website monitors of the source's provider are failing at `at`: they
 * corroborate reports (decision 0014, step 4). `monitors` reads them from PostgreSQL; `none` says 0
 * (tests of the reports alone).
 */
export class CrowdCorroboration extends Context.Service<CrowdCorroboration, {
  failingMonitorOrganizations(scope: CorroborationScope): Effect.Effect<number>
}>()("statusgrid/crowd/CrowdCorroboration") {
  static readonly none = Layer.succeed(CrowdCorroboration, CrowdCorroboration.of({
    failingMonitorOrganizations: () => Effect.succeed(0)
  }))

  /**
   * A monitor watches the provider when its URL's host is the host of the source's `service_url`
   * (a leading `www.` dropped) or one under it (`api.acme.com` for `https://www.acme.com`); it is
   * failing at `at` when it is down or degraded, in that state since at most `corroborationMs`
   * before `at`. Organizations are counted, not monitors: one organization with ten monitors of the
   * provider counts once. The same count serves the source, its components and its regions.
   */
  static readonly monitors = Layer.effect(CrowdCorroboration, Effect.gen(function*() {
    const sql = yield* SqlClient
    const decode = rowsOf("monitors", Schema.Struct({ organizations: Schema.Number }))
    const host = (column: string) => sql.literal(`lower(substring(${column} from '^[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^@/]*@)?([^/:?#]+)'))`)
    return CrowdCorroboration.of({
      failingMonitorOrganizations: (scope) =>
        sql`
          WITH provider AS (
            SELECT regexp_replace(${host("s.service_url")}, '^www\.', '') AS host
            FROM sources s WHERE s.id = ${scope.sourceId} AND s.service_url IS NOT NULL
          )
          SELECT count(DISTINCT m.organization_id)::float8 AS organizations
          FROM monitors m JOIN provider p ON p.host IS NOT NULL AND p.host <> ''
          WHERE m.state IN ('down', 'degraded')
            AND m.last_changed_at > ${new Date(scope.at - corroborationMs)} AND m.last_changed_at <= ${new Date(scope.at)}
            AND (${host("m.url")} = p.host OR right(${host("m.url")}, length(p.host) + 1) = '.' || p.host)`.pipe(
          Effect.flatMap(decode),
          Effect.map((rows) => rows[0]?.organizations ?? 0),
          Effect.orDie
        )
    })
  }))
}


/**
 * Users' reports of problems with catalog sources, and the crowd's score (services/crowd/README.md):
 * a reporter is an HMAC of the signed-in person (`user:<id>`) or of the address (`ip:<address>`),
 * its network an HMAC of the address's /24 or /48, under keys derived from `SECRETS_KEY`; one
 * report per reporter, source and 10-minute window; `CROWD_REPORTS_PER_MINUTE` reports per address
 * per minute, counted on the bus. Time is the fiber's `Clock`.
 */
export class CrowdReports extends Context.Service<CrowdReports, {
  /** Records a report; `counted` is false for a reporter already counted in this window. */
  report(input: ReportInput): Effect.Effect<CrowdReportAccepted, NotFound | InvalidParameter | RateLimited>
  /** The score of a source at `at` (default now), with its components' and regions' reported in the window, and its open signal. */
  score(sourceKey: string, at?: number): Effect.Effect<CrowdSourceScore, NotFound>
  /** Of `keys`, the sources reports are taken for (the public catalog's), with their names, in the order given. */
  reportable(keys: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<{ readonly key: string; readonly name: string }>>
  /** The source's record against its official status over 90 days at `at` (default now). */
  record(sourceKey: string, at?: number): Effect.Effect<CrowdRecordView, NotFound>
}>()("statusgrid/crowd/CrowdReports") {
  static readonly layerNoDeps = Layer.effect(CrowdReports, Effect.gen(function*() {
    const sql = yield* SqlClient
    const bus = yield* Bus
    const box = yield* SecretBox
    const corroboration = yield* CrowdCorroboration
    const signals = yield* CrowdSignals
    const perMinute = yield* Config.Int("CROWD_REPORTS_PER_MINUTE").pipe(Config.withDefault(10), Effect.orDie)
    const p = crowdDefaults
    const weekMs = 7 * 24 * 3_600_000

    // Each hash has its own key (SecretBox derives one per purpose from the secrets key).
    const reporterHash = (userId: string | undefined, address: string) =>
      box.sign("crowd reporter", userId === undefined ? `ip:${address}` : `user:${userId}`)
    const networkHash = (address: string) => box.sign("crowd network", networkOf(address))
    const rateSubject = (address: string) => box.sign("crowd rate", address)

    const decodeSource = rowsOf("sources", Schema.Struct({ id: Schema.String, key: Schema.String, name: Schema.String }))
    const decodeKnown = rowsOf("components", Schema.Struct({ known: Schema.Boolean }))
    const decodeWindow = rowsOf("crowd_reports", Schema.Struct({
      at_ms: Schema.Number,
      reporter_hash: Schema.String,
      network_hash: Schema.String,
      component_id: Schema.NullOr(Schema.String),
      region: Schema.NullOr(Schema.String)
    }))
    const HourRow = Schema.Struct({
      hour_ms: Schema.Number,
      component_id: Schema.NullOr(Schema.String),
      region: Schema.NullOr(Schema.String),
      scope: Schema.Literals(["source", "component", "region"]),
      reporters: Schema.Number
    })
    const decodeHours = rowsOf("crowd_reports", HourRow)
    const decodeNames = rowsOf("components", Schema.Struct({ id: Schema.String, name: Schema.String }))
    const decodeInserted = rowsOf("crowd_reports", Schema.Struct({ id: Schema.String }))

    const isSourceKey = Schema.is(SourceKey)
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/iu

    /** The sources reports are taken for: the catalog sources the public API shows (`publicSourceCondition`). */
    const findSource = (key: string) =>
      !isSourceKey(key) ? Effect.fail(notFound(key)) : sql`
        SELECT id, key, name FROM sources s
        WHERE s.key = ${key} AND ${sql.literal(publicSourceCondition)}`.pipe(
          Effect.flatMap(decodeSource),
          Effect.orDie,
          Effect.flatMap((rows) => rows[0] === undefined ? Effect.fail(notFound(key)) : Effect.succeed(rows[0]))
        )

    /** This process's counts of the current minute, used while the bus does not answer (as the API's rate limiter does). */
    let local = new Map<string, number>()
    let localMinute = 0
    const countLocally = (subject: string, minute: number) => {
      if (minute !== localMinute) {
        local = new Map()
        localMinute = minute
      }
      const next = (local.get(subject) ?? 0) + 1
      local.set(subject, next)
      return next
    }

    /**
     * Counts one report of `address` in this minute; over the limit: `RateLimited`. While the bus does not
     * answer (250 ms), each process counts on its own with the same limit: never unlimited.
     */
    const limit = Effect.fnUntraced(function*(address: string, now: number) {
      const minute = Math.floor(now / 60_000)
      const subject = rateSubject(address)
      const count = yield* bus.incr(RedisKeys.crowdRate(subject, minute), 61_000).pipe(
        Effect.timeout(250),
        Effect.tapError((error) => Effect.logWarning("crowd reports: bus unavailable, counting reports in this process", error)),
        Effect.orElseSucceed(() => countLocally(subject, minute))
      )
      if (count > perMinute) {
        const retryAfterS = Math.max(1, Math.ceil(((minute + 1) * 60_000 - now) / 1000))
        return yield* new RateLimited({
          message: `too many reports from this address; at most ${perMinute} a minute, retry after ${retryAfterS} s`,
          retry_after_s: retryAfterS
        })
      }
    })

    /** The baseline hours' rows by source and hour (`source id|hour start`), oldest entries dropped first. */
    const baselines = new Map<string, ReadonlyArray<typeof HourRow.Type>>()
    const baselineCacheSize = 20_000

    type Reports = Array<{ readonly at: number; readonly reporter: string; readonly network: string }>
    /** The figures of one scope at `now` from its reports of the window (oldest first) and usual. */
    const figures = (reports: Reports, now: number, usual: number, failing: number) => {
      const score = crowdScore({ ...windowNetworks(reports, now, p), usual, failingMonitorOrganizations: failing }, p)
      return {
        confidence: score.confidence,
        scored_minutes: score.windowMs / 60_000,
        reporters: score.reporters,
        networks: score.networks,
        counted: score.counted,
        expected: score.expected,
        corroborating: score.corroborating,
        reason: crowdReason(score, p)
      }
    }

    const scoreOf = Effect.fnUntraced(function*(source: { readonly id: string; readonly key: string }, now: number) {
      // The window's reports, oldest first: a reporter's network is the one it reported from last.
      const rows = yield* sql`
        SELECT (extract(epoch FROM created_at) * 1000)::float8 AS at_ms, reporter_hash, network_hash, component_id, region FROM crowd_reports
        WHERE source_id = ${source.id} AND created_at > ${new Date(now - p.windowMs)} AND created_at <= ${new Date(now)}
        ORDER BY created_at`.pipe(Effect.flatMap(decodeWindow))
      const all: Reports = []
      const byComponent = new Map<string, Reports>()
      const byRegion = new Map<string, Reports>()
      const add = (scopes: Map<string, Reports>, scope: string, report: Reports[number]) => {
        const reports = scopes.get(scope) ?? []
        reports.push(report)
        scopes.set(scope, reports)
      }
      for (const row of rows) {
        const report = { at: row.at_ms, reporter: row.reporter_hash, network: row.network_hash }
        all.push(report)
        if (row.component_id !== null) add(byComponent, row.component_id, report)
        if (row.region !== null) add(byRegion, row.region, report)
      }

      // The usual: distinct reporters of each clock hour at this hour of the week (and the
      // `baselineSpreadHours` on each side), 1 to `baselineWeeks` weeks ago.
      const hourOfWeek = hourOfWeekOf(now)
      const hourStart = Math.floor(now / 3_600_000) * 3_600_000
      const ranges = Array.from({ length: p.baselineWeeks }, (_, i) => {
        const from = hourStart - (i + 1) * weekMs - p.baselineSpreadHours * 3_600_000
        return sql`(created_at >= ${new Date(from)} AND created_at < ${new Date(from + (2 * p.baselineSpreadHours + 1) * 3_600_000)})`
      })
      const cacheKey = `${source.id}|${hourStart}`
      const cached = baselines.get(cacheKey)
      const hours = cached ?? (yield* sql`
        SELECT hour_ms, component_id, region,
          CASE WHEN GROUPING(component_id) = 0 THEN 'component' WHEN GROUPING(region) = 0 THEN 'region' ELSE 'source' END AS scope,
          count(DISTINCT reporter_hash)::float8 AS reporters
        FROM (
          SELECT floor(extract(epoch FROM created_at) / 3600)::float8 * 3600000 AS hour_ms, component_id, region, reporter_hash
          FROM crowd_reports WHERE source_id = ${source.id} AND ${sql.or(ranges)}
        ) r
        GROUP BY GROUPING SETS ((hour_ms), (hour_ms, component_id), (hour_ms, region))`.pipe(Effect.flatMap(decodeHours)))
      if (cached === undefined) {
        // Past weeks' hours do not change: one read per source and hour, whatever the number of reports.
        if (baselines.size >= baselineCacheSize) baselines.delete(baselines.keys().next().value!)
        baselines.set(cacheKey, hours)
      }
      const usualOf = (keep: (row: typeof hours[number]) => boolean) =>
        usualByHourOfWeek(
          hours.filter(keep).map((h) => ({ hourOfWeek: hourOfWeekOf(h.hour_ms), reporters: h.reporters })),
          p.baselineWeeks,
          p
        )[hourOfWeek]!

      // Monitors watch the provider, not one of its components or regions: one count for every scope (one query).
      const failingNow = yield* corroboration.failingMonitorOrganizations({ sourceId: source.id, at: now })

      const componentIds = [...byComponent.keys()]
      const names = componentIds.length === 0 ? [] : yield* sql`
        SELECT id, name FROM components WHERE id IN ${sql.in(componentIds)}`.pipe(Effect.flatMap(decodeNames))
      const nameOf = new Map(names.map((c) => [c.id, c.name]))

      const components: Array<CrowdComponentScore> = []
      for (const [id, reports] of byComponent) {
        const usual = usualOf((h) => h.scope === "component" && h.component_id === id)
        components.push({ id, name: nameOf.get(id) ?? "", ...figures(reports, now, usual, failingNow) })
      }
      const regions: Array<CrowdRegionScore> = []
      for (const [region, reports] of byRegion) {
        const usual = usualOf((h) => h.scope === "region" && h.region === region)
        regions.push({ region, ...figures(reports, now, usual, failingNow) })
      }
      return {
        key: source.key,
        at: new Date(now).toISOString(),
        window_minutes: p.windowMs / 60_000,
        ...figures(all, now, usualOf((h) => h.scope === "source"), failingNow),
        components: components.toSorted(byConfidence),
        regions: regions.toSorted(byConfidence)
      } satisfies Omit<CrowdSourceScore, "signal">
    })

    const report = Effect.fn("CrowdReports.report")(function*(input: ReportInput) {
      const now = yield* Clock.currentTimeMillis
      if (!(crowdSymptoms as ReadonlyArray<string>).includes(input.symptom)) {
        return yield* new InvalidParameter({ field: "symptom", message: `symptom must be one of ${crowdSymptoms.join(", ")}` })
      }
      const address = canonicalAddress(input.address)
      yield* limit(address, now)
      const source = yield* findSource(input.sourceKey)
      if (input.componentId !== undefined) {
        const [known] = !uuid.test(input.componentId) ? [{ known: false }] : yield* sql`
          SELECT EXISTS (SELECT 1 FROM components WHERE id = ${input.componentId} AND source_id = ${source.id}) AS known`.pipe(
            Effect.flatMap(decodeKnown),
            Effect.orDie
          )
        if (known?.known !== true) {
          return yield* new InvalidParameter({
            field: "component_id",
            message: `component_id must be a component of ${source.key}, as /sources/${source.key}/components lists them`
          })
        }
      }
      if (input.region !== undefined) {
        const region = input.region
        const [known] = yield* sql`
          SELECT EXISTS (
            SELECT 1 FROM sources s WHERE s.id = ${source.id}
              AND (${region} = ANY (s.regions) OR s.region_statuses @> jsonb_build_array(jsonb_build_object('region', ${region}::text)))
          ) OR EXISTS (SELECT 1 FROM components WHERE source_id = ${source.id} AND region = ${region}) AS known`.pipe(
            Effect.flatMap(decodeKnown),
            Effect.orDie
          )
        if (known?.known !== true) {
          return yield* new InvalidParameter({ field: "region", message: `region must be one of the regions ${source.key} reports` })
        }
      }
      const windowStart = Math.floor(now / p.windowMs) * p.windowMs
      const inserted = yield* sql`
        INSERT INTO crowd_reports (source_id, component_id, reporter_hash, network_hash, symptom, region, window_start, created_at)
        VALUES (${source.id}, ${input.componentId ?? null}, ${reporterHash(input.userId, address)}, ${networkHash(address)},
          ${input.symptom}, ${input.region ?? null}, ${new Date(windowStart)}, ${new Date(now)})
        ON CONFLICT (source_id, reporter_hash, window_start) DO NOTHING
        RETURNING id`.pipe(Effect.flatMap(decodeInserted), Effect.orDie)
      const score = yield* scoreOf(source, now).pipe(Effect.orDie)
      // The score this report made may start the source's signal (or raise its peak): the answer shows it.
      yield* signals.observe(source, score, now)
      return { counted: inserted.length > 0, score: { ...score, signal: yield* signals.open(source.id) } }
    })

    const score = Effect.fn("CrowdReports.score")(function*(sourceKey: string, at?: number) {
      const now = at ?? (yield* Clock.currentTimeMillis)
      const source = yield* findSource(sourceKey)
      const figures = yield* scoreOf(source, now).pipe(Effect.orDie)
      return { ...figures, signal: yield* signals.open(source.id) } satisfies CrowdSourceScore
    })

    const record = Effect.fn("CrowdReports.record")(function*(sourceKey: string, at?: number) {
      const now = at ?? (yield* Clock.currentTimeMillis)
      const source = yield* findSource(sourceKey)
      const figures = yield* signals.record(source.id, now)
      return { key: source.key, ...figures, sentence: recordSentence(source.name, figures) } satisfies CrowdRecordView
    })

    const reportable = Effect.fn("CrowdReports.reportable")(function*(keys: ReadonlyArray<string>) {
      const valid = keys.filter(isSourceKey)
      if (valid.length === 0) return []
      const rows = yield* sql`
        SELECT id, key, name FROM sources s WHERE s.key IN ${sql.in(valid)} AND ${sql.literal(publicSourceCondition)}`.pipe(
          Effect.flatMap(decodeSource)
        )
      const byKey = new Map(rows.map((r) => [r.key, r.name]))
      return valid.flatMap((key) => {
        const name = byKey.get(key)
        return name === undefined ? [] : [{ key, name }]
      })
    }, Effect.orDie)

    return CrowdReports.of({ report, score, record, reportable })
  }))

  /** Over PostgreSQL, the bus and the secrets key, with its signals and the organizations' monitors' corroboration. */
  static readonly layer = CrowdReports.layerNoDeps.pipe(Layer.provideMerge(CrowdSignals.layer), Layer.provide(CrowdCorroboration.monitors))
}
