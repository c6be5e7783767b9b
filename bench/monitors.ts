import { Effect, Layer } from "effect"
import { delayMs, eventLoopDelay } from "../services/platform/EventLoopDelay.ts"
import { SqlClient } from "effect/sql/SqlClient"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Https from "node:https"
import * as Os from "node:os"
import * as Path from "node:path"
import { ClickHouse } from "../services/platform/ClickHouse.ts"
import * as Migrations from "../services/platform/Migrations.ts"
import * as Cluster from "../services/poller/Cluster.ts"
import * as Poller from "../services/poller/Poller.ts"
import { Publisher } from "../services/platform/Publisher.ts"
import { PollerStats } from "../services/poller/PollerStats.ts"
import { ResultWriter } from "../services/poller/ResultWriter.ts"
import { peakRssMb, round } from "./figures.ts"
import { spawnScript } from "./scriptProcess.ts"

export interface MonitorsBenchOptions {
  readonly monitors: number
  readonly durationS: number
  /** every monitor's check interval, seconds */
  readonly intervalS: number
  /** seconds of the run before measuring, so first checks (spread over one interval) settle */
  readonly warmupS: number
  /** the target serves HTTPS with a self-signed certificate (monitors have tls_verify false) */
  readonly tls: boolean
  /** the target answers `Connection: close`: every check opens a new connection */
  readonly newConnections: boolean
  /** the target's response delay, "MIN-MAX" milliseconds */
  readonly latency: string
}

interface TargetStats {
  readonly cpu_s: number
  readonly peak_rss_mb: number
}

interface Target {
  readonly url: string
  readonly pid: number
  readonly stats: Effect.Effect<TargetStats>
}

const targetScript = Path.join(import.meta.dirname, "monitorTarget.ts")

/** A self-signed certificate for 127.0.0.1 in a temporary directory, removed with the scope. */
const selfSignedCert = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-bench-tls-"))
    execFileSync("openssl", [
      "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
      "-keyout", "key.pem", "-out", "cert.pem", "-days", "2", "-subj", "/CN=localhost",
      "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"
    ], { cwd: dir, stdio: "pipe" })
    return dir
  }),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

/**
 * bench/monitorTarget.ts in its own process (Node strips the types), up once
 * it prints its URL; stopped with SIGTERM when the scope closes.
 */
export const spawnTarget = Effect.fn("bench.monitors.spawnTarget")(function*(
  options: Pick<MonitorsBenchOptions, "tls" | "newConnections" | "latency">
) {
  const certDir = options.tls ? yield* selfSignedCert : undefined
  const { url, pid } = yield* spawnScript(targetScript, [
    "--latency", options.latency,
    ...(certDir ? ["--cert", Path.join(certDir, "cert.pem"), "--key", Path.join(certDir, "key.pem")] : []),
    ...(options.newConnections ? ["--close"] : [])
  ], "the monitor target")
  // Its own figures, asked over a connection of its own (self-signed when https).
  const stats = Effect.promise(() =>
    new Promise<TargetStats>((resolve, reject) => {
      const get = url.startsWith("https:") ? Https.get : Http.get
      get(`${url}/_stats`, { rejectUnauthorized: false, agent: false }, (res) => {
        let body = ""
        res.on("data", (c: Buffer) => (body += c.toString()))
        res.on("end", () => resolve(JSON.parse(body) as TargetStats))
      }).on("error", reject)
    })
  )
  return { url, pid, stats } satisfies Target
})

/** Rows per INSERT: a few thousand keeps each statement small for PGlite. */
const insertChunk = 5000

/**
 * One organization and N monitors of the target, `/m/<i>` each so the target
 * sees distinct URLs, inserted straight in SQL (Monitors.create validates and
 * resolves each one: minutes for 60,000).
 */
export const insertMonitors = Effect.fn("bench.monitors.insert")(function*(options: Pick<MonitorsBenchOptions, "monitors" | "intervalS">, url: string) {
  const sql = yield* SqlClient
  const [org] = yield* sql<{ id: string }>`
    INSERT INTO organizations (slug, name, plan_id)
    VALUES (${`bench-${Date.now().toString(36)}`}, 'Monitors benchmark', 'enterprise')
    RETURNING id`
  const checkType = url.startsWith("https:") ? "https" : "http"
  for (let from = 0; from < options.monitors; from += insertChunk) {
    const to = Math.min(options.monitors, from + insertChunk) - 1
    yield* sql`
      INSERT INTO monitors (organization_id, name, url, check_type, interval_s, tls_verify)
      SELECT ${org!.id}::uuid, 'bench ' || i, ${`${url}/m/`} || i, ${checkType}, ${options.intervalS}, ${checkType === "http"}
      FROM generate_series(${from}::int, ${to}::int) AS i`
  }
})

/**
 * `statusgrid bench monitors`: N website monitors at one interval against a
 * local target with 50-300 ms latency in its own process, checked by the
 * poller shards of this process on the configured stores. Measures sustained
 * checks/s, schedule lag, CPU per check, peak RSS and result rows.
 */
export const runMonitorsBench = Effect.fn("bench.monitors")(function*(options: MonitorsBenchOptions) {
  const target = yield* spawnTarget(options)
  yield* Migrations.migrateAll()
  yield* insertMonitors(options, target.url)
  // What the stores and the setup cost before any check: the embedded ones live in this process.
  const beforePollerMb = peakRssMb()
  // The poller starts once the monitors exist, so its first checks spread over one interval.
  return yield* measure(options, target, beforePollerMb).pipe(Effect.provide(pollerLayer))
})

const measure = Effect.fn("bench.monitors.measure")(function*(options: MonitorsBenchOptions, target: Target, beforePollerMb: number) {
  const stats = yield* PollerStats
  const loopDelay = eventLoopDelay()

  yield* Effect.sleep(`${options.warmupS} seconds`)
  yield* stats.reset
  loopDelay.enable()
  const cpuStart = process.cpuUsage()
  const targetStart = yield* target.stats
  const measuredFrom = Date.now()
  yield* Effect.sleep(`${options.durationS} seconds`)
  const measured = yield* stats.snapshot
  const seconds = (Date.now() - measuredFrom) / 1000
  const cpu = process.cpuUsage(cpuStart)
  const targetEnd = yield* target.stats
  loopDelay.disable()
  const heapUsed = process.memoryUsage().heapUsed

  // Checks counted before the flush all have their rows written by it: result_rows >= checks_since_start.
  const total = yield* stats.snapshot
  yield* (yield* ResultWriter).flush
  const [rows] = yield* (yield* ClickHouse).query("SELECT count() AS n FROM check_results WHERE subject_kind = 'monitor'")
  const cpuS = (cpu.user + cpu.system) / 1e6
  return {
    bench: "monitors",
    monitors: options.monitors,
    interval_s: options.intervalS,
    duration_s: Math.round(seconds),
    checks_per_s: round(measured.checks / seconds),
    target_checks_per_s: round(options.monitors / options.intervalS),
    lag_ms: { p50: round(measured.lag.p50), p99: round(measured.lag.p99), max: round(measured.lag.max) },
    failures: measured.failures,
    cpu_ms_per_check: measured.checks === 0 ? null : round((cpuS * 1000) / measured.checks, 3),
    cpu_s: round(cpuS),
    // The whole run's peak (setup included): every embedded store lives in this process.
    peak_rss_mb: peakRssMb(),
    peak_rss_before_poller_mb: beforePollerMb,
    heap_used_mb: Math.round(heapUsed / 1024 / 1024),
    event_loop_delay_ms: delayMs(loopDelay),
    shard_starts: total.shardStarts,
    target: {
      cpu_s: round(targetEnd.cpu_s - targetStart.cpu_s),
      peak_rss_mb: targetEnd.peak_rss_mb,
      latency_ms: options.latency,
      tls: options.tls,
      new_connections: options.newConnections
    },
    result_rows: Number(rows?.["n"] ?? 0),
    checks_since_start: total.checksSinceStart
  }
})



/** One in-process runner with every shard, on the stores the benchmark provides. */
const pollerLayer = Poller.layer.pipe(Layer.provide(Layer.mergeAll(Cluster.single, Publisher.layer)))
