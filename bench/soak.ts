import { PgClient } from "@effect/sql-pg"
import { ConfigProvider, Effect, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { SqlClient } from "effect/sql/SqlClient"
import { Redis } from "ioredis"
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import type * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import * as Catalog from "../services/catalog/Catalog.ts"
import { syntheticSpecs } from "../services/catalog/Synthetic.ts"
import { componentFormats, featuredOf } from "../services/demo/Demo.ts"
import type { StatusEvent } from "../services/domain/Event.ts"
import { componentTrigger } from "../services/notifier/Candidate.ts"
import * as Migrations from "../services/platform/Migrations.ts"
import * as Postgres from "../services/platform/Postgres.ts"
import { RedisKeys } from "../services/platform/RedisKeys.ts"
import { SecretBox } from "../services/platform/SecretBox.ts"
import { nextBoundary } from "../services/poller/Poller.ts"
import { spawnClickHouse, storedRows } from "./clickhouseProcess.ts"
import * as FaultProxy from "./faultProxy.ts"
import { bucketsOf, byLabel, type Scrape, scrape, valueOrNull } from "./prometheus.ts"
import { percentile, round } from "./figures.ts"
import { insertMonitors, spawnTarget } from "./monitors.ts"
import { flipTriggers, insertFlipRule, receiver } from "./notify.ts"
import { childPids, freePort, groupCpu, machineBusyCpu, procCmdline, procCpu, procPeakRss, procRss } from "./processes.ts"
import { parseRunnerLine, type RunnerStats } from "./runnerProcess.ts"
import type { ProbeReading } from "./soakProbe.ts"

/**
 * `statusgrid bench soak` (issue #19): statusgrid as it runs for a long time. `statusgrid start --demo`
 * in its own process on three store servers, each behind a TCP fault proxy in this process:
 * PostgreSQL (a fresh database), Redis (a database flushed first), and ClickHouse's HTTP interface over
 * chDB (bench/clickhouseServer.ts, its own process). The demo world at N synthetic sources (the real
 * catalog is loaded but disabled: no traffic leaves the machine), M website monitors against a local
 * target (bench/monitorTarget.ts), and the notifier with one rule sending component flips of a few
 * sources to a webhook receiver in this process. Every period (a minute) this process flips some of
 * those components in the simulator, cuts one store at a time for a few seconds (`outagePlan`), and
 * prints one JSON line of figures on stderr; at the end, after waiting for deliveries and rows to catch
 * up, one summary line (printed by the command).
 *
 * Figures come from two sides, so that each checks the other: the process's `/metrics` (families in
 * `metricFamilies`; null where a family is absent) and what this process measures itself: RSS from
 * /proc, the event loop through a probe loaded into the process (bench/soakProbe.ts), checks and lag
 * from its "poller stats" log line, rows counted in ClickHouse, events on `sg:events`, deliveries at
 * the receiver, the outbox in PostgreSQL, spill files on disk.
 */

export interface SoakOptions {
  /** minutes measured, after the warm-up */
  readonly minutes: number
  /** synthetic sources of the demo world (DEMO_SOURCES), each at its check class's interval */
  readonly sources: number
  readonly monitors: number
  readonly monitorIntervalS: number
  /** seconds per report line: the poller's stats period (POLLER_STATS_LOG_MS), flips happen at its start */
  readonly periodS: number
  /** at least this many seconds between statusgrid being up and the first period */
  readonly warmupS: number
  /** seconds each store is cut for (0: no outages) */
  readonly outageS: number
  /** sources whose components this benchmark flips (and the rule watches) */
  readonly flipSources: number
  /** components flipped at the start of each period */
  readonly flips: number
  /** at most this many seconds after the last period for deliveries and rows to catch up */
  readonly settleS: number
  /** a PostgreSQL server (any database on it): the benchmark creates its own database there and drops it after */
  readonly postgresUrl: string
  /** a Redis database, flushed at the start */
  readonly redisUrl: string
}

/**
 * The Prometheus families read from `/metrics`, in one place (services/platform/Metrics.ts names
 * them). A family the process does not serve is null in the figures.
 */
export const metricFamilies = {
  checks: "statusgrid_checks_total",
  scheduleLag: "statusgrid_schedule_lag_seconds",
  rowsWritten: "statusgrid_clickhouse_rows_written_total",
  spillRows: "statusgrid_clickhouse_spill_rows",
  eventsPublished: "statusgrid_bus_events_published_total",
  publishFailures: "statusgrid_bus_publish_failures_total",
  deliveries: "statusgrid_deliveries_total",
  outboxDepth: "statusgrid_outbox_depth",
  residentMemory: "process_resident_memory_bytes",
  eventLoopDelay: "statusgrid_event_loop_delay_seconds"
} as const

// Outages -----------------------------------------------------------------------------------------

export type Store = "postgres" | "redis" | "clickhouse"

export interface PlannedOutage {
  readonly store: Store
  /** seconds after the first period starts */
  readonly at_s: number
  readonly seconds: number
}

/** Runs of at least this long repeat the outages every cycle, near these offsets. */
const cycleS = 600
const cycleOffsets: ReadonlyArray<readonly [Store, number]> = [["postgres", 120], ["redis", 240], ["clickhouse", 360]]
/** Shorter runs have one outage of each store, near these shares of the run, each at most a quarter of it long. */
const shortRunShares: ReadonlyArray<readonly [Store, number]> = [["postgres", 0.15], ["redis", 0.4], ["clickhouse", 0.65]]

/**
 * When each store is cut, in seconds from the first period's start: every 10 minutes PostgreSQL near
 * minute 2, Redis near 4 and ClickHouse near 6 of the cycle; a run shorter than 10 minutes has one of
 * each near 15 %, 40 % and 65 % of it. With 4 periods or more, each outage starts a few seconds before
 * the period boundary nearest to its place (a quarter of its length, at most 5 s), so that the line of
 * that boundary is measured during it and the next one after it. Only outages that end within the run.
 */
export const outagePlan = (periods: number, periodS: number, outageS: number): Array<PlannedOutage> => {
  if (outageS <= 0) return []
  const durationS = periods * periodS
  const long = durationS >= cycleS
  const places = long
    ? Array.from({ length: Math.ceil(durationS / cycleS) }, (_, cycle) =>
      cycleOffsets.map(([store, offset]) => [store, cycle * cycleS + offset] as const)).flat()
    : shortRunShares.map(([store, share]) => [store, durationS * share] as const)
  const seconds = long ? outageS : Math.max(1, Math.min(outageS, Math.floor(durationS / 4)))
  const lead = Math.min(5, Math.floor(seconds / 4))
  return places
    .map(([store, place]) => ({
      store,
      at_s: periods >= 4 ? Math.min(periods - 1, Math.max(1, Math.round(place / periodS))) * periodS - lead : Math.round(place),
      seconds
    }))
    .filter((o) => o.at_s >= 0 && o.at_s + o.seconds <= durationS)
}

// RSS ---------------------------------------------------------------------------------------------

/** Least-squares slope of y over x; null under two points or when every x is the same. */
export const slope = (points: ReadonlyArray<readonly [number, number]>): number | null => {
  if (points.length < 2) return null
  const mx = points.reduce((s, [x]) => s + x, 0) / points.length
  const my = points.reduce((s, [, y]) => s + y, 0) / points.length
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0)
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0)
  return sxx === 0 ? null : sxy / sxx
}

/** RSS counts as flat when it grows slower than this over the second half of the run (60 MB an hour). */
export const rssFlatLimitMbPerMin = 1
export const rssFlatRule =
  `slope of a least-squares line through the per-minute RSS of the second half of the run < ${rssFlatLimitMbPerMin} MB/min; null under 4 points`

/** RSS per minute (minute, MiB): its slopes over the run and over its second half, and the judgement. */
export const rssFlatness = (points: ReadonlyArray<readonly [number, number]>) => {
  const secondHalf = points.slice(Math.floor(points.length / 2))
  const all = slope(points)
  const late = secondHalf.length >= 4 ? slope(secondHalf) : null
  return {
    slope_all_mb_per_min: all === null ? null : round(all, 3),
    slope_second_half_mb_per_min: late === null ? null : round(late, 3),
    rss_flat: late === null ? null : late < rssFlatLimitMbPerMin
  }
}

// /metrics ----------------------------------------------------------------------------------------

/** The bucket bound under which 99 % of a histogram's observations between two scrapes fell (seconds). */
const p99Bound = (before: Map<number, number> | null, after: Map<number, number> | null): number | null => {
  if (after === null) return null
  const bounds = [...after.keys()].toSorted((a, b) => a - b)
  const delta = bounds.map((b) => (after.get(b) ?? 0) - (before?.get(b) ?? 0))
  const total = delta.at(-1) ?? 0
  if (total <= 0) return null
  const i = delta.findIndex((n) => n >= 0.99 * total)
  return bounds[i] ?? null
}

const scrapeMetrics = (url: string): Effect.Effect<Scrape | null> =>
  Effect.promise(() => scrape(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) }).catch(() => null))

/** Seconds to milliseconds, rounded. */
const inMs = (v: number | null) => (v === null ? null : round(v * 1000))

/** What the period's line shows from /metrics. */
const fromMetrics = (scrape: Scrape | null, previous: Scrape | null) => {
  if (scrape === null) return null
  const f = metricFamilies
  const bound = p99Bound(previous === null ? null : bucketsOf(previous, f.scheduleLag), bucketsOf(scrape, f.scheduleLag))
  const rss = valueOrNull(scrape, f.residentMemory)
  return {
    checks: valueOrNull(scrape, f.checks),
    lag_p99_le_ms: bound === null ? null : bound === Infinity ? "+Inf" : inMs(bound),
    rows_written: valueOrNull(scrape, f.rowsWritten, { table: "check_results" }),
    spill_rows: valueOrNull(scrape, f.spillRows, { table: "check_results" }),
    events_published: valueOrNull(scrape, f.eventsPublished),
    publish_failures: valueOrNull(scrape, f.publishFailures),
    deliveries: byLabel(scrape, f.deliveries, "outcome"),
    outbox_depth: byLabel(scrape, f.outboxDepth, "status"),
    rss_mb: rss === null ? null : Math.round(rss / 1024 / 1024),
    event_loop_delay_p99_ms: inMs(valueOrNull(scrape, f.eventLoopDelay, { quantile: "0.99" }))
  }
}

// Stores ------------------------------------------------------------------------------------------

/** `url` with another database name (PostgreSQL) or host and port (any). */
const withPath = (url: string, path: string) => {
  const u = new URL(url)
  u.pathname = path
  return u.toString()
}
const through = (url: string, proxy: FaultProxy.FaultProxy) => {
  const u = new URL(url)
  u.hostname = "127.0.0.1"
  u.port = String(proxy.port)
  return u.toString()
}

/** One statement on the server through a connection of its own (the pool of the run may be gone). */
const onServer = (serverUrl: string, statement: string) =>
  PgClient.make({ url: Redacted.make(serverUrl), maxConnections: 1 }).pipe(
    Effect.flatMap((client) => client.unsafe(statement)),
    Effect.scoped,
    Effect.provide(Reactivity.layer)
  )

/** A new database on the server, dropped when the scope closes; its URL. */
const soakDatabase = (serverUrl: string, name: string) =>
  Effect.acquireRelease(
    onServer(serverUrl, `CREATE DATABASE ${name}`).pipe(Effect.as(withPath(serverUrl, `/${name}`)), Effect.orDie),
    () => onServer(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).pipe(Effect.timeout("30 seconds"), Effect.ignore)
  )

const redisClient = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 })
      await client.connect()
      return client
    }),
    (client) => Effect.promise(() => client.quit().catch(() => "")).pipe(Effect.asVoid)
  )

/** Entries ever appended to the event stream (trimming aside); 0 before the first. */
const eventsAdded = (redis: Redis) =>
  Effect.promise(async () => {
    try {
      const info = (await redis.xinfo("STREAM", RedisKeys.events)) as Array<unknown>
      return Number(info[info.indexOf("entries-added") + 1] ?? 0)
    } catch {
      return 0
    }
  })

/** Rows in the check results' spill files (`<DATA_DIR>/spill/<start>-<seq>-<rows>.ndjson`), waiting for ClickHouse. */
const spilledRows = (dataDir: string) => {
  try {
    return Fs.readdirSync(Path.join(dataDir, "spill")).reduce((sum, name) => {
      const match = /^\d{15}-\d{10}-(\d+)\.ndjson$/.exec(name)
      return match ? sum + Number(match[1]) : sum
    }, 0)
  } catch {
    return 0
  }
}

// statusgrid --------------------------------------------------------------------------------------

const cli = Path.resolve(import.meta.dirname, "..", "bin", "statusgrid.js")
const probeModule = pathToFileURL(Path.join(import.meta.dirname, "soakProbe.ts")).href

/** Variables of this process that must not reach the child: it gets its own stores and settings. */
const ownSettings = [
  "DATABASE_URL", "REDIS_URL", "CLICKHOUSE_URL", "CLICKHOUSE_DATABASE", "DATA_DIR", "PORT", "HOST", "RESULTS_SPILL_DIR",
  "PUBLISH_SPILL_DIR", "SECRETS_KEY", "SECRETS_KEY_PREVIOUS", "SIMULATOR_URL", "POLLER_INTERVAL_OVERRIDE_S", "METRICS_TOKEN"
]

interface Statusgrid {
  readonly pid: number
  readonly url: string
  readonly simulatorUrl: string
  /** every "poller stats" line so far */
  readonly stats: ReadonlyArray<RunnerStats>
  /** warnings and errors logged since the last call, by message */
  readonly takeProblems: () => { warnings: number; errors: number; messages: Map<string, number> }
  readonly totals: { warnings: number; errors: number }
  /** the probe's figures since its previous reading (undefined if it did not answer within 10 s) */
  readonly probe: Effect.Effect<ProbeReading | undefined>
  /** why the process is of no more use; undefined while it runs */
  readonly failed: () => string | undefined
}

/** The message of a JSON log line, for counting warnings by message. */
const messageOf = (line: string) => {
  try {
    const message = (JSON.parse(line) as { message?: unknown }).message
    return typeof message === "string" ? message : JSON.stringify(message)
  } catch {
    return line.slice(0, 120)
  }
}

const stopChild = (child: ChildProcess) =>
  Effect.callback<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    const kill = setTimeout(() => child.kill("SIGKILL"), 30_000)
    child.once("exit", () => {
      clearTimeout(kill)
      resume(Effect.void)
    })
    child.kill("SIGTERM")
  })

/**
 * `statusgrid start --demo` with the probe loaded, logging JSON at Info on a pipe this process reads;
 * up once it logs "statusgrid is up" (and its simulator's address). Stopped when the scope closes
 * (SIGTERM, SIGKILL 30 s later); its simulator goes with it.
 */
const spawnStatusgrid = Effect.fn("bench.soak.statusgrid")(function*(env: Record<string, string>) {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) =>
    !ownSettings.includes(name) && !name.startsWith("DEMO_") && !name.startsWith("POLLER_STATS")
  ))
  const child = yield* Effect.acquireRelease(
    Effect.sync(() =>
      spawn(process.execPath, ["--import", probeModule, cli, "start", "--demo"], {
        stdio: ["ignore", "pipe", "pipe", "pipe"],
        env: { ...inherited, ...env, LOG_FORMAT: "json", LOG_LEVEL: "Info" }
      })
    ),
    stopChild
  )
  let url: string | undefined
  let simulatorUrl: string | undefined
  let failed: string | undefined
  let tail = ""
  const stats: Array<RunnerStats> = []
  const totals = { warnings: 0, errors: 0 }
  let problems = { warnings: 0, errors: 0, messages: new Map<string, number>() }
  const remember = (text: string) => {
    tail = (tail + text).slice(-4000)
  }
  let buffer = ""
  child.stdout!.on("data", (chunk: Buffer) => {
    buffer += chunk.toString()
    let eol: number
    while ((eol = buffer.indexOf("\n")) !== -1) {
      const raw = buffer.slice(0, eol)
      buffer = buffer.slice(eol + 1)
      const line = parseRunnerLine(raw)
      switch (line.kind) {
        case "up":
          url = line.url
          break
        case "stats":
          stats.push(line.stats)
          break
        case "unreadable-stats":
          failed ??= `statusgrid logged a "poller stats" line the benchmark cannot read: ${line.line}`
          break
        case "log": {
          if (line.level === "WARN" || line.level === "WARNING" || line.level === "ERROR" || line.level === "FATAL") {
            const kind = line.level === "WARN" || line.level === "WARNING" ? "warnings" : "errors"
            totals[kind]++
            problems[kind]++
            const message = messageOf(line.line)
            problems.messages.set(message, (problems.messages.get(message) ?? 0) + 1)
            remember(line.line + "\n")
          } else if (simulatorUrl === undefined && line.line.includes("demo mode: the simulator runs beside the service")) {
            const annotations = (JSON.parse(line.line) as { annotations?: { simulator?: unknown } }).annotations
            if (typeof annotations?.simulator === "string") simulatorUrl = annotations.simulator
          }
          break
        }
        case "text":
          remember(line.line + "\n")
      }
    }
  })
  child.stderr!.on("data", (chunk: Buffer) => remember(chunk.toString()))
  child.once("exit", (code, signal) => {
    failed ??= `statusgrid exited (${signal ?? code}); its last output: ${tail.trim()}`
  })

  // The probe's answers, one JSON line each, to the requests in order.
  const channel = child.stdio[3] as Net.Socket
  const waiting: Array<(reading: ProbeReading | undefined) => void> = []
  let answers = ""
  channel.on("data", (chunk: Buffer) => {
    answers += chunk.toString()
    let eol: number
    while ((eol = answers.indexOf("\n")) !== -1) {
      const text = answers.slice(0, eol)
      answers = answers.slice(eol + 1)
      waiting.shift()?.(JSON.parse(text) as ProbeReading)
    }
  })
  channel.on("error", () => undefined)
  const probe = Effect.callback<ProbeReading | undefined>((resume) => {
    const timer = setTimeout(() => {
      const i = waiting.indexOf(answer)
      if (i >= 0) waiting[i] = () => undefined
      resume(Effect.succeed(undefined))
    }, 10_000)
    const answer = (reading: ProbeReading | undefined) => {
      clearTimeout(timer)
      resume(Effect.succeed(reading))
    }
    waiting.push(answer)
    channel.write("\n")
  })

  const started = Date.now()
  // `url` and `simulatorUrl` are set by the stdout handler above.
  for (;;) {
    if (url !== undefined && simulatorUrl !== undefined) break
    if (failed !== undefined) return yield* Effect.die(new Error(failed))
    if (Date.now() - started > 180_000) return yield* Effect.die(new Error(`statusgrid did not come up within 180 s; its last output: ${tail.trim()}`))
    yield* Effect.sleep("200 millis")
  }
  return {
    pid: child.pid!,
    url,
    simulatorUrl,
    stats,
    takeProblems: () => {
      const taken = problems
      problems = { warnings: 0, errors: 0, messages: new Map() }
      return taken
    },
    totals,
    probe,
    failed: () => failed
  } satisfies Statusgrid
})

// Flips and the event stream ----------------------------------------------------------------------

interface Flip {
  readonly key: string
  readonly component: string
  readonly status: string
  readonly atMs: number
  observed: boolean
}

/** The leaf components of a simulated source and their statuses (`GET /_control/sources/<key>`). */
const simComponents = (simulatorUrl: string, key: string) =>
  Effect.tryPromise(async () => {
    const response = await fetch(`${simulatorUrl}/_control/sources/${key}`)
    if (!response.ok) throw new Error(`${response.status} ${await response.text()}`)
    const source = (await response.json()) as { components: ReadonlyArray<{ id: string; status: string; is_group: boolean }> }
    return source.components.filter((c) => !c.is_group)
  }).pipe(Effect.orDie)

/** Operational → critical, anything else → operational, through the simulator's control API. */
const flip = (simulatorUrl: string, key: string, component: string) =>
  Effect.gen(function*() {
    const current = (yield* simComponents(simulatorUrl, key)).find((c) => c.id === component)?.status
    const status = current === "operational" ? "critical" : "operational"
    yield* Effect.tryPromise(async () => {
      const response = await fetch(`${simulatorUrl}/_control/sources/${key}/components/${component}`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ status })
      })
      if (!response.ok) throw new Error(`${response.status} ${await response.text()}`)
    }).pipe(Effect.orDie)
    return { key, component, status, atMs: Date.now(), observed: false } satisfies Flip
  })

/**
 * Reads `sg:events` as it grows (straight from Redis, not through the proxy): the ids of the events
 * the rule must deliver (component changes of the flipped sources whose trigger the rule has) and
 * every status change of those sources' components, to tell which flips statusgrid saw.
 */
const eventReader = (redis: Redis, watched: ReadonlySet<string>) => {
  let last = "0-0"
  const expected = new Set<string>()
  const changes = new Map<string, Array<{ readonly status: string; readonly atMs: number }>>()
  const read = Effect.promise(async () => {
    for (;;) {
      const entries = await redis.xrange(RedisKeys.events, `(${last}`, "+", "COUNT", 2000)
      for (const [id, fields] of entries) {
        last = id
        if (fields[fields.indexOf("type") + 1] !== "component.status_changed") continue
        const event = JSON.parse(fields[fields.indexOf("payload") + 1] ?? "{}") as StatusEvent
        if (event.component === undefined || !watched.has(event.source.key)) continue
        const { previous_status, current_status, id: component } = event.component
        const trigger = componentTrigger(previous_status, current_status)
        if (trigger !== undefined && flipTriggers.includes(trigger)) expected.add(event.id)
        const key = `${event.source.key}/${component}`
        const list = changes.get(key) ?? []
        list.push({ status: current_status, atMs: Number(id.split("-")[0]) })
        changes.set(key, list)
      }
      if (entries.length < 2000) return
    }
  })
  /** Marks the flips statusgrid published a change to (the flip's status, at or after it). */
  const observe = (flips: ReadonlyArray<Flip>) => {
    for (const f of flips) {
      if (f.observed) continue
      f.observed = (changes.get(`${f.key}/${f.component}`) ?? []).some((c) => c.status === f.status && c.atMs >= f.atMs - 1000)
    }
  }
  return { read, observe, expected }
}

// The run -----------------------------------------------------------------------------------------

/**
 * A flip is published within one check interval of its source (30 s for the critical class) plus the
 * lag; one not seen by then was undone by a later flip, or the demo world changed the component.
 */
const flipSeenWithinMs = 45_000

/**
 * A period's figures are read this long after its end: rows of the checks made before it are flushed
 * within a second or two unless ClickHouse is away, since the soak's statusgrid inserts every
 * `soakFlushMs` (the outages are placed for this delay, `outagePlan`).
 */
const measureDelayMs = 2500

/**
 * RESULTS_FLUSH_MS of the soak's statusgrid: 1 s, not the default 5 s (decision 0021), so that each
 * period's line can count the rows of its checks 2.5 s after its end, inside the outage planned
 * around that boundary. The soak is about leaks and recovery from outages, not the insert cadence.
 */
const soakFlushMs = 1000

/** The values that are there, in ascending order. */
const sortedOf = (values: ReadonlyArray<number | null>) => values.flatMap((v) => (v === null ? [] : [v])).toSorted((a, b) => a - b)

const sleepUntil = (epochMs: number) => Effect.suspend(() => Effect.sleep(Math.max(0, epochMs - Date.now())))

/** CPU seconds so far of each process the benchmark accounts for. */
const cpuReading = (pids: { statusgrid: number; simulator: number; clickhouse: number; target: number }) => {
  const own = process.cpuUsage()
  return {
    at: Date.now(),
    statusgrid: procCpu(pids.statusgrid),
    simulator: pids.simulator > 0 ? procCpu(pids.simulator) : 0,
    clickhouse: procCpu(pids.clickhouse),
    target: procCpu(pids.target),
    postgres: groupCpu("postgres"),
    redis: groupCpu("redis-server"),
    bench: (own.user + own.system) / 1e6,
    machine: machineBusyCpu()
  }
}

/** One period's figures (a line on stderr, and an entry of the summary's `minutes`). */
export interface SoakLine {
  readonly minute: number
  readonly elapsed_s: number
  /** the stores cut at some time since the previous line was measured */
  readonly outage: string | null
  /** the stores cut while this line was measured */
  readonly cut_while_measured: string | null
  readonly rss_mb: number
  readonly heap_used_mb: number | null
  readonly event_loop_delay_p99_ms: number | null
  readonly event_loop_delay_max_ms: number | null
  readonly lag_p99_ms: number | null
  readonly lag_max_ms: number | null
  readonly checks_in_period: number | null
  readonly failures_in_period: number | null
  readonly checks: number | null
  readonly rows_stored: number | null
  readonly rows_behind: number | null
  readonly spill_rows: number
  readonly events_published: number
  readonly flips: number
  readonly flips_observed: number
  readonly deliveries_expected: number
  readonly deliveries: number
  readonly duplicates: number
  readonly outbox_pending: number
  readonly cpu_cores: number
  readonly simulator_rss_mb: number
  readonly clickhouse_rss_mb: number
  readonly warnings: number
  readonly errors: number
  readonly top_warnings: Record<string, number>
  readonly metrics: ReturnType<typeof fromMetrics>
}

export const runSoakBench = Effect.fn("bench.soak")(function*(options: SoakOptions) {
  const run = `${Date.now().toString(36)}${randomBytes(2).toString("hex")}`
  const root = yield* Effect.acquireRelease(
    Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-soak-"))),
    (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
  )
  const databaseName = `statusgrid_soak_${run}`
  const database = yield* soakDatabase(options.postgresUrl, databaseName)
  return yield* soak(options, root, database).pipe(
    Effect.provide(Postgres.layerServer(database, { maxConnections: 2 }))
  )
}, Effect.scoped)

const soak = Effect.fnUntraced(function*(options: SoakOptions, root: string, database: string) {
  const startedAt = Date.now()
  const sql = yield* SqlClient
  const redis = yield* redisClient(options.redisUrl)
  yield* Effect.promise(() => redis.flushdb())

  // The stores statusgrid reaches through the proxies.
  const clickhouse = yield* spawnClickHouse(Path.join(root, "clickhouse"))
  const clickhouseDirect = clickhouse.direct
  const proxies: Record<Store, FaultProxy.FaultProxy> = {
    postgres: yield* FaultProxy.scopedTo(database),
    redis: yield* FaultProxy.scopedTo(options.redisUrl),
    clickhouse: yield* FaultProxy.scopedTo(clickhouseDirect)
  }

  // The organizations: the rule on the flipped sources, and the monitors.
  const target = yield* spawnTarget({ latency: "50-300", tls: false, newConnections: false })
  const signingSecret = randomBytes(32).toString("hex")
  const hook = yield* receiver(signingSecret, "")
  const secretsKey = randomBytes(32).toString("base64")
  const specs = syntheticSpecs(options.sources)
  // The demo world moves sources of the critical class, its featured ones by a world of their own
  // (services/demo/Demo.ts); the flipped ones are others of that class, in a format with components.
  const critical = specs.filter((s) => s.check_class === "critical")
  const featured = new Set(featuredOf(critical))
  const pool = critical.filter((s) => componentFormats.has(s.provider) && !featured.has(s.key)).slice(0, options.flipSources).map((s) => s.key)
  if (pool.length === 0) return yield* Effect.die(new Error(`no source to flip among ${options.sources}: raise --sources`))
  yield* Effect.gen(function*() {
    yield* Migrations.migratePostgres()
    // The real catalog is loaded as `start` would, then disabled: the run polls the simulator only.
    yield* Catalog.seedIfEmpty()
    yield* sql`UPDATE sources SET enabled = false WHERE kind = 'catalog' AND NOT synthetic`
    // Placeholder addresses: `start --demo` points them at its simulator.
    yield* Catalog.enableSynthetic(Catalog.syntheticEntries(options.sources, "http://127.0.0.1:9"))
    const [org] = yield* sql<{ id: string }>`
      INSERT INTO organizations (slug, name, plan_id) VALUES ('soak', 'Soak benchmark', 'enterprise') RETURNING id`
    const [stack] = yield* sql<{ id: string }>`
      INSERT INTO stacks (organization_id, name, slug) VALUES (${org!.id}::uuid, 'Flipped', 'flipped') RETURNING id`
    yield* sql`
      INSERT INTO stack_items (stack_id, kind, source_id, position)
      SELECT ${stack!.id}::uuid, 'source', s.id, row_number() OVER (ORDER BY s.key)
      FROM sources s WHERE s.key IN (SELECT unnest(${pool}::text[]))`
    yield* insertFlipRule(org!.id, hook.url, signingSecret)
    if (options.monitors > 0) yield* insertMonitors({ monitors: options.monitors, intervalS: options.monitorIntervalS }, target.url)
  }).pipe(
    Effect.provide(SecretBox.layer),
    Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ SECRETS_KEY: secretsKey, DATA_DIR: root })))
  )

  const dataDir = Path.join(root, "data")
  const periodMs = options.periodS * 1000
  const sg = yield* spawnStatusgrid({
    DATABASE_URL: through(database, proxies.postgres),
    REDIS_URL: through(options.redisUrl, proxies.redis),
    CLICKHOUSE_URL: `http://default:@127.0.0.1:${proxies.clickhouse.port}`,
    DATA_DIR: dataDir,
    HOST: "127.0.0.1",
    PORT: String(yield* Effect.promise(freePort)),
    SECRETS_KEY: secretsKey,
    DEMO_SOURCES: String(options.sources),
    DEMO_SEED: "19",
    SIMULATOR_URL: "http://127.0.0.1:0",
    POLLER_STATS_LOG_MS: String(periodMs),
    RESULTS_FLUSH_MS: String(soakFlushMs),
    // Local receivers and targets; the simulator is one host standing for thousands of providers.
    NOTIFIER_ALLOW_PRIVATE: "true",
    MONITOR_ALLOW_PRIVATE: "true",
    POLL_PER_HOST_CONCURRENCY: "4096",
    MONITOR_MAX_SOCKETS_PER_HOST: "512"
  })
  const upAt = Date.now()
  const alive = Effect.suspend(() => {
    const failure = sg.failed()
    return failure === undefined ? Effect.void : Effect.die(new Error(failure))
  })
  // Upstreams as in `bench poller`: 50-500 ms, 1 % answered 5xx.
  yield* Effect.tryPromise(async () => {
    const response = await fetch(`${sg.simulatorUrl}/_control/config`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ latency_min_ms: 50, latency_max_ms: 500, error_rate: 0.01 })
    })
    if (!response.ok) throw new Error(`the simulator refused its settings: ${response.status} ${await response.text()}`)
  }).pipe(Effect.orDie)
  const simulatorPid = childPids(sg.pid).find((pid) => procCmdline(pid).includes(" simulate ")) ?? 0

  // Warm-up: at least `warmupS`, then the next period boundary. A flip before a source's first check is
  // its first state, not a change: flips are counted as seen only when statusgrid published them.
  const flipTargets = yield* Effect.forEach(pool, (key) =>
    Effect.map(simComponents(sg.simulatorUrl, key), (leaves) => ({ key, component: leaves[0]!.id })))
  const from = nextBoundary(Math.max(Date.now(), upAt + options.warmupS * 1000), periodMs)
  const startS = (upAt - startedAt) / 1000
  const durationS = options.minutes * 60
  const periods = Math.max(1, Math.floor(durationS / options.periodS))
  const plan = outagePlan(periods, options.periodS, options.outageS)
  yield* sleepUntil(from)
  yield* alive
  yield* sg.probe
  sg.takeProblems()
  const pids = { statusgrid: sg.pid, simulator: simulatorPid, clickhouse: clickhouse.pid, target: target.pid }
  const cpuFrom = cpuReading(pids)

  // The outages, on their own fiber; every proxy passes again whatever happens.
  const outages: Array<{ store: Store; fromMs: number; toMs: number }> = plan.map((o) => ({
    store: o.store,
    fromMs: from + o.at_s * 1000,
    toMs: from + (o.at_s + o.seconds) * 1000
  }))
  yield* Effect.forEach(outages, (o) =>
    Effect.gen(function*() {
      yield* sleepUntil(o.fromMs)
      yield* Effect.promise(() => proxies[o.store].cut())
      yield* sleepUntil(o.toMs)
      proxies[o.store].pass()
    }), { discard: true }).pipe(
    Effect.ensuring(Effect.sync(() => Object.values(proxies).forEach((p) => p.pass()))),
    Effect.forkScoped
  )

  const events = eventReader(redis, new Set(pool))
  const flips: Array<Flip> = []
  const lines: Array<SoakLine> = []
  let cursor = 0
  let previousScrape: Scrape | null = yield* scrapeMetrics(sg.url)
  let cpuBefore = cpuFrom
  const deliveredCount = () => [...events.expected].filter((id) => hook.firstAt.has(id)).length
  const outbox = Effect.map(
    sql<{ status: string; n: number }>`SELECT status, count(*)::int AS n FROM deliveries GROUP BY status`,
    (rows) => Object.fromEntries(rows.map((r) => [r.status, r.n])) as Record<string, number>
  )

  for (let k = 1; k <= periods; k++) {
    const start = from + (k - 1) * periodMs
    const end = start + periodMs
    for (let i = 0; i < Math.min(options.flips, flipTargets.length); i++) {
      const t = flipTargets[cursor++ % flipTargets.length]!
      flips.push(yield* flip(sg.simulatorUrl, t.key, t.component))
    }
    yield* sleepUntil(end)
    yield* alive
    const reading = yield* sg.probe
    const rss = procRss(sg.pid)
    // The period's stats line, logged at its end.
    const waiting = Date.now()
    let stats: RunnerStats | undefined
    while ((stats = sg.stats.find((s) => Math.abs(s.to_ms - end) < periodMs / 2)) === undefined && Date.now() - waiting < 15_000) {
      yield* Effect.sleep("200 millis")
    }
    yield* sleepUntil(end + measureDelayMs)
    const rows = yield* storedRows(clickhouseDirect)
    yield* events.read
    events.observe(flips)
    const scrape = yield* scrapeMetrics(sg.url)
    const cpuAfter = cpuReading(pids)
    const problems = sg.takeProblems()
    const box = yield* outbox
    // The stores cut at some time since the previous line was measured.
    const overlapping = outages.filter((o) => o.fromMs < end + measureDelayMs && o.toMs > start + measureDelayMs).map((o) => o.store)
    const cutNow = outages.filter((o) => o.fromMs <= end + measureDelayMs && o.toMs > end + measureDelayMs).map((o) => o.store)
    const line: SoakLine = {
      minute: round((k * options.periodS) / 60, 2),
      elapsed_s: Math.round((end - from) / 1000),
      outage: overlapping.length === 0 ? null : overlapping.join(","),
      cut_while_measured: cutNow.length === 0 ? null : cutNow.join(","),
      rss_mb: rss,
      heap_used_mb: reading?.heap_used_mb ?? null,
      event_loop_delay_p99_ms: reading?.delay_p99_ms ?? null,
      event_loop_delay_max_ms: reading?.delay_max_ms ?? null,
      lag_p99_ms: stats === undefined ? null : round(stats.lag_p99_ms),
      lag_max_ms: stats === undefined ? null : round(stats.lag_max_ms),
      checks_in_period: stats?.checks ?? null,
      failures_in_period: stats?.failures ?? null,
      checks: stats?.checks_since_start ?? null,
      rows_stored: rows,
      rows_behind: rows === null || stats === undefined ? null : Math.max(0, stats.checks_since_start - rows),
      spill_rows: spilledRows(dataDir),
      events_published: yield* eventsAdded(redis),
      flips: flips.length,
      flips_observed: flips.filter((f) => f.observed).length,
      deliveries_expected: events.expected.size,
      deliveries: deliveredCount(),
      duplicates: hook.odd.duplicates,
      outbox_pending: (box["pending"] ?? 0) + (box["sending"] ?? 0),
      cpu_cores: round((cpuAfter.statusgrid - cpuBefore.statusgrid) / ((cpuAfter.at - cpuBefore.at) / 1000)),
      simulator_rss_mb: simulatorPid > 0 ? procRss(simulatorPid) : 0,
      clickhouse_rss_mb: procRss(clickhouse.pid),
      warnings: problems.warnings,
      errors: problems.errors,
      top_warnings: Object.fromEntries([...problems.messages].toSorted((a, b) => b[1] - a[1]).slice(0, 3)),
      metrics: fromMetrics(scrape, previousScrape)
    }
    lines.push(line)
    yield* Effect.sync(() => process.stderr.write(`${JSON.stringify({ bench: "soak", ...line })}\n`))
    previousScrape = scrape ?? previousScrape
    cpuBefore = cpuAfter
  }
  const runEnd = from + periods * periodMs
  const cpuTo = cpuReading(pids)

  // Settle: no more flips or outages; deliveries of every expected event, rows of every check counted, the last flips seen.
  const lastChecks = sg.stats.at(-1)?.checks_since_start ?? 0
  const settleFrom = Date.now()
  let rows: number | null = null
  for (;;) {
    yield* alive
    yield* events.read
    events.observe(flips)
    rows = yield* storedRows(clickhouseDirect)
    const delivered = deliveredCount() === events.expected.size
    const stored = rows !== null && rows >= lastChecks
    const seen = flips.every((f) => f.observed || Date.now() - f.atMs > flipSeenWithinMs)
    if ((delivered && stored && seen) || Date.now() - settleFrom > options.settleS * 1000) break
    yield* Effect.sleep("1 second")
  }
  const settleS = (Date.now() - settleFrom) / 1000
  const finalScrape = yield* scrapeMetrics(sg.url)
  const box = yield* outbox
  const delivered = deliveredCount()
  const unexpected = [...hook.firstAt.keys()].filter((id) => !events.expected.has(id)).length

  const rssPoints = lines.map((l) => [l.minute, l.rss_mb] as const)
  const rssValues = lines.map((l) => l.rss_mb)
  const heap = lines.flatMap((l) => (l.heap_used_mb === null ? [] : [l.heap_used_mb]))
  const delayP99 = sortedOf(lines.map((l) => l.event_loop_delay_p99_ms))
  const lagP99 = sortedOf(lines.map((l) => l.lag_p99_ms))
  const behind = lines.reduce<{ rows: number; minute: number | null }>(
    (worst, l) => ((l.rows_behind ?? 0) > worst.rows ? { rows: l.rows_behind!, minute: l.minute } : worst),
    { rows: 0, minute: null }
  )
  // Each ClickHouse outage: the gap while cut (the line measured then), and the first line after it with none.
  const measuredAt = (l: SoakLine) => from + l.elapsed_s * 1000 + measureDelayMs
  const clickhouseOutages = outages.filter((o) => o.store === "clickhouse").map((o) => {
    const during = lines.find((l) => measuredAt(l) >= o.fromMs && measuredAt(l) < o.toMs)
    const after = lines.find((l) => measuredAt(l) >= o.toMs && l.rows_behind === 0)
    return {
      at_s: round((o.fromMs - from) / 1000, 1),
      rows_behind_while_cut: during?.rows_behind ?? null,
      spill_rows_while_cut: during?.spill_rows ?? null,
      caught_up_by_minute: after?.minute ?? (rows !== null && rows >= lastChecks ? "settle" : null)
    }
  })
  const windowS = (cpuTo.at - cpuFrom.at) / 1000
  const cores = (key: Exclude<keyof typeof cpuFrom, "at">) => round((cpuTo[key] - cpuFrom[key]) / windowS)
  const missingFamilies = finalScrape === null
    ? Object.values(metricFamilies)
    : Object.values(metricFamilies).filter((name) => !finalScrape.has(name))
  return {
    bench: "soak",
    sources: options.sources,
    monitors: options.monitors,
    monitor_interval_s: options.monitorIntervalS,
    minutes: options.minutes,
    period_s: options.periodS,
    periods,
    start_s: round(startS, 1),
    warmup_s: round((from - upAt) / 1000, 1),
    outages: plan,
    flip_sources: pool.length,
    flips_per_period: Math.min(options.flips, pool.length),
    rss_mb: {
      first: rssValues[0] ?? 0,
      last: rssValues.at(-1) ?? 0,
      min: Math.min(...rssValues),
      max: Math.max(...rssValues),
      peak: procPeakRss(sg.pid)
    },
    ...rssFlatness(rssPoints),
    rss_flat_rule: rssFlatRule,
    heap_used_mb: heap.length === 0 ? null : { first: heap[0], last: heap.at(-1), max: Math.max(...heap) },
    event_loop_delay_ms: {
      p99_median: percentile(delayP99, 50),
      p99_max: delayP99.at(-1) ?? null,
      max: Math.max(0, ...lines.map((l) => l.event_loop_delay_max_ms ?? 0))
    },
    lag_ms: { p99_median: percentile(lagP99, 50), p99_max: lagP99.at(-1) ?? null, max: Math.max(0, ...lines.map((l) => l.lag_max_ms ?? 0)) },
    checks: lastChecks,
    rows_stored: rows,
    rows_caught_up: rows !== null && rows >= lastChecks,
    rows_behind_max: behind,
    clickhouse_outages: clickhouseOutages,
    events_published: yield* eventsAdded(redis),
    flips: { made: flips.length, observed: flips.filter((f) => f.observed).length },
    deliveries: {
      expected: events.expected.size,
      delivered,
      missing: events.expected.size - delivered,
      unexpected,
      duplicates: hook.odd.duplicates,
      bad_signatures: hook.odd.badSignatures,
      all_delivered_once: delivered === events.expected.size && unexpected === 0 && hook.odd.duplicates === 0
    },
    outbox: box,
    settle_s: round(settleS, 1),
    // Cores used over the measured periods (runEnd), by process; the machine's whole, other work included.
    cpu: {
      window_s: round(windowS, 1),
      cores_available: Os.availableParallelism(),
      machine_busy: cores("machine"),
      statusgrid: cores("statusgrid"),
      simulator: cores("simulator"),
      clickhouse: cores("clickhouse"),
      monitor_target: cores("target"),
      postgres_server: cores("postgres"),
      redis: cores("redis"),
      bench: cores("bench")
    },
    peak_rss_mb: {
      statusgrid: procPeakRss(sg.pid),
      simulator: simulatorPid > 0 ? procPeakRss(simulatorPid) : 0,
      clickhouse: procPeakRss(clickhouse.pid)
    },
    statusgrid_logged: sg.totals,
    metrics: {
      served: finalScrape !== null,
      missing_families: missingFamilies,
      last: fromMetrics(finalScrape, null)
    },
    ended_at: new Date(runEnd).toISOString(),
    minutes_figures: lines
  }
})
