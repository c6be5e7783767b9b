import { assert, describe, layer } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Ref, Scope } from "effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import type { CheckResultRow } from "../../services/domain/CheckResult.ts"
import { ClickHouse, ClickHouseError } from "../../services/platform/ClickHouse.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import { PollerStats } from "../../services/poller/PollerStats.ts"
import { ResultWriter, ResultWriterError } from "../../services/poller/ResultWriter.ts"
import type { ResultWriterOptions, WriterStats } from "../../services/poller/ResultWriter.ts"
import { maxShareFactor } from "../../services/poller/ResultWriter/Options.ts"
import { tempDir, withConfig } from "../support/stores.ts"

const chdb = Layer.unwrap(Effect.map(tempDir("chdb"), (dir) => ClickHouse.layerEmbedded(dir, "statusgrid_test")))
const migrated = Layer.effectDiscard(Migrations.migrateClickHouse()).pipe(Layer.provideMerge(chdb))

/**
 * The real chDB service, except that inserts fail while `down` is set (a fake
 * of the failure only: rows still land in chDB once it is up again). Records
 * the size of every insert that reached chDB.
 */
const flakyClickHouse = Effect.gen(function*() {
  const real = yield* ClickHouse
  const down = yield* Ref.make(false)
  const inserts: Array<number> = []
  const service = ClickHouse.of({
    ...real,
    insert: (table, rows, options) =>
      Effect.flatMap(Ref.get(down), (isDown) =>
        isDown
          ? Effect.fail(new ClickHouseError({ operation: `insert ${table}`, cause: new Error("connect ECONNREFUSED") }))
          : real.insert(table, rows, options).pipe(Effect.tap(() => Effect.sync(() => inserts.push(rows.length)))))
  })
  return { service, down, inserts }
})

/** A writer in its own scope, so a test can close it (as a process shutdown would) and start another. */
const startWriter = (ch: ClickHouse["Service"], options: ResultWriterOptions) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const close = Scope.close(scope, Exit.void)
    yield* Effect.addFinalizer(() => close)
    const writer = yield* ResultWriter.make(options).pipe(
      Effect.provideService(ClickHouse, ch),
      Scope.provide(scope),
      Effect.onError(() => close)
    )
    return { writer, close }
  })

/** Rows whose subject ids are `<prefix>-<n>`, so each test counts only its own. */
const rowsFor = (prefix: string, from: number, n: number): Array<CheckResultRow> =>
  Array.from({ length: n }, (_, i) => ({
    checked_at: new Date(Date.UTC(2026, 10, 20, 12, 0, 0) + (from + i) * 1000).toISOString(),
    subject_kind: "source",
    subject_id: `${prefix}-${from + i}`,
    component_id: "",
    status: (from + i) % 7 === 0 ? "degraded" : "operational",
    latency_ms: 100 + ((from + i) % 50),
    http_status: 200,
    bytes: 2048,
    error: "",
    region: "",
    shard: 3
  }))

const writeInChunks = (writer: ResultWriter["Service"], rows: ReadonlyArray<CheckResultRow>, size: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < rows.length; i += size) yield* writer.write(rows.slice(i, i + size))
  })

/** Rows of `prefix` in chDB, and how many distinct subjects: equal counts mean no duplicates. */
const stored = (prefix: string) =>
  Effect.gen(function*() {
    const ch = yield* ClickHouse
    const [row] = yield* ch.query(
      "SELECT count() AS n, uniqExact(subject_id) AS distinct FROM check_results WHERE startsWith(subject_id, {p:String})",
      { p: `${prefix}-` }
    )
    return { n: Number(row!["n"]), distinct: Number(row!["distinct"]) }
  })

const spillFiles = (dir: string) => Fs.readdirSync(dir).filter((name) => name.endsWith(".ndjson")).toSorted()

const linesOnDisk = (dir: string) =>
  spillFiles(dir).reduce(
    (n, name) => n + Fs.readFileSync(Path.join(dir, name), "utf8").split("\n").filter((l) => l.length > 0).length,
    0
  )

/** Polls `get` until `ok` holds; fails with the last value after `timeoutMs`. */
const eventually = <A, E, R>(get: Effect.Effect<A, E, R>, ok: (a: A) => boolean, timeoutMs = 20_000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + timeoutMs
    while (true) {
      const value = yield* get
      if (ok(value)) return value
      if (Date.now() > deadline) return assert.fail(`condition not reached; last value ${JSON.stringify(value)}`)
      yield* Effect.sleep("25 millis")
    }
  })

/** Small numbers so that tests reach every bound quickly. */
const outage = { batchRows: 100, memoryRows: 300, flushMs: 50, retryBaseMs: 20, retryMaxMs: 200 } as const

describe("ResultWriter", () => {
  layer(migrated, { timeout: 120_000, excludeTestServices: true })("on chDB", (it) => {
    it.effect("batches by size: 25,000 rows in batches of 10,000 are three inserts", () =>
      Effect.gen(function*() {
        const ch = yield* flakyClickHouse
        const spillDir = yield* tempDir("spill")
        // A one-minute flush interval: only full batches are written without `flush`.
        const { writer } = yield* startWriter(ch.service, { spillDir, batchRows: 10_000, flushMs: 60_000 })
        yield* writeInChunks(writer, rowsFor("size", 0, 25_000), 10)

        const partial = yield* eventually(writer.stats, (s) => s.written_rows === 20_000)
        assert.strictEqual(partial.buffered_rows, 5_000)
        assert.deepStrictEqual(ch.inserts, [10_000, 10_000])
        assert.deepStrictEqual(yield* stored("size"), { n: 20_000, distinct: 20_000 })

        yield* writer.flush
        assert.deepStrictEqual(ch.inserts, [10_000, 10_000, 5_000])
        assert.deepStrictEqual(yield* stored("size"), { n: 25_000, distinct: 25_000 })
        const stats = yield* writer.stats
        assert.strictEqual(stats.written_batches, 3)
        assert.strictEqual(stats.buffered_rows, 0)
        assert.deepStrictEqual(spillFiles(spillDir), [])
      }))

    it.effect("batches by time: a few rows are written once the flush interval has passed", () =>
      Effect.gen(function*() {
        const ch = yield* flakyClickHouse
        const spillDir = yield* tempDir("spill")
        const flushMs = 500
        const { writer } = yield* startWriter(ch.service, { spillDir, batchRows: 10_000, flushMs })
        const started = Date.now()
        yield* writer.write(rowsFor("time", 0, 3))
        yield* writer.write(rowsFor("time", 3, 2))
        yield* eventually(stored("time"), (s) => s.n === 5, 15_000)
        // Written by the timer, not at once (nor by size: the batch holds 10,000).
        assert.isAtLeast(Date.now() - started, flushMs - 20)
        assert.deepStrictEqual(ch.inserts, [5])
        assert.deepStrictEqual(yield* stored("time"), { n: 5, distinct: 5 })
      }))

    it.effect("a runner holding a quarter of the shards waits four flush intervals, so the cluster inserts as often as one runner", () =>
      Effect.gen(function*() {
        const ch = yield* flakyClickHouse
        const spillDir = yield* tempDir("spill")
        const flushMs = 250
        let share = 0.25
        const { writer } = yield* startWriter(ch.service, { spillDir, batchRows: 10_000, flushMs, share: () => share })
        const started = Date.now()
        yield* writer.write(rowsFor("share", 0, 3))
        yield* eventually(stored("share"), (s) => s.n === 3, 15_000)
        assert.isAtLeast(Date.now() - started, 4 * flushMs - 20)
        assert.deepStrictEqual(ch.inserts, [3])
        // No share at all (no shard loaded yet): the cap's intervals, then written, not held for ever.
        share = 0
        const again = Date.now()
        yield* writer.write(rowsFor("share", 3, 2))
        yield* eventually(stored("share"), (s) => s.n === 5, 15_000)
        assert.isAtLeast(Date.now() - again, maxShareFactor * flushMs - 20)
        assert.deepStrictEqual(ch.inserts, [3, 2])
      }))

    it.effect("flush waits until the buffered rows are written", () =>
      Effect.gen(function*() {
        const ch = yield* flakyClickHouse
        const spillDir = yield* tempDir("spill")
        const { writer } = yield* startWriter(ch.service, { spillDir, batchRows: 10_000, flushMs: 60_000 })
        yield* writer.write(rowsFor("flush", 0, 7))
        assert.strictEqual((yield* writer.stats).buffered_rows, 7)
        assert.deepStrictEqual(yield* stored("flush"), { n: 0, distinct: 0 })
        yield* writer.flush
        assert.deepStrictEqual(yield* stored("flush"), { n: 7, distinct: 7 })
        assert.strictEqual((yield* writer.stats).buffered_rows, 0)
      }))

    it.effect("ClickHouse down: memory stays bounded, batches spill to disk, and every row is written on recovery", () =>
      Effect.gen(function*() {
        const ch = yield* flakyClickHouse
        const spillDir = yield* tempDir("spill")
        const { writer } = yield* startWriter(ch.service, { spillDir, ...outage })
        yield* Ref.set(ch.down, true)

        const rows = rowsFor("outage", 0, 1_000)
        for (let i = 0; i < rows.length; i += 10) {
          yield* writer.write(rows.slice(i, i + 10))
          assert.isAtMost((yield* writer.stats).buffered_rows, outage.memoryRows)
        }
        const down = yield* eventually(writer.stats, (s) => s.failed_attempts >= 2)
        assert.match(down.last_error ?? "", /ECONNREFUSED/)
        assert.strictEqual(down.spilled_rows + down.buffered_rows, 1_000)
        assert.isAtLeast(down.spilled_rows, 1_000 - outage.memoryRows)
        assert.strictEqual(down.spilled_files, spillFiles(spillDir).length)
        assert.strictEqual(linesOnDisk(spillDir), down.spilled_rows)
        assert.deepStrictEqual(yield* stored("outage"), { n: 0, distinct: 0 })

        // flush waits for ClickHouse to come back.
        const flushing = yield* Effect.forkChild(writer.flush)
        yield* Effect.sleep("300 millis")
        assert.isUndefined(flushing.pollUnsafe())
        yield* Ref.set(ch.down, false)
        yield* Fiber.join(flushing)

        assert.deepStrictEqual(yield* stored("outage"), { n: 1_000, distinct: 1_000 })
        assert.strictEqual(ch.inserts.reduce((a, b) => a + b, 0), 1_000)
        assert.deepStrictEqual(spillFiles(spillDir), [])
        const after = yield* writer.stats
        assert.deepStrictEqual(
          [after.buffered_rows, after.spilled_rows, after.spilled_files, after.written_rows],
          [0, 0, 0, 1_000]
        )
      }))

    it.effect("ClickHouse failing longer than spillAfterMs: memory goes to disk every flush, and is written once on recovery", () =>
      Effect.gen(function*() {
        const ch = yield* flakyClickHouse
        const spillDir = yield* tempDir("spill")
        yield* Ref.set(ch.down, true)
        // Far below the memory bound: only the failing time sends rows to disk.
        const { writer } = yield* startWriter(ch.service, { ...outage, spillDir, memoryRows: 100_000, spillAfterMs: 400 })
        yield* writeInChunks(writer, rowsFor("spillafter", 0, 200), 20)
        yield* eventually(writer.stats, (s) => s.failed_attempts >= 1)
        const spilledAll = yield* eventually(writer.stats, (s) => s.buffered_rows === 0, 5_000)
        assert.strictEqual(spilledAll.spilled_rows, 200)
        assert.strictEqual(linesOnDisk(spillDir), 200)
        // Later rows follow within a flush interval or so.
        yield* writer.write(rowsFor("spillafter", 200, 10))
        yield* eventually(writer.stats, (s) => s.buffered_rows === 0 && s.spilled_rows === 210, 2_000)

        yield* Ref.set(ch.down, false)
        yield* writer.flush
        assert.deepStrictEqual(yield* stored("spillafter"), { n: 210, distinct: 210 })
        assert.deepStrictEqual(spillFiles(spillDir), [])
      }))

    it.effect("closing the writer writes what is buffered", () =>
      Effect.gen(function*() {
        const ch = yield* flakyClickHouse
        const spillDir = yield* tempDir("spill")
        const { writer, close } = yield* startWriter(ch.service, { spillDir, batchRows: 10_000, flushMs: 60_000 })
        yield* writer.write(rowsFor("close", 0, 30))
        yield* close
        assert.deepStrictEqual(yield* stored("close"), { n: 30, distinct: 30 })
        assert.deepStrictEqual(spillFiles(spillDir), [])
      }))

    it.effect("restart: rows spilled at shutdown while ClickHouse is down are written by the next writer", () =>
      Effect.gen(function*() {
        const spillDir = yield* tempDir("spill")
        const first = yield* flakyClickHouse
        yield* Ref.set(first.down, true)
        const a = yield* startWriter(first.service, { ...outage, spillDir, memoryRows: 10_000, shutdownMs: 1_000 })
        yield* writeInChunks(a.writer, rowsFor("restart", 0, 250), 25)
        assert.strictEqual((yield* a.writer.stats).buffered_rows, 250)
        yield* a.close
        assert.strictEqual(linesOnDisk(spillDir), 250)
        assert.deepStrictEqual(yield* stored("restart"), { n: 0, distinct: 0 })

        // Started while ClickHouse is still down: the files are read and retried, and stay on disk.
        const second = yield* flakyClickHouse
        yield* Ref.set(second.down, true)
        const b = yield* startWriter(second.service, { ...outage, spillDir })
        const retrying = yield* eventually(b.writer.stats, (s) => s.failed_attempts >= 2)
        assert.strictEqual(retrying.spilled_rows, 250)
        yield* b.close
        assert.strictEqual(linesOnDisk(spillDir), 250)

        // Started with ClickHouse up: the files are written, then deleted.
        const third = yield* flakyClickHouse
        const c = yield* startWriter(third.service, { ...outage, spillDir })
        yield* c.writer.flush
        assert.deepStrictEqual(yield* stored("restart"), { n: 250, distinct: 250 })
        assert.deepStrictEqual(spillFiles(spillDir), [])
        assert.strictEqual((yield* c.writer.stats).written_rows, 250)
      }))

    it.effect("a failed disk spill fails write with a typed error and accepts none of its rows", () =>
      Effect.gen(function*() {
        const ch = yield* flakyClickHouse
        const spillDir = yield* tempDir("spill")
        yield* Ref.set(ch.down, true)
        const { writer } = yield* startWriter(ch.service, {
          ...outage,
          spillDir,
          batchRows: 50,
          memoryRows: 100,
          flushMs: 60_000
        })
        yield* writeInChunks(writer, rowsFor("diskok", 0, 100), 10)
        assert.strictEqual((yield* writer.stats).buffered_rows, 100)

        // The spill directory becomes a file: writing there fails, even as root.
        Fs.rmSync(spillDir, { recursive: true, force: true })
        Fs.writeFileSync(spillDir, "not a directory")
        const error = yield* Effect.flip(writer.write(rowsFor("diskno", 0, 10)))
        assert.instanceOf(error, ResultWriterError)
        assert.strictEqual(error.reason._tag, "SpillWriteFailed")
        const stats = yield* writer.stats
        assert.deepStrictEqual([stats.buffered_rows, stats.spilled_rows], [100, 0])

        // The disk comes back: the next write spills and succeeds.
        Fs.rmSync(spillDir, { force: true })
        Fs.mkdirSync(spillDir)
        yield* writer.write(rowsFor("diskok", 100, 10))
        assert.isAbove(spillFiles(spillDir).length, 0)

        yield* Ref.set(ch.down, false)
        yield* writer.flush
        assert.deepStrictEqual(yield* stored("diskok"), { n: 110, distinct: 110 })
        assert.deepStrictEqual(yield* stored("diskno"), { n: 0, distinct: 0 })
      }))

    it.effect("the layer reads its settings from the environment", () =>
      Effect.gen(function*() {
        const ch = yield* flakyClickHouse
        const dataDir = yield* tempDir("data")
        const settings = { DATA_DIR: dataDir, RESULTS_BATCH_ROWS: "4", RESULTS_FLUSH_MS: "60000" }
        const written = yield* Effect.gen(function*() {
          const writer = yield* ResultWriter
          // The spill directory defaults to DATA_DIR/spill, locked by this writer.
          assert.strictEqual(Fs.readFileSync(Path.join(dataDir, "spill", "writer.lock"), "utf8"), String(process.pid))
          yield* writer.write(rowsFor("env", 0, 9))
          return yield* eventually(writer.stats, (s) => s.written_rows === 8)
        }).pipe(
          Effect.provide(ResultWriter.layer.pipe(Layer.provide(PollerStats.layer), Layer.provide(withConfig(settings)))),
          Effect.provideService(ClickHouse, ch.service)
        )
        assert.strictEqual(written.buffered_rows, 1)
        assert.deepStrictEqual(ch.inserts.slice(0, 2), [4, 4])
        // Closing the layer wrote the last row.
        assert.deepStrictEqual(yield* stored("env"), { n: 9, distinct: 9 })

        const invalid = yield* Effect.flip(
          Effect.provide(ResultWriter, ResultWriter.layer.pipe(Layer.provide(PollerStats.layer), Layer.provide(withConfig({ ...settings, RESULTS_BATCH_ROWS: "0" }))))
            .pipe(Effect.provideService(ClickHouse, ch.service))
        )
        assert.match(String(invalid), /RESULTS_BATCH_ROWS/)
      }))

    it.effect("one writer per spill directory; a lock left by a dead process is taken over", () =>
      Effect.gen(function*() {
        const ch = yield* flakyClickHouse
        const spillDir = yield* tempDir("spill")
        const lock = Path.join(spillDir, "writer.lock")

        const first = yield* startWriter(ch.service, { spillDir })
        const again = yield* Effect.flip(startWriter(ch.service, { spillDir }))
        assert.strictEqual(again.reason._tag, "SpillDirUnavailable")
        assert.match(again.reason.message, /already open in this process/)
        yield* first.close
        assert.isFalse(Fs.existsSync(lock))

        // Held by another live process (our parent).
        Fs.writeFileSync(lock, String(process.ppid))
        const held = yield* Effect.flip(startWriter(ch.service, { spillDir }))
        assert.match(held.reason.message, /in use by process/)

        // Left by a process that has exited.
        const dead = ChildProcess.spawnSync(process.execPath, ["-e", ""]).pid
        Fs.writeFileSync(lock, String(dead))
        const taken = yield* startWriter(ch.service, { spillDir })
        assert.strictEqual(Fs.readFileSync(lock, "utf8"), String(process.pid))
        yield* taken.close
      }))

    it.effect("on start, spill files are replayed, unreadable ones set aside and half-written ones removed", () =>
      Effect.gen(function*() {
        const ch = yield* flakyClickHouse
        const spillDir = yield* tempDir("spill")
        const good = rowsFor("replay", 0, 2)
        Fs.writeFileSync(
          Path.join(spillDir, "000001700000000-0000000000-2.ndjson"),
          good.map((r) => JSON.stringify(r)).join("\n") + "\n"
        )
        Fs.writeFileSync(Path.join(spillDir, "000001700000000-0000000001-3.ndjson"), "{\"checked_at\": 1}\nnot json\n")
        Fs.writeFileSync(Path.join(spillDir, "000001700000000-0000000002-9.ndjson.tmp"), "{\"half\":")

        const { writer } = yield* startWriter(ch.service, { spillDir })
        yield* writer.flush
        assert.deepStrictEqual(yield* stored("replay"), { n: 2, distinct: 2 })
        const stats: WriterStats = yield* writer.stats
        assert.deepStrictEqual([stats.rejected_files, stats.spilled_files, stats.written_rows], [1, 0, 2])
        assert.deepStrictEqual(
          Fs.readdirSync(spillDir).filter((n) => n !== "writer.lock" && n !== "writer.id").toSorted(),
          ["000001700000000-0000000001-3.ndjson.rejected"]
        )
      }))
  })
})
