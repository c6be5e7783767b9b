import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll } from "vitest"

export const repoRoot = Path.resolve(import.meta.dirname, "..", "..")
const cli = Path.join(repoRoot, "bin", "statusgrid.js")

/** A TCP port that was free a moment ago (the benchmarks' own). */
import { freePort } from "../../bench/processes.ts"

export { freePort }

/** The environment of a child statusgrid: no store URLs unless given. */
export const childEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_FORMAT: "json", LOG_LEVEL: "Info" }
  for (const name of ["DATABASE_URL", "REDIS_URL", "CLICKHOUSE_URL", "DATA_DIR", "PORT", "HOST"]) delete env[name]
  return { ...env, ...extra }
}

export interface Running {
  readonly child: ChildProcess
  readonly url: string
  /** Every JSON log line so far. */
  readonly logs: Array<Record<string, unknown>>
  /** Everything written to stderr. */
  readonly stderr: () => string
  /** SIGTERM, then the exit code. */
  readonly stop: () => Promise<number | null>
}

/** Runs `statusgrid start` (or another serving command) and resolves once it logs "statusgrid is up". */
export const startService = (env: NodeJS.ProcessEnv, timeoutMs = 60_000, args: ReadonlyArray<string> = ["start"]): Promise<Running> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { env, cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] })
    const logs: Array<Record<string, unknown>> = []
    let stderr = ""
    let buffer = ""
    const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)))
    // SIGTERM, and SIGKILL if the process has not exited 30 s later: a shutdown that hangs is reported
    // (its last log lines on stderr) instead of timing out the test's teardown with no trace.
    const stop = async () => {
      child.kill("SIGTERM")
      const code = await Promise.race([exited, new Promise<"hung">((done) => setTimeout(() => done("hung"), 30_000).unref())])
      if (code !== "hung") return code
      process.stderr.write(
        `[test] statusgrid (pid ${child.pid}) had not exited 30 s after SIGTERM; killed. Its last log lines:\n` +
          logs.slice(-30).map((l) => JSON.stringify(l)).join("\n") + "\n"
      )
      child.kill("SIGKILL")
      return exited
    }
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`statusgrid did not come up in ${timeoutMs} ms\n${stderr}\n${JSON.stringify(logs)}`))
    }, timeoutMs)
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.stdout!.on("data", (chunk: Buffer) => {
      buffer += chunk.toString()
      let eol: number
      while ((eol = buffer.indexOf("\n")) !== -1) {
        const line = buffer.slice(0, eol)
        buffer = buffer.slice(eol + 1)
        try {
          const entry = JSON.parse(line) as Record<string, unknown>
          logs.push(entry)
          const url = (entry["annotations"] as Record<string, unknown> | undefined)?.["url"]
          if (typeof entry["message"] === "string" && entry["message"].startsWith("statusgrid is up") && typeof url === "string") {
            clearTimeout(timer)
            resolve({ child, url, logs, stderr: () => stderr, stop })
          }
        } catch {
          stderr += line + "\n"
        }
      }
    })
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`statusgrid exited with ${code} before it was up\n${stderr}`))
    })
  })

/** Runs `statusgrid <args>` to completion. */
export const runCli = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { env, cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()))
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()))
    child.once("exit", (code) => resolve({ code, stdout, stderr }))
  })

/** A real `statusgrid start` on embedded stores in a fresh data directory, on 127.0.0.1; `stop` also removes the directory. */
export const startEmbedded = async (extra: Record<string, string> = {}, args: ReadonlyArray<string> = ["start"]): Promise<Running> => {
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-embedded-"))
  // The demo loads thousands of synthetic sources and starts its simulator: longer on a busy machine.
  const timeoutMs = args.includes("--demo") ? 150_000 : 60_000
  const running = await startService(childEnv({ DATA_DIR: dataDir, PORT: String(await freePort()), HOST: "127.0.0.1", ...extra }), timeoutMs, args)
  return {
    ...running,
    stop: async () => {
      const code = await running.stop()
      Fs.rmSync(dataDir, { recursive: true, force: true })
      return code
    }
  }
}

/** `startEmbedded` for one test file: every server it starts is stopped (and its directory removed) after the file's tests. */
export const embeddedServers = () => {
  const servers: Array<Running> = []
  afterAll(async () => {
    for (const server of servers) await server.stop()
  }, 60_000)
  return async (extra: Record<string, string> = {}, args: ReadonlyArray<string> = ["start"]) => {
    const running = await startEmbedded(extra, args)
    servers.push(running)
    return running
  }
}

/**
 * What bin/statusgrid.js answers to each of `values` for `variable` before any command runs, beside what a
 * refusal is: exit 1, nothing on stdout, one line on stderr saying what it must be (`rule`) and what it is.
 */
export const envRefusals = async (variable: string, values: ReadonlyArray<string>, rule: string) => {
  const answers = []
  for (const value of values) {
    const { code, stdout, stderr } = await runCli(["--version"], childEnv({ [variable]: value }))
    answers.push({ code, stdout, stderr })
  }
  return {
    answers,
    refusals: values.map((value) => ({ code: 1, stdout: "", stderr: `statusgrid: ${variable} must be ${rule}; it is "${value}".\n` }))
  }
}
