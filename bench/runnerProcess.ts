import { Effect, Option, Schema } from "effect"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { freePort } from "./processes.ts"

const cli = Path.resolve(import.meta.dirname, "..", "bin", "statusgrid.js")

/** The figures of a runner's "poller stats" log line (`POLLER_STATS_LOG_MS`, services/poller/PollerStats.ts). */
export const RunnerStats = Schema.Struct({
  from_ms: Schema.Number,
  to_ms: Schema.Number,
  checks: Schema.Number,
  failures: Schema.Number,
  not_modified: Schema.Number,
  changes: Schema.Number,
  lag_p50_ms: Schema.Number,
  lag_p99_ms: Schema.Number,
  lag_max_ms: Schema.Number,
  lag_samples: Schema.Number,
  checks_since_start: Schema.Number,
  sources: Schema.Number,
  shards: Schema.Number,
  shard_starts: Schema.Number
})
export type RunnerStats = typeof RunnerStats.Type

/** A JSON log line of a statusgrid process (LOG_FORMAT=json). */
const LogLine = Schema.fromJsonString(Schema.Struct({
  message: Schema.Unknown,
  level: Schema.String,
  annotations: Schema.Record(Schema.String, Schema.Unknown)
}))
const decodeLogLine = Schema.decodeUnknownOption(LogLine)
const decodeStats = Schema.decodeUnknownOption(RunnerStats)
const UpAnnotations = Schema.Struct({ url: Schema.String })
const decodeUp = Schema.decodeUnknownOption(UpAnnotations)

/** What the benchmark reads in one line of a runner's stdout. */
export type RunnerLine =
  | { readonly kind: "up"; readonly url: string }
  | { readonly kind: "shard-started" }
  | { readonly kind: "stats"; readonly stats: RunnerStats }
  /** a "poller stats" line whose figures are not the ones expected: the runner and the benchmark disagree */
  | { readonly kind: "unreadable-stats"; readonly line: string }
  | { readonly kind: "log"; readonly level: string; readonly line: string }
  /** not a JSON log line */
  | { readonly kind: "text"; readonly line: string }

export const parseRunnerLine = (line: string): RunnerLine => {
  const decoded = decodeLogLine(line)
  if (Option.isNone(decoded)) return { kind: "text", line }
  const { message, level, annotations } = decoded.value
  if (message === "poller stats") {
    const stats = decodeStats(annotations)
    return Option.isSome(stats) ? { kind: "stats", stats: stats.value } : { kind: "unreadable-stats", line }
  }
  if (message === "shard started") return { kind: "shard-started" }
  if (typeof message === "string" && message.startsWith("statusgrid is up")) {
    const up = decodeUp(annotations)
    if (Option.isSome(up)) return { kind: "up", url: up.value.url }
  }
  return { kind: "log", level, line }
}

export interface RunnerProcess {
  /** 1, 2, … in the order they were started */
  readonly index: number
  readonly pid: number
  /** where it serves HTTP (/readyz, /metrics) */
  readonly url: string
  /** SIGTERM (a runner leaving the cluster), then its exit: not a failure */
  readonly stop: Effect.Effect<void>
  /** "shard started" lines so far */
  readonly shardStarts: () => number
  /** every "poller stats" line so far */
  readonly stats: () => ReadonlyArray<RunnerStats>
  /** why the runner is of no more use (it exited, or its stats cannot be read); undefined while it runs */
  readonly failed: () => string | undefined
}

/**
 * `statusgrid runner` (or `statusgrid http`) in its own process, with its own DATA_DIR (a temporary directory, removed
 * afterwards), HTTP and runner ports, and `env` over this process's environment; logs JSON at Info
 * on a pipe this process reads (its warnings and errors go on to stderr). Resolves once it serves
 * HTTP; stopped when the scope closes (SIGTERM, SIGKILL 30 s later).
 */
export const spawnRunner = Effect.fn("bench.spawnRunner")(function*(
  index: number,
  env: Record<string, string>,
  options: {
    /** `statusgrid http`: the HTTP server only (its "up" line is the same) */
    readonly command?: "runner" | "http"
    /** a port shared with others (HTTP_SHARE_PORT in `env`) */
    readonly port?: number
  } = {}
) {
  const command = options.command ?? "runner"
  const [port, runnerPort] = yield* Effect.promise(() => Promise.all([options.port ?? freePort(), freePort()]))
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), `statusgrid-bench-runner-${index}-`))
  let up: string | undefined
  let stopping = false
  let shardStarts = 0
  let failed: string | undefined
  const stats: Array<RunnerStats> = []
  let tail = ""
  const remember = (text: string) => {
    tail = (tail + text).slice(-4000)
  }
  const child = yield* Effect.acquireRelease(
    Effect.sync(() =>
      spawn(process.execPath, [cli, command], {
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          ...process.env,
          ...env,
          DATA_DIR: dataDir,
          HOST: "127.0.0.1",
          PORT: String(port),
          RUNNER_HOST: "127.0.0.1",
          RUNNER_PORT: String(runnerPort),
          LOG_FORMAT: "json",
          LOG_LEVEL: "Info"
        }
      })
    ),
    (child) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(kill)
            Fs.rmSync(dataDir, { recursive: true, force: true })
            resolve()
          }
          const kill = setTimeout(() => child.kill("SIGKILL"), 30_000)
          if (child.exitCode !== null || child.signalCode !== null) return done()
          child.once("exit", done)
          child.kill("SIGTERM")
        })
      )
  )
  let buffer = ""
  child.stdout.on("data", (chunk: Buffer) => {
    buffer += chunk.toString()
    let eol: number
    while ((eol = buffer.indexOf("\n")) !== -1) {
      const line = parseRunnerLine(buffer.slice(0, eol))
      buffer = buffer.slice(eol + 1)
      switch (line.kind) {
        case "up":
          up = line.url
          break
        case "shard-started":
          shardStarts++
          break
        case "stats":
          stats.push(line.stats)
          break
        case "unreadable-stats":
          failed ??= `${command} ${index} logged a "poller stats" line the benchmark cannot read: ${line.line}`
          break
        case "log":
          if (line.level !== "INFO" && line.level !== "DEBUG" && line.level !== "TRACE") {
            process.stderr.write(`[${command} ${index}] ${line.line}\n`)
            remember(line.line + "\n")
          }
          break
        case "text":
          remember(line.line + "\n")
      }
    }
  })
  child.stderr.on("data", (chunk: Buffer) => remember(chunk.toString()))
  child.once("exit", (code, signal) => {
    if (!stopping) failed ??= `${command} ${index} exited (${signal ?? code}); its last output: ${tail.trim()}`
  })
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once("exit", () => resolve())
  })

  const started = Date.now()
  // `up` is set by the stdout handler above.
  for (;;) {
    if (up !== undefined) break
    if (failed !== undefined) return yield* Effect.die(new Error(failed))
    if (Date.now() - started > 120_000) {
      return yield* Effect.die(new Error(`${command} ${index} did not serve HTTP within 120 s; its last output: ${tail.trim()}`))
    }
    yield* Effect.sleep("200 millis")
  }
  return {
    index,
    pid: child.pid!,
    url: up,
    stop: Effect.promise(() => {
      stopping = true
      child.kill("SIGTERM")
      return exited
    }),
    shardStarts: () => shardStarts,
    stats: () => stats,
    failed: () => failed
  } satisfies RunnerProcess
})
