import { Cause, Clock, Context, Deferred, Duration, Effect, Exit, Fiber, Layer, Option, Queue, Schema, Semaphore } from "effect"
import type { Scope } from "effect"
import * as Path from "node:path"
import { CheckResultRow } from "../domain/CheckResult.ts"
import { ClickHouse } from "../platform/ClickHouse.ts"
import * as Metrics from "../platform/Metrics.ts"
import { PollerStats } from "./PollerStats.ts"
import { type Batch, RowBuffer, type Spilled } from "./ResultWriter/Buffer.ts"
import { defaults, maxShareFactor, optionsFromConfig, type ResultWriterOptions, type WriterStats } from "./ResultWriter/Options.ts"
import * as Spill from "./ResultWriter/Spill.ts"

export { defaults, optionsFromConfig, type ResultWriterOptions, WriterStats } from "./ResultWriter/Options.ts"
export {
  ResultWriterError,
  SpillDeleteFailed,
  SpillDirUnavailable,
  SpillReadFailed,
  SpillWriteFailed
} from "./ResultWriter/Spill.ts"

/** A table's batching writer: `ResultWriter` (check_results), `TransitionWriter` (status_transitions). */
export interface BatchWriter<Row> {
  /**
   * Accepts rows for writing. Cheap while under the memory bound; past it,
   * waits for a disk spill. Fails only when that spill fails, and then
   * accepts none of `rows`.
   */
  write(rows: ReadonlyArray<Row>): Effect.Effect<void, Spill.ResultWriterError>
  /**
   * Waits until every row accepted before the call is in ClickHouse (after
   * the layer started closing: in ClickHouse or spilled). While ClickHouse
   * is down this waits for it; add a timeout where that matters.
   */
  readonly flush: Effect.Effect<void>
  readonly stats: Effect.Effect<WriterStats>
}

/** What a table's writer needs besides the options: the table, how to read its spill files back, its name in logs. */
export interface WriterTable<Row> {
  readonly table: string
  /** Throws on a row that does not decode (the spill file is then set aside). */
  readonly decodeRows: (input: ReadonlyArray<unknown>) => ReadonlyArray<Row>
  /** "check results", "status transitions" */
  readonly what: string
}

const checkResults: WriterTable<CheckResultRow> = {
  table: defaults.table,
  decodeRows: Schema.decodeUnknownSync(Schema.Array(CheckResultRow)),
  what: "check results"
}

/**
 * Writes check results to ClickHouse in batches, off the pollers' path.
 *
 * `write` appends to memory and returns; one background fiber inserts full
 * batches at once and partial ones `flushMs` after their oldest row (divided
 * by the process's `share` of the cluster's rows, so that N runners insert
 * as often together as one alone). A failed
 * insert (any ClickHouseError, or a timeout) keeps its batch and is retried
 * with backoff (200 ms doubling to 10 s) while rows accumulate, up to
 * `memoryRows`; past that, `write` spills whole batches (oldest first) to
 * NDJSON files, which are inserted before the memory batches once ClickHouse
 * answers, and deleted only after their insert succeeded. Closing the layer
 * tries one last flush, spills what is left, and the next start replays the
 * files before anything else.
 *
 * Spill directory: `RESULTS_SPILL_DIR`, default `<DATA_DIR>/spill`, because it
 * must outlive the process (a temporary directory would not survive a
 * reboot). It is locked by one process (`writer.lock`), since two writers
 * replaying the same files would insert them twice; runners sharing a
 * machine need their own directory. The DataDir service is not used: a
 * runner against ClickHouse and PostgreSQL servers has no other use for
 * DATA_DIR and its lock.
 *
 * Once inserts have been failing (or one has hung) for `spillAfterMs`, the
 * rows in memory go to disk every `flushMs` or every second, whichever is
 * sooner (and the batch being retried at its next failure), until an insert
 * succeeds.
 *
 * Guarantees: each row stored once, or lost in the cases below. Every batch
 * carries an `insert_deduplication_token` (the spill directory's id and the
 * batch's file name), the same on every retry and after a spill and replay,
 * so ClickHouse drops a batch it already has among the table's last 1,000
 * inserts (migrations/clickhouse/0003): an insert that timed out but landed, or a spill file replayed after the
 * process died between its insert and its deletion. Rows are lost only when
 * the process dies without closing the layer (what is in memory: about
 * `flushMs ÷ share` worth while ClickHouse answers, about `flushMs` of the cluster's rows, at most
 * `flushMs ÷ share` + `spillAfterMs` + 2 s worth while it fails) or when neither ClickHouse nor the disk
 * takes them at shutdown (logged with the count). A spill file that cannot
 * be decoded is renamed `<name>.rejected` and left for a person.
 */
export class ResultWriter extends Context.Service<ResultWriter, BatchWriter<CheckResultRow>>()(
  "statusgrid/poller/ResultWriter"
) {
  static readonly make = (options: ResultWriterOptions) =>
    makeWriter(options, { ...checkResults, table: options.table ?? defaults.table })

  /**
   * From the environment: `RESULTS_BATCH_ROWS`, `RESULTS_FLUSH_MS`, `RESULTS_MEMORY_ROWS`,
   * `RESULTS_INSERT_TIMEOUT_MS`, `RESULTS_SHUTDOWN_MS`, `RESULTS_SPILL_AFTER_MS`, and
   * `RESULTS_SPILL_DIR` (default `<DATA_DIR>/spill`, `DATA_DIR` defaulting to `./data`); its share of
   * the cluster's rows from the shards PollerStats counts here.
   */
  static readonly layer = Layer.effect(
    ResultWriter,
    Effect.gen(function*() {
      const options = yield* optionsFromConfig
      const stats = yield* PollerStats
      return yield* ResultWriter.make({ ...options, share: stats.share })
    })
  )
}


const describe = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  if (Cause.isTimeoutError(error)) return "insert timed out"
  const inner = (error as { readonly cause?: unknown } | undefined)?.cause
  const operation = (error as { readonly operation?: unknown } | undefined)?.operation
  const message = inner instanceof Error ? inner.message : error instanceof Error ? error.message : String(error)
  return typeof operation === "string" ? `${operation}: ${message}` : message
}

/** Until the signal is raised or `ms` passes (forever when undefined). */
const waitFor = (signal: Queue.Queue<void>, ms: number | undefined) =>
  ms === undefined
    ? Queue.take(signal)
    : Queue.take(signal).pipe(Effect.timeoutOption(Duration.millis(Math.max(1, ms))), Effect.asVoid)

/** A batching, spilling writer of one ClickHouse table (`ResultWriter` for check results). */
export const makeWriter = Effect.fnUntraced(function*<Row>(
  options: ResultWriterOptions,
  target: WriterTable<Row>
): Effect.fn.Return<BatchWriter<Row>, Spill.ResultWriterError, ClickHouse | Scope.Scope> {
  const ch = yield* ClickHouse
  const clock = yield* Clock.Clock
  const batchRows = Math.max(1, Math.floor(options.batchRows ?? defaults.batchRows))
  const flushMs = Math.max(1, options.flushMs ?? defaults.flushMs)
  const share = options.share
  /** How long a partial batch waits: `flushMs` over this process's share of the cluster's rows. */
  const openBatchMs = share === undefined
    ? () => flushMs
    : () => flushMs / Math.min(1, Math.max(1 / maxShareFactor, share()))
  const memoryRows = Math.max(1, Math.floor(options.memoryRows ?? defaults.memoryRows))
  const retryBaseMs = Math.max(1, options.retryBaseMs ?? defaults.retryBaseMs)
  const retryMaxMs = Math.max(retryBaseMs, options.retryMaxMs ?? defaults.retryMaxMs)
  const insertTimeout = Duration.millis(Math.max(1, options.insertTimeoutMs ?? defaults.insertTimeoutMs))
  const shutdownMs = Math.max(0, options.shutdownMs ?? defaults.shutdownMs)
  const spillAfterMs = Math.max(1, options.spillAfterMs ?? defaults.spillAfterMs)
  /** In spill mode memory goes to disk this often: `flushMs`, at most a second. */
  const spillEveryMs = Math.min(flushMs, defaults.spillEveryMs)
  const { table, what } = target
  const dir = Path.resolve(options.spillDir)

  const { id: dirId, files: existing } = yield* Spill.open(dir)
  const runStart = clock.currentTimeMillisUnsafe()

  // State. Fibers interleave only at effect boundaries, so each synchronous block below is atomic.
  // The rows in memory and on disk, and their order: `ResultWriter/Buffer.ts`.
  const buf = new RowBuffer<Row>(batchRows, existing)
  let writtenRows = 0
  let writtenBatches = 0
  let failedAttempts = 0
  let rejectedFiles = 0
  let lastError: string | null = null
  let lastErrorAt: string | null = null
  let failing = false
  /** Since when the inserts have been failing or hanging: set as an attempt starts, cleared by a success. */
  let troubleSince: number | undefined
  let closing = false

  /** Something to insert (a batch sealed, or a first row that starts the flush timer). Sticky, so never missed. */
  const wake = yield* Queue.sliding<void>(1)
  yield* Metrics.gauges([
    [Metrics.bufferedRows, { table }, () => buf.buffered],
    [Metrics.spillRows, { table }, () => buf.spilledRows],
    [Metrics.spillFiles, { table }, () => buf.spilled.length]
  ])
  /** Cuts a retry backoff short: `flush` and shutdown. */
  const urgent = yield* Queue.sliding<void>(1)
  /** Completed (and replaced) whenever rows leave memory or disk; `flush` waits on it. */
  let progress = Deferred.makeUnsafe<void>()
  /** One spill at a time, so the memory bound is checked against settled state. */
  const spillLock = yield* Semaphore.make(1)

  const notifyProgress = () => {
    const done = progress
    progress = Deferred.makeUnsafe<void>()
    Deferred.doneUnsafe(done, Exit.void)
  }

  const append = (rows: ReadonlyArray<Row>) => {
    if (buf.append(rows, clock.currentTimeMillisUnsafe())) Queue.offerUnsafe(wake, undefined)
  }

  const spillName = (batch: Batch<Row>) => Spill.fileName(runStart, batch.seq, batch.rows.length)
  /** A memory batch's token is that of the file it would be spilled to, so a spill keeps it. */
  const batchToken = (batch: Batch<Row>) => Spill.tokenOf(dirId, spillName(batch))

  /** Inserts have been failing or hanging for `spillAfterMs`: memory goes to disk until one succeeds. */
  const spillMode = (now: number) => !closing && troubleSince !== undefined && now - troubleSince >= spillAfterMs

  /** Moves a memory batch to disk; on failure it goes back to the head of the queue. */
  const spillBatch = (batch: Batch<Row>) =>
    Effect.suspend(() => {
      buf.spillStarted(batch)
      return Spill.write(dir, spillName(batch), batch.rows)
    }).pipe(
      Effect.onExit((exit) =>
        Effect.sync(() => {
          if (Exit.isSuccess(exit)) {
            buf.spillSucceeded(batch, exit.value)
            Queue.offerUnsafe(wake, undefined)
          } else {
            buf.spillFailed(batch)
          }
          notifyProgress()
        })
      )
    )

  /** Writes rows straight to disk, all or nothing: files are listed only once every one is written. */
  const spillDirect = Effect.fnUntraced(function*(rows: ReadonlyArray<Row>) {
    const written: Array<Spilled> = []
    for (let i = 0; i < rows.length; i += batchRows) {
      const batch: Batch<Row> = { seq: buf.nextSeq(), rows: rows.slice(i, i + batchRows) }
      const result = yield* Effect.result(Spill.write(dir, spillName(batch), batch.rows))
      if (result._tag === "Failure") {
        for (const entry of written) yield* Effect.ignore(Spill.remove(dir, entry.file.name))
        return yield* Effect.fail(result.failure)
      }
      written.push({ seq: batch.seq, file: result.success })
    }
    for (const entry of written) buf.addSpilled(entry)
    if (written.length > 0) Queue.offerUnsafe(wake, undefined)
  })

  /** The slow path of `write`, under the spill lock: make room by spilling the oldest batches, then append. */
  const spillThenAppend = Effect.fnUntraced(function*(rows: ReadonlyArray<Row>) {
    if (!closing) {
      let spilledNow = 0
      while (!buf.fits(rows.length, memoryRows)) {
        if (buf.sealed.length === 0) buf.sealOpen()
        const victim = buf.sealed.shift()
        if (victim === undefined) break
        yield* spillBatch(victim)
        spilledNow += victim.rows.length
      }
      if (spilledNow > 0) {
        // Warn when spilling starts; each further spill is only worth a debug line.
        const log = buf.spilledRows === spilledNow ? Effect.logWarning : Effect.logDebug
        yield* log(`memory bound reached; ${what} spilled to disk`).pipe(
          Effect.annotateLogs({ rows: spilledNow, spilled_rows: buf.spilledRows, buffered_rows: buf.buffered, dir })
        )
      }
      if (buf.fits(rows.length, memoryRows)) return append(rows)
    }
    // Closing, or the rows do not fit even with only the batch being inserted left in memory.
    yield* spillDirect(rows)
  })

  const write = (rows: ReadonlyArray<Row>): Effect.Effect<void, Spill.ResultWriterError> =>
    rows.length === 0
      ? Effect.void
      : Effect.suspend(() => {
        if (!closing && buf.fits(rows.length, memoryRows)) {
          append(rows)
          return Effect.void
        }
        // Disk writes must not be cut in half by an interrupted caller: state is updated on their exit.
        return spillLock.withPermit(Effect.uninterruptible(Effect.suspend(() => spillThenAppend(rows))))
      })

  const recordFailure = (cause: Cause.Cause<unknown>) =>
    Effect.suspend(() => {
      failedAttempts++
      lastError = describe(cause)
      lastErrorAt = new Date(clock.currentTimeMillisUnsafe()).toISOString()
      if (failing) return Effect.void
      failing = true
      return Effect.logWarning("ClickHouse insert failed; keeping the rows and retrying").pipe(
        Effect.annotateLogs({ error: lastError, buffered_rows: buf.buffered, spilled_rows: buf.spilledRows })
      )
    })

  /**
   * One insert; `true` when it succeeded. Any failure (ClickHouseError, timeout, defect) counts.
   * `token` makes a repeated attempt harmless: an attempt that timed out may have landed.
   */
  const attempt = (rows: ReadonlyArray<Row>, token: string): Effect.Effect<boolean> => {
    let started = 0
    return Effect.suspend(() => {
      troubleSince ??= clock.currentTimeMillisUnsafe()
      started = performance.now()
      return ch.insert(table, rows as ReadonlyArray<Record<string, unknown>>, { token })
    }).pipe(
      Effect.timeout(insertTimeout),
      Effect.exit,
      Effect.flatMap((exit) => {
        const outcome = Exit.isSuccess(exit) ? "ok" : "failed"
        Metrics.observe(Metrics.insertSeconds, { table, outcome }, (performance.now() - started) / 1000)
        if (Exit.isSuccess(exit)) {
          Metrics.observe(Metrics.batchRows, { table }, rows.length)
          Metrics.count(Metrics.rowsWritten, { table }, rows.length)
          troubleSince = undefined
          writtenRows += rows.length
          writtenBatches++
          if (!failing) return Effect.succeed(true)
          failing = false
          return Effect.logInfo("ClickHouse inserts recovered").pipe(
            Effect.annotateLogs({ failed_attempts: failedAttempts }),
            Effect.as(true)
          )
        }
        if (Cause.hasInterruptsOnly(exit.cause)) return Effect.interrupt
        Metrics.count(Metrics.insertFailures, { table })
        return recordFailure(exit.cause).pipe(Effect.as(false))
      })
    )
  }

  /**
   * Inserts until it succeeds ("written"), the writer starts closing ("closing"), or, for a memory
   * batch (`spillable`), until the writer is in spill mode ("spill": the caller moves it to disk).
   */
  const insertWithRetry = Effect.fnUntraced(function*(rows: ReadonlyArray<Row>, token: string, spillable: boolean) {
    let delay = retryBaseMs
    while (true) {
      if (yield* attempt(rows, token)) return "written" as const
      if (closing) return "closing" as const
      const now = clock.currentTimeMillisUnsafe()
      if (spillable && spillMode(now)) return "spill" as const
      // Wake up when spill mode starts, not a whole backoff later.
      const untilSpill = spillable && troubleSince !== undefined ? troubleSince + spillAfterMs - now : delay
      yield* waitFor(urgent, Math.min(delay, Math.max(1, untilSpill)))
      if (closing) return "closing" as const
      if (spillable && spillMode(clock.currentTimeMillisUnsafe())) return "spill" as const
      delay = Math.min(delay * 2, retryMaxMs)
    }
  })

  const runMemory = Effect.fnUntraced(function*(batch: Batch<Row>) {
    const outcome = yield* insertWithRetry(batch.rows, batchToken(batch), true)
    if (outcome === "closing") return
    if (outcome === "spill") {
      // To disk under the same name (and so the same token), and retried from there.
      yield* spillLock.withPermit(Effect.uninterruptible(Effect.suspend(() => {
        buf.inflight = undefined
        return spillBatch(batch)
      }))).pipe(
        // Not written: the batch is back at the head of memory, tried again next.
        Effect.tapError((error) => Effect.logError(`could not spill ${what}`, error)),
        Effect.ignore
      )
      return
    }
    buf.inflightWritten()
    notifyProgress()
  })

  /** In spill mode, every `spillEveryMs`: the rows in memory go to disk (bounding what a SIGKILL loses). */
  const spillMemory = spillLock.withPermit(Effect.uninterruptible(Effect.gen(function*() {
    if (!spillMode(clock.currentTimeMillisUnsafe())) return
    buf.sealOpen()
    let rows = 0
    while (buf.sealed.length > 0) {
      const batch = buf.sealed.shift()!
      yield* spillBatch(batch)
      rows += batch.rows.length
    }
    if (rows > 0) {
      yield* Effect.logDebug(`ClickHouse failing; ${what} spilled to disk`).pipe(
        Effect.annotateLogs({ rows, spilled_rows: buf.spilledRows, dir })
      )
    }
  })))

  const spiller = spillMemory.pipe(
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.logError(`could not spill ${what}`, cause)
    ),
    Effect.andThen(Effect.sleep(Duration.millis(spillEveryMs))),
    Effect.forever
  )

  const runFile = Effect.fnUntraced(function*(entry: Spilled) {
    const path = Path.join(dir, entry.file.name)
    const read = yield* Effect.result(Spill.read(dir, entry.file.name, target.decodeRows))
    if (read._tag === "Failure") {
      // Retrying cannot fix a corrupt file; set it aside for a person and carry on with the others.
      yield* Effect.logError("unreadable spill file set aside as .rejected").pipe(
        Effect.annotateLogs({ path, error: describe(Cause.fail(read.failure.reason)) })
      )
      yield* Effect.ignore(Spill.reject(dir, entry.file.name))
      buf.removeSpilled(entry)
      rejectedFiles++
      notifyProgress()
      return
    }
    if ((yield* insertWithRetry(read.success, Spill.tokenOf(dirId, entry.file.name), false)) !== "written") return
    const removed = yield* Effect.result(Spill.remove(dir, entry.file.name))
    if (removed._tag === "Failure") {
      yield* Effect.logError("written spill file could not be deleted; its rows will be written again on restart")
        .pipe(Effect.annotateLogs({ path }))
    }
    buf.removeSpilled(entry)
    notifyProgress()
  })

  const flusher = Effect.gen(function*() {
    // `closing` is set by the shutdown finalizer, between steps.
    while (true) {
      if (closing) return
      const job = buf.nextJob(clock.currentTimeMillisUnsafe(), openBatchMs())
      const step = job._tag === "Wait"
        ? waitFor(wake, job.ms)
        : job._tag === "File"
        ? runFile(job.entry)
        : runMemory(job.batch)
      // A defect must not stop the writes for good: log it and carry on after a pause.
      yield* step.pipe(
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause)
            ? Effect.failCause(cause)
            : Effect.logError("result writer failed; continuing", cause).pipe(
              Effect.andThen(Effect.sleep(Duration.millis(retryMaxMs)))
            )
        )
      )
    }
  })

  /** Once each, in order, the batches still in memory; stops at the first failure. */
  const finalFlush = Effect.gen(function*() {
    buf.sealOpen()
    if (buf.inflight !== undefined) {
      if (!(yield* attempt(buf.inflight.rows, batchToken(buf.inflight)))) return
      buf.inflightWritten()
    }
    while (buf.sealed.length > 0) {
      const batch = buf.sealed[0]!
      if (!(yield* attempt(batch.rows, batchToken(batch)))) return
      buf.sealedHeadWritten()
    }
  })

  const spillRest = Effect.gen(function*() {
    const rest = buf.takeAll()
    let lost = 0
    for (const batch of rest) {
      const result = yield* Effect.result(Spill.write(dir, spillName(batch), batch.rows))
      if (result._tag === "Success") {
        buf.spillSucceeded(batch, result.success)
        Queue.offerUnsafe(wake, undefined)
      } else {
        buf.lost(batch)
        lost += batch.rows.length
      }
    }
    if (lost > 0) {
      yield* Effect.logError(`could neither write nor spill ${what} at shutdown; they are lost`).pipe(
        Effect.annotateLogs({ rows: lost, dir })
      )
    } else if (rest.length > 0) {
      yield* Effect.logInfo(`${what} spilled at shutdown; they are written on the next start`).pipe(
        Effect.annotateLogs({ rows: rest.reduce((n, b) => n + b.rows.length, 0), dir })
      )
    }
  })

  const shutdown = Effect.fn("ResultWriter.shutdown")(function*(fiber: Fiber.Fiber<void>) {
    const deadline = clock.currentTimeMillisUnsafe() + shutdownMs
    closing = true
    Queue.offerUnsafe(wake, undefined)
    Queue.offerUnsafe(urgent, undefined)
    // Let an insert in progress finish rather than abandon it (it could land and be spilled too).
    const done = yield* Fiber.await(fiber).pipe(Effect.timeoutOption(Duration.millis(shutdownMs)))
    if (Option.isNone(done)) yield* Fiber.interrupt(fiber)
    yield* spillLock.withPermit(Effect.gen(function*() {
      const left = deadline - clock.currentTimeMillisUnsafe()
      if (left > 0) yield* finalFlush.pipe(Effect.timeoutOption(Duration.millis(left)))
      yield* spillRest
      notifyProgress()
    }))
  })

  const fiber = yield* Effect.forkScoped(flusher)
  yield* Effect.forkScoped(spiller)
  yield* Effect.addFinalizer(() => shutdown(fiber))

  const flush = Effect.gen(function*() {
    const target = yield* Effect.sync(() => {
      buf.sealOpen()
      Queue.offerUnsafe(wake, undefined)
      Queue.offerUnsafe(urgent, undefined)
      return buf.lastSeq()
    })
    while (true) {
      // Checked and captured together, so a completion in between cannot be missed.
      const waitOn = yield* Effect.sync(() => buf.pendingUpTo(target, !closing) ? progress : undefined)
      if (waitOn === undefined) return
      yield* Deferred.await(waitOn)
    }
  })

  const stats = Effect.sync((): WriterStats => ({
    buffered_rows: buf.buffered,
    spilled_rows: buf.spilledRows,
    spilled_files: buf.spilled.length,
    written_rows: writtenRows,
    written_batches: writtenBatches,
    failed_attempts: failedAttempts,
    rejected_files: rejectedFiles,
    last_error: lastError,
    last_error_at: lastErrorAt
  }))

  if (existing.length > 0) {
    yield* Effect.logInfo(`replaying spilled ${what}`).pipe(
      Effect.annotateLogs({ files: existing.length, rows: buf.spilledRows, dir })
    )
  }

  return { write, flush, stats } satisfies BatchWriter<Row>
})
