import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Path from "node:path"

const cli = Path.resolve(import.meta.dirname, "..", "bin", "statusgrid.js")

export interface SimulatorProcess {
  readonly url: string
  /** CPU seconds (user + system) the simulator has used so far, from /proc. */
  readonly cpuSeconds: () => number
  /** Peak resident set of the simulator so far (VmHWM), in MiB. */
  readonly peakRssMb: () => number
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0))
    })
  })

const clockTicks = 100

const procCpu = (pid: number): number => {
  try {
    // Fields after the command name: utime and stime are the 12th and 13th.
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / clockTicks
  } catch {
    return 0
  }
}

const procPeakRss = (pid: number): number => {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(Fs.readFileSync(`/proc/${pid}/status`, "utf8"))
    return match ? Math.round(Number(match[1]) / 1024) : 0
  } catch {
    return 0
  }
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
