import { ConfigProvider, Console, Effect, Layer, Logger, References } from "effect"
import { Command, Flag } from "effect/cli"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { apiBenchServer, runApiBench } from "../../bench/api.ts"
import { runHistoryBench } from "../../bench/history.ts"
import { runMonitorsBench } from "../../bench/monitors.ts"
import { runNotifyBench } from "../../bench/notify.ts"
import { benchStoresLayer, runPollerBench } from "../../bench/poller.ts"
import { StatusHistory } from "../history/StatusHistory.ts"
import { ClickHouse } from "../platform/ClickHouse.ts"
import { portalLiveBenchServer, runPortalLiveBench } from "../../bench/portalLive.ts"

const poller = Command.make(
  "poller",
  {
    sources: Flag.Int("sources").pipe(Flag.withDefault(5200)),
    duration: Flag.Int("duration").pipe(Flag.withDescription("Measured seconds"), Flag.withDefault(120)),
    interval: Flag.Int("interval").pipe(Flag.withDescription("Check interval of every source, seconds"), Flag.withDefault(30)),
    shards: Flag.Int("shards").pipe(Flag.withDefault(16)),
    simulator: Flag.Literals("simulator", ["process", "inprocess"]).pipe(
      Flag.withDescription("Run the simulated upstreams in their own process (default) or in this one"),
      Flag.withDefault("process" as const)
    )
  },
  Effect.fn(function*({ sources, duration, interval, shards, simulator }) {
    // A fresh embedded DATA_DIR unless stores are configured; every source at one interval; the
    // simulator is one host standing for thousands of providers, so the per-host limit is lifted.
    const env = process.env
    const overrides = ConfigProvider.fromEnvRecord({
      ...env,
      DATA_DIR: env["DATA_DIR"] ?? Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-bench-")),
      POLLER_INTERVAL_OVERRIDE_S: String(interval),
      POLLER_SHARDS: String(shards),
      POLL_PER_HOST_CONCURRENCY: env["POLL_PER_HOST_CONCURRENCY"] ?? "4096"
    })
    const result = yield* runPollerBench({
      sources,
      durationS: duration,
      intervalS: interval,
      // First checks spread over one interval and each writes its first snapshot; measure the steady state after.
      warmupS: 2 * interval + 10,
      ceilingS: 10,
      simulator
    }).pipe(
      Effect.provide(benchStoresLayer),
      Effect.scoped,
      Effect.provide(ConfigProvider.layer(overrides)),
      Effect.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))
    )
    yield* Console.log(JSON.stringify({ command: `statusgrid bench poller --sources ${sources} --duration ${duration}${simulator === "inprocess" ? " --simulator inprocess" : ""}`, ...result }))
  })
).pipe(Command.withDescription("Poll N simulated sources at one interval and print checks/s, lag, CPU, RSS and the HTTP ceiling"))

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
    // A fresh embedded DATA_DIR (removed afterwards) unless stores are configured. The target is
    // one loopback host standing for many sites: private addresses allowed, and enough connections
    // to it for every check in flight (about checks/s x 0.3 s).
    const env = process.env
    const dataDir = env["DATA_DIR"] === undefined ? Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-bench-")) : undefined
    const overrides = ConfigProvider.fromEnvRecord({
      ...env,
      ...(dataDir ? { DATA_DIR: dataDir } : {}),
      POLLER_SHARDS: String(shards),
      MONITOR_ALLOW_PRIVATE: "true",
      MONITOR_MAX_SOCKETS_PER_HOST: env["MONITOR_MAX_SOCKETS_PER_HOST"] ?? "512"
    })
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
      Effect.provide(ConfigProvider.layer(overrides)),
      Effect.provide(Layer.succeed(References.MinimumLogLevel, "Warn")),
      // Logs on stderr: stdout is the one JSON line (the cluster warns while shutting down).
      Effect.provide(Logger.layer([Logger.withConsoleError(Logger.formatJson)])),
      Effect.ensuring(Effect.sync(() => dataDir && Fs.rmSync(dataDir, { recursive: true, force: true })))
    )
    const command = `statusgrid bench monitors --monitors ${monitors} --duration ${duration} --interval ${interval}` +
      `${latency === "50-300" ? "" : ` --latency ${latency}`}${tls ? " --tls" : ""}${newConnections ? " --new-connections" : ""}`
    const { bench, ...figures } = result
    yield* Console.log(JSON.stringify({ bench, command, ...figures }))
  })
).pipe(Command.withDescription(
  "Check N website monitors at one interval against a local target (50-300 ms) and print checks/s, lag, CPU per check and RSS"
))

const api = Command.make(
  "api",
  {
    duration: Flag.Int("duration").pipe(Flag.withDescription("Seconds of each mix"), Flag.withDefault(30)),
    connections: Flag.Int("connections").pipe(Flag.withDescription("Concurrent connections of the read mix"), Flag.withDefault(16))
  },
  Effect.fn(function*({ duration, connections }) {
    // A fresh embedded DATA_DIR (removed afterwards) unless stores are configured; no per-key rate
    // limit in the way of the write mix.
    const env = process.env
    const dataDir = env["DATA_DIR"] === undefined ? Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-bench-")) : undefined
    const overrides = ConfigProvider.fromEnvRecord({
      ...env,
      ...(dataDir ? { DATA_DIR: dataDir } : {}),
      API_RATE_LIMIT_PER_MINUTE: env["API_RATE_LIMIT_PER_MINUTE"] ?? "100000000"
    })
    const result = yield* runApiBench({ durationS: duration, connections }).pipe(
      Effect.provide(apiBenchServer),
      Effect.provide(benchStoresLayer),
      Effect.scoped,
      Effect.provide(ConfigProvider.layer(overrides)),
      Effect.provide(Layer.succeed(References.MinimumLogLevel, "Warn")),
      Effect.provide(Logger.layer([Logger.withConsoleError(Logger.formatJson)])),
      Effect.ensuring(Effect.sync(() => dataDir && Fs.rmSync(dataDir, { recursive: true, force: true })))
    )
    const { bench, ...figures } = result
    yield* Console.log(JSON.stringify({ bench, command: `statusgrid bench api --duration ${duration} --connections ${connections}`, ...figures }))
  })
).pipe(Command.withDescription(
  "Drive the API's read mix (sources list, category, search, filter, one source, components) and a write mix with autocannon"
))

/** An integer flag of at least `min`. */
const count = (name: string, description: string, fallback: number, min = 1) =>
  Flag.Int(name).pipe(
    Flag.withDescription(description),
    Flag.filter((n) => n >= min, (n) => `--${name} ${n} is below ${min}`),
    Flag.withDefault(fallback)
  )

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
    // A fresh embedded DATA_DIR (removed afterwards; it also holds the secrets key) unless stores are
    // configured; the webhook receiver is on 127.0.0.1, so deliveries to private addresses are allowed.
    const env = process.env
    const dataDir = env["DATA_DIR"] === undefined ? Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-bench-")) : undefined
    const overrides = ConfigProvider.fromEnvRecord({
      ...env,
      ...(dataDir ? { DATA_DIR: dataDir } : {}),
      NOTIFIER_ALLOW_PRIVATE: "true"
    })
    const result = yield* runNotifyBench({ sources, components, rate, durationS: duration, warmupS: warmup, waitS: wait }).pipe(
      Effect.provide(benchStoresLayer),
      Effect.provide(ConfigProvider.layer(overrides)),
      Effect.provide(Layer.succeed(References.MinimumLogLevel, "Warn")),
      Effect.provide(Logger.layer([Logger.withConsoleError(Logger.formatJson)])),
      Effect.ensuring(Effect.sync(() => dataDir && Fs.rmSync(dataDir, { recursive: true, force: true })))
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
    // chDB in a fresh DATA_DIR (removed afterwards) unless CLICKHOUSE_URL names a server.
    const env = process.env
    const dataDir = env["DATA_DIR"] === undefined ? Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-bench-")) : undefined
    const overrides = ConfigProvider.fromEnvRecord({ ...env, ...(dataDir ? { DATA_DIR: dataDir } : {}) })
    const result = yield* runHistoryBench({ components, perSource: Math.max(1, perSource), reads: Math.max(1, reads) }).pipe(
      Effect.provide(StatusHistory.layer.pipe(Layer.provideMerge(ClickHouse.layer))),
      Effect.provide(ConfigProvider.layer(overrides)),
      Effect.provide(Layer.succeed(References.MinimumLogLevel, "Warn")),
      Effect.ensuring(Effect.sync(() => dataDir && Fs.rmSync(dataDir, { recursive: true, force: true })))
    )
    const { bench, ...figures } = result
    const command = `statusgrid bench history --components ${components}${perSource === 20 ? "" : ` --per-source ${perSource}`}${reads === 50 ? "" : ` --reads ${reads}`}`
    yield* Console.log(JSON.stringify({ bench, command, ...figures }))
  })
).pipe(Command.withDescription(
  "Load 90 days of checks for a stack's components and print p50/p99 of reading its whole history (24 h and 90 d)"
))

const portalLive = Command.make(
  "portal-live",
  {
    streams: count("streams", "Open event streams (clients in a child process)", 1000),
    deltas: count("deltas", "Changes published one after another, each awaited at every client", 5)
  },
  Effect.fn(function*({ streams, deltas }) {
    // A fresh embedded DATA_DIR (removed afterwards) unless stores are configured; no per-key rate
    // limit in the way of opening the streams with one key.
    const env = process.env
    const dataDir = env["DATA_DIR"] === undefined ? Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-bench-")) : undefined
    const overrides = ConfigProvider.fromEnvRecord({
      ...env,
      ...(dataDir ? { DATA_DIR: dataDir } : {}),
      API_RATE_LIMIT_PER_MINUTE: env["API_RATE_LIMIT_PER_MINUTE"] ?? "100000000"
    })
    const result = yield* runPortalLiveBench({ streams, deltas }).pipe(
      Effect.provide(portalLiveBenchServer),
      Effect.provide(benchStoresLayer),
      Effect.scoped,
      Effect.provide(ConfigProvider.layer(overrides)),
      Effect.provide(Layer.succeed(References.MinimumLogLevel, "Warn")),
      Effect.provide(Logger.layer([Logger.withConsoleError(Logger.formatJson)])),
      Effect.ensuring(Effect.sync(() => dataDir && Fs.rmSync(dataDir, { recursive: true, force: true })))
    )
    const { bench, ...figures } = result
    yield* Console.log(JSON.stringify({ bench, command: `statusgrid bench portal-live --streams ${streams} --deltas ${deltas}`, ...figures }))
  })
).pipe(Command.withDescription(
  "Open N live event streams on one process, publish changes of a source in their stack, print delivery time to every client and memory per stream"
))

export const bench = Command.make("bench").pipe(
  Command.withDescription("Benchmarks; each prints one JSON line"),
  Command.withSubcommands([poller, monitors, api, notify, history, portalLive])
)
