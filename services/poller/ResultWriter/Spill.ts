import { Effect, Schema } from "effect"
import type { Scope } from "effect"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { takePidLock } from "../../platform/PidLock.ts"

/** The spill directory cannot be created or is owned by another live process. */
export class SpillDirUnavailable extends Schema.TaggedError<SpillDirUnavailable>()("SpillDirUnavailable", {
  path: Schema.String,
  message: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {}

/** A batch could not be written to disk; the rows were not accepted. */
export class SpillWriteFailed extends Schema.TaggedError<SpillWriteFailed>()("SpillWriteFailed", {
  path: Schema.String,
  rows: Schema.Number,
  cause: Schema.Defect()
}) {}

/** A spill file could not be read or decoded; it is set aside as `<name>.rejected`. */
export class SpillReadFailed extends Schema.TaggedError<SpillReadFailed>()("SpillReadFailed", {
  path: Schema.String,
  cause: Schema.Defect()
}) {}

/** A written spill file could not be deleted (it would be written again on the next start). */
export class SpillDeleteFailed extends Schema.TaggedError<SpillDeleteFailed>()("SpillDeleteFailed", {
  path: Schema.String,
  cause: Schema.Defect()
}) {}

/** The ResultWriter's one error. Only `SpillWriteFailed` reaches `write` callers. */
export class ResultWriterError extends Schema.TaggedError<ResultWriterError>()("ResultWriterError", {
  reason: Schema.Union([SpillDirUnavailable, SpillWriteFailed, SpillReadFailed, SpillDeleteFailed])
}) {}

/** One spilled batch: `<run start ms, 15 digits>-<seq, 10 digits>-<rows>.ndjson`, so names sort oldest first. */
export interface SpillFile {
  readonly name: string
  readonly rows: number
}

const filePattern = /^\d{15}-\d{10}-(\d+)\.ndjson$/
const lockName = "writer.lock"
const idName = "writer.id"
const idPattern = /^[0-9a-f]{16}$/
/** Spill directories open in this process (a lock file naming our own pid may be stale: containers reuse pids). */
const openHere = new Set<string>()

export const fileName = (runStartMs: number, seq: number, rows: number): string =>
  `${String(runStartMs).padStart(15, "0")}-${String(seq).padStart(10, "0")}-${rows}.ndjson`

/**
 * The `insert_deduplication_token` of a batch: the directory's id and the
 * batch's file name (the name it has in memory and keeps once spilled), so
 * a batch keeps its token through retries, a spill and a replay after a
 * restart, and no two directories share one.
 */
export const tokenOf = (dirId: string, name: string): string => `${dirId}-${name.replace(/\.ndjson$/, "")}`

/** The directory's id (`writer.id`), created on first use. */
const readOrCreateId = (dir: string): string => {
  const path = Path.join(dir, idName)
  try {
    const id = Fs.readFileSync(path, "utf8").trim()
    if (idPattern.test(id)) return id
  } catch (error) {
    if (errnoCode(error) !== "ENOENT") throw error
  }
  const id = randomBytes(8).toString("hex")
  Fs.writeFileSync(`${path}.tmp`, id, { mode: 0o600 })
  Fs.renameSync(`${path}.tmp`, path)
  return id
}

const errnoCode = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | undefined)?.code

const unavailable = (dir: string) => (cause: unknown) =>
  new ResultWriterError({
    reason: new SpillDirUnavailable({
      path: dir,
      message: cause instanceof Error ? cause.message : String(cause),
      cause
    })
  })

export interface OpenedDir {
  /** Random, kept in `writer.id`: the prefix of this directory's insert tokens. */
  readonly id: string
  /** Spill files left by earlier runs, oldest first. */
  readonly files: ReadonlyArray<SpillFile>
}

/**
 * Creates and locks `dir` for the scope's lifetime, removes temporary files
 * of a write that a crash interrupted (their batch was still in memory, so
 * it was lost with the process), and lists the spill files left by earlier
 * runs, oldest first.
 */
export const open = Effect.fn("Spill.open")(function*(dir: string): Effect.fn.Return<OpenedDir, ResultWriterError, Scope.Scope> {
  yield* Effect.try({
    try: () => Fs.mkdirSync(dir, { recursive: true, mode: 0o700 }),
    catch: unavailable(dir)
  })
  const lock = Path.join(dir, lockName)
  const key = Path.resolve(dir)
  yield* Effect.acquireRelease(
    Effect.try({
      try: () => {
        if (openHere.has(key)) throw new Error("the spill directory is already open in this process")
        // One process per spill directory: two writers replaying the same files would insert them twice.
        takePidLock(lock, (owner) =>
          `the spill directory is in use by process ${owner}; each process needs its own RESULTS_SPILL_DIR (or DATA_DIR)`)
        openHere.add(key)
      },
      catch: unavailable(dir)
    }),
    () =>
      Effect.sync(() => {
        openHere.delete(key)
        // Only remove the lock if it is still ours.
        try {
          if (Fs.readFileSync(lock, "utf8").trim() === String(process.pid)) Fs.rmSync(lock, { force: true })
        } catch {
          // already gone
        }
      })
  )
  return yield* Effect.try({
    try: () => {
      const files: Array<SpillFile> = []
      for (const name of Fs.readdirSync(dir).toSorted()) {
        if (name.endsWith(".tmp")) {
          Fs.rmSync(Path.join(dir, name), { force: true })
          continue
        }
        const match = filePattern.exec(name)
        if (match) files.push({ name, rows: Number(match[1]) })
      }
      return { id: readOrCreateId(dir), files }
    },
    catch: unavailable(dir)
  })
})

/**
 * Writes `rows` as NDJSON to `<dir>/<name>` durably: a temporary file,
 * fsync, rename, then fsync of the directory, so a listed file is complete.
 */
export const write = (
  dir: string,
  name: string,
  rows: ReadonlyArray<unknown>
): Effect.Effect<SpillFile, ResultWriterError> =>
  Effect.tryPromise({
    try: async () => {
      const path = Path.join(dir, name)
      const tmp = `${path}.tmp`
      let body = ""
      for (const row of rows) body += JSON.stringify(row) + "\n"
      const handle = await Fs.promises.open(tmp, "w", 0o600)
      try {
        await handle.writeFile(body, "utf8")
        await handle.sync()
      } finally {
        await handle.close()
      }
      try {
        await Fs.promises.rename(tmp, path)
      } catch (error) {
        await Fs.promises.rm(tmp, { force: true }).catch(() => undefined)
        throw error
      }
      await syncDir(dir)
      return { name, rows: rows.length }
    },
    catch: (cause) =>
      new ResultWriterError({
        reason: new SpillWriteFailed({ path: Path.join(dir, name), rows: rows.length, cause })
      })
  })

const syncDir = async (dir: string) => {
  // Best effort: makes the rename durable; not every platform can fsync a directory.
  try {
    const handle = await Fs.promises.open(dir, "r")
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
  } catch {
    // ignore
  }
}

/** The rows of a spill file, decoded and checked by `decodeRows` (which throws on a bad row). */
export const read = <Row>(
  dir: string,
  name: string,
  decodeRows: (input: ReadonlyArray<unknown>) => ReadonlyArray<Row>
): Effect.Effect<ReadonlyArray<Row>, ResultWriterError> =>
  Effect.tryPromise({
    try: async () => {
      const text = await Fs.promises.readFile(Path.join(dir, name), "utf8")
      const parsed: Array<unknown> = []
      for (const line of text.split("\n")) if (line.length > 0) parsed.push(JSON.parse(line))
      return decodeRows(parsed)
    },
    catch: (cause) => new ResultWriterError({ reason: new SpillReadFailed({ path: Path.join(dir, name), cause }) })
  })

/** Deletes a spill file once its rows are in ClickHouse; an already missing file is fine. */
export const remove = (dir: string, name: string): Effect.Effect<void, ResultWriterError> =>
  Effect.tryPromise({
    try: () => Fs.promises.rm(Path.join(dir, name), { force: true }),
    catch: (cause) => new ResultWriterError({ reason: new SpillDeleteFailed({ path: Path.join(dir, name), cause }) })
  })

/** Sets an unreadable spill file aside (`<name>.rejected`) so it no longer blocks the others. */
export const reject = (dir: string, name: string): Effect.Effect<void, ResultWriterError> =>
  Effect.tryPromise({
    try: () => Fs.promises.rename(Path.join(dir, name), Path.join(dir, `${name}.rejected`)),
    catch: (cause) => new ResultWriterError({ reason: new SpillDeleteFailed({ path: Path.join(dir, name), cause }) })
  })
