import { ConfigProvider, Console, Effect, Layer, References } from "effect"
import { Command, Flag } from "effect/cli"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { benchStoresLayer, runPollerBench } from "../../bench/poller.ts"

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

export const bench = Command.make("bench").pipe(
  Command.withDescription("Benchmarks; each prints one JSON line"),
  Command.withSubcommands([poller])
)
