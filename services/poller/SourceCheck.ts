import { Clock, Effect } from "effect"
import { deflateRawSync, inflateRawSync } from "node:zlib"
import type { Adapter, Fetched, SourceConfig } from "../adapters/Adapter.ts"
import { detect } from "../adapters/detect.ts"
import { Fetcher } from "../adapters/Fetcher.ts"
import { adapterFor } from "../adapters/registry.ts"
import { type Compared, fingerprint, keep, type Kept, type Observation, observe, observedOf } from "../domain/Changes.ts"
import type { CheckResultRow } from "../domain/CheckResult.ts"
import type { Snapshot } from "../domain/Snapshot.ts"
import { Publisher } from "../platform/Publisher.ts"
import { PollerStats } from "./PollerStats.ts"
import { ResultWriter } from "./ResultWriter.ts"
import { type CheckMark, type PolledSource, type SnapshotChange, SourceStore } from "./SourceStore.ts"
import { sourceTransitions } from "./Transitions.ts"
import { TransitionWriter } from "./TransitionWriter.ts"
import { Upstream } from "./Upstream.ts"
import { noCallSite, withSpanWhenTracing } from "../platform/Tracing.ts"

/** What a shard keeps of one source between its checks. */
export interface SourceEntry {
  source: PolledSource
  /** undefined until the provider type is detected (sources added with a bare URL) */
  adapter: Adapter | undefined
  /** failed detections in a row: the next attempt backs off */
  detectFailures: number
  intervalMs: number
  /**
   * What comparing reads of the last observation handed over to the bus (advanced only once the
   * publisher accepted the change), with since when its statuses have held; before this shard's first,
   * of the one saved in PostgreSQL before it started. Not the snapshot itself: its wording
   * (descriptions, incident updates) and its `Since` record were most of a shard's memory (decision 0028).
   */
  last: Kept | undefined
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
  /**
   * The last body of each endpoint of a multi-document provider, reused when it answers 304 and another
   * changed; deflated (decision 0028). Undefined for single-document providers and until a first body.
   */
  bodies: Map<string, KeptBody> | undefined
  /** The documents to read, for the source and adapter they were listed for (the same strings every check). */
  endpoints: Endpoints | undefined
}

/** A body kept for reuse, deflated: bodies were a tenth of a shard's memory, and most never serve again. */
export interface KeptBody {
  readonly status: number
  readonly contentType: string
  readonly deflated: Uint8Array
}

const emptyBody = new Uint8Array()

const keptBody = (fetched: Fetched): KeptBody => ({
  status: fetched.status,
  contentType: fetched.contentType,
  // Copied out: the deflated bytes are a view of zlib's 16 KB output chunk, which would stay alive with them.
  deflated: new Uint8Array(deflateRawSync(fetched.body, { level: 1 }))
})

const bodyOf = (url: string, kept: KeptBody | undefined): Fetched =>
  kept === undefined
    ? { url, status: 0, contentType: "", body: emptyBody }
    : { url, status: kept.status, contentType: kept.contentType, body: inflateRawSync(kept.deflated) }

interface Endpoints {
  readonly source: PolledSource
  readonly adapter: Adapter
  readonly urls: ReadonlyArray<string>
}

/** What an adapter reads of a source. */
const configOf = (source: PolledSource): SourceConfig => ({ url: source.url, regions: source.regions })

/** `entry`'s documents for `adapter`, listed again only when the source or its adapter changed. */
const endpointsOf = (entry: SourceEntry, adapter: Adapter): ReadonlyArray<string> => {
  const known = entry.endpoints
  if (known !== undefined && known.source === entry.source && known.adapter === adapter) return known.urls
  const made: Endpoints = { source: entry.source, adapter, urls: adapter.endpoints(configOf(entry.source)) }
  entry.endpoints = made
  return made.urls
}

/** A source new to the shard; `observed` is what PostgreSQL last saved of it. */
export const sourceEntry = (
  source: PolledSource,
  adapter: Adapter | undefined,
  intervalMs: number,
  observed: Observation | undefined
): SourceEntry => ({
  source,
  adapter,
  detectFailures: 0,
  intervalMs,
  last: observed && keep(observed),
  lastFingerprint: observed && fingerprint(observed.snapshot),
  readHere: false,
  pending: undefined,
  bodies: undefined,
  endpoints: undefined
})

/** Where a source check hands what the shard writes to PostgreSQL later, and its schedule. */
export interface SourceCheckHooks {
  readonly shard: number
  /** The check's time and error (saved once a second, latest per source). */
  readonly marked: (mark: CheckMark) => void
  /** A change handed over to the bus (saved in batches, latest per source). */
  readonly changed: (change: SnapshotChange) => void
  /** When a source whose provider could not be detected is tried again (epoch ms). */
  readonly retryAt: (key: string, at: number) => void
}

export interface SourceCheck {
  /** Reads the source's documents, writes the result rows, and hands a changed snapshot to the bus. Never fails. */
  readonly check: (entry: SourceEntry, adapter: Adapter, plannedDue: number) => Effect.Effect<void>
  /** For a source added with a bare URL: finds its provider, stores it, then checks. Never fails. */
  readonly detectThenCheck: (entry: SourceEntry, plannedDue: number) => Effect.Effect<void>
}


/** Catalog sources are the operator's: read without the address guard (organizations' sources are guarded; decision 0009). */
const trustedGet = { trusted: true } as const

interface ComponentColumns {
  readonly ids: ReadonlyArray<string>
  readonly statuses: ReadonlyArray<string>
  readonly regions: ReadonlyArray<string>
}
const noComponents: ComponentColumns = { ids: [], statuses: [], regions: [] }
/** A snapshot's leaf components as a row's parallel arrays; built once per snapshot, which most checks (304s) repeat. */
const columnsOf = new WeakMap<Compared, ComponentColumns>()
const componentColumns = (snapshot: Compared): ComponentColumns => {
  const known = columnsOf.get(snapshot)
  if (known !== undefined) return known
  const ids: Array<string> = []
  const statuses: Array<string> = []
  const regions: Array<string> = []
  for (const c of snapshot.components) {
    if (c.is_group) continue
    ids.push(c.id)
    statuses.push(c.status)
    regions.push(c.region ?? "")
  }
  const columns = { ids, statuses, regions }
  columnsOf.set(snapshot, columns)
  return columns
}

/** The check of one status-page source: fetch, parse, compare, then the rows, the bus and the transitions. */
export const makeSourceCheck = Effect.fn("SourceCheck.make")(function*(hooks: SourceCheckHooks) {
  const store = yield* SourceStore
  const upstream = yield* Upstream
  const fetcher = yield* Fetcher
  const writer = yield* ResultWriter
  const transitions = yield* TransitionWriter
  const publisher = yield* Publisher
  const stats = yield* PollerStats
  const clock = yield* Clock.Clock

  /** One row per check: the source's, with its leaf components in parallel arrays (decision 0016). */
  const rowOf = (entry: SourceEntry, snapshot: Compared | undefined, at: Date, latencyMs: number, httpStatus: number, bytes: number, error: string): CheckResultRow => {
    const { ids, statuses, regions } = snapshot === undefined ? noComponents : componentColumns(snapshot)
    return {
      checked_at: at.getTime(),
      subject_kind: "source",
      subject_id: entry.source.key,
      component_id: "",
      status: snapshot?.status ?? "unknown",
      latency_ms: Math.round(latencyMs),
      http_status: httpStatus,
      bytes,
      error,
      region: "",
      shard: hooks.shard,
      component_ids: ids,
      component_statuses: statuses,
      component_regions: regions
    }
  }

  // Untraced: one call per check, the poller's hot path.
  const check = Effect.fnUntraced(
    function*(entry: SourceEntry, adapter: Adapter, plannedDue: number) {
      const started = clock.currentTimeMillisUnsafe()
      const urls = endpointsOf(entry, adapter)
      const getOptions = entry.readHere
        ? (entry.source.trusted ? trustedGet : undefined)
        : { conditional: false, trusted: entry.source.trusted }
      // One document (most providers): fetched in this fiber, without a child fiber to join.
      const results = urls.length === 1
        ? [yield* upstream.get(urls[0]!, getOptions)]
        : yield* Effect.all(urls.map((url) => upstream.get(url, getOptions)), { concurrency: "unbounded" })
      const at = new Date(clock.currentTimeMillisUnsafe())
      const latency = Math.max(...results.map((r) => r.latencyMs))
      const primary = results[0]
      const failed = primary?._tag === "Failed" ? primary.error : null
      // A page read afresh, or a change still pending; undefined when the check failed or every document
      // answered 304 with nothing pending (then the last snapshot stands: `kept`).
      let snapshot: Snapshot | undefined
      let kept = false
      let error = failed ?? ""
      const httpStatus = primary?._tag === "Fresh" ? primary.fetched.status : primary?._tag === "NotModified" ? 304 : 0
      let bytes = 0
      if (failed === null) {
        const unchanged = results.every((r) => r._tag === "NotModified")
        if (unchanged && entry.pending !== undefined) {
          snapshot = entry.pending
        } else if (unchanged && entry.last !== undefined) {
          kept = true
        } else {
          const fetched = urls.map((url, i): Fetched => {
            const r = results[i]!
            if (r._tag === "Fresh") {
              bytes += r.fetched.body.byteLength
              // Only multi-document providers need a body again when just some of their documents answer 304.
              if (urls.length > 1 && r.fetched.status >= 200 && r.fetched.status < 300) (entry.bodies ??= new Map()).set(url, keptBody(r.fetched))
              return r.fetched
            }
            return bodyOf(url, r._tag === "NotModified" ? entry.bodies?.get(url) : undefined)
          })
          const parsed = yield* adapter.parse(fetched, configOf(entry.source), at).pipe(Effect.result)
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
      const seen = kept ? entry.last : snapshot
      yield* writer.write([rowOf(entry, seen, at, latency, httpStatus, bytes, error)])
      // Counted once its rows are accepted, so a flush after reading the count covers every counted check.
      stats.check("source", failed !== null || seen === undefined ? "failed" : httpStatus === 304 ? "not_modified" : "fresh", started - plannedDue)
      hooks.marked({ sourceId: entry.source.id, key: entry.source.key, checkedAt: at, error: error === "" ? null : error })
      if (snapshot === undefined) {
        // All documents unchanged (304): the same snapshot, no need to fingerprint it again.
        if (kept) yield* publisher.touched(entry.source.key, at)
        return
      }
      const print = fingerprint(snapshot)
      if (print === entry.lastFingerprint) {
        yield* publisher.touched(entry.source.key, at)
        return
      }
      const previous = entry.last
      const { events, observation } = observe(entry.source, previous && observedOf(previous), snapshot, at)
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
      entry.last = keep(observation)
      entry.lastFingerprint = print
      stats.changed("source")
      hooks.changed({ source: entry.source, snapshot, since: observation.since, at })
    },
    (effect, entry) =>
      // Each check is one trace: the upstream requests and the writes are its spans.
      withSpanWhenTracing(
        Effect.catchCause(effect, (cause) => Effect.logWarning("check failed", cause).pipe(Effect.annotateLogs({ source: entry.source.key }))),
        "check.source",
        {
          root: true,
          kind: "internal",
          attributes: { "statusgrid.source.key": entry.source.key, "statusgrid.source.provider": entry.source.provider_type ?? "" },
          ...noCallSite
        }
      )
  )

  // A source added with a bare URL: find its provider (and the document to read), store both, then check it.
  // Unreachable pages are tried again later, backing off from one interval to an hour.
  const detectThenCheck = Effect.fnUntraced(
    function*(entry: SourceEntry, plannedDue: number) {
      const found = yield* detect(entry.source.url, entry.source.trusted ? trustedGet : {}).pipe(Effect.provideService(Fetcher, fetcher), Effect.result)
      if (found._tag === "Failure") {
        const now = clock.currentTimeMillisUnsafe()
        entry.detectFailures += 1
        const backoffMs = Math.min(entry.intervalMs * 2 ** Math.min(entry.detectFailures - 1, 10), 3_600_000)
        hooks.retryAt(entry.source.key, now + backoffMs)
        hooks.marked({ sourceId: entry.source.id, key: entry.source.key, checkedAt: new Date(now), error: `detection failed: ${found.failure.message}` })
        stats.check("source", "failed", now - plannedDue)
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
    },
    (effect, entry) =>
      effect.pipe(
        Effect.catchCause((cause) => Effect.logWarning("detection failed", cause).pipe(Effect.annotateLogs({ source: entry.source.key })))
      )
  )

  return { check, detectThenCheck } satisfies SourceCheck
})
