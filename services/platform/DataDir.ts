import { Config, Context, Effect, Layer, Schema } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { takePidLock } from "./PidLock.ts"

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

const acquireLock = (lock: string) =>
  Effect.try({
    try: () => {
      takePidLock(lock, (owner) =>
        `the data directory is in use by process ${owner}; embedded stores allow one process per DATA_DIR ` +
        `(stop it, choose another DATA_DIR, or set DATABASE_URL/CLICKHOUSE_URL to use servers)`)
      return lock
    },
    catch: (cause) => new DataDirError({ message: cause instanceof Error ? cause.message : String(cause), cause })
  })
