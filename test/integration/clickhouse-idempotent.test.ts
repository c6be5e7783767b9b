import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import * as Fs from "node:fs"
import type { CheckResultRow } from "../../services/domain/CheckResult.ts"
import { ClickHouse } from "../../services/platform/ClickHouse.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import { ResultWriter } from "../../services/poller/ResultWriter.ts"
import type { ResultWriterOptions } from "../../services/poller/ResultWriter.ts"
import { type ClickHouseHttp, clickHouseHttp } from "../support/clickhouseHttp.ts"
import { waitFor } from "../support/eventually.ts"
import { tempDir } from "../support/stores.ts"

/**
 * Inserts that time out on a slow server and are retried are stored once.
 * The writer talks HTTP to a ClickHouse front backed by real chDB
 * (test/support/clickhouseHttp.ts), which executes an insert and answers
 * after the writer's insert timeout: the rows landed, the writer does not
 * know, and it sends the batch again.
 */
class Front extends Context.Service<Front, ClickHouseHttp>()("test/idempotent/Front") {}

const TestLayer = Layer.unwrap(Effect.gen(function*() {
  const front = yield* clickHouseHttp(yield* tempDir("idempotent-ch"))
  const ch = ClickHouse.layerServer(front.url, "statusgrid_idempotent")
  const migrated = Layer.effectDiscard(Migrations.migrateClickHouse()).pipe(Layer.provideMerge(ch))
  return Layer.merge(migrated, Layer.succeed(Front, front))
}))

const rowsFor = (prefix: string, n: number): Array<CheckResultRow> =>
  Array.from({ length: n }, (_, i) => ({
    checked_at: new Date(Date.UTC(2026, 10, 20, 12, 0, 0) + i * 1000).toISOString(),
    subject_kind: "source",
    subject_id: `${prefix}-${i}`,
    component_id: "",
    status: "operational",
    latency_ms: 100,
    http_status: 200,
    bytes: 2048,
    error: "",
    region: "",
    shard: 1
  }))

/** Rows of `prefix` in check_results, and the checks the hourly rollup counted for them. */
const stored = (prefix: string) =>
  Effect.gen(function*() {
    const ch = yield* ClickHouse
    const [rows] = yield* ch.query(
      `SELECT count() AS n, uniqExact(subject_id) AS distinct FROM check_results WHERE startsWith(subject_id, '${prefix}-')`
    )
    const [rollup] = yield* ch.query(
      `SELECT sum(checks) AS checks FROM check_rollup_hourly WHERE startsWith(subject_id, '${prefix}-')`
    )
    return { rows: Number(rows!["n"]), distinct: Number(rows!["distinct"]), rollup_checks: Number(rollup!["checks"]) }
  })

const startWriter = (options: ResultWriterOptions) =>
  Effect.gen(function*() {
    const ch = yield* ClickHouse
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const writer = yield* ResultWriter.make(options).pipe(Effect.provideService(ClickHouse, ch), Scope.provide(scope))
    return { writer, close: Scope.close(scope, Exit.void) }
  })

const quick = { batchRows: 1_000, flushMs: 50, retryBaseMs: 50, retryMaxMs: 200, insertTimeoutMs: 400 } as const

describe("idempotent ClickHouse inserts", () => {
  layer(TestLayer, { timeout: 120_000, excludeTestServices: true })("through HTTP to a slow server", (it) => {
    it.effect("a batch whose insert times out and is retried is stored once", () =>
      Effect.gen(function*() {
        const front = yield* Front
        const { writer } = yield* startWriter({ ...quick, spillDir: yield* tempDir("idempotent-spill") })
        // The first insert lands and is answered after 1.5 s; the writer gives up at 400 ms and retries.
        front.slowInserts(1, 1_500)
        const before = front.inserts()
        yield* writer.write(rowsFor("retry", 250))
        yield* writer.flush
        // Let the late answer come, so that nothing of the first attempt is still on its way.
        yield* Effect.sleep("1800 millis")
        const stats = yield* writer.stats
        const result = yield* stored("retry")
        console.log(JSON.stringify({ inserts_sent: front.inserts() - before, failed_attempts: stats.failed_attempts, ...result }))
        assert.isAtLeast(front.inserts() - before, 2, "the batch was sent twice")
        assert.isAtLeast(stats.failed_attempts, 1)
        assert.deepStrictEqual(result, { rows: 250, distinct: 250, rollup_checks: 250 })
      }))

    it.effect("a batch that timed out, was spilled at shutdown and replayed by the next writer is stored once", () =>
      Effect.gen(function*() {
        const front = yield* Front
        const spillDir = yield* tempDir("idempotent-spill")
        const first = yield* startWriter({ ...quick, spillDir, shutdownMs: 300 })
        // Every insert of this writer lands but is answered too late: at shutdown its batch goes to disk.
        front.slowInserts(100, 2_000)
        yield* first.writer.write(rowsFor("replay", 120))
        yield* waitFor(10_000, "a timed-out insert", Effect.map(first.writer.stats, (s) => s.failed_attempts > 0 || undefined))
        yield* first.close
        const files = Fs.readdirSync(spillDir).filter((name) => name.endsWith(".ndjson"))
        assert.lengthOf(files, 1)
        front.slowInserts(0, 0)

        // The next start replays the file with the batch's token: ClickHouse drops it.
        const second = yield* startWriter({ ...quick, spillDir })
        yield* second.writer.flush
        yield* Effect.sleep("2200 millis")
        const result = yield* stored("replay")
        console.log(JSON.stringify({ spilled_files: files.length, ...result }))
        assert.deepStrictEqual(result, { rows: 120, distinct: 120, rollup_checks: 120 })
        assert.deepStrictEqual(Fs.readdirSync(spillDir).filter((name) => name.endsWith(".ndjson")), [])
      }))

    it.effect("distinct batches with identical rows are both stored (the token, not the content, identifies a batch)", () =>
      Effect.gen(function*() {
        const { writer } = yield* startWriter({ ...quick, spillDir: yield* tempDir("idempotent-spill") })
        yield* writer.write(rowsFor("twice", 10))
        yield* writer.flush
        yield* writer.write(rowsFor("twice", 10))
        yield* writer.flush
        assert.deepStrictEqual(yield* stored("twice"), { rows: 20, distinct: 10, rollup_checks: 20 })
      }))
  })
})
