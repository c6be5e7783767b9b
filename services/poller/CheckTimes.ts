import { Context, Effect, Layer, Semaphore } from "effect"
import { PollerConfig } from "./PollerConfig.ts"
import { type CheckMark, SourceStore } from "./SourceStore.ts"

/** By source id: every process writes its rows in one order, so two writes (a shard moving between runners) cannot deadlock. */
const bySource = (a: CheckMark, b: CheckMark) => (a.sourceId < b.sourceId ? -1 : a.sourceId > b.sourceId ? 1 : 0)

/**
 * The sources' check times (last check, last error) of every shard of this process, written to
 * PostgreSQL in one statement every `POLLER_CHECK_TIMES_MS` (decision 0025): what a restart keeps each
 * source's cadence from (`FirstChecks.ts`) and what the API shows as a source's last check. Sixteen
 * shards each writing their own second's sources cost sixteen statements a second where one does:
 * on the embedded PGlite a statement's fixed cost (0.55 ms) was most of each (0.64 ms for 11 sources).
 *
 * Held latest per source until saved (a newer check replaces an unsaved one), so an outage of
 * PostgreSQL delays them but loses none, and memory stays bounded by the process's sources. A shard
 * that stops (moved to another runner, or the process stopping) calls `flush` first, so a graceful
 * restart keeps every source's cadence to the check.
 */
export class CheckTimes extends Context.Service<CheckTimes, {
  /** Holds a check's time and error until the next write. */
  record(mark: CheckMark): void
  /** Writes every held check time now (one write at a time: two would lock the same rows). */
  readonly flush: Effect.Effect<void>
}>()("statusgrid/poller/CheckTimes") {
  static readonly layer = Layer.effect(
    CheckTimes,
    Effect.gen(function*() {
      const store = yield* SourceStore
      const { checkTimesMs } = yield* Effect.orDie(PollerConfig)
      const oneWrite = yield* Semaphore.make(1)
      let marks = new Map<string, CheckMark>()

      const flush = oneWrite.withPermits(1)(Effect.gen(function*() {
        if (marks.size === 0) return
        const batch = marks
        marks = new Map()
        yield* store.markChecked([...batch.values()].toSorted(bySource)).pipe(
          // Not saved: keep what no newer check replaced, for the next write.
          Effect.onError(() => Effect.sync(() => {
            for (const [key, mark] of batch) if (!marks.has(key)) marks.set(key, mark)
          }))
        )
      }))
      const logged = (timeout: number) =>
        flush.pipe(
          // PostgreSQL away: a stop is not held up for it (a restart then checks those sources early).
          Effect.timeout(timeout),
          Effect.catchCause((cause) => Effect.logWarning("could not record check times", cause))
        )

      yield* logged(30_000).pipe(Effect.delay(checkTimesMs), Effect.forever({ disableYield: true }), Effect.forkScoped)
      yield* Effect.addFinalizer(() => logged(2_000))
      return CheckTimes.of({ record: (mark) => void marks.set(mark.key, mark), flush: logged(2_000) })
    })
  )
}
