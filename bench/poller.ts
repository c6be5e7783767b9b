import { Effect, Layer } from "effect"
import { delayMs, eventLoopDelay } from "../services/platform/EventLoopDelay.ts"
import { createRequire } from "node:module"
import * as Catalog from "../services/catalog/Catalog.ts"
import { adapterFor } from "../services/adapters/registry.ts"
import { ClickHouse } from "../services/platform/ClickHouse.ts"
import * as Migrations from "../services/platform/Migrations.ts"
import * as Stores from "../services/platform/Stores.ts"
import * as Cluster from "../services/poller/Cluster.ts"
import * as Poller from "../services/poller/Poller.ts"
import { Publisher } from "../services/platform/Publisher.ts"
import { PollerStats } from "../services/poller/PollerStats.ts"
import { ResultWriter } from "../services/poller/ResultWriter.ts"
import * as Simulator from "../services/simulator/Server.ts"
import { type SimulatorProcess, spawnSimulator } from "./simulatorProcess.ts"
import { round } from "./figures.ts"

export interface PollerBenchOptions {
  readonly sources: number
  readonly durationS: number
  readonly intervalS: number
  /** seconds of the run before measuring, so first checks (spread over one interval) settle */
  readonly warmupS: number
  readonly ceilingS: number
  /** "process": the simulator runs as its own process (default); "inprocess": in this one */
  readonly simulator: "process" | "inprocess"
}

interface AutocannonResult {
  readonly requests: { readonly average: number; readonly total: number }
  readonly non2xx: number
  readonly errors: number
}

/** autocannon ships no types: its one entry point, typed for what this benchmark uses. */
const autocannon = createRequire(import.meta.url)("autocannon") as (options: {
  url: string
  connections: number
  duration: number
  requests: ReadonlyArray<{ method: "GET"; path: string }>
}) => Promise<AutocannonResult>

/**
 * `statusgrid bench poller`: the simulator (50-500 ms latency, 1% errors)
 * and the poller in this process, N synthetic sources at one interval.
 * Measures sustained checks/s, schedule lag, CPU, peak RSS and result rows,
 * then the raw HTTP ceiling of the same simulator and request mix.
 */
export const runPollerBench = Effect.fn("bench.poller")(function*(options: PollerBenchOptions) {
  const sim: Upstreams = options.simulator === "process"
    ? yield* spawnSimulator({ sources: options.sources, latency: "50-500", errorRate: 0.01 })
    : yield* Simulator.make({
      port: 0,
      host: "127.0.0.1",
      sources: options.sources,
      behaviour: { latency_min_ms: 50, latency_max_ms: 500, error_rate: 0.01 }
    }).pipe(Effect.map((s) => ({ url: s.url })))
  yield* Migrations.migrateAll()
  // Benchmarks keep their synthetic sources: exactly these N are enabled, whatever the data directory held.
  yield* Catalog.enableSynthetic(Catalog.syntheticEntries(options.sources, sim.url))
  // The poller starts once the sources exist, so its first checks spread over one interval.
  return yield* measure(options, sim).pipe(Effect.provide(pollerLayer))
})

/** Where the simulated upstreams are; CPU and memory figures when they run in their own process. */
type Upstreams = { readonly url: string } & Partial<Pick<SimulatorProcess, "cpuSeconds" | "peakRssMb">>

const measure = Effect.fn("bench.poller.measure")(function*(options: PollerBenchOptions, sim: Upstreams) {
  const stats = yield* PollerStats
  const loopDelay = eventLoopDelay()
  const cpuStart = process.cpuUsage()
  let peak = process.memoryUsage()
  let unsavedAtPeak = stats.unsaved()
  let unsavedMax = unsavedAtPeak
  const sampler = setInterval(() => {
    const now = process.memoryUsage()
    const unsaved = stats.unsaved()
    if (unsaved > unsavedMax) unsavedMax = unsaved
    if (now.rss > peak.rss) {
      peak = now
      unsavedAtPeak = unsaved
    }
  }, 250)

  yield* Effect.sleep(`${options.warmupS} seconds`)
  yield* stats.reset
  loopDelay.enable()
  const measuredFrom = Date.now()
  const cpuMeasuredFrom = process.cpuUsage()
  yield* Effect.sleep(`${options.durationS} seconds`)
  const measured = yield* stats.snapshot
  const seconds = (Date.now() - measuredFrom) / 1000
  const cpu = process.cpuUsage(cpuStart)
  // CPU of every thread of this process (chDB's included) over the same span as the checks counted.
  const cpuMeasured = process.cpuUsage(cpuMeasuredFrom)
  clearInterval(sampler)
  loopDelay.disable()

  // Checks counted before the flush all have their rows written by it: result_rows >= checks_since_start.
  const total = yield* stats.snapshot
  const writer = yield* ResultWriter
  yield* writer.flush
  const ch = yield* ClickHouse
  const [rows] = yield* ch.query("SELECT count() AS n FROM check_results WHERE component_id = ''")

  // The same request mix, as fast as this machine serves it.
  const paths = Catalog.syntheticEntries(Math.min(options.sources, 2000), sim.url).map((e) => {
    const adapter = adapterFor(e.provider_type ?? "")!
    return { method: "GET" as const, path: new URL(adapter.endpoints({ url: e.status_page_url })[0]!).pathname }
  })
  const ceiling = yield* Effect.promise(() =>
    autocannon({ url: sim.url, connections: 500, duration: options.ceilingS, requests: paths })
  )
  // The live heap, as opposed to what the collector had not yet reclaimed at the peak (needs --expose-gc).
  const gc = (globalThis as { gc?: () => void }).gc
  gc?.()
  const liveHeap = gc ? process.memoryUsage().heapUsed : undefined
  const checksPerSecond = measured.checks / seconds
  return {
    bench: "poller",
    sources: options.sources,
    interval_s: options.intervalS,
    duration_s: Math.round(seconds),
    checks_per_s: round(checksPerSecond),
    target_checks_per_s: round(options.sources / options.intervalS),
    lag_ms: { p50: round(measured.lag.p50), p99: round(measured.lag.p99), max: round(measured.lag.max) },
    failures: measured.failures,
    shard_starts: total.shardStarts,
    event_loop_delay_ms: delayMs(loopDelay),
    cpu_s: round((cpu.user + cpu.system) / 1e6),
    cpu_measured_s: round((cpuMeasured.user + cpuMeasured.system) / 1e6),
    cpu_ms_per_check: measured.checks > 0 ? round((cpuMeasured.user + cpuMeasured.system) / 1e3 / measured.checks, 3) : null,
    peak_rss_mb: mb(peak.rss),
    // At the RSS peak: the JavaScript heap, and memory outside it (buffers, chDB's engine is in neither).
    at_peak_mb: { heap_used: mb(peak.heapUsed), external: mb(peak.external), array_buffers: mb(peak.arrayBuffers) },
    ...(liveHeap === undefined ? {} : { live_heap_mb: mb(liveHeap) }),
    // Changed snapshots the shards held for PostgreSQL: at the RSS peak, and the most at any sample.
    unsaved_snapshots: { at_peak: unsavedAtPeak, max: unsavedMax },
    simulator: sim.cpuSeconds
      ? { process: true, cpu_s: round(sim.cpuSeconds()), peak_rss_mb: sim.peakRssMb?.() ?? 0 }
      : { process: false },
    checks_since_start: total.checksSinceStart,
    result_rows: Number(rows?.["n"] ?? 0),
    http_ceiling_req_per_s: round(ceiling.requests.average),
    ratio_to_ceiling: round(checksPerSecond / ceiling.requests.average)
  }
})

const mb = (bytes: number) => Math.round(bytes / 1024 / 1024)

/** One in-process runner with every shard, on the stores the benchmark provides. */
export const pollerLayer = Poller.layer.pipe(Layer.provide(Layer.mergeAll(Cluster.single, Publisher.layer)))

/** The stores the benchmark runs on: the configured ones, embedded by default. */
export const benchStoresLayer = Stores.layer
