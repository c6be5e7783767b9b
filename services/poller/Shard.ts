import { Effect, FiberSet, Semaphore } from "effect"
import type { Adapter, Fetched } from "../adapters/Adapter.ts"
import { adapterFor } from "../adapters/registry.ts"
import type { CheckResultRow } from "../domain/CheckResult.ts"
import type { Snapshot } from "../domain/Snapshot.ts"
import { eventsBetween, fingerprint } from "./Changes.ts"
import { DueQueue } from "./DueQueue.ts"
import { PollerStats } from "./PollerStats.ts"
import { Publisher } from "./Publisher.ts"
import { ResultWriter } from "./ResultWriter.ts"
import { type CheckMark, type PolledSource, type SnapshotChange, SourceStore } from "./SourceStore.ts"
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
  adapter: Adapter
  intervalMs: number
  last: Snapshot | undefined
  lastFingerprint: string | undefined
  /** last body of each endpoint of a multi-document provider, reused when it answers 304 and another changed */
  bodies: Map<string, Fetched>
}

const emptyBody = new Uint8Array()

export interface Shard {
  /** Loads the shard's sources, then checks them on schedule until interrupted. */
  readonly run: Effect.Effect<never>
  /** Re-reads the shard's sources from PostgreSQL now. */
  readonly reload: Effect.Effect<void>
  readonly size: () => number
}

/**
 * One poller shard: owns the schedule of its sources (a due-time heap; first
 * checks spread at random over one interval, then every interval on the
 * planned cadence), runs their checks with bounded concurrency, and hands the
 * results to ClickHouse, the bus and PostgreSQL.
 */
export const makeShard = Effect.fn("Shard.make")(function*(options: ShardOptions) {
  const store = yield* SourceStore
  const upstream = yield* Upstream
  const writer = yield* ResultWriter
  const publisher = yield* Publisher
  const stats = yield* PollerStats
  const entries = new Map<string, Entry>()
  const queue = new DueQueue()
  const permits = yield* Semaphore.make(options.concurrency)
  const running = yield* FiberSet.make()
  let marks: Array<CheckMark> = []
  // Changed snapshots waiting for PostgreSQL, latest per source; written in batches outside the checks,
  // so a slow database delays the rows of the API, never the schedule.
  const unsaved = new Map<string, SnapshotChange>()

  const reload = Effect.gen(function*() {
    const rows = yield* store.loadShard(options.shard, options.shards)
    const now = Date.now()
    const seen = new Set<string>()
    for (const source of rows) {
      seen.add(source.key)
      const adapter = adapterFor(source.provider_type)
      if (!adapter) continue
      const intervalMs = (options.intervalOverrideS ?? source.poll_interval_s) * 1000
      const existing = entries.get(source.key)
      if (existing) {
        const moved = existing.source.status_page_url !== source.status_page_url || existing.adapter !== adapter
        existing.source = source
        existing.adapter = adapter
        if (moved) {
          existing.bodies.clear()
          queue.set(source.key, now)
        } else if (existing.intervalMs !== intervalMs) {
          queue.set(source.key, now + Math.random() * intervalMs)
        }
        existing.intervalMs = intervalMs
      } else {
        entries.set(source.key, { source, adapter, intervalMs, last: undefined, lastFingerprint: undefined, bodies: new Map() })
        queue.set(source.key, now + Math.random() * intervalMs)
      }
    }
    for (const key of entries.keys()) {
      if (!seen.has(key)) {
        entries.delete(key)
        queue.delete(key)
      }
    }
    stats.sources(options.shard, entries.size)
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

  const check = (entry: Entry, plannedDue: number) =>
    Effect.gen(function*() {
      const started = Date.now()
      const config = { url: entry.source.status_page_url, regions: entry.source.regions }
      const urls = entry.adapter.endpoints(config)
      const results = yield* Effect.all(urls.map((url) => upstream.get(url)), { concurrency: "unbounded" })
      const at = new Date()
      const latency = Math.max(...results.map((r) => r.latencyMs))
      const primary = results[0]
      const failed = primary?._tag === "Failed" ? primary.error : null
      let snapshot: Snapshot | undefined
      let error = failed ?? ""
      const httpStatus = primary?._tag === "Fresh" ? primary.fetched.status : primary?._tag === "NotModified" ? 304 : 0
      let bytes = 0
      if (failed === null) {
        const unchanged = results.every((r) => r._tag === "NotModified") && entry.last !== undefined
        if (unchanged) {
          snapshot = entry.last
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
          const parsed = yield* entry.adapter.parse(fetched, config, at).pipe(Effect.result)
          if (parsed._tag === "Success") snapshot = parsed.success
          else error = `${parsed.failure.reason}: ${parsed.failure.message}`
        }
      }
      yield* writer.write(rowsOf(entry, snapshot, at, latency, httpStatus, bytes, error))
      // Counted once its rows are accepted, so a flush after reading the count covers every counted check.
      stats.check(failed !== null || snapshot === undefined ? "failed" : httpStatus === 304 ? "not_modified" : "fresh", started - plannedDue)
      marks.push({ key: entry.source.key, checkedAt: at, error: error === "" ? null : error })
      if (snapshot === undefined) return
      // All documents unchanged (304): the same snapshot, no need to fingerprint it again.
      const print = snapshot === entry.last ? entry.lastFingerprint : fingerprint(snapshot)
      if (print === entry.lastFingerprint) {
        yield* publisher.touched(entry.source.key, at)
        return
      }
      const previous = entry.last
      const events = eventsBetween(entry.source, previous, snapshot, at)
      entry.last = snapshot
      entry.lastFingerprint = print
      stats.changed()
      unsaved.set(entry.source.key, { source: entry.source, snapshot, at })
      yield* publisher.changed(entry.source.key, previous, snapshot, events, at)
    }).pipe(
      Effect.catchCause((cause) => Effect.logWarning("check failed", cause).pipe(Effect.annotateLogs({ source: entry.source.key })))
    )

  const loop = Effect.gen(function*() {
    const now = Date.now()
    const next = queue.popDue(now)
    if (next === undefined) {
      const due = queue.peekDue()
      yield* Effect.sleep(Math.max(5, Math.min(due === undefined ? 1000 : due - now, 1000)))
      return
    }
    const entry = entries.get(next.key)
    if (!entry) return
    // Keep the planned cadence; a source that fell a whole interval behind starts afresh from now.
    queue.set(next.key, next.due + entry.intervalMs > now ? next.due + entry.intervalMs : now + entry.intervalMs)
    yield* permits.take(1)
    yield* FiberSet.run(running, check(entry, next.due).pipe(Effect.ensuring(permits.release(1))))
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
    marks = []
    yield* store.markChecked(batch)
  })

  const run = Effect.gen(function*() {
    yield* reload
    stats.shardStarted()
    yield* Effect.logInfo("shard started").pipe(Effect.annotateLogs({ shard: options.shard, sources: entries.size }))
    // Sources added, edited or removed in PostgreSQL reach the shard within one refresh.
    yield* reload.pipe(Effect.delay(options.refreshMs), Effect.forever, Effect.forkScoped)
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

  return { run, reload, size: () => entries.size } satisfies Shard
})
