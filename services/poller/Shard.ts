import { Cause, Effect, Exit, FiberSet, Semaphore } from "effect"
import type { Adapter, Fetched } from "../adapters/Adapter.ts"
import { detect } from "../adapters/detect.ts"
import { Fetcher } from "../adapters/Fetcher.ts"
import { adapterFor } from "../adapters/registry.ts"
import type { CheckResultRow } from "../domain/CheckResult.ts"
import type { Snapshot } from "../domain/Snapshot.ts"
import { type CheckRequest, requestFromSettings, runCheck } from "../monitors/HttpCheck.ts"
import { type MonitorCheckState, step } from "../monitors/MonitorState.ts"
import { fingerprint, type Observation, observe, type Since } from "../domain/Changes.ts"
import { DueQueue } from "./DueQueue.ts"
import { MonitorAgents } from "../monitors/MonitorAgents.ts"
import { type MonitorCheckSave, MonitorStore, type PolledMonitor } from "./MonitorStore.ts"
import { PollerStats } from "./PollerStats.ts"
import { Publisher } from "../platform/Publisher.ts"
import { ResultWriter } from "./ResultWriter.ts"
import { type CheckMark, type PolledSource, type SnapshotChange, SourceStore } from "./SourceStore.ts"
import { monitorTransitions, sourceTransitions } from "./Transitions.ts"
import { TransitionWriter } from "./TransitionWriter.ts"
import { Upstream } from "./Upstream.ts"

export interface ShardOptions {
  readonly shard: number
  readonly shards: number
  /** checks in flight at once in this shard */
  readonly concurrency: number
  /** how often the shard re-reads its sources from PostgreSQL */
  readonly refreshMs: number
  /** override every source's interval (benchmarks) */
  readonly intervalOverrideS?: number | undefined
}

interface Entry {
  source: PolledSource
  /** undefined until the provider type is detected (sources added with a bare URL) */
  adapter: Adapter | undefined
  /** failed detections in a row: the next attempt backs off */
  detectFailures: number
  intervalMs: number
  /**
   * The last snapshot handed over to the bus (advanced only once the publisher accepted the change); before
   * this shard's first, the one saved in PostgreSQL before it started.
   */
  last: Snapshot | undefined
  /** Since when the statuses of `last` have held (with `last`) */
  since: Since | undefined
  lastFingerprint: string | undefined
  /**
   * Whether this shard has parsed a snapshot of the source yet. Until it has, its requests are not
   * conditional: a 304 would vouch for a body the process read before (the validators outlive a
   * shard moving), not for the snapshot loaded from PostgreSQL.
   */
  readHere: boolean
  /**
   * A changed snapshot the publisher could not accept yet: kept and offered again on the next check,
   * even when that check is answered 304 Not Modified (the body it came from is not read again).
   */
  pending: Snapshot | undefined
  /** last body of each endpoint of a multi-document provider, reused when it answers 304 and another changed */
  bodies: Map<string, Fetched>
}

interface MonitorEntry {
  monitor: PolledMonitor
  request: CheckRequest
  intervalMs: number
  /** in memory, ahead of PostgreSQL (saved once a second) */
  state: MonitorCheckState
}

/** Monitors share the shard's due-time queue with sources; their keys cannot collide with source keys. */
const monitorKey = (id: string) => `m:${id}`

const emptyBody = new Uint8Array()

/** Catalog sources are the operator's: read without the address guard (organizations' sources are guarded; decision 0009). */
const trustedGet = { trusted: true } as const

export interface Shard {
  /** Loads the shard's sources, then checks them on schedule until interrupted. */
  readonly run: Effect.Effect<never>
  /** Re-reads the shard's sources from PostgreSQL now. */
  readonly reload: Effect.Effect<void>
  readonly size: () => number
}

/**
 * One poller shard: owns the schedule of its sources and website monitors (a due-time heap; first
 * checks spread at random over one interval, then every interval on the
 * planned cadence), runs their checks with bounded concurrency, and hands the
 * results to ClickHouse, the bus and PostgreSQL.
 */
export const makeShard = Effect.fn("Shard.make")(function*(options: ShardOptions) {
  const store = yield* SourceStore
  const upstream = yield* Upstream
  const fetcher = yield* Fetcher
  const writer = yield* ResultWriter
  const transitions = yield* TransitionWriter
  const publisher = yield* Publisher
  const stats = yield* PollerStats
  const monitorStore = yield* MonitorStore
  const agents = yield* MonitorAgents
  const entries = new Map<string, Entry>()
  const monitors = new Map<string, MonitorEntry>()
  let monitorSaves = new Map<string, MonitorCheckSave>()
  const queue = new DueQueue()
  const permits = yield* Semaphore.make(options.concurrency)
  const running = yield* FiberSet.make()
  // Check times waiting for PostgreSQL, latest per source (a newer check replaces an unsaved one); kept
  // until saved, so an outage delays them but loses none, and memory stays bounded by the shard's sources.
  let marks = new Map<string, CheckMark>()
  // Changed snapshots waiting for PostgreSQL, latest per source; written in batches outside the checks,
  // so a slow database delays the rows of the API, never the schedule.
  const unsaved = new Map<string, SnapshotChange>()

  const reloadMonitors = Effect.fnUntraced(function*(now: number) {
    // Versions first: only new and edited monitors are read in full (and their credentials decrypted).
    const current = yield* monitorStore.versions(options.shard, options.shards)
    const seen = new Set(current.map((m) => m.id))
    const changed = current.filter((m) => monitors.get(m.id)?.monitor.version !== m.version).map((m) => m.id)
    const rows = yield* monitorStore.loadByIds(changed)
    for (const monitor of rows) {
      const intervalMs = (options.intervalOverrideS ?? monitor.settings.interval) * 1000
      const existing = monitors.get(monitor.id)
      const request = yield* Effect.try(() => requestFromSettings(monitor.settings)).pipe(
        Effect.tapError((error) => Effect.logWarning("monitor settings unusable", error).pipe(Effect.annotateLogs({ monitor: monitor.id }))),
        Effect.option
      )
      if (request._tag === "None") continue
      if (existing) {
        // Edited: new settings from the next check; the state in memory is newer than the row's.
        existing.monitor = monitor
        existing.request = request.value
        if (existing.intervalMs !== intervalMs) queue.set(monitorKey(monitor.id), now + Math.random() * intervalMs)
        existing.intervalMs = intervalMs
      } else {
        monitors.set(monitor.id, { monitor, request: request.value, intervalMs, state: monitor.state })
        queue.set(monitorKey(monitor.id), now + Math.random() * intervalMs)
      }
    }
    for (const id of monitors.keys()) {
      if (!seen.has(id)) {
        monitors.delete(id)
        queue.delete(monitorKey(id))
      }
    }
  })

  const reload = Effect.gen(function*() {
    const rows = yield* store.loadShard(options.shard, options.shards)
    // What was last observed of sources new to the shard (all of them when it starts), read before they
    // can be checked: their first snapshot is compared with it (a change made while no shard ran them).
    const stored = yield* store.loadObservations(rows.filter((r) => !entries.has(r.key)).map((r) => r.id))
    const now = Date.now()
    const seen = new Set<string>()
    for (const source of rows) {
      seen.add(source.key)
      const adapter = source.provider_type === null ? undefined : adapterFor(source.provider_type)
      // A provider type this version does not know: nothing can read it.
      if (source.provider_type !== null && !adapter) continue
      const intervalMs = (options.intervalOverrideS ?? source.poll_interval_s) * 1000
      const existing = entries.get(source.key)
      if (existing) {
        const moved = existing.source.url !== source.url || existing.adapter !== adapter
        existing.source = source
        existing.adapter = adapter
        if (moved) {
          existing.bodies.clear()
          existing.readHere = false
          queue.set(source.key, now)
        } else if (existing.intervalMs !== intervalMs) {
          queue.set(source.key, now + Math.random() * intervalMs)
        }
        existing.intervalMs = intervalMs
      } else {
        const observed = stored.get(source.id)
        entries.set(source.key, {
          source,
          adapter,
          detectFailures: 0,
          intervalMs,
          last: observed?.snapshot,
          since: observed?.since,
          lastFingerprint: observed && fingerprint(observed.snapshot),
          readHere: false,
          pending: undefined,
          bodies: new Map()
        })
        queue.set(source.key, now + Math.random() * intervalMs)
      }
    }
    for (const key of entries.keys()) {
      if (!seen.has(key)) {
        entries.delete(key)
        queue.delete(key)
      }
    }
    yield* reloadMonitors(now)
    stats.sources(options.shard, entries.size + monitors.size)
  })

  const rowsOf = (entry: Entry, snapshot: Snapshot | undefined, at: Date, latencyMs: number, httpStatus: number, bytes: number, error: string) => {
    const base = {
      checked_at: at.toISOString(),
      subject_kind: "source" as const,
      subject_id: entry.source.key,
      latency_ms: Math.round(latencyMs),
      http_status: httpStatus,
      bytes,
      error,
      region: "",
      shard: options.shard
    }
    const rows: Array<CheckResultRow> = [{ ...base, component_id: "", status: snapshot?.status ?? "unknown" }]
    for (const c of snapshot?.components ?? []) {
      if (!c.is_group) rows.push({ ...base, component_id: c.id, status: c.status, bytes: 0, region: c.region ?? "" })
    }
    return rows
  }

  const check = (entry: Entry, adapter: Adapter, plannedDue: number) =>
    Effect.gen(function*() {
      const started = Date.now()
      const config = { url: entry.source.url, regions: entry.source.regions }
      const urls = adapter.endpoints(config)
      const getOptions = entry.readHere
        ? (entry.source.trusted ? trustedGet : undefined)
        : { conditional: false, trusted: entry.source.trusted }
      const results = yield* Effect.all(urls.map((url) => upstream.get(url, getOptions)), { concurrency: "unbounded" })
      const at = new Date()
      const latency = Math.max(...results.map((r) => r.latencyMs))
      const primary = results[0]
      const failed = primary?._tag === "Failed" ? primary.error : null
      let snapshot: Snapshot | undefined
      let error = failed ?? ""
      const httpStatus = primary?._tag === "Fresh" ? primary.fetched.status : primary?._tag === "NotModified" ? 304 : 0
      let bytes = 0
      if (failed === null) {
        const unchanged = results.every((r) => r._tag === "NotModified") && (entry.pending ?? entry.last) !== undefined
        if (unchanged) {
          snapshot = entry.pending ?? entry.last
        } else {
          const fetched = urls.map((url, i): Fetched => {
            const r = results[i]!
            if (r._tag === "Fresh") {
              bytes += r.fetched.body.byteLength
              // Only multi-document providers need a body again when just some of their documents answer 304.
              if (urls.length > 1 && r.fetched.status >= 200 && r.fetched.status < 300) entry.bodies.set(url, r.fetched)
              return r.fetched
            }
            if (r._tag === "NotModified") return entry.bodies.get(url) ?? { url, status: 0, contentType: "", body: emptyBody }
            return { url, status: 0, contentType: "", body: emptyBody }
          })
          const parsed = yield* adapter.parse(fetched, config, at).pipe(Effect.result)
          if (parsed._tag === "Success") {
            snapshot = parsed.success
            entry.readHere = true
            // A page read afresh supersedes a change still pending (it may have been reverted meanwhile).
            entry.pending = undefined
          } else {
            error = `${parsed.failure.reason}: ${parsed.failure.message}`
          }
        }
      }
      yield* writer.write(rowsOf(entry, snapshot, at, latency, httpStatus, bytes, error))
      // Counted once its rows are accepted, so a flush after reading the count covers every counted check.
      stats.check(failed !== null || snapshot === undefined ? "failed" : httpStatus === 304 ? "not_modified" : "fresh", started - plannedDue)
      marks.set(entry.source.key, { key: entry.source.key, checkedAt: at, error: error === "" ? null : error })
      if (snapshot === undefined) return
      // All documents unchanged (304): the same snapshot, no need to fingerprint it again.
      const print = snapshot === entry.last ? entry.lastFingerprint : fingerprint(snapshot)
      if (print === entry.lastFingerprint) {
        yield* publisher.touched(entry.source.key, at)
        return
      }
      const previous = entry.last
      const observed: Observation | undefined = previous && entry.since && { snapshot: previous, since: entry.since }
      const { events, observation } = observe(entry.source, observed, snapshot, at)
      // The last snapshot moves only once the change is handed over; until then the change itself is kept.
      const handed = yield* publisher.handOver(entry.source.key, previous, snapshot, events, at).pipe(Effect.result)
      if (handed._tag === "Failure") {
        entry.pending = snapshot
        return yield* Effect.logWarning("change not handed over; offered again on the next check", handed.failure).pipe(
          Effect.annotateLogs({ source: entry.source.key })
        )
      }
      entry.pending = undefined
      // Written once the change is handed over, so a change offered again is not recorded twice.
      yield* transitions.write(sourceTransitions(events))
      entry.last = snapshot
      entry.since = observation.since
      entry.lastFingerprint = print
      stats.changed()
      unsaved.set(entry.source.key, { source: entry.source, snapshot, since: observation.since, at })
    }).pipe(
      Effect.catchCause((cause) => Effect.logWarning("check failed", cause).pipe(Effect.annotateLogs({ source: entry.source.key })))
    )

  const checkMonitor = (entry: MonitorEntry, plannedDue: number) =>
    Effect.gen(function*() {
      const started = Date.now()
      const outcome = yield* Effect.promise(() => runCheck(entry.request, { agentPool: agents.pool, allowPrivate: agents.allowPrivate }))
      const { monitor } = entry
      const previous = entry.state
      const { events, next } = step(previous, outcome, {
        monitor: { id: monitor.id, name: monitor.settings.name, url: monitor.settings.url },
        alert_threshold: monitor.settings.alert_threshold,
        ssl_expiry_days: monitor.settings.ssl_expiry_days
      }, new Date(outcome.checked_at))
      yield* writer.write([{
        checked_at: outcome.checked_at,
        subject_kind: "monitor",
        subject_id: monitor.id,
        component_id: "",
        status: outcome.status,
        latency_ms: Math.round(outcome.phases.total_ms),
        http_status: outcome.http_status,
        bytes: outcome.bytes,
        error: outcome.error,
        region: "",
        shard: options.shard,
        dns_ms: outcome.phases.dns_ms,
        connect_ms: outcome.phases.connect_ms,
        tls_ms: outcome.phases.tls_ms,
        first_byte_ms: outcome.phases.first_byte_ms,
        tls_days_left: outcome.tls?.days_left ?? null
      }])
      stats.check(outcome.status === "down" ? "failed" : "fresh", started - plannedDue)
      // The state moves only once its change is handed over to the bus; refused, the next check steps from
      // the same state again and finds the change anew.
      yield* publisher.monitorChecked({
        id: monitor.id,
        organization_id: monitor.organization_id,
        previous: previous.state,
        state: next.state,
        response_ms: outcome.phases.total_ms,
        http_status: outcome.http_status,
        error: outcome.error,
        events,
        at: outcome.checked_at
      })
      entry.state = next
      yield* transitions.write(monitorTransitions(monitor.id, previous.state, next.state, events, outcome.checked_at))
      monitorSaves.set(monitor.id, {
        id: monitor.id,
        next,
        response_ms: outcome.phases.total_ms,
        http_status: outcome.http_status,
        tls_valid_to: outcome.tls?.valid_to ?? null,
        tls_issuer: outcome.tls?.issuer ?? null
      })
      if (next.state !== previous.state) stats.changed()
    }).pipe(
      Effect.catchCause((cause) => Effect.logWarning("monitor check failed", cause).pipe(Effect.annotateLogs({ monitor: entry.monitor.id })))
    )

  // A source added with a bare URL: find its provider (and the document to read), store both, then check it.
  // Unreachable pages are tried again later, backing off from one interval to an hour.
  const detectThenCheck = (entry: Entry, plannedDue: number) =>
    Effect.gen(function*() {
      const found = yield* detect(entry.source.url, entry.source.trusted ? trustedGet : {}).pipe(Effect.provideService(Fetcher, fetcher), Effect.result)
      if (found._tag === "Failure") {
        entry.detectFailures += 1
        const backoffMs = Math.min(entry.intervalMs * 2 ** Math.min(entry.detectFailures - 1, 10), 3_600_000)
        queue.set(entry.source.key, Date.now() + backoffMs)
        marks.set(entry.source.key, { key: entry.source.key, checkedAt: new Date(), error: `detection failed: ${found.failure.message}` })
        stats.check("failed", Date.now() - plannedDue)
        return
      }
      const adapter = adapterFor(found.success.provider)
      if (!adapter) return
      yield* store.setDetected(entry.source.id, adapter.id, found.success.url)
      entry.source = { ...entry.source, provider_type: adapter.id, url: found.success.url }
      entry.adapter = adapter
      entry.detectFailures = 0
      yield* Effect.logInfo("provider detected").pipe(
        Effect.annotateLogs({ source: entry.source.key, provider: adapter.id, by: found.success.by })
      )
      yield* check(entry, adapter, plannedDue)
    }).pipe(
      Effect.catchCause((cause) => Effect.logWarning("detection failed", cause).pipe(Effect.annotateLogs({ source: entry.source.key })))
    )

  const loop = Effect.gen(function*() {
    const now = Date.now()
    const next = queue.popDue(now)
    if (next === undefined) {
      const due = queue.peekDue()
      yield* Effect.sleep(Math.max(5, Math.min(due === undefined ? 1000 : due - now, 1000)))
      return
    }
    const monitor = next.key.startsWith("m:") ? monitors.get(next.key.slice(2)) : undefined
    if (monitor) {
      queue.set(next.key, next.due + monitor.intervalMs > now ? next.due + monitor.intervalMs : now + monitor.intervalMs)
      yield* permits.take(1)
      yield* FiberSet.run(running, checkMonitor(monitor, next.due).pipe(Effect.ensuring(permits.release(1))))
      return
    }
    const entry = entries.get(next.key)
    if (!entry) return
    // Keep the planned cadence; a source that fell a whole interval behind starts afresh from now.
    queue.set(next.key, next.due + entry.intervalMs > now ? next.due + entry.intervalMs : now + entry.intervalMs)
    yield* permits.take(1)
    const work = entry.adapter ? check(entry, entry.adapter, next.due) : detectThenCheck(entry, next.due)
    yield* FiberSet.run(running, work.pipe(Effect.ensuring(permits.release(1))))
  }).pipe(Effect.forever)

  const saveBatch = 200
  const saveSnapshots = Effect.gen(function*() {
    if (unsaved.size === 0) return
    const batch: Array<SnapshotChange> = []
    for (const [key, change] of unsaved) {
      batch.push(change)
      unsaved.delete(key)
      if (batch.length >= saveBatch) break
    }
    yield* store.applySnapshots(batch).pipe(
      Effect.catchCause((cause) =>
        Effect.gen(function*() {
          // Put back what a newer snapshot has not replaced, and try again shortly.
          for (const change of batch) if (!unsaved.has(change.source.key)) unsaved.set(change.source.key, change)
          yield* Effect.logWarning("could not save snapshots", cause)
          yield* Effect.sleep("1 second")
        })
      )
    )
  })

  const flushMarks = Effect.gen(function*() {
    const batch = marks
    marks = new Map()
    yield* store.markChecked([...batch.values()]).pipe(
      // Not saved: keep what no newer check replaced, for the next flush.
      Effect.onError(() => Effect.sync(() => {
        for (const [key, mark] of batch) if (!marks.has(key)) marks.set(key, mark)
      }))
    )
    const saves = monitorSaves
    monitorSaves = new Map()
    yield* monitorStore.saveChecks([...saves.values()]).pipe(
      // Not saved: keep what no newer check replaced, for the next flush.
      Effect.onError(() => Effect.sync(() => {
        for (const [id, save] of saves) if (!monitorSaves.has(id)) monitorSaves.set(id, save)
      }))
    )
  })

  const run = Effect.gen(function*() {
    yield* reload
    stats.shardStarted()
    yield* Effect.logInfo("shard started").pipe(Effect.annotateLogs({ shard: options.shard, sources: entries.size }))
    // Sources added, edited or removed in PostgreSQL reach the shard within one refresh. Shards refresh
    // at staggered times, so that they do not all read the database in the same moment.
    // A failed refresh (PostgreSQL away) is logged and tried again at the next one; the shard keeps
    // checking what it holds meanwhile. Should the loop stop anyway, that is an error worth seeing.
    let refreshFailures = 0
    const refresh = Effect.gen(function*() {
      const done = yield* reload.pipe(Effect.exit)
      if (Exit.isSuccess(done)) {
        if (refreshFailures > 0) {
          yield* Effect.logInfo("shard refresh works again").pipe(Effect.annotateLogs({ shard: options.shard, failures: refreshFailures }))
        }
        refreshFailures = 0
        return
      }
      if (Cause.hasInterruptsOnly(done.cause)) return yield* Effect.failCause(done.cause)
      refreshFailures += 1
      yield* Effect.logWarning("shard refresh failed; tried again at the next refresh", done.cause).pipe(
        Effect.annotateLogs({ shard: options.shard, failures: refreshFailures })
      )
    })
    yield* refresh.pipe(
      Effect.delay(options.refreshMs),
      Effect.forever,
      Effect.delay(Math.floor((options.refreshMs * options.shard) / Math.max(1, options.shards))),
      Effect.onExit((exit) =>
        Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)
          ? Effect.void
          : Effect.logError("shard refresh stopped: sources added or edited will not be polled", exit).pipe(
            Effect.annotateLogs({ shard: options.shard })
          )
      ),
      Effect.forkScoped
    )
    // One writer per shard: snapshots as they come, check times once a second. Shards own disjoint
    // sources, and one writer per shard never contends with itself, so the updates cannot deadlock.
    let lastMarks = Date.now()
    yield* Effect.gen(function*() {
      yield* saveSnapshots
      if (Date.now() - lastMarks >= 1000) {
        lastMarks = Date.now()
        yield* flushMarks.pipe(Effect.catchCause((cause) => Effect.logWarning("could not record check times", cause)))
      }
      if (unsaved.size === 0) yield* Effect.sleep("100 millis")
    }).pipe(Effect.forever, Effect.forkScoped)
    return yield* loop
  }).pipe(Effect.scoped)

  return { run, reload, size: () => entries.size + monitors.size } satisfies Shard
})
