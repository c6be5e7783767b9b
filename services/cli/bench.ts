import { Config, ConfigProvider, Console, Effect, Layer, Logger, Option, References } from "effect"
import { Command, Flag } from "effect/cli"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { analyticsBenchServices, runAnalyticsBench } from "../../bench/analytics.ts"
import { apiBenchSeeding, apiBenchServer, runApiBench } from "../../bench/api.ts"
import { type HttpTarget, inProcessTarget, spawnHttpProcesses } from "../../bench/httpProcesses.ts"
import { runDetection, runIngest, runServiceCheck, viaProxySettings } from "../../bench/crowd.ts"
import { CrowdReports } from "../crowd/CrowdReports.ts"
import { SecretBox } from "../platform/SecretBox.ts"
import { runHistoryBench } from "../../bench/history.ts"
import { runMonitorsBench } from "../../bench/monitors.ts"
import { runNotifyBench } from "../../bench/notify.ts"
import { benchStoresLayer, runPollerBench } from "../../bench/poller.ts"
import { RunnersBenchError, runPollerRunnersBench } from "../../bench/pollerRunners.ts"
import { runRestartBench } from "../../bench/restart.ts"
import { runSoakBench } from "../../bench/soak.ts"
import { StatusHistory } from "../history/StatusHistory.ts"
import { ClickHouse } from "../platform/ClickHouse.ts"
import { firstRenders, portalBenchSeedServices, measureFirstLoadJs, measureLighthouse, measureRenders, portalBenchServer, seedPortalWorld } from "../../bench/portal.ts"
import { portalLiveBenchServer, runPortalLiveBench } from "../../bench/portalLive.ts"

/**
 * Runs a benchmark as every one runs: on a fresh embedded DATA_DIR (removed
 * afterwards) unless DATA_DIR or the stores are configured, with `settings`
 * over the environment (an environment value wins where `keep` names it), and
 * logs at Warn and above as JSON on stderr, since stdout is the one JSON line.
 */
const inBenchEnvironment = (settings: Record<string, string>, keep: ReadonlyArray<string> = []) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.acquireUseRelease(
      Effect.sync(() => process.env["DATA_DIR"] === undefined ? Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-bench-")) : undefined),
      (dataDir) => {
        const env = process.env
        const kept = Object.fromEntries(keep.flatMap((name) => env[name] === undefined ? [] : [[name, env[name]!]]))
        const overrides = ConfigProvider.fromEnvRecord({ ...env, ...(dataDir ? { DATA_DIR: dataDir } : {}), ...settings, ...kept })
        return effect.pipe(
          Effect.provide(ConfigProvider.layer(overrides)),
          Effect.provide(Layer.succeed(References.MinimumLogLevel, "Warn")),
          Effect.provide(Logger.layer([Logger.withConsoleError(Logger.formatJson)]))
        )
      },
      (dataDir) => Effect.sync(() => dataDir && Fs.rmSync(dataDir, { recursive: true, force: true }))
    )

/** The benchmarks' load comes from one address with one key: the limits per key and per address are off for them. */
const noRateLimit = { API_RATE_LIMIT_PER_MINUTE: "100000000", ADDRESS_PUBLIC_PER_MINUTE: "0", ADDRESS_SIGNIN_PER_MINUTE: "0" }

const poller = Command.make(
  "poller",
  {
    sources: Flag.Int("sources").pipe(Flag.withDefault(5200)),
    duration: Flag.Int("duration").pipe(Flag.withDescription("Measured seconds"), Flag.withDefault(120)),
    interval: Flag.Int("interval").pipe(Flag.withDescription("Check interval of every source, seconds"), Flag.withDefault(30)),
    shards: Flag.Int("shards").pipe(Flag.withDefault(16)),
    warmup: Flag.Int("warmup").pipe(
      Flag.withDescription("Seconds from the pollers' start to the measured window; default two intervals and 10 s"),
      Flag.filter((n) => n >= 0, (n) => `--warmup ${n} is below 0`),
      Flag.optional
    ),
    simulator: Flag.Literals("simulator", ["process", "inprocess"]).pipe(
      Flag.withDescription("Run the simulated upstreams in their own process (default) or in this one"),
      Flag.withDefault("process" as const)
    ),
    runners: Flag.Int("runners").pipe(
      Flag.withDescription(
        "Poll with N `statusgrid runner` processes sharing the shards (needs DATABASE_URL and REDIS_URL); " +
          "prints per-runner and aggregate figures and the cores used by runners, simulator, PostgreSQL and Redis"
      ),
      Flag.filter((n) => n >= 1, (n) => `--runners ${n} is below 1`),
      Flag.optional
    ),
    churn: Flag.Boolean("churn").pipe(Flag.withDescription(
      "With --runners 2 or more: after the measured window the last runner leaves and a new one joins under load; " +
        "how long the shards took to move, and every source's longest time without a check across it (from ClickHouse)"
    ), Flag.withDefault(false))
  },
  Effect.fn(function*({ sources, duration, interval, shards, warmup, simulator, runners, churn }) {
    // First checks spread over one interval and each writes its first snapshot; measure the steady state after.
    const warmupS = Option.getOrElse(warmup, () => 2 * interval + 10)
    const warmupFlag = Option.isSome(warmup) ? ` --warmup ${warmup.value}` : ""
    if (Option.isSome(runners)) {
      const result = yield* Effect.gen(function*() {
        const databaseUrl = yield* Config.option(Config.String("DATABASE_URL"))
        const redisUrl = yield* Config.option(Config.String("REDIS_URL"))
        if (Option.isNone(databaseUrl) || Option.isNone(redisUrl)) {
          return yield* new RunnersBenchError({
            message: "--runners needs DATABASE_URL and REDIS_URL: the runners share their shards through PostgreSQL and Redis servers"
          })
        }
        if (simulator === "inprocess") {
          return yield* new RunnersBenchError({ message: "--runners runs the simulator in its own process; --simulator inprocess does not apply" })
        }
        if (churn && runners.value < 2) {
          return yield* new RunnersBenchError({ message: "--churn needs --runners 2 or more: one runner leaves while the others keep the sources checked" })
        }
        return yield* runPollerRunnersBench({
          runners: runners.value,
          sources,
          durationS: duration,
          intervalS: interval,
          warmupS,
          shards,
          perHostConcurrency: yield* Config.String("POLL_PER_HOST_CONCURRENCY"),
          databaseUrl: databaseUrl.value,
          redisUrl: redisUrl.value,
          churn
        })
      }).pipe(
        Effect.scoped,
        inBenchEnvironment({ POLL_PER_HOST_CONCURRENCY: "4096" }, ["POLL_PER_HOST_CONCURRENCY"])
      )
      const command = `statusgrid bench poller --sources ${sources} --duration ${duration}${warmupFlag} --runners ${runners.value}${churn ? " --churn" : ""}`
      return yield* Console.log(JSON.stringify({ command, ...result }))
    }
    // Every source at one interval; the simulator is one host standing for thousands of providers,
    // so the per-host limit is lifted.
    const result = yield* runPollerBench({
      sources,
      durationS: duration,
      intervalS: interval,
      warmupS,
      ceilingS: 10,
      simulator
    }).pipe(
      Effect.provide(benchStoresLayer),
      Effect.scoped,
      inBenchEnvironment(
        { POLLER_INTERVAL_OVERRIDE_S: String(interval), POLLER_SHARDS: String(shards), POLL_PER_HOST_CONCURRENCY: "4096" },
        ["POLL_PER_HOST_CONCURRENCY"]
      )
    )
    yield* Console.log(JSON.stringify({ command: `statusgrid bench poller --sources ${sources} --duration ${duration}${warmupFlag}${simulator === "inprocess" ? " --simulator inprocess" : ""}`, ...result }))
  })
).pipe(Command.withDescription("Poll N simulated sources at one interval and print checks/s, lag, CPU, RSS and the HTTP ceiling"))

const restart = Command.make(
  "restart",
  {
    sources: Flag.Int("sources").pipe(Flag.withDefault(5200)),
    down: Flag.Int("down").pipe(Flag.withDescription("Seconds the poller is stopped between its two runs"), Flag.withDefault(60)),
    after: Flag.Int("after").pipe(Flag.withDescription("Seconds the second run is watched after every overdue source was checked (240 lets 5-minute sources come due)"), Flag.withDefault(240)),
    shards: Flag.Int("shards").pipe(Flag.withDefault(16))
  },
  Effect.fn(function*({ sources, down, after, shards }) {
    const result = yield* runRestartBench({ sources, downS: down, afterS: after, shards }).pipe(
      Effect.provide(benchStoresLayer),
      Effect.scoped,
      inBenchEnvironment({ POLLER_SHARDS: String(shards), POLL_PER_HOST_CONCURRENCY: "4096" }, ["POLL_PER_HOST_CONCURRENCY"])
    )
    yield* Console.log(JSON.stringify({ command: `statusgrid bench restart --sources ${sources} --down ${down} --after ${after}`, ...result }))
  })
).pipe(Command.withDescription(
  "N sources at their check classes' intervals: run 30 s, stop, start again; time to every overdue source checked, the others' first checks against their cadence"
))

const monitors = Command.make(
  "monitors",
  {
    monitors: Flag.Int("monitors").pipe(Flag.withDescription("Website monitors to check"), Flag.withDefault(20_000)),
    duration: Flag.Int("duration").pipe(Flag.withDescription("Measured seconds"), Flag.withDefault(60)),
    interval: Flag.Int("interval").pipe(
      Flag.withDescription("Check interval of every monitor, seconds (10-86400)"),
      Flag.filter((s) => s >= 10 && s <= 86_400, (s) => `--interval ${s} is outside 10-86400 seconds`),
      Flag.withDefault(60)
    ),
    shards: Flag.Int("shards").pipe(Flag.withDescription("Poller shards (POLLER_SHARDS)"), Flag.withDefault(16)),
    latency: Flag.String("latency").pipe(
      Flag.withDescription("The target's response delay, MIN-MAX milliseconds"),
      Flag.filter((s) => /^\d+(-\d+)?$/.test(s), (s) => `--latency ${s} is not N or MIN-MAX`),
      Flag.withDefault("50-300")
    ),
    tls: Flag.Boolean("tls").pipe(Flag.withDescription("Serve the target over HTTPS (self-signed; monitors skip verification)"), Flag.withDefault(false)),
    newConnections: Flag.Boolean("new-connections").pipe(
      Flag.withDescription("The target closes every connection, so each check connects (and handshakes) anew"),
      Flag.withDefault(false)
    )
  },
  Effect.fn(function*({ monitors, duration, interval, shards, latency, tls, newConnections }) {
    // The target is one loopback host standing for many sites: private addresses allowed, and
    // enough connections to it for every check in flight (about checks/s x 0.3 s).
    const result = yield* runMonitorsBench({
      monitors,
      durationS: duration,
      intervalS: interval,
      // First checks spread over one interval; measure the steady state after.
      warmupS: interval + 10,
      tls,
      newConnections,
      latency
    }).pipe(
      Effect.provide(benchStoresLayer),
      Effect.scoped,
      inBenchEnvironment(
        { POLLER_SHARDS: String(shards), MONITOR_ALLOW_PRIVATE: "true", MONITOR_MAX_SOCKETS_PER_HOST: "512" },
        ["MONITOR_MAX_SOCKETS_PER_HOST"]
      )
    )
    const command = `statusgrid bench monitors --monitors ${monitors} --duration ${duration} --interval ${interval}` +
      `${latency === "50-300" ? "" : ` --latency ${latency}`}${tls ? " --tls" : ""}${newConnections ? " --new-connections" : ""}`
    const { bench, ...figures } = result
    yield* Console.log(JSON.stringify({ bench, command, ...figures }))
  })
).pipe(Command.withDescription(
  "Check N website monitors at one interval against a local target (50-300 ms) and print checks/s, lag, CPU per check and RSS"
))

/** An integer flag of at least `min`. */
const count = (name: string, description: string, fallback: number, min = 1) =>
  Flag.Int(name).pipe(
    Flag.withDescription(description),
    Flag.filter((n) => n >= min, (n) => `--${name} ${n} is below ${min}`),
    Flag.withDefault(fallback)
  )

/** `--http-processes N`: the API served by N `statusgrid http` processes on one port instead of this one. */
const httpProcessesFlag = Flag.Int("http-processes").pipe(
  Flag.withDescription(
    "Serve the API from N `statusgrid http` processes sharing one port (HTTP_PROCESSES; needs DATABASE_URL and REDIS_URL) " +
      "instead of from the benchmark's own process (0)"
  ),
  Flag.filter((n) => n >= 0 && n <= 64, (n) => `--http-processes ${n} is not 0 to 64`),
  Flag.withDefault(0)
)

/**
 * Runs `run` against the API: served in this process (`processes` 0: apiBenchServer), or by that many
 * `statusgrid http` processes with `settings` in their environment (`sharingSecrets`: the keys this
 * process issues are theirs too).
 */
const onTarget = <A, E, R>(processes: number, settings: Record<string, string>, run: (target: HttpTarget) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    if (processes === 0) return yield* Effect.flatMap(inProcessTarget, run).pipe(Effect.provide(apiBenchServer))
    return yield* Effect.flatMap(spawnHttpProcesses(processes, settings), run)
  })

/** `settings` with a SECRETS_KEY for this process and its HTTP processes alike (this environment's, or a new one). */
const sharingSecrets = (processes: number, settings: Record<string, string>): Record<string, string> =>
  processes === 0 ? settings : { ...settings, SECRETS_KEY: process.env["SECRETS_KEY"] ?? Crypto.randomBytes(32).toString("base64") }

const api = Command.make(
  "api",
  {
    duration: Flag.Int("duration").pipe(Flag.withDescription("Seconds of each mix"), Flag.withDefault(30)),
    connections: Flag.Int("connections").pipe(Flag.withDescription("Concurrent connections of the read mix"), Flag.withDefault(16)),
    cacheMs: count("cache-ms", "The API's micro-cache (API_CACHE_MS); 0 measures the database path itself", 1000, 0),
    httpProcesses: httpProcessesFlag
  },
  Effect.fn(function*({ duration, connections, cacheMs, httpProcesses }) {
    // No per-key rate limit in the way of the write mix.
    const settings = sharingSecrets(httpProcesses, { ...noRateLimit, API_CACHE_MS: String(cacheMs) })
    const result = yield* onTarget(httpProcesses, settings, (target) => runApiBench({ durationS: duration, connections, cacheMs }, target)).pipe(
      Effect.provide(apiBenchSeeding),
      Effect.provide(benchStoresLayer),
      Effect.scoped,
      inBenchEnvironment(settings, ["API_RATE_LIMIT_PER_MINUTE", "ADDRESS_PUBLIC_PER_MINUTE", "ADDRESS_SIGNIN_PER_MINUTE"])
    )
    const { bench, ...figures } = result
    yield* Console.log(JSON.stringify({
      bench,
      command: `statusgrid bench api --duration ${duration} --connections ${connections} --cache-ms ${cacheMs}` +
        (httpProcesses > 0 ? ` --http-processes ${httpProcesses}` : ""),
      ...figures
    }))
  })
).pipe(Command.withDescription(
  "Drive the API's read mix (sources list, category, search, filter, one source, components) and a write mix with autocannon"
))

const notify = Command.make(
  "notify",
  {
    sources: count("sources", "Sources of the organization", 50),
    components: count("components", "Components of each source", 20),
    rate: count("rate", "Events published per second", 1000),
    duration: count("duration", "Seconds of publishing", 30),
    warmup: count("warmup", "Seconds of publishing before measuring, delivered in full first", 2, 0),
    wait: count("wait", "Seconds to wait for the last deliveries after publishing", 30)
  },
  Effect.fn(function*({ sources, components, rate, duration, warmup, wait }) {
    // The webhook receiver is on 127.0.0.1, so deliveries to private addresses are allowed.
    const result = yield* runNotifyBench({ sources, components, rate, durationS: duration, warmupS: warmup, waitS: wait }).pipe(
      Effect.provide(benchStoresLayer),
      inBenchEnvironment({ NOTIFIER_ALLOW_PRIVATE: "true" })
    )
    const command = `statusgrid bench notify --rate ${rate} --duration ${duration}` +
      `${sources === 50 ? "" : ` --sources ${sources}`}${components === 20 ? "" : ` --components ${components}`}${warmup === 2 ? "" : ` --warmup ${warmup}`}${wait === 30 ? "" : ` --wait ${wait}`}`
    const { bench, ...figures } = result
    yield* Console.log(JSON.stringify({ bench, command, ...figures }))
  })
).pipe(Command.withDescription(
  "Publish component flips onto the event stream at a rate and print deliveries to a local webhook, events/s and latency"
))

const history = Command.make(
  "history",
  {
    components: Flag.Int("components").pipe(Flag.withDescription("Components in the stack"), Flag.withDefault(500)),
    perSource: Flag.Int("per-source").pipe(Flag.withDescription("Components of each source"), Flag.withDefault(20)),
    reads: Flag.Int("reads").pipe(Flag.withDescription("Measured reads of each window"), Flag.withDefault(50))
  },
  Effect.fn(function*({ components, perSource, reads }) {
    // chDB unless CLICKHOUSE_URL names a server.
    const result = yield* runHistoryBench({ components, perSource: Math.max(1, perSource), reads: Math.max(1, reads) }).pipe(
      Effect.provide(StatusHistory.layer.pipe(Layer.provideMerge(ClickHouse.layer))),
      inBenchEnvironment({})
    )
    const { bench, ...figures } = result
    const command = `statusgrid bench history --components ${components}${perSource === 20 ? "" : ` --per-source ${perSource}`}${reads === 50 ? "" : ` --reads ${reads}`}`
    yield* Console.log(JSON.stringify({ bench, command, ...figures }))
  })
).pipe(Command.withDescription(
  "Load 90 days of checks for a stack's components and print p50/p99 of reading its whole history (24 h and 90 d)"
))

const analytics = Command.make(
  "analytics",
  {
    sources: count("sources", "Catalog sources (the real seed, then synthetic ones), each at its check class's interval", 5243),
    monitors: count("monitors", "Website monitors (30 s, 60 s and 5 min intervals)", 1000, 0),
    days: Flag.Int("days").pipe(
      Flag.withDescription("Days of history (check_results keeps 90); the issue's size is 30, ~90 min of generation on 2 cores"),
      Flag.filter((n) => n >= 1 && n <= 90, (n) => `--days ${n} is outside 1-90`),
      Flag.withDefault(3)
    ),
    reads: count("reads", "Measured reads of one source's analytics page", 200)
  },
  Effect.fn(function*({ sources, monitors, days, reads }) {
    // chDB unless CLICKHOUSE_URL names a server; on a server, its own database unless CLICKHOUSE_DATABASE names one.
    const result = yield* runAnalyticsBench({ sources, monitors, days, reads }).pipe(
      Effect.provide(analyticsBenchServices.pipe(Layer.provideMerge(benchStoresLayer))),
      Effect.scoped,
      inBenchEnvironment({ CLICKHOUSE_DATABASE: "statusgrid_bench_analytics" }, ["CLICKHOUSE_DATABASE"])
    )
    const { bench, ...figures } = result
    const command = `statusgrid bench analytics${sources === 5243 ? "" : ` --sources ${sources}`}${monitors === 1000 ? "" : ` --monitors ${monitors}`}` +
      ` --days ${days}${reads === 200 ? "" : ` --reads ${reads}`}`
    yield* Console.log(JSON.stringify({ bench, command, ...figures }))
  })
).pipe(Command.withDescription(
  "Generate N days of checks for the catalog's sources and components and for website monitors in ClickHouse, then time every source's uptime, a source's analytics page and a 500-component report, and print the disk used"
))

const portalLive = Command.make(
  "portal-live",
  {
    streams: count("streams", "Open event streams (clients in a child process)", 1000),
    deltas: count("deltas", "Changes published one after another, each awaited at every client", 5)
  },
  Effect.fn(function*({ streams, deltas }) {
    // No per-key rate limit in the way of opening the streams with one key.
    const result = yield* runPortalLiveBench({ streams, deltas }).pipe(
      Effect.provide(portalLiveBenchServer),
      Effect.provide(benchStoresLayer),
      Effect.scoped,
      inBenchEnvironment(noRateLimit, ["API_RATE_LIMIT_PER_MINUTE", "ADDRESS_PUBLIC_PER_MINUTE", "ADDRESS_SIGNIN_PER_MINUTE"])
    )
    const { bench, ...figures } = result
    yield* Console.log(JSON.stringify({ bench, command: `statusgrid bench portal-live --streams ${streams} --deltas ${deltas}`, ...figures }))
  })
).pipe(Command.withDescription(
  "Open N live event streams on one process, publish changes of a source in their stack, print delivery time to every client and memory per stream"
))

const portal = Command.make(
  "portal",
  {
    duration: count("duration", "Seconds of load on each page", 20),
    connections: count("connections", "Concurrent connections", 50),
    noBrowser: Flag.Boolean("no-browser").pipe(Flag.withDescription("Skip Lighthouse and the first-load JavaScript (no Chromium)"), Flag.withDefault(false))
  },
  Effect.fn(function*({ duration, connections, noBrowser }) {
    const chrome = process.env["CHROME_PATH"] ?? "/usr/bin/chromium"
    if (!noBrowser && !Fs.existsSync(chrome)) {
      return yield* Console.error(`statusgrid bench portal: no Chromium at ${chrome} (set CHROME_PATH, or pass --no-browser)`)
    }
    const options = { durationS: duration, connections }
    const result = yield* Effect.gen(function*() {
      const world = yield* seedPortalWorld().pipe(Effect.provide(portalBenchSeedServices))
      // With the server's micro-cache (API_CACHE_MS, 1 s by default): the first render of each page
      // after start, the renders under load, then Lighthouse and the JavaScript in Chromium.
      const cached = yield* Effect.gen(function*() {
        const first = yield* firstRenders(world)
        const renders = yield* measureRenders(world, options)
        if (noBrowser) return { first, renders }
        const lighthouse = yield* measureLighthouse(world, chrome)
        const js = yield* measureFirstLoadJs(world, chrome)
        return { first, renders, lighthouse, js }
      }).pipe(Effect.provide(portalBenchServer), Effect.scoped)
      // The same load on a server without the micro-cache (API_CACHE_MS=0): every request reads the stores.
      const uncached = yield* measureRenders(world, options).pipe(
        Effect.provide(portalBenchServer.pipe(Layer.provide(ConfigProvider.layerAdd(ConfigProvider.fromUnknown({ API_CACHE_MS: "0" }), { asPrimary: true })))),
        Effect.scoped
      )
      return {
        stacks: 10,
        components: 500,
        connections,
        duration_s: duration,
        first_render_ms: cached.first,
        render: cached.renders,
        render_without_micro_cache: uncached,
        ...("lighthouse" in cached ? { lighthouse: cached.lighthouse, dashboard_first_load_js: cached.js } : {})
      }
    }).pipe(Effect.provide(benchStoresLayer), Effect.scoped, inBenchEnvironment(noRateLimit, ["API_RATE_LIMIT_PER_MINUTE", "ADDRESS_PUBLIC_PER_MINUTE", "ADDRESS_SIGNIN_PER_MINUTE"]))
    const command = `statusgrid bench portal${duration === 20 ? "" : ` --duration ${duration}`}${connections === 50 ? "" : ` --connections ${connections}`}${noBrowser ? " --no-browser" : ""}`
    yield* Console.log(JSON.stringify({ bench: "portal", command, ...result }))
  })
).pipe(Command.withDescription(
  "Server-render the dashboard (10 stacks x 50 components), the catalog and a source page at N concurrent, with and without the micro-cache; Lighthouse and the dashboard's first-load JavaScript in Chromium"
))

/** A MIN-MAX (or N) flag of non-negative numbers. */
const range = (name: string, description: string, fallback: string) =>
  Flag.String(name).pipe(
    Flag.withDescription(description),
    Flag.filter((s) => /^\d+(\.\d+)?(-\d+(\.\d+)?)?$/.test(s), (s) => `--${name} ${s} is not N or MIN-MAX`),
    Flag.withDefault(fallback)
  )
const rangeOf = (s: string): readonly [number, number] => {
  const [a, b] = s.split("-").map(Number)
  return [a!, b ?? a!]
}

const crowd = Command.make(
  "crowd",
  {
    only: Flag.Literals("only", ["all", "detection", "service", "ingest"]).pipe(
      Flag.withDescription("Run one part: detection (in memory), service (the detector against CrowdReports), ingest (the API)"),
      Flag.withDefault("all" as const)
    ),
    sources: count("sources", "Detection: sources", 500),
    days: count("days", "Detection: days of the period (4 weeks of history before it)", 30),
    outages: count("outages", "Detection: simulated outages over random sources and times", 100, 0),
    lead: count("lead", "Minutes the reports start before the official flip", 5, 0),
    ramp: count("ramp", "Minutes from the first reports to the peak rate", 2, 0),
    peak: range("peak", "Reporters per 10 minutes at an outage's peak for an average source, MIN-MAX (times the source's scale)", "20-40"),
    duration: range("outage-minutes", "Outage durations, MIN-MAX minutes", "15-120"),
    scaleSigma: Flag.Finite("scale-sigma").pipe(
      Flag.withDescription("Spread of the sources' sizes: σ of the log of their scale (0: all average)"),
      Flag.withDefault(0.5)
    ),
    seed: Flag.Int("seed").pipe(Flag.withDefault(17)),
    serviceSources: count("service-sources", "Service check: sources", 3),
    serviceHours: count("service-hours", "Service check: hours of reports through CrowdReports.report", 6),
    rate: count("rate", "Ingest: reports per second (open loop)", 2000),
    ingestDuration: count("ingest-duration", "Ingest: measured seconds of sending", 10),
    ingestWarmup: count("ingest-warmup", "Ingest: seconds of sending at the rate before the measured ones", 3, 0),
    ingestSources: count("ingest-sources", "Ingest: sources the reports are spread over", 500),
    viaProxy: count(
      "via-proxy",
      "Ingest: send as a reverse proxy on 127.0.0.1 would, over N kept-alive connections with each reporter in X-Forwarded-For (the server trusts 127.0.0.1); 0: each report on its own connection from its own address",
      0,
      0
    ),
    httpProcesses: httpProcessesFlag
  },
  Effect.fn(function*(o) {
    const world = {
      sources: o.sources,
      days: o.days,
      outages: o.outages,
      leadMinutes: o.lead,
      rampMinutes: o.ramp,
      peak: rangeOf(o.peak),
      durationMinutes: rangeOf(o.duration),
      scaleSigma: o.scaleSigma,
      seed: o.seed
    }
    const detection = o.only === "all" || o.only === "detection" ? runDetection(world) : undefined
    const service = o.only === "all" || o.only === "service"
      ? yield* runServiceCheck({
        sources: o.serviceSources,
        hours: o.serviceHours,
        leadMinutes: o.lead,
        rampMinutes: o.ramp,
        peak: rangeOf(o.peak),
        seed: o.seed
      }).pipe(
        Effect.provide(CrowdReports.layer.pipe(Layer.provideMerge(SecretBox.layer))),
        Effect.provide(benchStoresLayer),
        Effect.scoped,
        inBenchEnvironment({ CROWD_REPORTS_PER_MINUTE: "100000000" }, ["CROWD_REPORTS_PER_MINUTE"])
      )
      : undefined
    const ingestSettings = sharingSecrets(o.httpProcesses, { ...noRateLimit, CROWD_REPORTS_PER_MINUTE: "100000000", ...viaProxySettings(o.viaProxy) })
    const ingest = o.only === "all" || o.only === "ingest"
      ? yield* onTarget(o.httpProcesses, ingestSettings, (target) =>
        runIngest({ rate: o.rate, warmupS: o.ingestWarmup, durationS: o.ingestDuration, sources: o.ingestSources, proxyConnections: o.viaProxy }, target)).pipe(
          Effect.provide(benchStoresLayer),
          Effect.scoped,
          inBenchEnvironment(ingestSettings, ["API_RATE_LIMIT_PER_MINUTE", "ADDRESS_PUBLIC_PER_MINUTE", "ADDRESS_SIGNIN_PER_MINUTE", "CROWD_REPORTS_PER_MINUTE", "TRUSTED_PROXIES"])
        )
      : undefined
    const command = `statusgrid bench crowd${o.only === "all" ? "" : ` --only ${o.only}`}` +
      (o.only === "all" || o.only === "detection"
        ? ` --sources ${o.sources} --days ${o.days} --outages ${o.outages} --lead ${o.lead} --ramp ${o.ramp} --peak ${o.peak}` +
          ` --outage-minutes ${o.duration} --scale-sigma ${o.scaleSigma} --seed ${o.seed}`
        : "") +
      (o.only === "all" || o.only === "service" ? ` --service-sources ${o.serviceSources} --service-hours ${o.serviceHours}` : "") +
      (o.only === "all" || o.only === "ingest"
        ? ` --rate ${o.rate} --ingest-duration ${o.ingestDuration} --ingest-warmup ${o.ingestWarmup} --ingest-sources ${o.ingestSources}` +
          (o.viaProxy > 0 ? ` --via-proxy ${o.viaProxy}` : "") +
          (o.httpProcesses > 0 ? ` --http-processes ${o.httpProcesses}` : "")
        : "")
    yield* Console.log(JSON.stringify({
      bench: "crowd",
      command,
      ...(detection === undefined ? {} : { detection }),
      ...(service === undefined ? {} : { service }),
      ...(ingest === undefined ? {} : { ingest })
    }))
  })
).pipe(Command.withDescription(
  "Simulated crowd reports: detection share, median lead and false alarms over N sources and D days (in memory, the service's functions), the same decisions through CrowdReports, and the report API's ingest rate"
))

const soak = Command.make(
  "soak",
  {
    minutes: count("minutes", "Minutes measured after the warm-up, one report line each (stderr)", 60),
    sources: count("sources", "Synthetic sources of the demo world (DEMO_SOURCES), each at its check class's interval", 5200),
    monitors: count("monitors", "Website monitors against a local target (50-300 ms)", 2000, 0),
    monitorInterval: Flag.Int("monitor-interval").pipe(
      Flag.withDescription("Check interval of every monitor, seconds (10-86400)"),
      Flag.filter((s) => s >= 10 && s <= 86_400, (s) => `--monitor-interval ${s} is outside 10-86400 seconds`),
      Flag.withDefault(60)
    ),
    outageSeconds: count("outage-seconds", "Seconds each store is cut for at its proxy (0: no outages)", 20, 0),
    period: Flag.Int("period").pipe(
      Flag.withDescription("Seconds per report line and between flips (the poller's stats period); shorter only for tests"),
      Flag.filter((s) => s >= 10 && s <= 3600, (s) => `--period ${s} is outside 10-3600 seconds`),
      Flag.withDefault(60)
    ),
    warmup: count("warmup", "At least this many seconds between statusgrid being up and the first period", 30, 0),
    flipSources: count("flip-sources", "Sources whose components the benchmark flips, watched by its rule", 20),
    flips: count("flips", "Components flipped at the start of each period", 10, 0),
    settle: count("settle", "At most this many seconds after the last period for deliveries and rows to catch up", 120, 0),
    postgres: Flag.String("postgres").pipe(
      Flag.withDescription("A PostgreSQL server; the run creates its own database there and drops it afterwards"),
      Flag.withDefault("postgres://postgres:postgres@127.0.0.1:5432/postgres")
    ),
    redis: Flag.String("redis").pipe(
      Flag.withDescription("A Redis database for the run alone: flushed at the start"),
      Flag.withDefault("redis://127.0.0.1:6379/12")
    )
  },
  Effect.fn(function*(o) {
    const result = yield* runSoakBench({
      minutes: o.minutes,
      sources: o.sources,
      monitors: o.monitors,
      monitorIntervalS: o.monitorInterval,
      periodS: Math.min(o.period, o.minutes * 60),
      warmupS: o.warmup,
      outageS: o.outageSeconds,
      flipSources: o.flipSources,
      flips: o.flips,
      settleS: o.settle,
      postgresUrl: o.postgres,
      redisUrl: o.redis
    }).pipe(inBenchEnvironment({}))
    const command = `statusgrid bench soak --minutes ${o.minutes}` +
      `${o.sources === 5200 ? "" : ` --sources ${o.sources}`}${o.monitors === 2000 ? "" : ` --monitors ${o.monitors}`}` +
      `${o.monitorInterval === 60 ? "" : ` --monitor-interval ${o.monitorInterval}`}` +
      `${o.outageSeconds === 20 ? "" : ` --outage-seconds ${o.outageSeconds}`}${o.period === 60 ? "" : ` --period ${o.period}`}` +
      `${o.warmup === 30 ? "" : ` --warmup ${o.warmup}`}${o.flipSources === 20 ? "" : ` --flip-sources ${o.flipSources}`}` +
      `${o.flips === 10 ? "" : ` --flips ${o.flips}`}`
    const { bench, ...figures } = result
    yield* Console.log(JSON.stringify({ bench, command, ...figures }))
  })
).pipe(Command.withDescription(
  "statusgrid start --demo (N sources, M website monitors, the notifier) on PostgreSQL, Redis and ClickHouse (chDB) servers behind fault proxies, " +
    "flipping components and cutting each store for a while; one JSON line of RSS, event-loop delay, lag, checks vs rows, events vs deliveries " +
    "every minute on stderr, and a summary"
))

export const bench = Command.make("bench").pipe(
  Command.withDescription("Benchmarks; each prints one JSON line"),
  Command.withSubcommands([poller, restart, monitors, api, notify, history, analytics, portalLive, portal, crowd, soak])
)
