import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "vitest"
import { spawnClickHouse } from "../../bench/clickhouseProcess.ts"
import { childEnv, freePort, type Running, runCli, startService } from "../support/process.ts"
import { freshDatabase, testRedisUrl } from "../support/stores.ts"

/**
 * HTTP processes on one port (decision 0020): `HTTP_PROCESSES=N` on a runner starts N-1 `statusgrid
 * http` processes sharing its port (SO_REUSEPORT); each answers; they go when the runner goes, even
 * killed; an API edit made through one reaches its poller shard at once (the cluster as a client).
 */

/** GET over a connection of its own (the kernel picks the process per connection): status and body. */
const getFresh = (url: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const request = Http.get(url, { agent: false, headers: { connection: "close" } }, (response) => {
      let body = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => (body += chunk))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }))
    })
    request.on("error", reject)
  })

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The pids of the "HTTP only" processes that said they are up, from the runner's logs (their stdout is its). */
const httpOnlyPids = (running: Running) =>
  running.logs.flatMap((l) => {
    const pid = (l["annotations"] as Record<string, unknown> | undefined)?.["pid"]
    return typeof l["message"] === "string" && l["message"].startsWith("statusgrid is up: HTTP only") && typeof pid === "number" ? [pid] : []
  })

const waitFor = async (what: string, ok: () => boolean, timeoutMs: number) => {
  const until = Date.now() + timeoutMs
  while (!ok()) {
    if (Date.now() > until) throw new Error(`${what}: not within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

const tempDir = (name: string) =>
  Effect.acquireRelease(
    Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), `statusgrid-${name}-`))),
    (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
  )

describe("HTTP processes on one port", () => {
  it("HTTP_PROCESSES=3: three processes answer on the runner's port, and they stop when it is killed", () =>
    Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const databaseUrl = yield* freshDatabase
      const clickhouse = yield* spawnClickHouse(yield* tempDir("http-clickhouse"))
      const dataDir = yield* tempDir("http-processes")
      const env = childEnv({
        DATABASE_URL: databaseUrl,
        REDIS_URL: testRedisUrl,
        CLICKHOUSE_URL: clickhouse.url,
        DATA_DIR: dataDir,
        HOST: "127.0.0.1",
        PORT: String(yield* Effect.promise(freePort)),
        RUNNER_PORT: String(yield* Effect.promise(freePort)),
        POLLER_SHARDS: "2",
        HTTP_PROCESSES: "3",
        SECRETS_KEY: randomBytes(32).toString("base64")
      })
      const runner = yield* Effect.acquireRelease(
        Effect.promise(() => startService(env, 90_000, ["runner"])),
        (r) => Effect.promise(() => r.stop())
      )
      yield* Effect.promise(() => waitFor("two HTTP-only processes up", () => httpOnlyPids(runner).length >= 2, 60_000))
      const children = httpOnlyPids(runner)
      assert.strictEqual(new Set(children).size, 2)

      // Each connection goes to one of the three: their start times, read from /metrics, tell them apart.
      const started = new Set<string>()
      for (let i = 0; i < 40; i++) {
        const metrics = yield* Effect.promise(() => getFresh(`${runner.url}/metrics`))
        assert.strictEqual(metrics.status, 200)
        started.add(/^process_start_time_seconds (\S+)$/m.exec(metrics.body)![1]!)
        const sources = yield* Effect.promise(() => getFresh(`${runner.url}/api/v1/sources?limit=1`))
        assert.strictEqual(sources.status, 200, sources.body)
      }
      assert.strictEqual(started.size, 3, `start times seen: ${[...started].join(", ")}`)

      // Killed outright, the runner cannot stop them: they notice within a couple of seconds.
      runner.child.kill("SIGKILL")
      yield* Effect.promise(() => waitFor("the HTTP processes gone", () => children.every((pid) => !alive(pid)), 10_000))
      const refused = yield* Effect.promise(() => getFresh(`${runner.url}/healthz`).then(() => false, () => true))
      assert.isTrue(refused, "nothing answers on the port any more")
    }))), 180_000)

  it("an API edit made through `statusgrid http` reaches its poller shard at once", () =>
    Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const databaseUrl = yield* freshDatabase
      const clickhouse = yield* spawnClickHouse(yield* tempDir("http-edit-clickhouse"))
      // The monitored endpoint: counts its checks.
      let hits = 0
      const target = Http.createServer((_, res) => {
        hits++
        res.end("ok")
      })
      yield* Effect.acquireRelease(
        Effect.promise(() => new Promise<void>((r) => target.listen(0, "127.0.0.1", r))),
        () => Effect.promise(() => new Promise<void>((r) => target.close(() => r())))
      )
      const targetPort = (target.address() as { port: number }).port
      const common = {
        DATABASE_URL: databaseUrl,
        REDIS_URL: testRedisUrl,
        CLICKHOUSE_URL: clickhouse.url,
        HOST: "127.0.0.1",
        POLLER_SHARDS: "2",
        // Without the reload a shard would see the new monitor only at its next refresh, 10 minutes on.
        POLLER_REFRESH_MS: "600000",
        MONITOR_ALLOW_PRIVATE: "true",
        SECRETS_KEY: randomBytes(32).toString("base64")
      }
      const envFor = (dataDir: string) =>
        Effect.gen(function*() {
          return childEnv({
            ...common,
            DATA_DIR: dataDir,
            PORT: String(yield* Effect.promise(freePort)),
            RUNNER_PORT: String(yield* Effect.promise(freePort))
          })
        })
      const runnerEnv = yield* envFor(yield* tempDir("http-edit-runner"))
      yield* Effect.acquireRelease(Effect.promise(() => startService(runnerEnv, 90_000, ["runner"])), (r) => Effect.promise(() => r.stop()))
      const httpEnv = yield* envFor(yield* tempDir("http-edit-http"))
      const http = yield* Effect.acquireRelease(Effect.promise(() => startService(httpEnv, 90_000, ["http"])), (r) => Effect.promise(() => r.stop()))

      const created = yield* Effect.promise(() => runCli(["org", "create", "--name", "Edits", "--slug", "edits"], httpEnv))
      assert.strictEqual(created.code, 0, created.stderr)
      const key = (JSON.parse(created.stdout.trim().split("\n").at(-1)!) as { admin_api_key: string }).admin_api_key
      const response = yield* Effect.promise(() =>
        fetch(`${http.url}/api/v1/monitors`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ name: "Edge", url: `http://127.0.0.1:${targetPort}/health` })
        })
      )
      assert.strictEqual(response.status, 201, yield* Effect.promise(() => response.text()))
      yield* Effect.promise(() => waitFor("the new monitor checked", () => hits > 0, 30_000))
      assert.isFalse(
        http.logs.some((l) => l["message"] === "could not reload shards"),
        "the HTTP process told the shard through the cluster"
      )
    }))), 180_000)

  it("statusgrid http on the embedded stores is refused in one line", async () => {
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-http-embedded-"))
    try {
      const result = await runCli(["http"], childEnv({ DATA_DIR: dataDir }))
      assert.strictEqual(result.code, 1)
      const lines = result.stderr.trim().split("\n")
      assert.strictEqual(lines.length, 1, result.stderr)
      assert.match(lines[0]!, /^statusgrid http failed: statusgrid http needs DATABASE_URL, REDIS_URL, CLICKHOUSE_URL set/)
    } finally {
      Fs.rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
