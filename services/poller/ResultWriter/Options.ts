import { Config, Effect, Option, Schema } from "effect"
import { positiveInt } from "../../platform/Settings.ts"
import * as Path from "node:path"

/** The batching writers' settings (`../ResultWriter.ts`) and what they report. */

/** What the writer holds and has done since it started (this process only). */
export const WriterStats = Schema.Struct({
  /** rows in memory, not yet in ClickHouse (including a batch being inserted) */
  buffered_rows: Schema.Number,
  /** rows in spill files on disk, not yet in ClickHouse */
  spilled_rows: Schema.Number,
  spilled_files: Schema.Number,
  written_rows: Schema.Number,
  /** successful inserts */
  written_batches: Schema.Number,
  /** failed insert attempts (each retry counts) */
  failed_attempts: Schema.Number,
  /** unreadable spill files set aside as `<name>.rejected` */
  rejected_files: Schema.Number,
  last_error: Schema.NullOr(Schema.String),
  /** ISO 8601 */
  last_error_at: Schema.NullOr(Schema.String)
})
export type WriterStats = typeof WriterStats.Type

export interface ResultWriterOptions {
  /** Where batches go when memory is full or at shutdown; replayed on start. One process per directory. */
  readonly spillDir: string
  /** Rows per insert; a full batch is inserted at once. Default 10,000. */
  readonly batchRows?: number
  /**
   * A partial batch is inserted this long after its oldest row arrived, divided by `share`. Default
   * 5,000 for check results, 1,000 for status transitions (decision 0021).
   */
  readonly flushMs?: number
  /**
   * This process's share (0 to 1) of the rows the whole cluster writes to the table: the poller
   * shards it runs over all shards. A partial batch waits `flushMs ÷ share` (at most
   * `maxShareFactor × flushMs`), so that ClickHouse gets about one insert per `flushMs` from the
   * whole cluster, however many runners share the shards: each insert is a part ClickHouse must
   * merge, and two runners inserting every second doubled its merges. Default: always 1.
   */
  readonly share?: () => number
  /** Most rows held in memory; past it whole batches are spilled to disk. Default 200,000. */
  readonly memoryRows?: number
  /** First retry delay after a failed insert, doubling up to `retryMaxMs`. Default 200. */
  readonly retryBaseMs?: number
  /** Default 10,000. */
  readonly retryMaxMs?: number
  /**
   * Once inserts have been failing (or one has been hanging) this long, the
   * rows in memory go to disk every `flushMs` until an insert succeeds, so
   * that a process killed during a ClickHouse outage loses only the last
   * seconds of rows. Default 3,000.
   */
  readonly spillAfterMs?: number
  /** An insert taking longer counts as failed (and is retried). Default 30,000. */
  readonly insertTimeoutMs?: number
  /** How long the final flush may take when the layer closes, before the rest is spilled. Default 5,000. */
  readonly shutdownMs?: number
  /** Default "check_results". */
  readonly table?: string
}

/** The longest a partial batch waits, in `flushMs`, however small this process's share. */
export const maxShareFactor = 8

export const defaults = {
  batchRows: 10_000,
  flushMs: 5_000,
  /** Status transitions are few and are the record of durations: inserted sooner (decision 0021). */
  transitionsFlushMs: 1_000,
  /** While inserts fail, memory goes to disk at least this often, whatever `flushMs` is. */
  spillEveryMs: 1_000,
  memoryRows: 200_000,
  retryBaseMs: 200,
  retryMaxMs: 10_000,
  spillAfterMs: 3_000,
  insertTimeoutMs: 30_000,
  shutdownMs: 5_000,
  table: "check_results"
} as const

/** `TRANSITIONS_FLUSH_MS`: how long a partial batch of status transitions waits (`TransitionWriter`). */
export const transitionsFlushMs = positiveInt("TRANSITIONS_FLUSH_MS", defaults.transitionsFlushMs)

/** The writers' settings from the environment (`ResultWriter.layer`); other tables' writers reuse them. */
export const optionsFromConfig = Effect.gen(function*() {
  const spillDir = yield* Config.option(Config.String("RESULTS_SPILL_DIR"))
  const dataDir = yield* Config.String("DATA_DIR").pipe(Config.withDefault("./data"))
  return {
    spillDir: Option.getOrElse(spillDir, () => Path.join(dataDir, "spill")),
    batchRows: yield* positiveInt("RESULTS_BATCH_ROWS", defaults.batchRows),
    flushMs: yield* positiveInt("RESULTS_FLUSH_MS", defaults.flushMs),
    memoryRows: yield* positiveInt("RESULTS_MEMORY_ROWS", defaults.memoryRows),
    insertTimeoutMs: yield* positiveInt("RESULTS_INSERT_TIMEOUT_MS", defaults.insertTimeoutMs),
    shutdownMs: yield* positiveInt("RESULTS_SHUTDOWN_MS", defaults.shutdownMs),
    spillAfterMs: yield* positiveInt("RESULTS_SPILL_AFTER_MS", defaults.spillAfterMs)
  } satisfies ResultWriterOptions
})
