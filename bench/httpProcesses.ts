import { Effect, Schema } from "effect"
import { HttpServer } from "effect/http"
import { benchClickHouse } from "./clickhouseProcess.ts"
import { peakRssMb } from "./figures.ts"
import { freePort, procCpu, procPeakRss } from "./processes.ts"
import { spawnRunner } from "./runnerProcess.ts"

export class HttpProcessesBenchError extends Schema.TaggedError<HttpProcessesBenchError>()("HttpProcessesBenchError", {
  message: Schema.String
}) {}

/** Where a benchmark sends its load, and what serving it cost. */
export interface HttpTarget {
  readonly url: string
  /** `this process`, or how many `statusgrid http` processes share the port */
  readonly servers: "this process" | number
  /**
   * CPU seconds used so far by whatever serves (every thread; for "this process", the benchmark's own
   * work too, such as `bench api`'s autocannon worker thread)
   */
  readonly cpuSeconds: () => number
  /** the largest peak resident set of the serving processes, MiB */
  readonly peakRssMb: () => number
}

/**
 * `count` `statusgrid http` processes sharing one port (`HTTP_SHARE_PORT`, decision 0020), as
 * `HTTP_PROCESSES` runs them, on this process's `DATABASE_URL` and `REDIS_URL` and on `CLICKHOUSE_URL`
 * or else ClickHouse's HTTP interface over chDB in a process of its own, with `env` over the
 * environment; stopped when the scope closes. Each has its own DATA_DIR: `env` must carry a
 * `SECRETS_KEY` when the benchmark issues API keys.
 */
export const spawnHttpProcesses = Effect.fn("bench.spawnHttpProcesses")(function*(count: number, env: Record<string, string>) {
  const missing = ["DATABASE_URL", "REDIS_URL"].filter((name) => (process.env[name] ?? "") === "")
  if (missing.length > 0) {
    return yield* new HttpProcessesBenchError({
      message: `--http-processes needs ${missing.join(" and ")} set: the HTTP processes share the stores' servers`
    })
  }
  const port = yield* Effect.promise(freePort)
  const clickhouse = yield* benchClickHouse
  const childEnv = { ...env, CLICKHOUSE_URL: clickhouse.url, HTTP_SHARE_PORT: "true", HTTP_PROCESSES: "1" }
  const processes = []
  for (let i = 1; i <= count; i++) processes.push(yield* spawnRunner(i, childEnv, { command: "http", port }))
  const pids = processes.map((p) => p.pid)
  return {
    url: `http://127.0.0.1:${port}`,
    servers: count,
    cpuSeconds: () => pids.reduce((sum, pid) => sum + procCpu(pid), 0),
    peakRssMb: () => Math.max(...pids.map(procPeakRss))
  } satisfies HttpTarget
})

/** The API server this process serves (HttpServer), as the benchmarks ran before `--http-processes`. */
export const inProcessTarget = Effect.gen(function*() {
  const { address } = yield* HttpServer.HttpServer
  return {
    url: address._tag === "UnixPathAddress" ? "" : `http://127.0.0.1:${address.port}`,
    servers: "this process",
    cpuSeconds: () => {
      const used = process.cpuUsage()
      return (used.user + used.system) / 1e6
    },
    peakRssMb
  } satisfies HttpTarget
})
