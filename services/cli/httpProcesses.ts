import { Clock, Config, Effect, Layer, Option, Schema } from "effect"
import { HttpServer } from "effect/http"
import * as ChildProcess from "node:child_process"
import * as Path from "node:path"
import { ListenConfig } from "../api/Http.ts"

/**
 * More HTTP processes on the port of this one (decision 0020): with `HTTP_PROCESSES=N` a serving
 * process (`start`, `runner`) starts N-1 `statusgrid http` processes listening on its port with
 * `SO_REUSEPORT`, so that the kernel spreads new connections over N event loops. They serve the same
 * routes on the same stores; the pollers, the notifier and the workers stay in the process that
 * started them. A process that exits is started again (after 1 s, doubling to 30 s while it keeps
 * exiting within a minute); they are stopped (SIGTERM, SIGKILL after 10 s) when this process stops,
 * and they stop on their own when it is gone (`STATUSGRID_PARENT_PID`).
 */

const cli = Path.resolve(import.meta.dirname, "..", "..", "bin", "statusgrid.js")

/** The stores every process of a deployment must share: embedded ones belong to one process. */
const serverStores = ["DATABASE_URL", "REDIS_URL", "CLICKHOUSE_URL"] as const

export class HttpProcessesError extends Schema.TaggedError<HttpProcessesError>()("HttpProcessesError", {
  message: Schema.String
}) {}

/** Fails unless every store is a server (`what` names the command or setting that needs them). */
export const requireServerStores = (what: string) =>
  Effect.gen(function*() {
    const missing: Array<string> = []
    for (const name of serverStores) {
      const value = yield* Config.option(Config.String(name)).pipe(Effect.orDie)
      if (Option.isNone(value) || value.value === "") missing.push(name)
    }
    if (missing.length > 0) {
      return yield* new HttpProcessesError({
        message: `${what} needs ${missing.join(", ")} set: the embedded stores belong to one process (README, Configuration)`
      })
    }
  })

type Ended = { readonly code: number | null; readonly signal: string | null } | { readonly error: string }

/**
 * Where HTTP process `index` keeps the changes it could not hand to Redis: beside this process's
 * (`PUBLISH_SPILL_DIR`, default `DATA_DIR/handover`), since a directory belongs to one process. The
 * rest of `DATA_DIR` is shared as it is (the generated secrets key and Web Push keys are read from it).
 */
const spillDirOf = (index: number) =>
  Effect.gen(function*() {
    const named = yield* Config.option(Config.String("PUBLISH_SPILL_DIR")).pipe(Effect.orDie)
    const dataDir = yield* Config.String("DATA_DIR").pipe(Config.withDefault("./data"), Effect.orDie)
    return `${Path.resolve(Option.getOrElse(named, () => Path.join(dataDir, "handover")))}-http-${index}`
  })

/** One `statusgrid http` process on `port`, until it exits (its exit) or the fiber is interrupted (stopped). */
const runOnce = (index: number, port: number, spillDir: string) =>
  Effect.callback<Ended>((resume) => {
    const child = ChildProcess.spawn(process.execPath, [...process.execArgv, cli, "http"], {
      env: {
        ...process.env,
        PORT: String(port),
        HTTP_SHARE_PORT: "true",
        HTTP_PROCESSES: "1",
        HTTP_PROCESS_INDEX: String(index),
        PUBLISH_SPILL_DIR: spillDir,
        STATUSGRID_PARENT_PID: String(process.pid)
      },
      stdio: ["ignore", "inherit", "inherit"]
    })
    child.once("error", (e) => resume(Effect.succeed({ error: e.message })))
    child.once("exit", (code, signal) => resume(Effect.succeed({ code, signal })))
    return Effect.callback<void>((stopped) => {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return stopped(Effect.void)
      const kill = setTimeout(() => child.kill("SIGKILL"), 10_000)
      child.once("exit", () => {
        clearTimeout(kill)
        stopped(Effect.void)
      })
      child.kill("SIGTERM")
    })
  })

/** Keeps HTTP process `index` running, started again with a growing delay while it keeps failing. */
const supervise = (index: number, port: number) =>
  Effect.gen(function*() {
    const spillDir = yield* spillDirOf(index)
    let quickExits = 0
    for (;;) {
      const started = yield* Clock.currentTimeMillis
      const ended = yield* runOnce(index, port, spillDir)
      const ranMs = (yield* Clock.currentTimeMillis) - started
      quickExits = ranMs > 60_000 ? 1 : quickExits + 1
      const retryMs = Math.min(30_000, 1000 * 2 ** (quickExits - 1))
      yield* Effect.logWarning("an HTTP process ended; starting it again").pipe(
        Effect.annotateLogs({ http_process: index, ...ended, ran_ms: ranMs, retry_in_ms: retryMs })
      )
      yield* Effect.sleep(retryMs)
    }
  })

/**
 * `HTTP_PROCESSES - 1` HTTP processes on this process's port, once it listens. Nothing with
 * `HTTP_PROCESSES` at 1.
 */
export const layer = Layer.effectDiscard(Effect.gen(function*() {
  const { processes } = yield* ListenConfig
  if (processes <= 1) return
  yield* requireServerStores(`HTTP_PROCESSES=${processes}`)
  const { address } = yield* HttpServer.HttpServer
  if (address._tag === "UnixPathAddress") return
  for (let index = 1; index < processes; index++) yield* Effect.forkScoped(supervise(index, address.port))
  yield* Effect.logInfo("HTTP processes started beside this one").pipe(
    Effect.annotateLogs({ http_processes: processes, port: address.port })
  )
}))

/**
 * In a process started by another (`STATUSGRID_PARENT_PID`): completes once that process is gone (its
 * parent changed), checked every second, so that an HTTP process does not outlive a killed parent.
 */
export const parentGone = Effect.gen(function*() {
  const parent = yield* Config.option(Config.Int("STATUSGRID_PARENT_PID")).pipe(Effect.orDie)
  if (Option.isNone(parent)) return yield* Effect.never
  yield* Effect.sleep("1 second").pipe(Effect.repeat({ until: () => process.ppid !== parent.value }))
  yield* Effect.logWarning("the process that started this one is gone; stopping")
})
