import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as Readline from "node:readline"

/** A helper process of a benchmark: where it serves, and its pid for /proc. */
export interface ScriptProcess {
  readonly url: string
  readonly pid: number
}

/**
 * `node <script> <args>` as its own process (Node strips the types), for a benchmark's helpers
 * (bench/monitorTarget.ts, bench/clickhouseServer.ts): up once it prints its first line, one JSON
 * object `{ "url": ... }`; stderr is this process's. Stopped with SIGTERM when the scope closes.
 */
export const spawnScript = Effect.fn("bench.spawnScript")(function*(script: string, args: ReadonlyArray<string>, what: string) {
  const child = yield* Effect.acquireRelease(
    Effect.sync(() => spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "inherit"] })),
    (child) => Effect.sync(() => child.kill("SIGTERM"))
  )
  const url = yield* Effect.callback<string, Error>((resume) => {
    const lines = Readline.createInterface({ input: child.stdout })
    const timer = setTimeout(() => resume(Effect.fail(new Error(`${what} did not start within 30 s`))), 30_000)
    const exited = (code: number | null) => {
      clearTimeout(timer)
      resume(Effect.fail(new Error(`${what} exited with ${code}`)))
    }
    child.once("exit", exited)
    lines.once("line", (line) => {
      clearTimeout(timer)
      child.off("exit", exited)
      lines.close()
      resume(Effect.succeed((JSON.parse(line) as { url: string }).url))
    })
  }).pipe(Effect.orDie)
  return { url, pid: child.pid! } satisfies ScriptProcess
})
