import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, assert, describe, it } from "vitest"
import { childEnv, freePort, repoRoot, startService } from "../support/process.ts"

const dirs: Array<string> = []
const tempDataDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-terminal-"))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) Fs.rmSync(dir, { recursive: true, force: true })
})

/** The environment of a start a person makes: no LOG_FORMAT, so the process picks by its stdout. */
const personEnv = (extra: Record<string, string>) => {
  const env = childEnv(extra)
  delete env["LOG_FORMAT"]
  return env
}

// oxlint-disable-next-line no-control-regex -- the terminal's colour codes are what is removed
const ansi = new RegExp(String.raw`\u001b\[[0-9;]*m`, "gu")

/**
 * `statusgrid start` in a pseudo-terminal (util-linux `script`), read until its line saying where
 * to open the portal, then stopped; returns what the terminal showed, without colour codes.
 */
const startInTerminal = (env: NodeJS.ProcessEnv, timeoutMs = 45_000) =>
  new Promise<string>((resolve, reject) => {
    const command = `exec ${JSON.stringify(process.execPath)} bin/statusgrid.js start`
    const child = spawn("script", ["-qfec", command, "/dev/null"], { env, cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] })
    let shown = ""
    let up = false
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`no "statusgrid is up" line within ${timeoutMs} ms:\n${shown}`))
    }, timeoutMs)
    child.once("exit", () => {
      clearTimeout(timer)
      resolve(shown)
    })
    child.stdout.on("data", (chunk: Buffer) => {
      shown += chunk.toString()
      if (up || !/statusgrid is up: open http:\/\/\S+/u.test(shown.replace(ansi, ""))) return
      up = true
      // Ctrl+C, as the line says: the terminal sends SIGINT to the process.
      child.stdin.write("\u0003")
      setTimeout(() => child.kill("SIGKILL"), 20_000).unref()
    })
    child.once("error", reject)
  })

describe("statusgrid start's logs", () => {
  it("in a terminal: readable lines, no start-up noise, and a last line saying where to open the portal, where the data is and how to stop", async () => {
    const dataDir = tempDataDir()
    const port = await freePort()
    const shown = (await startInTerminal(personEnv({ DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1" }))).replace(ansi, "").replaceAll("\r", "")
    const lines = shown.split("\n").filter((l) => l.trim() !== "")
    // Readable, not JSON: "[07:24:36.194] INFO (#167): applied migration", then its fields indented.
    assert.isFalse(lines.some((l) => l.trimStart().startsWith("{")), shown)
    assert.isTrue(lines.some((l) => /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO .*applied migration/u.test(l)), shown)
    assert.notInclude(shown, "No healthy runners available")
    const up = lines.findIndex((l) => l.includes("statusgrid is up"))
    assert.include(lines[up], `statusgrid is up: open http://127.0.0.1:${port} · data in ${dataDir} (embedded PostgreSQL and ClickHouse) · stop with Ctrl+C`)
    // Every shard's start-up line comes before it: nothing of the start follows but its own fields.
    assert.isFalse(lines.slice(up + 1).some((l) => l.includes("shard started")), shown)
  })

  it("piped: one JSON object per line, the same last line as a message with the url", async () => {
    const running = await startService(personEnv({ DATA_DIR: tempDataDir(), PORT: String(await freePort()), HOST: "127.0.0.1" }))
    try {
      assert.strictEqual(running.stderr().trim(), "", "every line on stdout was JSON")
      const up = running.logs.findIndex((l) => String(l["message"]).startsWith("statusgrid is up"))
      assert.match(String(running.logs[up]!["message"]), /^statusgrid is up: open http:\/\/127\.0\.0\.1:\d+ · data in .+ · stop with Ctrl\+C$/u)
      assert.isTrue(running.logs.slice(0, up).some((l) => l["message"] === "shard started"))
      assert.isFalse(running.logs.some((l) => l["message"] === "No healthy runners available"))

      // Ready: every store answers and all 16 shards run.
      const ready = await fetch(`${running.url}/readyz`)
      assert.strictEqual(ready.status, 200)
      const body = await ready.json() as { status: string; stores: Record<string, string>; shards: { shards: number; placed: number; sources: number } }
      assert.deepStrictEqual(body.stores, { postgres: "up", clickhouse: "up", bus: "up" })
      assert.strictEqual(body.status, "ready")
      assert.strictEqual(body.shards.shards, 16)
      assert.strictEqual(body.shards.placed, 16)
      assert.isAbove(body.shards.sources, 0)
    } finally {
      await running.stop()
    }
  })
})
