import { Effect, Option, Schedule } from "effect"
import { Command, Flag } from "effect/cli"
import * as Simulator from "../simulator/Server.ts"

const latencyPattern = /^(\d+)(?:-(\d+))?$/

/** `statusgrid simulate`: serve simulated upstream status pages until stopped. */
export const simulate = Command.make(
  "simulate",
  {
    port: Flag.Int("port").pipe(Flag.withDescription("Port to listen on (0 = any free port)"), Flag.withDefault(4100)),
    host: Flag.String("host").pipe(Flag.withDefault("127.0.0.1")),
    sources: Flag.Int("sources").pipe(
      Flag.withDescription("Synthetic sources to serve (the catalog's sim- sources)"),
      Flag.withDefault(5200)
    ),
    latency: Flag.String("latency").pipe(
      Flag.withDescription("Response delay in ms, fixed (100) or uniform range (50-500)"),
      Flag.optional
    ),
    errorRate: Flag.Finite("error-rate").pipe(Flag.withDescription("Share of requests answered 5xx (0-1)"), Flag.withDefault(0)),
    timeoutRate: Flag.Finite("timeout-rate").pipe(
      Flag.withDescription("Share of requests never answered (0-1)"),
      Flag.withDefault(0)
    ),
    stopWithParent: Flag.Boolean("stop-with-parent").pipe(
      Flag.withDescription("Exit when the process that started this one ends, even by SIGKILL (the demo's child)"),
      Flag.withDefault(false)
    )
  },
  Effect.fn(function*({ port, host, sources, latency, errorRate, timeoutRate, stopWithParent }) {
    const match = Option.isSome(latency) ? latencyPattern.exec(latency.value) : null
    if (Option.isSome(latency) && !match) return yield* Effect.fail(new Error("--latency: expected N or MIN-MAX (milliseconds)"))
    const min = match ? Number(match[1]) : 0
    const max = match ? Number(match[2] ?? match[1]) : 0
    const sim = yield* Simulator.make({
      port,
      host,
      sources,
      behaviour: { latency_min_ms: min, latency_max_ms: Math.max(min, max), error_rate: errorRate, timeout_rate: timeoutRate }
    })
    yield* Effect.logInfo("simulator is up").pipe(Effect.annotateLogs({
      url: sim.url,
      sources: sim.state.sources.size,
      control: `${sim.url}/_control/sources`
    }))
    if (!stopWithParent) return yield* Effect.never
    // A parent that ends, however it ends, leaves this process to another parent.
    const parent = process.ppid
    return yield* Effect.sync(() => process.ppid).pipe(
      Effect.repeat({ until: (ppid) => ppid !== parent, schedule: Schedule.spaced("500 millis") }),
      Effect.andThen(Effect.logInfo("the parent process ended; stopping the simulator"))
    )
  }, Effect.scoped)
).pipe(Command.withDescription(
  "Serve simulated upstream status pages in every provider format, with a control API to change them"
))
