import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { freePort } from "../../bench/processes.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { childEnv, runCli } from "../support/process.ts"
import { freshDatabase } from "../support/stores.ts"

/** A pool on a fresh database with up to `pipeline` statements per connection. */
const pool = (pipeline: number) =>
  Layer.unwrap(Effect.map(freshDatabase, (url) => Postgres.layerServer(url, { maxConnections: 8, pipeline })))

/** Eight statements at once, each 150 ms long: how many backends ran them, and what each answered. */
const eightAtOnce = Effect.gen(function*() {
  const sql = yield* SqlClient
  const rows = yield* Effect.forEach(
    Array.from({ length: 8 }, (_, i) => i),
    (i) => sql<{ pid: number; n: number }>`SELECT pg_backend_pid() AS pid, ${i}::int AS n, pg_sleep(0.15)::text AS slept`,
    { concurrency: "unbounded" }
  )
  return { backends: new Set(rows.map(([r]) => r!.pid)).size, answers: rows.map(([r]) => r!.n) }
})

/** A transaction that writes, waits and counts, and a statement beside it counting meanwhile; then a count after. */
const transactionBeside = Effect.gen(function*() {
  const sql = yield* SqlClient
  const count = sql<{ n: number }>`SELECT count(*)::int AS n FROM t`.pipe(Effect.map((rows) => rows[0]!.n))
  yield* sql`CREATE TABLE t (n int)`
  const [inside, beside] = yield* Effect.all([
    sql.withTransaction(sql`INSERT INTO t VALUES (1)`.pipe(Effect.andThen(Effect.sleep(100)), Effect.andThen(count))),
    Effect.sleep(50).pipe(Effect.andThen(count))
  ], { concurrency: "unbounded" })
  return { inside, beside, after: yield* count }
})

/**
 * A row locked by a transaction that commits only once eight reads have answered, and beside it a
 * write of the same row waiting for that lock: the reads must not queue behind the waiting write.
 */
const readsBesideALockWait = Effect.gen(function*() {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE locked (id int PRIMARY KEY, n int)`
  yield* sql`INSERT INTO locked VALUES (1, 0)`
  const locked = yield* Deferred.make<void>()
  const readsDone = yield* Deferred.make<void>()
  const holder = yield* sql.withTransaction(
    sql`UPDATE locked SET n = n + 1 WHERE id = 1`.pipe(
      Effect.andThen(Deferred.succeed(locked, undefined)),
      Effect.andThen(Deferred.await(readsDone).pipe(Effect.timeout("10 seconds")))
    )
  ).pipe(Effect.forkChild)
  yield* Deferred.await(locked)
  const waiting = yield* sql`UPDATE locked SET n = n + 10 WHERE id = 1`.pipe(Effect.forkChild)
  yield* Effect.sleep(100)
  const reads = yield* eightAtOnce
  yield* Deferred.succeed(readsDone, undefined)
  yield* Fiber.join(holder)
  yield* Fiber.join(waiting)
  const [row] = yield* sql<{ n: number }>`SELECT n FROM locked WHERE id = 1`
  return { reads, n: row!.n }
})

describe("DATABASE_PIPELINE (decision 0031)", () => {
  it.live("8 (the default): reads at once share one connection, each answered its own; 1: each takes its own; a transaction keeps its own", () =>
    Effect.gen(function*() {
      const apart = yield* eightAtOnce.pipe(Effect.provide(pool(1)))
      assert.deepStrictEqual(apart, { backends: 8, answers: [0, 1, 2, 3, 4, 5, 6, 7] })

      const [shared, transaction] = yield* Effect.all([eightAtOnce, transactionBeside]).pipe(Effect.provide(pool(Postgres.defaultPipeline)))
      assert.deepStrictEqual(shared, { backends: 1, answers: [0, 1, 2, 3, 4, 5, 6, 7] })
      assert.deepStrictEqual(transaction, { inside: 1, beside: 0, after: 1 })
    }).pipe(Effect.scoped), 60_000)

  it.live("a write waiting on a row lock holds up no read: the lock's holder waits for eight reads, and they answer", () =>
    Effect.gen(function*() {
      const { reads, n } = yield* readsBesideALockWait.pipe(Effect.provide(pool(Postgres.defaultPipeline)))
      assert.deepStrictEqual(reads.answers, [0, 1, 2, 3, 4, 5, 6, 7])
      assert.strictEqual(reads.backends, 1, "the reads shared one connection")
      assert.strictEqual(n, 11, "both writes, the waiting one after the holder's commit")
    }).pipe(Effect.scoped), 60_000)

  it("a value out of range stops the start with one line naming it", async () => {
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-pipeline-"))
    const { code, stderr } = await runCli(["start"], childEnv({ DATABASE_PIPELINE: "0", DATA_DIR: dataDir, PORT: String(await freePort()) }))
    Fs.rmSync(dataDir, { recursive: true, force: true })
    assert.strictEqual(code, 1)
    assert.match(stderr, /^statusgrid start failed: .*DATABASE_PIPELINE/mu)
    assert.notInclude(stderr, "    at ", "no stack trace")
  }, 60_000)
})
