import { Array as Arr, Cause, Clock, Config, Context, Deferred, Effect, Layer, Queue, Schema } from "effect"
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
import { crowdDefaults, crowdReason, crowdScore, hourOfWeekOf, usualByHourOfWeek } from "../domain/CrowdScore.ts"
import { recordSentence } from "../domain/CrowdRecord.ts"
import { SourceKey } from "../domain/Source.ts"
import { Bus } from "../platform/Bus.ts"
import { RedisKeys } from "../platform/RedisKeys.ts"
import { rowsOf } from "../platform/Rows.ts"
import { SecretBox } from "../platform/SecretBox.ts"
import { publicSourceCondition } from "../platform/SourceRow.ts"
import { fnWhenTracing } from "../platform/Tracing.ts"
import { CrowdSignals } from "./CrowdSignals.ts"
import { makeWindows, type ScopeEvidence, type WindowRow } from "./CrowdWindows.ts"
import { canonicalAddress, networkOf } from "./Network.ts"

/** A source reports are taken for. */
interface SourceRef {
  readonly id: string
  readonly key: string
  readonly name: string
}

/** Reports written and scored together at most (`CrowdReports`' batches). */
const batchLimit = 500

/** How long a report trusts the source it read (a source hidden meanwhile takes reports that long), and how many are kept. */
const sourceCacheMs = 30_000
const sourceCacheSize = 10_000

/**
 * How long a batch trusts the corroborating monitors it read for a source: monitors change state at
 * their checks (every 30 s or more), so a count up to 5 s old spares most batches that read.
 */
const corroborationCacheMs = 5_000

/**
 * How late another process's committed report is still read, how often a source's read reaches back
 * that far (the reads between start at its last read: this process's own rows come from RETURNING),
 * and how often a window is read whole again.
 */
const windowSlackMs = 2_000
const windowSlackEveryMs = 1_000
const windowRefreshMs = 60_000

/** A `crowd_reports` row as a batch inserts it. */
type ReportRow = {
  readonly source_id: string
  readonly component_id: string | null
  readonly reporter_hash: string
  readonly network_hash: string
  readonly symptom: string
  readonly region: string | null
  readonly window_start: Date
  readonly created_at: Date
}

/** Adds a report to its scope's (a component's, a region's). */
const addTo = <R>(scopes: Map<string, Array<R>>, scope: string, report: R) => {
  const reports = scopes.get(scope) ?? []
  reports.push(report)
  scopes.set(scope, reports)
}

/** A report's identity for the once-per-window rule: source, reporter and window. */
const keyOf = (sourceId: string, reporter: string, windowMs: number) => `${sourceId}|${reporter}|${windowMs}`

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

/** What the corroboration of scores is asked about: sources at one moment (their components and regions take the same). */
export interface CorroborationScope {
  readonly sourceIds: ReadonlyArray<string>
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
  /** By source id; a source without any is left out (0). */
  failingMonitorOrganizations(scope: CorroborationScope): Effect.Effect<ReadonlyMap<string, number>>
}>()("statusgrid/crowd/CrowdCorroboration") {
  static readonly none = Layer.succeed(CrowdCorroboration, CrowdCorroboration.of({
    failingMonitorOrganizations: () => Effect.succeed(new Map())
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
    const decode = rowsOf("monitors", Schema.Struct({ source_id: Schema.String, organizations: Schema.Number }))
    const host = (column: string) => sql.literal(`lower(substring(${column} from '^[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^@/]*@)?([^/:?#]+)'))`)
    return CrowdCorroboration.of({
      failingMonitorOrganizations: (scope) =>
        scope.sourceIds.length === 0 ? Effect.succeed(new Map()) : sql`
          WITH provider AS (
            SELECT s.id AS source_id, regexp_replace(${host("s.service_url")}, '^www\.', '') AS host
            FROM sources s WHERE s.id IN ${sql.in(scope.sourceIds)} AND s.service_url IS NOT NULL
          )
          SELECT p.source_id, count(DISTINCT m.organization_id)::float8 AS organizations
          FROM monitors m JOIN provider p ON p.host IS NOT NULL AND p.host <> ''
          WHERE m.state IN ('down', 'degraded')
            AND m.last_changed_at > ${new Date(scope.at - corroborationMs)} AND m.last_changed_at <= ${new Date(scope.at)}
            AND (${host("m.url")} = p.host OR right(${host("m.url")}, length(p.host) + 1) = '.' || p.host)
          GROUP BY p.source_id`.pipe(
          Effect.flatMap(decode),
          Effect.map((rows) => new Map(rows.map((r) => [r.source_id, r.organizations]))),
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
  /** The scores (without signals) at `at` of those of `sourceKeys` reports are taken for, by key, read together. */
  scores(sourceKeys: ReadonlyArray<string>, at: number): Effect.Effect<ReadonlyMap<string, Omit<CrowdSourceScore, "signal">>>
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
    const WindowRowColumns = Schema.Struct({
      source_id: Schema.String,
      at_ms: Schema.Number,
      reporter_hash: Schema.String,
      network_hash: Schema.String,
      component_id: Schema.NullOr(Schema.String),
      region: Schema.NullOr(Schema.String)
    })
    const decodeWindow = rowsOf("crowd_reports", WindowRowColumns)
    const HourRow = Schema.Struct({
      source_id: Schema.String,
      hour_ms: Schema.Number,
      component_id: Schema.NullOr(Schema.String),
      region: Schema.NullOr(Schema.String),
      scope: Schema.Literals(["source", "component", "region"]),
      reporters: Schema.Number
    })
    const decodeHours = rowsOf("crowd_reports", HourRow)
    const decodeNames = rowsOf("components", Schema.Struct({ id: Schema.String, name: Schema.String }))
    /** A window's row, or (with `window_ms`) a row the batch's own statement inserted. */
    const decodeWindowOrInserted = rowsOf("crowd_reports", Schema.Struct({ ...WindowRowColumns.fields, window_ms: Schema.NullOr(Schema.Number) }))

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
     * Counts the reports of a batch, each for its address and minute, in one round trip to the bus; those
     * over the limit are answered `RateLimited` and left out. While the bus does not answer (250 ms), each
     * process counts on its own with the same limit: never unlimited.
     */
    const limitAll = Effect.fnUntraced(function*(batch: ReadonlyArray<Pending>) {
      const minuteOf = (r: Pending) => Math.floor(r.now / 60_000)
      const counts = yield* bus.incrMany(batch.map((r) => RedisKeys.crowdRate(r.rateSubject, minuteOf(r))), 61_000).pipe(
        Effect.timeout(250),
        Effect.tapError((error) => Effect.logWarning("crowd reports: bus unavailable, counting reports in this process", error)),
        Effect.orElseSucceed(() => batch.map((r) => countLocally(r.rateSubject, minuteOf(r))))
      )
      const allowed: Array<Pending> = []
      for (const [i, r] of batch.entries()) {
        if (counts[i]! <= perMinute) {
          allowed.push(r)
          continue
        }
        const retryAfterS = Math.max(1, Math.ceil(((minuteOf(r) + 1) * 60_000 - r.now) / 1000))
        yield* Deferred.fail(r.answer, new RateLimited({
          message: `too many reports from this address; at most ${perMinute} a minute, retry after ${retryAfterS} s`,
          retry_after_s: retryAfterS
        }))
      }
      return allowed
    })

    /**
     * Sources reports were taken for lately, by key: a report does not read its source again for half
     * to all of `sourceCacheMs`, drawn per entry, so that the sources a burst read together are not all
     * read again in the same moment.
     */
    const sourceCache = new Map<string, { readonly source: SourceRef; readonly until: number }>()
    const reportedSource = Effect.fnUntraced(function*(key: string, now: number) {
      const cached = sourceCache.get(key)
      if (cached !== undefined && cached.until > now) return cached.source
      const source = yield* findSource(key)
      if (sourceCache.size >= sourceCacheSize) sourceCache.clear()
      sourceCache.set(key, { source, until: now + sourceCacheMs * (0.5 + Math.random() / 2) })
      return source
    })

    /**
     * The organizations whose monitors corroborate each of `ids` at `now`: a count read at most
     * `corroborationCacheMs` before `now` is used again (never one read after `now`: a score of the past reads).
     */
    const corroborated = new Map<string, { readonly organizations: number; readonly at: number }>()
    const failingAt = Effect.fnUntraced(function*(ids: ReadonlyArray<string>, now: number) {
      const fresh = (id: string) => {
        const entry = corroborated.get(id)
        return entry !== undefined && entry.at <= now && now < entry.at + corroborationCacheMs
      }
      const missing = ids.filter((id) => !fresh(id))
      if (missing.length > 0) {
        const read = yield* corroboration.failingMonitorOrganizations({ sourceIds: missing, at: now })
        if (corroborated.size + missing.length > sourceCacheSize) corroborated.clear()
        for (const id of missing) corroborated.set(id, { organizations: read.get(id) ?? 0, at: now })
      }
      return new Map(ids.map((id) => [id, corroborated.get(id)!.organizations]))
    })

    /** The usual reporters per window of a source at one hour of the week: the source's, and its components' and regions' reported then. */
    interface Baseline {
      readonly source: number
      readonly components: ReadonlyMap<string, number>
      readonly regions: ReadonlyMap<string, number>
    }
    const noBaseline: Baseline = { source: 0, components: new Map(), regions: new Map() }
    /** The baselines by source and hour (`source id|hour start`), oldest entries dropped first. */
    const baselines = new Map<string, Baseline>()
    const baselineCacheSize = 20_000

    /** The windows of sources scored lately, read on from their last read (services/crowd/README.md "Windows"). */
    const windows = makeWindows(p, { slackMs: windowSlackMs, slackEveryMs: windowSlackEveryMs, refreshMs: windowRefreshMs, maxSources: 10_000 })

    /** The figures of one scope from its reporters of the window and usual. */
    const figures = (reporters: ScopeEvidence, usual: number, failing: number) => {
      const score = crowdScore({ ...reporters, usual, failingMonitorOrganizations: failing }, p)
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

    /**
     * The scores of `sources` at `now` (without their signals): one read of their windows' reports, one
     * of the baselines not cached yet, one of the corroborating monitors and one of the components' names.
     */
    const scoresOf = Effect.fnUntraced(function*(sources: ReadonlyArray<SourceRef>, now: number, insert?: Arr.NonEmptyReadonlyArray<ReportRow>) {
      const ids = [...new Set(sources.map((s) => s.id))]
      // The windows' reports: the sources read lately each only from its last read (`CrowdWindows`).
      const read = windows.plan(ids, now)
      const readRanges = [
        ...(read.whole.length === 0 ? [] : [sql`(source_id IN ${sql.in(read.whole)} AND created_at > ${new Date(now - p.windowMs)})`]),
        ...read.since.map(({ id, from }) => sql`(source_id = ${id} AND created_at > ${new Date(from)})`)
      ]
      const windowRows = sql`
        SELECT source_id, (extract(epoch FROM created_at) * 1000)::float8 AS at_ms, reporter_hash, network_hash, component_id, region
        FROM crowd_reports
        WHERE ${sql.or(readRanges)} AND created_at <= ${new Date(now)}`
      // A batch's reports are inserted by the same statement (one round trip): the read does not see
      // them (one snapshot), so the rows inserted join the windows from RETURNING; a reporter already
      // counted in its window is not returned (ON CONFLICT DO NOTHING).
      const fetched = insert === undefined ? yield* windowRows.pipe(Effect.flatMap(decodeWindow)) : yield* sql`
        WITH inserted AS (
          INSERT INTO crowd_reports ${sql.insert(insert)}
          ON CONFLICT (source_id, reporter_hash, window_start) DO NOTHING
          RETURNING source_id, (extract(epoch FROM created_at) * 1000)::float8 AS at_ms, reporter_hash, network_hash, component_id, region,
            (extract(epoch FROM window_start) * 1000)::float8 AS window_ms
        )
        SELECT source_id, at_ms, reporter_hash, network_hash, component_id, region, window_ms FROM inserted
        UNION ALL
        SELECT w.*, NULL::float8 AS window_ms FROM (${windowRows}) w`.pipe(Effect.flatMap(decodeWindowOrInserted))
      const counted = new Set<string>()
      const bySource = new Map<string, Array<WindowRow>>()
      for (const row of fetched) {
        const windowMs = "window_ms" in row ? row.window_ms : null
        if (typeof windowMs === "number") counted.add(keyOf(row.source_id, row.reporter_hash, windowMs))
        addTo(bySource, row.source_id, {
          at: row.at_ms,
          reporter: row.reporter_hash,
          network: row.network_hash,
          componentId: row.component_id,
          region: row.region
        })
      }
      const evidence = windows.apply(read, bySource, now)

      // The usual: distinct reporters of each clock hour at this hour of the week (and the
      // `baselineSpreadHours` on each side), 1 to `baselineWeeks` weeks ago. Past weeks' hours do not
      // change: one read per source and hour, whatever the number of reports.
      const hourStart = Math.floor(now / 3_600_000) * 3_600_000
      const uncached = ids.filter((id) => !baselines.has(`${id}|${hourStart}`))
      if (uncached.length > 0) {
        const ranges = Array.from({ length: p.baselineWeeks }, (_, i) => {
          const from = hourStart - (i + 1) * weekMs - p.baselineSpreadHours * 3_600_000
          return sql`(created_at >= ${new Date(from)} AND created_at < ${new Date(from + (2 * p.baselineSpreadHours + 1) * 3_600_000)})`
        })
        const read = yield* sql`
          SELECT source_id, hour_ms, component_id, region,
            CASE WHEN GROUPING(component_id) = 0 THEN 'component' WHEN GROUPING(region) = 0 THEN 'region' ELSE 'source' END AS scope,
            count(DISTINCT reporter_hash)::float8 AS reporters
          FROM (
            SELECT source_id, floor(extract(epoch FROM created_at) / 3600)::float8 * 3600000 AS hour_ms, component_id, region, reporter_hash
            FROM crowd_reports WHERE source_id IN ${sql.in(uncached)} AND ${sql.or(ranges)}
          ) r
          GROUP BY GROUPING SETS ((source_id, hour_ms), (source_id, hour_ms, component_id), (source_id, hour_ms, region))`.pipe(
            Effect.flatMap(decodeHours)
          )
        const hourOfWeek = hourOfWeekOf(now)
        const usualOf = (hours: ReadonlyArray<typeof HourRow.Type>) =>
          usualByHourOfWeek(hours.map((h) => ({ hourOfWeek: hourOfWeekOf(h.hour_ms), reporters: h.reporters })), p.baselineWeeks, p)[hourOfWeek]!
        const group = (hours: ReadonlyArray<typeof HourRow.Type>, keyOf: (h: typeof HourRow.Type) => string | null) => {
          const byKey = new Map<string, Array<typeof HourRow.Type>>()
          for (const h of hours) {
            const key = keyOf(h)
            if (key !== null) addTo(byKey, key, h)
          }
          return new Map([...byKey].map(([key, rows]) => [key, usualOf(rows)]))
        }
        for (const id of uncached) {
          if (baselines.size >= baselineCacheSize) baselines.delete(baselines.keys().next().value!)
          const hours = read.filter((h) => h.source_id === id)
          baselines.set(`${id}|${hourStart}`, {
            source: usualOf(hours.filter((h) => h.scope === "source")),
            components: group(hours, (h) => h.scope === "component" ? h.component_id : null),
            regions: group(hours, (h) => h.scope === "region" ? h.region : null)
          })
        }
      }

      // Monitors watch the provider, not one of its components or regions: one count for every scope.
      const failing = yield* failingAt(ids, now)

      const componentIds = new Set([...evidence.values()].flatMap((e) => [...e.components.keys()]))
      const names = componentIds.size === 0 ? [] : yield* sql`
        SELECT id, name FROM components WHERE id IN ${sql.in([...componentIds])}`.pipe(Effect.flatMap(decodeNames))
      const nameOf = new Map(names.map((c) => [c.id, c.name]))

      const scores = new Map<string, Omit<CrowdSourceScore, "signal">>()
      for (const source of sources) {
        const of = evidence.get(source.id)!
        const usual = baselines.get(`${source.id}|${hourStart}`) ?? noBaseline
        const failingNow = failing.get(source.id) ?? 0
        const components: Array<CrowdComponentScore> = []
        for (const [id, reporters] of of.components) {
          components.push({ id, name: nameOf.get(id) ?? "", ...figures(reporters, usual.components.get(id) ?? 0, failingNow) })
        }
        const regions: Array<CrowdRegionScore> = []
        for (const [region, reporters] of of.regions) {
          regions.push({ region, ...figures(reporters, usual.regions.get(region) ?? 0, failingNow) })
        }
        scores.set(source.id, {
          key: source.key,
          at: new Date(now).toISOString(),
          window_minutes: p.windowMs / 60_000,
          ...figures(of.all, usual.source, failingNow),
          components: components.toSorted(byConfidence),
          regions: regions.toSorted(byConfidence)
        })
      }
      return { scores, counted }
    })

    /** A report checked and hashed, waiting for its batch (`flush`). */
    interface Pending {
      readonly source: SourceRef
      readonly componentId: string | null
      readonly region: string | null
      readonly reporter: string
      readonly network: string
      readonly symptom: string
      readonly now: number
      /** The address's key for the rate limit. */
      readonly rateSubject: string
      readonly answer: Deferred.Deferred<CrowdReportAccepted, RateLimited>
    }
    const pending = yield* Queue.unbounded<Pending>()

    /**
     * Writes a batch of reports in one statement (a reporter twice in it, for the same source and
     * window, is written once), scores their sources once each at the batch's latest time, starts or
     * ends their signals, and answers each report. Each report is answered after its row is committed.
     */
    const flush = Effect.fnUntraced(function*(reports: ReadonlyArray<Pending>) {
      const batch = yield* limitAll(reports)
      if (batch.length === 0) return
      const windowOf = (r: Pending) => Math.floor(r.now / p.windowMs) * p.windowMs
      const firsts = new Map<string, Pending>()
      for (const r of batch) {
        const key = keyOf(r.source.id, r.reporter, windowOf(r))
        if (!firsts.has(key)) firsts.set(key, r)
      }
      const rows = [...firsts.values()].map((r): ReportRow => ({
        source_id: r.source.id,
        component_id: r.componentId,
        reporter_hash: r.reporter,
        network_hash: r.network,
        symptom: r.symptom,
        region: r.region,
        window_start: new Date(windowOf(r)),
        created_at: new Date(r.now)
      }))
      if (!Arr.isArrayNonEmpty(rows)) return
      const now = Math.max(...batch.map((r) => r.now))
      const sources = [...new Map(batch.map((r) => [r.source.id, r.source])).values()]
      const { counted, scores } = yield* scoresOf(sources, now, rows)
      // The scores may start a signal (or raise its peak, or end it): the answers show each source's after.
      const open = yield* signals.observeAll(sources.map((source) => ({ source, score: scores.get(source.id)! })), now)
      for (const r of batch) {
        const key = keyOf(r.source.id, r.reporter, windowOf(r))
        yield* Deferred.succeed(r.answer, {
          counted: firsts.get(key) === r && counted.has(key),
          score: { ...scores.get(r.source.id)!, signal: open.get(r.source.id) ?? null }
        })
      }
    })

    // One batch at a time: reports arriving while one is written wait for the next, which takes them all
    // (up to `batchLimit`). A batch that fails fails its reports (as defects), not the writer.
    yield* Queue.takeBetween(pending, 1, batchLimit).pipe(
      Effect.flatMap((batch) =>
        flush(batch).pipe(
          Effect.catchCause((cause) =>
            Effect.forEach(batch, (r) => Deferred.die(r.answer, Cause.squash(cause)), { discard: true })
          )
        )
      ),
      Effect.forever,
      Effect.forkScoped
    )

    const report = fnWhenTracing("CrowdReports.report")(Effect.fnUntraced(function*(input: ReportInput) {
      const now = yield* Clock.currentTimeMillis
      if (!(crowdSymptoms as ReadonlyArray<string>).includes(input.symptom)) {
        return yield* new InvalidParameter({ field: "symptom", message: `symptom must be one of ${crowdSymptoms.join(", ")}` })
      }
      const address = canonicalAddress(input.address)
      const source = yield* reportedSource(input.sourceKey, now)
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
      const answer = yield* Deferred.make<CrowdReportAccepted, RateLimited>()
      yield* Queue.offer(pending, {
        source,
        componentId: input.componentId ?? null,
        region: input.region ?? null,
        reporter: reporterHash(input.userId, address),
        network: networkHash(address),
        symptom: input.symptom,
        now,
        rateSubject: rateSubject(address),
        answer
      })
      return yield* Deferred.await(answer)
    }))

    const score = Effect.fn("CrowdReports.score")(function*(sourceKey: string, at?: number) {
      const now = at ?? (yield* Clock.currentTimeMillis)
      const source = yield* findSource(sourceKey)
      const figures = (yield* scoresOf([source], now).pipe(Effect.orDie)).scores.get(source.id)!
      return { ...figures, signal: yield* signals.open(source.id) } satisfies CrowdSourceScore
    })

    const record = Effect.fn("CrowdReports.record")(function*(sourceKey: string, at?: number) {
      const now = at ?? (yield* Clock.currentTimeMillis)
      const source = yield* findSource(sourceKey)
      const figures = yield* signals.record(source.id, now)
      return { key: source.key, ...figures, sentence: recordSentence(source.name, figures) } satisfies CrowdRecordView
    })

    /** Of `keys`, the sources reports are taken for. */
    const findSources = (keys: ReadonlyArray<string>) => {
      const valid = keys.filter(isSourceKey)
      return valid.length === 0 ? Effect.succeed([]) : sql`
        SELECT id, key, name FROM sources s WHERE s.key IN ${sql.in(valid)} AND ${sql.literal(publicSourceCondition)}`.pipe(
          Effect.flatMap(decodeSource)
        )
    }

    const scores = Effect.fn("CrowdReports.scores")(function*(sourceKeys: ReadonlyArray<string>, at: number) {
      const sources = yield* findSources(sourceKeys)
      if (sources.length === 0) return new Map<string, Omit<CrowdSourceScore, "signal">>()
      const { scores: byId } = yield* scoresOf(sources, at)
      return new Map(sources.map((s) => [s.key, byId.get(s.id)!]))
    }, Effect.orDie)

    const reportable = Effect.fn("CrowdReports.reportable")(function*(keys: ReadonlyArray<string>) {
      const valid = keys.filter(isSourceKey)
      const rows = yield* findSources(keys)
      const byKey = new Map(rows.map((r) => [r.key, r.name]))
      return valid.flatMap((key) => {
        const name = byKey.get(key)
        return name === undefined ? [] : [{ key, name }]
      })
    }, Effect.orDie)

    return CrowdReports.of({ report, score, scores, record, reportable })
  }))

  /** Over PostgreSQL, the bus and the secrets key, with its signals and the organizations' monitors' corroboration. */
  static readonly layer = CrowdReports.layerNoDeps.pipe(Layer.provideMerge(CrowdSignals.layer), Layer.provide(CrowdCorroboration.monitors))
}

