import { Array as Arr, Clock, Effect, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { constants as perfConstants, type PerformanceEntry, PerformanceObserver } from "node:perf_hooks"
import { CrowdReports } from "../services/crowd/CrowdReports.ts"
import { CrowdSignals } from "../services/crowd/CrowdSignals.ts"
import { recordOnset, sweepOnce } from "../services/crowd/CrowdWorker.ts"
import { networkOf } from "../services/crowd/Network.ts"
import { type CrowdRecord, crowdRecord, followMs, median, type OnsetFact, type SignalFact } from "../services/domain/CrowdRecord.ts"
import { crowdDefaults, type CrowdParameters, crowdScore, hourOfWeekOf, signalOn, usualByHourOfWeek, windowNetworks } from "../services/domain/CrowdScore.ts"
import type { StatusEvent } from "../services/domain/Event.ts"
import { fnv1a, prng } from "../services/platform/Prng.ts"
import { SecretBox } from "../services/platform/SecretBox.ts"
import * as Migrations from "../services/platform/Migrations.ts"
import {
  crowdAddress,
  crowdArrivals,
  type CrowdOutage,
  type CrowdReport,
  type CrowdSource,
  crowdSource,
  nthReporter,
  officialStatusAt,
  sourceScale
} from "../services/simulator/Crowd.ts"
import { percentile, round } from "./figures.ts"
import { latencySlices, slicesAfter } from "./latencySlices.ts"
import type { HttpTarget } from "./httpProcesses.ts"

/**
 * `statusgrid bench crowd` (issue #17): the crowd's detection over simulated
 * reports (services/simulator/Crowd.ts) and the report API's ingest rate.
 *
 * - **detection**: virtual time, in memory, with the service's own functions
 *   (`crowdScore`, `signalOn`, `usualByHourOfWeek`, `hourOfWeekOf`,
 *   `crowdRecord`): for each source 4 weeks of background before the period
 *   (its baseline), then the period walked report by report and every
 *   `sweepMs` while a signal is open, as `CrowdReports.report` and
 *   `CrowdWorker.sweepOnce` do; the official onsets are the outages' flips,
 *   linked to signals as `CrowdWorker.recordOnset` links them.
 * - **service**: the same reports for a few sources and hours through the real
 *   `CrowdReports.report` with the `Clock` at each report's time and
 *   `sweepOnce(at)` every `sweepMs`, on the configured stores; the signals it
 *   stored are compared with the in-memory detector's.
 * - **ingest**: reports POSTed to the API in this process at a fixed arrival
 *   rate (open loop, from a child process, each from its own loopback address).
 */

const minuteMs = 60_000
const hourMs = 3_600_000
const dayMs = 86_400_000
const weekMs = 7 * dayMs

/** The period's start: a Monday 00:00 UTC (the baseline's 4 weeks before it are generated too). */
export const periodStart = Date.UTC(2026, 0, 5)

// ---------------------------------------------------------------------------------------------
// The in-memory detector

/** A signal as the detector (or the service) decided it. */
export interface DetectedSignal {
  readonly startedAt: number
  readonly endedAt: number | null
  /** The official status when it started. */
  readonly officialStatus: string
  readonly startConfidence: number
  readonly peakConfidence: number
}

export interface DetectOptions {
  /** The walked period `[from, to)`: signals are decided there; reports before it are history (baseline and window). */
  readonly from: number
  readonly to: number
  readonly outages: ReadonlyArray<CrowdOutage>
  /** The sweep's period (CROWD_SWEEP_MS). */
  readonly sweepMs: number
  readonly parameters?: CrowdParameters | undefined
}

/**
 * The signals of one source over `[from, to)` from its reports (oldest first,
 * history included), decided as the service decides them:
 *
 * - a report is stored once per reporter and fixed window (`window_start`; a
 *   repeat is not stored but still scored, as `report` scores after its insert);
 * - the score at `now` counts the distinct reporters of `(now − window, now]`,
 *   each in its network, through `crowdScore` with `networks`;
 * - the usual is `usualByHourOfWeek` of the distinct reporters of each clock
 *   hour at this hour of the week 1 to `baselineWeeks` weeks ago;
 * - after each report, and at each multiple of `sweepMs` while a signal is
 *   open (before a report of the same instant), `signalOn` starts, holds or ends it.
 */
export const detectSignals = (reports: ReadonlyArray<CrowdReport>, options: DetectOptions) => {
  const p = options.parameters ?? crowdDefaults
  // Stored rows: the first report of a reporter in a fixed window.
  const stored: Array<CrowdReport> = []
  const seen = new Set<number>()
  for (const r of reports) {
    const key = r.reporter * 4_194_304 + Math.floor(r.at / p.windowMs) % 4_194_304
    if (seen.has(key)) continue
    seen.add(key)
    stored.push(r)
  }
  // Distinct reporters of each clock hour (the baseline's counts).
  const hourReporters = new Map<number, Set<number>>()
  for (const r of stored) {
    const hour = Math.floor(r.at / hourMs)
    const set = hourReporters.get(hour) ?? new Set<number>()
    set.add(r.reporter)
    hourReporters.set(hour, set)
  }
  const usualCache = new Map<number, number>()
  const usualAt = (now: number) => {
    const hour = Math.floor(now / hourMs)
    const cached = usualCache.get(hour)
    if (cached !== undefined) return cached
    const hours: Array<{ hourOfWeek: number; reporters: number }> = []
    for (let i = 1; i <= p.baselineWeeks; i++) {
      for (let d = -p.baselineSpreadHours; d <= p.baselineSpreadHours; d++) {
        const h = hour - i * 168 + d
        const n = hourReporters.get(h)?.size ?? 0
        if (n > 0) hours.push({ hourOfWeek: hourOfWeekOf(h * hourMs), reporters: n })
      }
    }
    const usual = usualByHourOfWeek(hours, p.baselineWeeks, p)[hourOfWeekOf(now)]!
    usualCache.set(hour, usual)
    return usual
  }

  // The sliding window: stored rows in (now − window, now], reporters counted once, each in its network.
  let head = 0
  let tail = 0
  const rowsOfReporter = new Map<number, number>()
  const reportersOfNetwork = new Map<number, number>()
  const advance = (now: number) => {
    while (tail < stored.length && stored[tail]!.at <= now) {
      const r = stored[tail++]!
      const n = rowsOfReporter.get(r.reporter) ?? 0
      rowsOfReporter.set(r.reporter, n + 1)
      if (n === 0) reportersOfNetwork.set(r.network, (reportersOfNetwork.get(r.network) ?? 0) + 1)
    }
    while (head < tail && stored[head]!.at <= now - p.windowMs) {
      const r = stored[head++]!
      const n = rowsOfReporter.get(r.reporter)! - 1
      if (n > 0) rowsOfReporter.set(r.reporter, n)
      else {
        rowsOfReporter.delete(r.reporter)
        const m = reportersOfNetwork.get(r.network)! - 1
        if (m > 0) reportersOfNetwork.set(r.network, m)
        else reportersOfNetwork.delete(r.network)
      }
    }
  }

  const signals: Array<DetectedSignal> = []
  let open: { startedAt: number; officialStatus: string; startConfidence: number; peakConfidence: number } | undefined
  let evaluations = 0
  const observe = (now: number) => {
    advance(now)
    evaluations++
    // The short windows' reporters: the stored rows after now − the longest of them.
    const longestShort = Math.max(0, ...p.shortWindowsMs)
    let from = tail
    while (from > head && stored[from - 1]!.at > now - longestShort) from--
    const { recent } = windowNetworks(stored.slice(from, tail), now, p)
    const score = crowdScore({ networks: [...reportersOfNetwork.values()], recent, usual: usualAt(now), failingMonitorOrganizations: 0 }, p)
    if (open === undefined) {
      if (signalOn(false, score, p)) {
        nextTick = (Math.floor(now / options.sweepMs) + 1) * options.sweepMs
        open = {
          startedAt: now,
          officialStatus: officialStatusAt(options.outages, now),
          startConfidence: score.confidence,
          peakConfidence: score.confidence
        }
      }
    } else if (signalOn(true, score, p)) {
      open.peakConfidence = Math.max(open.peakConfidence, score.confidence)
    } else {
      signals.push({ ...open, endedAt: Math.max(open.startedAt, now) })
      open = undefined
    }
  }
  // The next sweep after a signal opened: the first multiple of sweepMs after its start.
  let nextTick = Infinity
  const sweepUntil = (limit: number) => {
    while (nextTick <= limit) {
      if (open === undefined) return
      const tick = nextTick
      nextTick += options.sweepMs
      observe(tick)
    }
  }
  for (const r of reports) {
    if (r.at < options.from) continue
    if (r.at >= options.to) break
    sweepUntil(r.at)
    observe(r.at)
  }
  sweepUntil(options.to - 1)
  if (open !== undefined) signals.push({ ...open, endedAt: null })
  return { signals, evaluations, stored: stored.length }
}

/**
 * The official onsets of `outages` (their flips) linked to `signals` as `CrowdWorker.recordOnset`
 * links them: an onset within `followMs` after another is the same trouble (dropped); an onset is
 * led by the earliest signal started in `(at − followMs, at]` while the official status was
 * operational that led no other onset.
 */
export const linkOnsets = (signals: ReadonlyArray<SignalFact>, outages: ReadonlyArray<CrowdOutage>): Array<OnsetFact> => {
  const onsets: Array<OnsetFact> = []
  const used = new Set<string>()
  for (const o of outages.toSorted((a, b) => a.at - b.at)) {
    if (onsets.some((x) => x.at > o.at - followMs && x.at <= o.at)) continue
    const led = signals
      .filter((s) => s.officialStatus === "operational" && s.startedAt <= o.at && s.startedAt > o.at - followMs && !used.has(s.id))
      .toSorted((a, b) => a.startedAt - b.startedAt)[0]
    if (led !== undefined) used.add(led.id)
    onsets.push({ at: o.at, signalId: led?.id ?? null })
  }
  return onsets
}

// ---------------------------------------------------------------------------------------------
// The simulated catalog and its outages

export interface CrowdWorldOptions {
  readonly sources: number
  readonly days: number
  readonly outages: number
  readonly leadMinutes: number
  readonly rampMinutes: number
  /** Peak reporters per 10 minutes of an average source's outage: MIN-MAX, drawn per outage. */
  readonly peak: readonly [number, number]
  /** Outage durations, minutes: MIN-MAX. */
  readonly durationMinutes: readonly [number, number]
  /** σ of the log of the sources' scales (0: every source average). */
  readonly scaleSigma: number
  readonly seed: number
}

export interface CrowdWorld {
  readonly from: number
  readonly to: number
  readonly historyFrom: number
  readonly sources: ReadonlyArray<{ readonly index: number; readonly source: CrowdSource; readonly outages: ReadonlyArray<CrowdOutage> }>
}

/**
 * `sources` sources (scales log-normal around 1), `outages` outages on random sources at random times
 * of `[from + 1 h, to − 2 h)` (none within `followMs` plus its duration of another of its source),
 * each with a peak drawn from `peak` times the source's scale.
 */
export const crowdWorld = (o: CrowdWorldOptions): CrowdWorld => {
  const from = periodStart
  const to = from + o.days * dayMs
  const random = prng(fnv1a(`world:${o.seed}`))
  const sources = Array.from({ length: o.sources }, (_, index) => {
    const seed = fnv1a(`source:${o.seed}:${index}`)
    return { index, source: crowdSource(seed, { scale: sourceScale(seed, o.scaleSigma) }), outages: [] as Array<CrowdOutage> }
  })
  const between = ([a, b]: readonly [number, number]) => a + random() * (b - a)
  for (let n = 0; n < o.outages; n++) {
    const s = sources[Math.floor(random() * sources.length)]!
    const durationMs = Math.round(between(o.durationMinutes) * minuteMs)
    for (let attempt = 0; attempt < 100; attempt++) {
      const at = from + hourMs + Math.floor(random() * Math.max(1, to - from - 3 * hourMs - durationMs))
      const clash = s.outages.some((x) => Math.abs(x.at - at) < followMs + Math.max(x.durationMs, durationMs) + o.leadMinutes * minuteMs)
      if (clash) continue
      s.outages.push({
        at,
        durationMs,
        leadMs: o.leadMinutes * minuteMs,
        rampMs: o.rampMinutes * minuteMs,
        peakPer10Min: between(o.peak) * s.source.scale
      })
      break
    }
  }
  for (const s of sources) s.outages.sort((a, b) => a.at - b.at)
  return { from, to, historyFrom: from - crowdDefaults.baselineWeeks * weekMs, sources }
}

// ---------------------------------------------------------------------------------------------
// Detection

export interface DetectionResult {
  readonly sources: number
  readonly days: number
  readonly outages: number
  readonly onsets: number
  readonly led: number
  readonly detected_percent: number
  readonly detected_any_percent: number
  readonly median_lead_minutes: number | null
  readonly lead_minutes: { readonly p10: number; readonly p50: number; readonly p90: number }
  readonly signals: number
  readonly confirmations: number
  readonly false_alarms: number
  readonly false_alarms_per_source_per_30_days: number
  readonly sources_with_false_alarms: number
  readonly pending_at_end: number
  readonly by_scale: ReadonlyArray<{ readonly scale: string; readonly onsets: number; readonly led: number; readonly median_lead_minutes: number | null }>
  readonly reports: number
  readonly evaluations: number
  readonly records_check: string
  readonly elapsed_s: number
}

/** The detection benchmark (pure; no stores): detection share, median lead and false alarms. */
export const runDetection = (o: CrowdWorldOptions & { readonly sweepMs?: number; readonly parameters?: CrowdParameters }): DetectionResult => {
  const started = performance.now()
  const world = crowdWorld(o)
  const sweepMs = o.sweepMs ?? 30_000
  let onsets = 0
  let led = 0
  let signalsN = 0
  let confirmations = 0
  let falseAlarms = 0
  let pending = 0
  let reportsN = 0
  let evaluations = 0
  let detectedAny = 0
  let sourcesWithFalseAlarms = 0
  let recordMismatches = 0
  const leads: Array<number> = []
  const buckets = [[0, 0.5], [0.5, 1], [1, 2], [2, Infinity]] as const
  const byBucket = buckets.map(() => ({ onsets: 0, led: 0, leads: [] as Array<number> }))
  for (const s of world.sources) {
    const reports = crowdArrivals(s.source, world.historyFrom, world.to, s.outages)
    reportsN += reports.length
    const detected = detectSignals(reports, { from: world.from, to: world.to, outages: s.outages, sweepMs, parameters: o.parameters })
    evaluations += detected.evaluations
    const facts: Array<SignalFact> = detected.signals.map((g, i) => ({ id: String(i), startedAt: g.startedAt, officialStatus: g.officialStatus }))
    const links = linkOnsets(facts, s.outages)
    const record: CrowdRecord = crowdRecord(facts, links, world.to)
    const bucket = byBucket[buckets.findIndex(([a, b]) => s.source.scale >= a && s.source.scale < b)]!
    // The leads as the record takes them (onset − signal start), pooled over every source.
    const startOf = new Map(facts.map((f) => [f.id, f.startedAt]))
    const sourceLeads = links.flatMap((l) => (l.signalId === null ? [] : [l.at - startOf.get(l.signalId)!]))
    if (sourceLeads.length !== record.led) recordMismatches++
    leads.push(...sourceLeads)
    bucket.onsets += record.onsets
    bucket.led += record.led
    bucket.leads.push(...sourceLeads)
    onsets += record.onsets
    led += record.led
    signalsN += record.signals
    falseAlarms += record.false_alarms
    pending += record.pending
    if (record.false_alarms > 0) sourcesWithFalseAlarms++
    confirmations += facts.filter((f) => f.officialStatus !== "operational").length
    // Detected at all: a signal started from followMs before the flip until the official status is back.
    detectedAny += s.outages.filter((out) => detected.signals.some((g) => g.startedAt > out.at - followMs && g.startedAt < out.at + out.durationMs)).length
  }
  const sorted = leads.map((l) => l / minuteMs).toSorted((a, b) => a - b)
  const lead = median(leads)
  return {
    sources: o.sources,
    days: o.days,
    outages: world.sources.reduce((n, s) => n + s.outages.length, 0),
    onsets,
    led,
    detected_percent: onsets === 0 ? 0 : round((led / onsets) * 100, 1),
    detected_any_percent: onsets === 0 ? 0 : round((detectedAny / onsets) * 100, 1),
    median_lead_minutes: lead === null ? null : round(lead / minuteMs, 2),
    lead_minutes: { p10: round(percentile(sorted, 10), 2), p50: round(percentile(sorted, 50), 2), p90: round(percentile(sorted, 90), 2) },
    signals: signalsN,
    confirmations,
    false_alarms: falseAlarms,
    false_alarms_per_source_per_30_days: round((falseAlarms / o.sources) * (30 / o.days), 4),
    sources_with_false_alarms: sourcesWithFalseAlarms,
    pending_at_end: pending,
    by_scale: buckets.map(([a, b], i) => {
      const m = median(byBucket[i]!.leads)
      return {
        scale: b === Infinity ? `>=${a}` : `${a}-${b}`,
        onsets: byBucket[i]!.onsets,
        led: byBucket[i]!.led,
        median_lead_minutes: m === null ? null : round(m / minuteMs, 2)
      }
    }),
    reports: reportsN,
    evaluations,
    records_check: recordMismatches === 0 ? "crowdRecord's led equals the pooled leads for every source" : `${recordMismatches} sources differ`,
    elapsed_s: round((performance.now() - started) / 1000, 2)
  }
}

// ---------------------------------------------------------------------------------------------
// Through the service, with a virtual clock

/** A Clock whose wall time is `ms`; sleeping and monotonic time are the real clock's (timeouts still work). */
const clockAt = (real: Clock.Clock, ms: number): Clock.Clock => ({
  currentTimeMillisUnsafe: () => ms,
  currentTimeMillis: Effect.succeed(ms),
  currentTimeNanosUnsafe: () => BigInt(ms) * 1_000_000n,
  currentTimeNanos: Effect.sync(() => BigInt(ms) * 1_000_000n),
  monotonicTimeNanosUnsafe: () => real.monotonicTimeNanosUnsafe(),
  monotonicTimeNanos: real.monotonicTimeNanos,
  sleep: (d) => real.sleep(d)
})

export interface ServiceCheckOptions {
  readonly sources: number
  readonly hours: number
  readonly leadMinutes: number
  readonly rampMinutes: number
  readonly peak: readonly [number, number]
  readonly seed: number
  readonly sweepMs?: number
}

const signalRows = Schema.Array(Schema.Struct({
  source_id: Schema.String,
  started_at: Schema.Date,
  ended_at: Schema.NullOr(Schema.Date),
  official_status: Schema.String,
  start_confidence: Schema.Number,
  peak_confidence: Schema.Number
}))

const sameSignal = (a: DetectedSignal, b: DetectedSignal) =>
  a.startedAt === b.startedAt && a.endedAt === b.endedAt && a.officialStatus === b.officialStatus &&
  a.startConfidence === b.startConfidence && a.peakConfidence === b.peakConfidence

/**
 * `sources` new catalog sources, each with 4 weeks of background inserted as rows (the baseline)
 * and `hours` of reports sent through `CrowdReports.report` at their virtual times (one outage in
 * each source's hours, the official status flipped in `sources` and the onset recorded by
 * `recordOnset`), `sweepOnce(at)` at every multiple of `sweepMs`; then the signals the service
 * stored against the in-memory detector's, and each source's record against `crowdRecord`.
 */
export const runServiceCheck = Effect.fn("bench.crowd.service")(function*(o: ServiceCheckOptions) {
  const started = performance.now()
  yield* Migrations.migratePostgres()
  const sql = yield* SqlClient
  const box = yield* SecretBox
  const reports = yield* CrowdReports
  const signals = yield* CrowdSignals
  const real = yield* Clock.Clock
  const sweepMs = o.sweepMs ?? 30_000
  const from = periodStart
  const to = from + o.hours * hourMs
  const historyFrom = from - crowdDefaults.baselineWeeks * weekMs
  const tag = Date.now().toString(36)
  const random = prng(fnv1a(`service:${o.seed}`))

  const worlds: Array<{ id: string; key: string; source: CrowdSource; outages: Array<CrowdOutage>; reports: Array<CrowdReport> }> = []
  for (let i = 0; i < o.sources; i++) {
    const key = `crowd-bench-${tag}-${i}`
    const [row] = yield* sql<{ id: string }>`
      INSERT INTO sources (key, name, kind, status, status_page_url, enabled)
      VALUES (${key}, ${`Crowd bench ${i}`}, 'catalog', 'operational', 'https://status.example.com', true)
      RETURNING id`
    const source = crowdSource(fnv1a(`service-source:${o.seed}:${i}`), { scale: 1 })
    // One outage in the middle of the hours (the flip on a whole second), of 30-60 minutes.
    const at = Math.floor((from + (0.3 + 0.4 * random()) * (to - from)) / 1000) * 1000
    const peak = o.peak[0] + random() * (o.peak[1] - o.peak[0])
    const outages = [{ at, durationMs: Math.round((30 + 30 * random()) * minuteMs), leadMs: o.leadMinutes * minuteMs, rampMs: o.rampMinutes * minuteMs, peakPer10Min: peak }]
    worlds.push({ id: row!.id, key, source, outages, reports: crowdArrivals(source, historyFrom, to, outages) })
  }

  // History: rows as report() writes them (the same hashes), without scoring: the baseline and the first windows.
  let historyRows = 0
  for (const w of worlds) {
    const rows = w.reports.filter((r) => r.at < from).map((r): Record<string, unknown> => {
      const address = crowdAddress(r)
      return {
        source_id: w.id,
        reporter_hash: box.sign("crowd reporter", `ip:${address}`),
        network_hash: box.sign("crowd network", networkOf(address)),
        symptom: r.symptom ?? "other",
        window_start: new Date(Math.floor(r.at / crowdDefaults.windowMs) * crowdDefaults.windowMs),
        created_at: new Date(r.at)
      }
    })
    for (let i = 0; i < rows.length; i += 500) {
      const batch = rows.slice(i, i + 500)
      if (!Arr.isReadonlyArrayNonEmpty(batch)) continue
      yield* sql`INSERT INTO crowd_reports ${sql.insert(batch)} ON CONFLICT (source_id, reporter_hash, window_start) DO NOTHING`
    }
    historyRows += rows.length
  }

  // The hours: reports, flips and sweeps in time order (at one instant: flips, then the sweep, then reports).
  type Step = { at: number; kind: 0 | 1 | 2; w: typeof worlds[number]; r?: CrowdReport; status?: "down" | "operational" }
  const steps: Array<Step> = []
  for (const w of worlds) {
    for (const r of w.reports) if (r.at >= from && r.at < to) steps.push({ at: r.at, kind: 2, w, r })
    for (const out of w.outages) {
      steps.push({ at: out.at, kind: 0, w, status: "down" })
      steps.push({ at: out.at + out.durationMs, kind: 0, w, status: "operational" })
    }
  }
  steps.sort((a, b) => a.at - b.at || a.kind - b.kind)
  const at = (ms: number) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Clock.Clock, clockAt(real, ms))
  let nextTick = Math.ceil(from / sweepMs) * sweepMs
  let sent = 0
  let sweeps = 0
  const sweepTo = (limit: number) =>
    Effect.gen(function*() {
      while (nextTick <= limit) {
        yield* sweepOnce(nextTick).pipe(at(nextTick))
        sweeps++
        nextTick += sweepMs
      }
    })
  for (const step of steps) {
    if (step.at >= to) continue
    if (step.kind === 0) {
      // A flip is applied before a sweep of the same instant (the detector's officialStatusAt is inclusive).
      yield* sweepTo(step.at - 1)
      yield* sql`UPDATE sources SET status = ${step.status!} WHERE id = ${step.w.id}`
      if (step.status === "down") {
        const event: StatusEvent = {
          id: `crowd-bench-${step.w.key}-${step.at}`,
          type: "source.status_changed",
          timestamp: new Date(step.at).toISOString(),
          source: { key: step.w.key, name: step.w.key },
          previous_status: "operational",
          current_status: "down"
        }
        yield* recordOnset(event)
      }
      continue
    }
    yield* sweepTo(step.at)
    yield* reports.report({ sourceKey: step.w.key, symptom: step.r!.symptom ?? "other", address: crowdAddress(step.r!) }).pipe(at(step.at))
    sent++
  }
  yield* sweepTo(to - 1)

  // The service's signals against the detector's, and the records.
  let matched = 0
  let serviceSignals = 0
  let detectorSignals = 0
  let recordsEqual = 0
  const differences: Array<unknown> = []
  for (const w of worlds) {
    const stored = yield* sql`
      SELECT source_id, started_at, ended_at, official_status, start_confidence, peak_confidence
      FROM crowd_signals WHERE source_id = ${w.id} ORDER BY started_at`.pipe(Effect.flatMap(Schema.decodeUnknownEffect(signalRows)), Effect.orDie)
    const service: Array<DetectedSignal> = stored.map((s) => ({
      startedAt: s.started_at.getTime(),
      endedAt: s.ended_at === null ? null : s.ended_at.getTime(),
      officialStatus: s.official_status,
      startConfidence: s.start_confidence,
      peakConfidence: s.peak_confidence
    }))
    const detected = detectSignals(w.reports, { from, to, outages: w.outages, sweepMs }).signals
    serviceSignals += service.length
    detectorSignals += detected.length
    const here = detected.filter((d) => service.some((s) => sameSignal(s, d))).length
    matched += here
    if (here !== detected.length || here !== service.length) differences.push({ key: w.key, service, detector: detected })
    const facts = detected.map((g, i) => ({ id: String(i), startedAt: g.startedAt, officialStatus: g.officialStatus }))
    const expected = crowdRecord(facts, linkOnsets(facts, w.outages), to)
    const record = yield* signals.record(w.id, to)
    if (JSON.stringify(record) === JSON.stringify(expected)) recordsEqual++
    else differences.push({ key: w.key, record, expected })
  }
  yield* sql`DELETE FROM crowd_onsets WHERE source_id IN ${sql.in(worlds.map((w) => w.id))}`
  yield* sql`DELETE FROM crowd_signals WHERE source_id IN ${sql.in(worlds.map((w) => w.id))}`
  yield* sql`DELETE FROM crowd_reports WHERE source_id IN ${sql.in(worlds.map((w) => w.id))}`
  yield* sql`DELETE FROM sources WHERE id IN ${sql.in(worlds.map((w) => w.id))}`
  return {
    sources: o.sources,
    hours: o.hours,
    history_rows: historyRows,
    reports_sent: sent,
    sweeps,
    service_signals: serviceSignals,
    detector_signals: detectorSignals,
    matched,
    records_equal: recordsEqual,
    all_match: matched === serviceSignals && matched === detectorSignals && recordsEqual === o.sources,
    differences: differences.slice(0, 3),
    elapsed_s: round((performance.now() - started) / 1000, 2)
  }
})

// ---------------------------------------------------------------------------------------------
// Ingest through the API

/**
 * The load, in a child process (its sockets and JSON are not the server's): reads one JSON line
 * `{ url, rate, warmupS, durationS, keys, addresses }` on stdin, sends report `i` at `i / rate` s (open loop:
 * late answers do not slow the sending) from `addresses[i]` to `keys[i % keys.length]`, a new
 * connection each (each reporter is another client); prints one JSON line with every latency
 * (from the request's scheduled time to its answer's end) of those scheduled after `warmupS` with
 * its scheduled time (ms from the start, whose epoch time is `originEpochMs`), the statuses and errors of all.
 */
const loadScript = `
import http from "node:http"
import readline from "node:readline"
const rl = readline.createInterface({ input: process.stdin })
rl.once("line", (line) => {
  const { url, rate, warmupS, durationS, keys, addresses, proxyConnections } = JSON.parse(line)
  // As a reverse proxy sends them: over a few kept-alive connections, each reporter in X-Forwarded-For.
  const proxy = proxyConnections > 0 ? new http.Agent({ keepAlive: true, maxSockets: proxyConnections }) : undefined
  const u = new URL(url)
  const total = Math.round(rate * (warmupS + durationS))
  const measuredFrom = Math.round(rate * warmupS)
  const latencies = []
  const scheduledAt = []
  const statuses = {}
  const errorCodes = {}
  let errors = 0, done = 0, measured = 0, sent = 0, lastEnd = 0
  const body = JSON.stringify({ symptom: "down" })
  const start = performance.now()
  let finished = false
  const finish = () => {
    if (finished) return
    finished = true
    // Exit once the line is written: a pipe takes a large write in pieces.
    const cpu = process.cpuUsage()
    const line = JSON.stringify({ total, sent, done, measured, errors, errorCodes, statuses, latencies, scheduledAt, originEpochMs: performance.timeOrigin + start, sendSpanMs: sentAt - start, spanMs: lastEnd - (start + (measuredFrom * 1000) / rate), cpuS: (cpu.user + cpu.system) / 1e6 })
    process.stdout.write(line + "\\n", () => process.exit(0))
  }
  let sentAt = start
  const fire = (i) => {
    const scheduled = start + (i * 1000) / rate
    const headers = { "content-type": "application/json", "content-length": Buffer.byteLength(body) }
    const req = http.request({
      host: u.hostname, port: u.port, path: "/api/v1/sources/" + keys[i % keys.length] + "/reports", method: "POST",
      ...(proxy === undefined
        ? { localAddress: addresses[i], agent: false, headers }
        : { agent: proxy, headers: { ...headers, "x-forwarded-for": addresses[i] } })
    }, (res) => {
      res.resume()
      res.on("end", () => {
        const now = performance.now()
        lastEnd = now
        if (i >= measuredFrom) {
          measured++
          latencies.push(Math.round((now - scheduled) * 10) / 10)
          scheduledAt.push(Math.round((scheduled - start) * 10) / 10)
        }
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1
        if (++done + errors === total) finish()
      })
    })
    req.on("error", (e) => {
      errors++
      errorCodes[e.code ?? e.message] = (errorCodes[e.code ?? e.message] ?? 0) + 1
      if (done + errors === total) finish()
    })
    req.end(body)
  }
  const pump = () => {
    const due = Math.min(total, Math.floor(((performance.now() - start) * rate) / 1000) + 1)
    while (sent < due) fire(sent++)
    sentAt = performance.now()
    if (sent < total) setTimeout(pump, 1)
  }
  pump()
  setTimeout(finish, (warmupS + durationS) * 1000 + 60_000).unref()
})
`

export interface IngestOptions {
  readonly rate: number
  /** Seconds at the rate before the measured ones (JIT, connection pools, first signals). */
  readonly warmupS: number
  readonly durationS: number
  readonly sources: number
  /**
   * 0: each report on its own connection from its own address. N: as a reverse proxy on 127.0.0.1 sends
   * them, over N kept-alive connections with each reporter in `X-Forwarded-For` (the server trusts
   * 127.0.0.1: `viaProxySettings`).
   */
  readonly proxyConnections: number
}

/** What the servers need for `--via-proxy`: the load's address as their trusted proxy (decision 0030). */
export const viaProxySettings = (proxyConnections: number): Record<string, string> =>
  proxyConnections > 0 ? { TRUSTED_PROXIES: "127.0.0.1" } : {}

/** The API's report ingest at a fixed arrival rate, on `target` (this process's API server, or `statusgrid http` processes). */
export const runIngest = Effect.fn("bench.crowd.ingest")(function*(o: IngestOptions, target: HttpTarget) {
  yield* Migrations.migratePostgres()
  const sql = yield* SqlClient
  const tag = Date.now().toString(36)
  const keys: Array<string> = []
  const ids: Array<string> = []
  for (let i = 0; i < o.sources; i += 100) {
    const rows = Arr.makeBy(Math.min(100, o.sources - i), (j) => ({
      key: `crowd-ingest-${tag}-${i + j}`,
      name: `Crowd ingest ${i + j}`,
      kind: "catalog",
      status: "operational",
      status_page_url: "https://status.example.com",
      enabled: true
    }))
    const made = yield* sql<{ id: string; key: string }>`INSERT INTO sources ${sql.insert(rows)} RETURNING id, key`
    keys.push(...made.map((m) => m.key))
    ids.push(...made.map((m) => m.id))
  }
  const url = target.url
  const total = Math.round(o.rate * (o.warmupS + o.durationS))
  const addresses = Array.from({ length: total }, (_, i) => crowdAddress(nthReporter(i)))
  const cpuBefore = target.cpuSeconds()
  // This process's full (mark-compact) collections while the load runs, when it is the server: their
  // pauses and the marking before them fall on the thread that answers.
  const majorGcs: Array<{ readonly atEpochMs: number; readonly pauseMs: number }> = []
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if ((entry as PerformanceEntry & { readonly detail?: { readonly kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) {
        majorGcs.push({ atEpochMs: performance.timeOrigin + entry.startTime, pauseMs: entry.duration })
      }
    }
  })
  if (target.servers === "this process") gcObserver.observe({ entryTypes: ["gc"] })
  const out = yield* Effect.promise(() =>
    new Promise<{ total: number; sent: number; done: number; measured: number; errors: number; errorCodes: Record<string, number>; statuses: Record<string, number>; latencies: Array<number>; scheduledAt: Array<number>; originEpochMs: number; sendSpanMs: number; spanMs: number; cpuS: number }>((resolve, reject) => {
      const child = spawn(process.execPath, ["--input-type=module", "-e", loadScript], { stdio: ["pipe", "pipe", "inherit"] })
      createInterface({ input: child.stdout! }).once("line", (line) => resolve(JSON.parse(line)))
      child.on("error", reject)
      child.on("exit", (code) => code === 0 ? undefined : reject(new Error(`the load process exited with ${code}`)))
      child.stdin!.end(JSON.stringify({ url, rate: o.rate, warmupS: o.warmupS, durationS: o.durationS, keys, addresses, proxyConnections: o.proxyConnections }) + "\n")
    })
  ).pipe(Effect.ensuring(Effect.sync(() => gcObserver.disconnect())))
  const cpuS = target.cpuSeconds() - cpuBefore
  const sliceOptions = { sliceMs: 250, limitMs: 50 }
  const slices = latencySlices(out.scheduledAt.map((at) => out.originEpochMs + at), out.latencies, sliceOptions)
  const measuredFromEpochMs = out.originEpochMs + o.warmupS * 1000
  const gcsMeasured = majorGcs.filter((g) => g.atEpochMs >= measuredFromEpochMs - 1000)
  const [stored] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM crowd_reports WHERE source_id IN ${sql.in(ids)}`
  const [opened] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM crowd_signals WHERE source_id IN ${sql.in(ids)}`
  yield* sql`DELETE FROM crowd_signals WHERE source_id IN ${sql.in(ids)}`
  yield* sql`DELETE FROM crowd_reports WHERE source_id IN ${sql.in(ids)}`
  yield* sql`DELETE FROM sources WHERE id IN ${sql.in(ids)}`
  // The next run finds the tables as this one did, without its dead rows: this machine's PostgreSQL runs
  // with autovacuum off, and after a few runs a million dead entries in crowd_reports' indexes slowed the
  // windows' reads and the inserts (p50 13 → 30 ms at 2,000/s on 2026-11-29).
  yield* sql`VACUUM ANALYZE crowd_reports, crowd_signals, sources`
  const sorted = out.latencies.toSorted((a, b) => a - b)
  const accepted = out.statuses["202"] ?? 0
  return {
    rate: o.rate,
    warmup_s: o.warmupS,
    duration_s: o.durationS,
    sources: o.sources,
    via_proxy_connections: o.proxyConnections,
    sent: out.sent,
    answered: out.done,
    accepted_202: accepted,
    non_202: out.done - accepted,
    statuses: out.statuses,
    errors: out.errors,
    error_codes: out.errorCodes,
    sent_per_s: round(out.sent / (Math.max(1, out.sendSpanMs) / 1000), 1),
    /** Answers to the measured reports per second, from the first one's scheduled time to the last answer. */
    reports_per_s: round(out.measured / (Math.max(1, out.spanMs) / 1000), 1),
    latency_ms: { p50: round(percentile(sorted, 50), 1), p99: round(percentile(sorted, 99), 1), max: round(sorted.at(-1) ?? 0, 1) },
    /** The measured reports by quarter second of their scheduled time: how many quarters had a p99 over 50 ms, and the worst. */
    latency_slices: { slice_ms: slices.slice_ms, slices: slices.slices, over_limit: slices.over_limit, limit_ms: slices.limit_ms, worst: slices.worst },
    /**
     * This process's full collections from 1 s before the measured window (none counted when other
     * processes serve), their pauses, and how many of the slow quarters began within 1 s after one,
     * beside how many of all quarters did (what chance gives).
     */
    ...(target.servers === "this process" ? {
      major_gcs: {
        count: gcsMeasured.length,
        pause_ms: round(gcsMeasured.reduce((sum, g) => sum + g.pauseMs, 0), 1),
        ...slicesAfter(slices.starts, gcsMeasured.map((g) => g.atEpochMs), { ...sliceOptions, beforeMs: 1000 })
      }
    } : {}),
    rows_stored: stored!.n,
    signals_opened: opened!.n,
    servers: target.servers,
    server_cpu_s: round(cpuS, 1),
    /** The load process's CPU (its start, the warm-up and the window), apart from the server's: they share the machine's cores. */
    load_cpu_s: round(out.cpuS, 1),
    peak_rss_mb: target.peakRssMb()
  }
})
