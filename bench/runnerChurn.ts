import { Effect, type Scope } from "effect"
import { round } from "./figures.ts"
import { flushBoundMs } from "./clickhouseProcess.ts"
import type { RunnerProcess } from "./runnerProcess.ts"

/** What `/readyz` says of the poller shards (services/api/Http.ts). */
interface Readiness {
  readonly shards: { readonly shards: number; readonly placed: number } | null
}

const placedOf = (url: string) =>
  Effect.promise(async () => {
    try {
      const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(10_000) })
      const body = (await response.json()) as Readiness
      return body.shards
    } catch {
      return null
    }
  })

/** Polls until every shard runs somewhere (as `url`'s `/readyz` sees the cluster); the seconds it took. */
const untilPlaced = (url: string, since: number, condition: () => boolean = () => true) =>
  Effect.gen(function*() {
    for (;;) {
      const shards = yield* placedOf(url)
      if (shards !== null && shards.placed === shards.shards && condition()) return round((Date.now() - since) / 1000, 1)
      if (Date.now() - since > 180_000) return yield* Effect.die(new Error(`shards not all running 180 s after the runner left or joined: ${JSON.stringify(shards)}`))
      yield* Effect.sleep("250 millis")
    }
  })

/**
 * Per source, the longest time without a check between `fromMs` and `toMs` (the span's ends count as
 * checks, so a source not checked at all shows the whole span), from the rows in ClickHouse.
 */
const gapsOf = (clickhouse: string, fromMs: number, toMs: number, lateMs: number) =>
  Effect.promise(async () => {
    const query = `
      SELECT count() AS sources, max(gap) AS max_gap_ms, countIf(gap > ${lateMs}) AS late,
        quantileExact(0.99)(gap) AS p99_gap_ms
      FROM (
        SELECT subject_id,
          arrayMax(arrayDifference(arraySort(arrayConcat([${fromMs}], groupArray(toUnixTimestamp64Milli(checked_at)), [${toMs}])))) AS gap
        FROM check_results
        WHERE subject_kind = 'source' AND checked_at >= fromUnixTimestamp64Milli(toInt64(${fromMs - 3_600_000}))
        GROUP BY subject_id
      )
      FORMAT JSONEachRow`
    const response = await fetch(`${clickhouse}/?database=statusgrid`, { method: "POST", body: query, signal: AbortSignal.timeout(30_000) })
    const text = await response.text()
    if (!response.ok) throw new Error(`ClickHouse: ${text.slice(0, 300)}`)
    const row = JSON.parse(text.trim()) as Record<string, string | number>
    return {
      sources: Number(row["sources"]),
      max_gap_s: round(Number(row["max_gap_ms"]) / 1000, 1),
      p99_gap_s: round(Number(row["p99_gap_ms"]) / 1000, 1),
      late: Number(row["late"])
    }
  })

/**
 * A runner leaving and another joining under load (`statusgrid bench poller --runners N --churn`,
 * issue #18): the last runner stops (SIGTERM: it hands its shards back and flushes its rows); the
 * others take its shards (`left_moved_s`: until `/readyz` sees every shard running); then a new
 * runner starts and the cluster hands it shards (`joined_s`: until it runs some and every shard runs);
 * one interval after that, every source's longest time without a check across the whole churn, from
 * the rows in ClickHouse. A source is `late` when it went more than twice its interval unchecked:
 * a check lost, not only moved.
 */
export const runnerChurn = Effect.fn("bench.runnerChurn")(function*(
  runners: ReadonlyArray<RunnerProcess>,
  spawnNext: Effect.Effect<RunnerProcess, never, Scope.Scope>,
  options: { readonly intervalS: number; readonly clickhouse: string }
) {
  const leaving = runners.at(-1)!
  const staying = runners.slice(0, -1)
  const leftAt = Date.now()
  yield* leaving.stop
  const stopS = round((Date.now() - leftAt) / 1000, 1)
  const movedS = yield* untilPlaced(staying[0]!.url, leftAt)

  const joinAt = Date.now()
  const joined = yield* spawnNext
  const joinedS = yield* untilPlaced(staying[0]!.url, joinAt, () => joined.shardStarts() > 0)
  const joinedShards = joined.shardStarts()

  // One interval after the join, every source has had its chance to be checked again; the rows of
  // those checks are in ClickHouse within a flush interval over the smallest share (decision 0021).
  const endAt = Date.now() + options.intervalS * 1000
  yield* Effect.sleep(`${options.intervalS * 1000 + flushBoundMs()} millis`)
  const gaps = yield* gapsOf(options.clickhouse, leftAt, endAt, 2 * options.intervalS * 1000)
  return {
    runner_left: leaving.index,
    left_stop_s: stopS,
    left_moved_s: movedS,
    runner_joined: joined.index,
    joined_s: joinedS,
    joined_shard_starts: joinedShards,
    span_s: round((endAt - leftAt) / 1000, 1),
    sources_checked: gaps.sources,
    longest_unchecked_s: gaps.max_gap_s,
    p99_unchecked_s: gaps.p99_gap_s,
    sources_late: gaps.late,
    joined
  }
})
