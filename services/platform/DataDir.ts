import { Config, Context, Effect, Layer, Schema } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"

export class DataDirError extends Schema.TaggedError<DataDirError>()("DataDirError", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {}

/**
 * The directory that holds the embedded stores (PGlite, chDB). Embedded stores
 * allow one process per data path, so the layer takes an exclusive lock file
 * and refuses a second process with a clear error instead of corrupting data.
 */
export class DataDir extends Context.Service<DataDir, {
  readonly path: string
  readonly sub: (name: string) => string
}>()("statusgrid/platform/DataDir") {
  static readonly layer = Layer.effect(
    DataDir,
    Effect.gen(function*() {
      const raw = yield* Config.String("DATA_DIR").pipe(Config.withDefault("./data"))
      const path = Path.resolve(raw)
      yield* Effect.try({
        try: () => Fs.mkdirSync(path, { recursive: true, mode: 0o700 }),
        catch: (cause) => new DataDirError({ message: `cannot create DATA_DIR ${path}`, cause })
      })
      yield* Effect.acquireRelease(acquireLock(Path.join(path, "statusgrid.lock")), (lock) =>
        Effect.sync(() => Fs.rmSync(lock, { force: true })))
      return DataDir.of({
        path,
        sub: (name) => {
          const dir = Path.join(path, name)
          Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
          return dir
        }
      })
    })
  )
}

const pidAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const acquireLock = (lock: string) =>
  Effect.try({
    try: () => {
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          Fs.writeFileSync(lock, String(process.pid), { flag: "wx" })
          return lock
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
          const owner = Number(Fs.readFileSync(lock, "utf8").trim())
          if (Number.isInteger(owner) && owner !== process.pid && pidAlive(owner)) {
            throw new Error(
              `the data directory is in use by process ${owner}; embedded stores allow one process per DATA_DIR ` +
                `(stop it, choose another DATA_DIR, or set DATABASE_URL/CLICKHOUSE_URL to use servers)`,
              { cause: error }
            )
          }
          Fs.rmSync(lock, { force: true })
        }
      }
      throw new Error(`could not take the lock ${lock}`)
    },
    catch: (cause) => new DataDirError({ message: cause instanceof Error ? cause.message : String(cause), cause })
  })
