import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Os from "node:os"
import * as Catalog from "../services/catalog/Catalog.ts"
import * as Migrations from "../services/platform/Migrations.ts"
import * as Postgres from "../services/platform/Postgres.ts"
import { nextBoundary } from "../services/poller/Poller.ts"
import { benchClickHouse, storedRowsReaching } from "./clickhouseProcess.ts"
import { round } from "./figures.ts"
import { cpuByPid, cpuUsedBetween, groupCpu, procCpu, procPeakRss } from "./processes.ts"
import { runnerChurn } from "./runnerChurn.ts"
import { type RunnerProcess, type RunnerStats, spawnRunner } from "./runnerProcess.ts"
import { spawnSimulator } from "./simulatorProcess.ts"

export interface PollerRunnersBenchOptions {
  readonly runners: number
  readonly sources: number
  readonly durationS: number
  readonly intervalS: number
  /** at least this many seconds of checks before measuring (the window starts at the next multiple of durationS) */
  readonly warmupS: number
  readonly shards: number
  /** POLL_PER_HOST_CONCURRENCY of the runners */
  readonly perHostConcurrency: string
  readonly databaseUrl: string
  readonly redisUrl: string
  /** then a runner leaves and another joins (bench/runnerChurn.ts) */
  readonly churn?: boolean | undefined
}

/** A benchmark that cannot run as asked (its message says why). */
export class RunnersBenchError extends Schema.TaggedError<RunnersBenchError>()("RunnersBenchError", {
  message: Schema.String
}) {}

/** The database a PostgreSQL URL names, whose backends' titles name it too. */
const databaseOf = (url: string) => {
  try {
    return decodeURIComponent(new URL(url).pathname.slice(1)) || "postgres"
  } catch {
    return "postgres"
  }
}

/** CPU seconds so far of every process the benchmark accounts for. */
const cpuReading = (runners: ReadonlyArray<RunnerProcess>, simulatorCpu: () => number, database: string, clickhousePid: number | undefined) => {
  const own = process.cpuUsage()
  return {
    at: performance.now(),
    runners: runners.map((r) => procCpu(r.pid)),
    simulator: simulatorCpu(),
    clickhouse: clickhousePid === undefined ? 0 : procCpu(clickhousePid),
    // The whole server, other databases' work included (the machine may be shared).
    postgres: groupCpu("postgres"),
    // Backends titled `postgres: <cluster>: <user> <database> <client> <activity>`.
    // Backends that end meanwhile (a runner leaving) are not counted: no parent process of theirs is the database's.
    postgresDatabase: cpuByPid("postgres", (cmdline) => cmdline.split(" ").includes(database)),
    redis: groupCpu("redis-server"),
    bench: (own.user + own.system) / 1e6
  }
}

/** Sleeps until the wall clock reads `epochMs`. */
const sleepUntil = (epochMs: number) => Effect.suspend(() => Effect.sleep(Math.max(0, epochMs - Date.now())))

/**
 * `statusgrid bench poller --runners N`: the simulator in its own process and N `statusgrid runner`
 * processes sharing the poller shards through PostgreSQL and Redis, and writing to one ClickHouse:
 * CLICKHOUSE_URL's, or else ClickHouse's HTTP interface over chDB in a process of its own
 * (bench/clickhouseProcess.ts; its CPU is counted beside the runners', and its rows against their checks). Each runner logs its figures every `durationS` seconds, at multiples
 * of it on the wall clock (POLLER_STATS_LOG_MS); the window measured is the first such period after
 * the warm-up, the same for every runner, over which this process reads the CPU of the runners, the
 * simulator, PostgreSQL and Redis from /proc.
 */
export const runPollerRunnersBench = Effect.fn("bench.pollerRunners")(function*(options: PollerRunnersBenchOptions) {
  const periodMs = options.durationS * 1000
  const sim = yield* spawnSimulator({ sources: options.sources, latency: "50-500", errorRate: 0.01 })
  yield* Effect.gen(function*() {
    yield* Migrations.migratePostgres()
    // Benchmarks keep their synthetic sources: exactly these N are enabled, whatever the database held.
    yield* Catalog.enableSynthetic(Catalog.syntheticEntries(options.sources, sim.url))
    // In a database used before, the last checks it holds would make the first ones a catch-up burst:
    // forgotten, they spread over one interval, as on a fresh installation (the in-process bench's).
    const sql = yield* SqlClient
    yield* sql`DELETE FROM source_checks c USING sources s WHERE s.id = c.source_id AND s.synthetic`
  }).pipe(Effect.provide(Postgres.layerServer(options.databaseUrl, { maxConnections: 2 })))

  // One ClickHouse for every runner, as in production: the one named, or chDB behind HTTP in its own process.
  const { url: clickhouseUrl, process: clickhouse } = yield* benchClickHouse
  const env = {
    CLICKHOUSE_URL: clickhouseUrl,
    DATABASE_URL: options.databaseUrl,
    REDIS_URL: options.redisUrl,
    POLLER_SHARDS: String(options.shards),
    POLLER_INTERVAL_OVERRIDE_S: String(options.intervalS),
    POLL_PER_HOST_CONCURRENCY: options.perHostConcurrency,
    POLLER_STATS_LOG_MS: String(periodMs)
  }
  // One after another: the first creates the cluster's tables, the others join it.
  const runners: Array<RunnerProcess> = []
  for (let i = 1; i <= options.runners; i++) runners.push(yield* spawnRunner(i, env))
  const alive = Effect.suspend(() => {
    const failure = runners.map((r) => r.failed()).find((f) => f !== undefined)
    return failure === undefined ? Effect.void : Effect.die(new Error(failure))
  })

  // Every shard started somewhere, and every runner holds some (the cluster spreads them as runners join).
  const placing = Date.now()
  for (;;) {
    yield* alive
    const starts = runners.map((r) => r.shardStarts())
    if (starts.reduce((a, b) => a + b, 0) >= options.shards && starts.every((n) => n > 0 || options.runners > options.shards)) break
    if (Date.now() - placing > 120_000) {
      return yield* Effect.die(new Error(`shards not placed within 120 s (shard starts per runner: ${starts.join(", ")})`))
    }
    yield* Effect.sleep("500 millis")
  }
  const placedS = (Date.now() - placing) / 1000

  // The warm-up, then up to one period more: the window is one whole period of the runners' stats lines.
  const from = nextBoundary(Date.now() + options.warmupS * 1000, periodMs)
  const to = from + periodMs
  const database = databaseOf(options.databaseUrl)
  yield* sleepUntil(from)
  yield* alive
  const before = cpuReading(runners, sim.cpuSeconds, database, clickhouse?.pid)
  yield* sleepUntil(to)
  const after = cpuReading(runners, sim.cpuSeconds, database, clickhouse?.pid)
  const seconds = (after.at - before.at) / 1000

  // Each runner's line for the window (logged at its end), and the one before it (shard starts).
  const lineFor = (r: RunnerProcess, endMs: number) =>
    r.stats().find((s) => Math.abs(s.to_ms - endMs) < periodMs / 2 && Math.abs(s.from_ms - (endMs - periodMs)) < periodMs / 2)
  const waiting = Date.now()
  while (runners.some((r) => lineFor(r, to) === undefined)) {
    yield* alive
    if (Date.now() - waiting > 15_000) {
      const missing = runners.filter((r) => lineFor(r, to) === undefined).map((r) => r.index)
      return yield* Effect.die(new Error(`no "poller stats" line for the window from runner(s) ${missing.join(", ")}`))
    }
    yield* Effect.sleep("200 millis")
  }

  const perRunner = runners.map((r, i) => {
    const line: RunnerStats = lineFor(r, to)!
    const previous = lineFor(r, from)
    const cpuS = after.runners[i]! - before.runners[i]!
    const checksPerS = line.checks / ((line.to_ms - line.from_ms) / 1000)
    return {
      checksPerS,
      runner: r.index,
      pid: r.pid,
      checks: line.checks,
      checks_per_s: round(checksPerS),
      failures: line.failures,
      lag_ms: { p50: round(line.lag_p50_ms), p99: round(line.lag_p99_ms), max: round(line.lag_max_ms) },
      cpu_s: round(cpuS),
      cores: round(cpuS / seconds),
      cpu_ms_per_check: line.checks > 0 ? round((cpuS * 1000) / line.checks, 3) : null,
      shards: line.shards,
      sources: line.sources,
      shard_starts: line.shard_starts,
      ...(previous === undefined ? {} : { shard_starts_in_window: line.shard_starts - previous.shard_starts }),
      peak_rss_mb: procPeakRss(r.pid)
    }
  })
  // Each stats period before the window, the runners together (lag: the worst runner's): how long the
  // first interval's full reads (no validators yet, every page parsed) take to drain.
  const periodOf = (s: RunnerStats) => Math.round(s.to_ms / periodMs)
  const warmup = [...new Set(runners.flatMap((r) => r.stats().map(periodOf)))]
    .filter((period) => period * periodMs > placing && period < Math.round(to / periodMs))
    .toSorted((a, b) => a - b)
    .map((period) => {
      const lines = runners.flatMap((r) => r.stats().filter((s) => periodOf(s) === period))
      const made = lines.reduce((sum, s) => sum + s.checks, 0)
      return {
        ended_s: round((period * periodMs - placing) / 1000, 1),
        checks_per_s: round(lines.reduce((sum, s) => sum + s.checks / Math.max(0.001, (s.to_ms - s.from_ms) / 1000), 0)),
        not_modified_share: made > 0 ? round(lines.reduce((sum, s) => sum + s.not_modified, 0) / made, 3) : null,
        lag_p99_ms: round(Math.max(...lines.map((s) => s.lag_p99_ms)))
      }
    })
  const checks = perRunner.reduce((sum, r) => sum + r.checks, 0)
  // Every check is one row (decision 0016): within a flush interval over the runner's share (decision
  // 0021) the rows stored cover every check made up to the window's end (and some made since).
  const checksSinceStart = runners.reduce((sum, r) => sum + (lineFor(r, to)?.checks_since_start ?? 0), 0)
  const stored = clickhouse === undefined ? null : yield* storedRowsReaching(clickhouse.direct, checksSinceStart)
  const rowsStored = stored === null ? null : stored.stored ?? 0
  const runnersCpuS = after.runners.reduce((sum, cpu, i) => sum + cpu - before.runners[i]!, 0)
  const cores = (a: number, b: number) => round((b - a) / seconds)
  if (options.churn === true && clickhouse === undefined) {
    return yield* new RunnersBenchError({ message: "--churn reads the rows from the benchmark's own ClickHouse: leave CLICKHOUSE_URL unset" })
  }
  const churn = options.churn === true && clickhouse !== undefined
    ? yield* runnerChurn(runners, spawnRunner(runners.length + 1, env), { intervalS: options.intervalS, clickhouse: clickhouse.direct }).pipe(
      Effect.map(({ joined: _, ...figures }) => figures)
    )
    : undefined
  return {
    bench: "poller",
    runners: options.runners,
    sources: options.sources,
    interval_s: options.intervalS,
    shards: options.shards,
    duration_s: round(seconds, 1),
    window: { from: new Date(from).toISOString(), to: new Date(to).toISOString() },
    shards_placed_s: round(placedS, 1),
    target_checks_per_s: round(options.sources / options.intervalS),
    checks_per_s: round(perRunner.reduce((sum, r) => sum + r.checksPerS, 0)),
    checks,
    failures: perRunner.reduce((sum, r) => sum + r.failures, 0),
    // Percentiles do not add up across runners: the worst runner's.
    lag_ms_worst_runner: {
      p50: Math.max(...perRunner.map((r) => r.lag_ms.p50)),
      p99: Math.max(...perRunner.map((r) => r.lag_ms.p99)),
      max: Math.max(...perRunner.map((r) => r.lag_ms.max))
    },
    cpu_s: round(runnersCpuS),
    cpu_ms_per_check: checks > 0 ? round((runnersCpuS * 1000) / checks, 3) : null,
    per_runner: perRunner.map(({ checksPerS: _, ...figures }) => figures),
    warmup_periods: warmup,
    clickhouse: clickhouse === undefined ? "CLICKHOUSE_URL" : "one chDB server process (bench/clickhouseServer.ts)",
    ...(rowsStored === null ? {} : {
      checks_to_window_end: checksSinceStart,
      rows_stored: rowsStored,
      rows_stored_after_s: stored?.afterS ?? null,
      every_check_stored: rowsStored >= checksSinceStart
    }),
    cores_used: {
      runners: round(runnersCpuS / seconds),
      simulator: cores(before.simulator, after.simulator),
      clickhouse: cores(before.clickhouse, after.clickhouse),
      postgres: cores(before.postgres, after.postgres),
      redis: cores(before.redis, after.redis),
      postgres_bench_database: round(cpuUsedBetween(before.postgresDatabase, after.postgresDatabase) / seconds),
      bench: cores(before.bench, after.bench)
    },
    cores_available: Os.availableParallelism(),
    simulator_peak_rss_mb: sim.peakRssMb(),
    ...(churn === undefined ? {} : { churn })
  }
})
