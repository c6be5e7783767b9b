import { Effect, Schema } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as Path from "node:path"

export class DemoError extends Schema.TaggedError<DemoError>()("DemoError", {
  message: Schema.String
}) {}

const cli = Path.resolve(import.meta.dirname, "..", "..", "bin", "statusgrid.js")

export interface SimulatorChild {
  /** Where it serves, with the port it actually listens on. */
  readonly url: string
  readonly pid: number
}

/** `host` and `port` of a simulator URL such as http://127.0.0.1:4100 (port 0: any free port). */
export const listenAddress = (url: string) =>
  Effect.try({
    try: () => {
      const parsed = new URL(url)
      if (parsed.protocol !== "http:") throw new Error("not http")
      return { host: parsed.hostname.replace(/^\[|\]$/g, ""), port: parsed.port === "" ? 80 : Number(parsed.port) }
    },
    catch: () => new DemoError({ message: `SIMULATOR_URL: expected http://host:port, got ${JSON.stringify(url)}` })
  })

const waitUntilUp = (child: ChildProcess, url: string, timeoutMs: number) =>
  Effect.callback<string, DemoError>((resume) => {
    let buffer = ""
    let output = ""
    const done = (result: Effect.Effect<string, DemoError>) => {
      clearTimeout(timer)
      child.stdout!.off("data", onData)
      child.off("exit", onExit)
      resume(result)
    }
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString()
      let eol: number
      while ((eol = buffer.indexOf("\n")) !== -1) {
        const line = buffer.slice(0, eol)
        buffer = buffer.slice(eol + 1)
        output += line + "\n"
        try {
          const entry = JSON.parse(line) as { message?: unknown; annotations?: { url?: unknown } }
          if (entry.message === "simulator is up" && typeof entry.annotations?.url === "string") {
            // Later lines (warnings) go where this process logs.
            if (buffer !== "") process.stdout.write(buffer)
            child.stdout!.pipe(process.stdout, { end: false })
            return done(Effect.succeed(entry.annotations.url))
          }
        } catch {
          // not a log line
        }
      }
    }
    const onExit = (code: number | null) =>
      done(Effect.fail(new DemoError({
        message: `the demo's simulator (${url}) exited with ${code} before it was up; ` +
          `is the port in use? Set SIMULATOR_URL to a free address.\n${output.trim()}`
      })))
    const timer = setTimeout(
      () => done(Effect.fail(new DemoError({ message: `the demo's simulator did not come up at ${url} within ${timeoutMs} ms` }))),
      timeoutMs
    )
    child.stdout!.on("data", onData)
    child.once("exit", onExit)
  })

const stop = (child: ChildProcess) =>
  Effect.callback<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    const force = setTimeout(() => child.kill("SIGKILL"), 5_000)
    child.once("exit", () => {
      clearTimeout(force)
      resume(Effect.void)
    })
    child.kill("SIGTERM")
  })

/**
 * `statusgrid simulate` as a child process serving `sources` synthetic
 * sources at `url`: stopped (SIGTERM, then SIGKILL) when the scope closes,
 * and exiting by itself when this process ends in any other way
 * (`--stop-with-parent`).
 */
export const spawnSimulator = Effect.fn("Demo.spawnSimulator")(function*(options: {
  readonly url: string
  readonly sources: number
  readonly timeoutMs?: number
}) {
  const { host, port } = yield* listenAddress(options.url)
  const child = yield* Effect.acquireRelease(
    Effect.sync(() =>
      spawn(process.execPath, [
        cli, "simulate", "--host", host, "--port", String(port), "--sources", String(options.sources), "--stop-with-parent"
      ], { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, LOG_FORMAT: "json", LOG_LEVEL: "Info" } })
    ),
    stop
  )
  const url = yield* waitUntilUp(child, options.url, options.timeoutMs ?? 60_000)
  return { url, pid: child.pid! } satisfies SimulatorChild
})
