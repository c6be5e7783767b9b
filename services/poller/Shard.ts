import { Cause, Clock, Effect, Exit, FiberSet, Queue, Semaphore } from "effect"
import { adapterFor } from "../adapters/registry.ts"
import { requestFromSettings } from "../monitors/HttpCheck.ts"
import { DueQueue } from "./DueQueue.ts"
import { type CatchUp, firstDue, type Loaded } from "./FirstChecks.ts"
import { makeMonitorCheck, type MonitorEntry } from "./MonitorCheck.ts"
import { type MonitorCheckSave, MonitorStore } from "./MonitorStore.ts"
import { PollerStats } from "./PollerStats.ts"
import { makeSourceCheck, type SourceEntry, sourceEntry } from "./SourceCheck.ts"
import { CheckTimes } from "./CheckTimes.ts"
import { type SnapshotChange, SourceStore } from "./SourceStore.ts"
import { type PackedChange, packChange, unpackChange } from "./PackedChange.ts"

export interface ShardOptions {
  readonly shard: number
  readonly shards: number
  /** checks in flight at once in this shard */
  readonly concurrency: number
  /** how often the shard re-reads its sources from PostgreSQL */
  readonly refreshMs: number
  /** override every source's interval (benchmarks) */
  readonly intervalOverrideS?: number | undefined
  /** how the overdue are caught up when the shard loads them (`FirstChecks.ts`) */
  readonly catchUp: CatchUp
}

/** A stored check time (ISO 8601) as epoch ms; undefined when never checked. */
const checkedAt = (iso: string | null | undefined): number | undefined => iso == null ? undefined : Date.parse(iso)

/** Monitors share the shard's due-time queue with sources; their keys cannot collide with source keys. */
const monitorKey = (id: string) => `m:${id}`

export interface Shard {
  /** Loads the shard's sources, then checks them on schedule until interrupted. */
  readonly run: Effect.Effect<never>
  /** Re-reads the shard's sources from PostgreSQL now. */
  readonly reload: Effect.Effect<void>
  readonly size: () => number
  /** Whether the shard has loaded its sources and begun checking them (its "shard started" line is logged). */
  readonly started: () => boolean
}

/**
 * One poller shard: owns the schedule of its sources and website monitors (a due-time heap; a first
 * check on the cadence of the last one PostgreSQL holds, the overdue caught up within
 * `POLLER_CATCHUP_MS`, then every interval on the planned cadence), runs their checks (`SourceCheck.ts`, `MonitorCheck.ts`) with bounded concurrency,
 * and writes what they leave for PostgreSQL: check times, monitor states and changed snapshots.
 */
export const makeShard = Effect.fn("Shard.make")(function*(options: ShardOptions) {
  const store = yield* SourceStore
  const checkTimes = yield* CheckTimes
  const stats = yield* PollerStats
  const monitorStore = yield* MonitorStore
  const clock = yield* Clock.Clock
  const entries = new Map<string, SourceEntry>()
  const monitors = new Map<string, MonitorEntry>()
  let monitorSaves = new Map<string, MonitorCheckSave>()
  const queue = new DueQueue()
  const permits = yield* Semaphore.make(options.concurrency)
  const running = yield* FiberSet.make()
  // Changed snapshots waiting for PostgreSQL, latest per source; written in batches outside the checks,
  // so a slow database delays the rows of the API, never the schedule. Beyond one batch waiting, a change
  // waits packed (decision 0029): the writer is behind, and the snapshots' objects were what grew.
  const saveBatch = 200
  const unsaved = new Map<string, SnapshotChange | PackedChange>()
  /** Raised when a snapshot waits for PostgreSQL; sticky, so the writer never misses one. */
  const snapshotWaiting = yield* Queue.sliding<void>(1)
  const { check, detectThenCheck } = yield* makeSourceCheck({
    shard: options.shard,
    marked: (mark) => checkTimes.record(mark),
    changed: (change) => {
      unsaved.set(change.source.key, unsaved.size < saveBatch ? change : packChange(change))
      Queue.offerUnsafe(snapshotWaiting, undefined)
    },
    retryAt: (key, at) => queue.set(key, at)
  })
  const checkMonitor = yield* makeMonitorCheck({
    shard: options.shard,
    saved: (save) => monitorSaves.set(save.id, save)
  })

  const reloadMonitors = Effect.fnUntraced(function*(now: number, fresh: Array<Loaded>) {
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
        fresh.push({ key: monitorKey(monitor.id), lastCheckedAt: checkedAt(monitor.state.last_checked_at), intervalMs })
      }
    }
    for (const id of monitors.keys()) {
      if (!seen.has(id)) {
        monitors.delete(id)
        queue.delete(monitorKey(id))
      }
    }
  })

  /** Whether the shard has loaded its sources once (its first load places never-checked ones at random). */
  let loaded = false
  const reload = Effect.gen(function*() {
    const rows = yield* store.loadShard(options.shard, options.shards)
    // What was last observed of sources new to the shard (all of them when it starts), read before they
    // can be checked: their first snapshot is compared with it (a change made while no shard ran them).
    const stored = yield* store.loadObservations(rows.filter((r) => !entries.has(r.key)).map((r) => r.id))
    const now = clock.currentTimeMillisUnsafe()
    const seen = new Set<string>()
    // Sources and monitors new to the shard: first checks placed together (`FirstChecks.ts`).
    const fresh: Array<Loaded> = []
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
          existing.bodies = undefined
          existing.readHere = false
          queue.set(source.key, now)
        } else if (existing.intervalMs !== intervalMs) {
          queue.set(source.key, now + Math.random() * intervalMs)
        }
        existing.intervalMs = intervalMs
      } else {
        entries.set(source.key, sourceEntry(source, adapter, intervalMs, stored.get(source.id)))
        fresh.push({ key: source.key, lastCheckedAt: source.last_checked_at?.getTime(), intervalMs })
      }
    }
    for (const key of entries.keys()) {
      if (!seen.has(key)) {
        entries.delete(key)
        queue.delete(key)
      }
    }
    yield* reloadMonitors(now, fresh)
    for (const [key, due] of firstDue(fresh, now, options.catchUp, !loaded)) queue.set(key, due)
    loaded = true
    stats.sources(options.shard, entries.size + monitors.size)
  })

  const loop = Effect.gen(function*() {
    const now = clock.currentTimeMillisUnsafe()
    // Left in the queue and moved to its next due time below (no map write per check).
    const next = queue.peekDueAt(now)
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
    if (!entry) return queue.delete(next.key)
    // Keep the planned cadence; a source that fell a whole interval behind starts afresh from now.
    queue.set(next.key, next.due + entry.intervalMs > now ? next.due + entry.intervalMs : now + entry.intervalMs)
    yield* permits.take(1)
    const work = entry.adapter ? check(entry, entry.adapter, next.due) : detectThenCheck(entry, next.due)
    yield* FiberSet.run(running, work.pipe(Effect.ensuring(permits.release(1))))
    // No yield between iterations (Effect.forever's default): the loop waits whenever nothing is due,
    // and a yield per check is a macrotask per check, which at 667 checks a second was measurable.
  }).pipe(Effect.forever({ disableYield: true }))

  const saveSnapshots = Effect.gen(function*() {
    if (unsaved.size === 0) return
    const batch: Array<SnapshotChange> = []
    for (const [key, change] of unsaved) {
      batch.push("packed" in change ? unpackChange(change) : change)
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

  /** The monitors' checks (state, last check, last error), every second. */
  const flushMonitorSaves = Effect.gen(function*() {
    if (monitorSaves.size === 0) return
    const saves = monitorSaves
    monitorSaves = new Map()
    yield* monitorStore.saveChecks([...saves.values()]).pipe(
      // Not saved: keep what no newer check replaced, for the next flush.
      Effect.onError(() => Effect.sync(() => {
        for (const [id, save] of saves) if (!monitorSaves.has(id)) monitorSaves.set(id, save)
      }))
    )
  })

  let started = false
  const run = Effect.gen(function*() {
    yield* reload
    stats.shardStarted()
    stats.saving(options.shard, () => unsaved.size)
    yield* Effect.logInfo("shard started").pipe(Effect.annotateLogs({ shard: options.shard, sources: entries.size }))
    started = true
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
    // One writer per shard: snapshots as they come, monitors' checks once a second (the sources' check
    // times are the process's `CheckTimes`). Shards own disjoint sources and monitors, and one writer per
    // shard never contends with itself, so the updates cannot deadlock. It sleeps until a snapshot waits
    // or a save is due (not every 100 ms: sixteen shards waking ten times a second were a share of an
    // idle runner's CPU). A shard that stops (moved, or the process stopping) saves what it holds first,
    // so a graceful restart keeps every source's cadence to the check.
    const saveHeld = Effect.all([
      checkTimes.flush,
      flushMonitorSaves.pipe(
        // PostgreSQL away: the stop is not held up for it (a restart then checks those monitors early).
        Effect.timeout(2_000),
        Effect.catchCause((cause) => Effect.logWarning("could not record monitor checks", cause))
      )
    ], { discard: true, concurrency: "unbounded" })
    yield* Effect.addFinalizer(() => saveHeld)
    let lastSaves = clock.currentTimeMillisUnsafe()
    yield* Effect.gen(function*() {
      yield* saveSnapshots
      const now = clock.currentTimeMillisUnsafe()
      if (now - lastSaves >= 1000) {
        lastSaves = now
        yield* flushMonitorSaves.pipe(Effect.catchCause((cause) => Effect.logWarning("could not record monitor checks", cause)))
      }
      if (unsaved.size === 0) {
        yield* Queue.take(snapshotWaiting).pipe(Effect.timeoutOption(Math.max(1, lastSaves + 1000 - now)))
      }
    }).pipe(Effect.forever({ disableYield: true }), Effect.forkScoped)
    return yield* loop
  }).pipe(
    Effect.scoped,
    // Moved to another runner or stopped: its sources are no longer this process's.
    Effect.ensuring(Effect.sync(() => stats.shardStopped(options.shard)))
  )

  return { run, reload, size: () => entries.size + monitors.size, started: () => started } satisfies Shard
})
