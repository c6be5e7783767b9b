import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as Path from "node:path"
import { freePort, procCpu, procPeakRss } from "./processes.ts"

const cli = Path.resolve(import.meta.dirname, "..", "bin", "statusgrid.js")

export interface SimulatorProcess {
  readonly url: string
  /** CPU seconds (user + system) the simulator has used so far, from /proc. */
  readonly cpuSeconds: () => number
  /** Peak resident set of the simulator so far (VmHWM), in MiB. */
  readonly peakRssMb: () => number
}

/**
 * `statusgrid simulate` in its own process, as upstream status pages are
 * other machines: the poller's CPU and memory figures are then its own.
 * Stopped (SIGTERM) when the scope closes.
 */
export const spawnSimulator = Effect.fn("bench.spawnSimulator")(function*(options: {
  readonly sources: number
  readonly latency: string
  readonly errorRate: number
}) {
  const port = yield* Effect.promise(freePort)
  const child = yield* Effect.acquireRelease(
    Effect.sync(() =>
      spawn(process.execPath, [
        cli, "simulate", "--port", String(port), "--sources", String(options.sources),
        "--latency", options.latency, "--error-rate", String(options.errorRate)
      ], { stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, LOG_LEVEL: "Warn" } })
    ),
    (child) => Effect.sync(() => child.kill("SIGTERM"))
  )
  const url = `http://127.0.0.1:${port}`
  // Up once its control API answers.
  const started = Date.now()
  for (;;) {
    const ok = yield* Effect.promise(() =>
      fetch(`${url}/_control/health`).then((r) => r.status < 500, () => false)
    )
    if (ok) break
    if (child.exitCode !== null) return yield* Effect.die(new Error(`simulator exited with ${child.exitCode}`))
    if (Date.now() - started > 60_000) return yield* Effect.die(new Error("simulator did not come up within 60 s"))
    yield* Effect.sleep("200 millis")
  }
  const pid = child.pid!
  return { url, cpuSeconds: () => procCpu(pid), peakRssMb: () => procPeakRss(pid) } satisfies SimulatorProcess
})
