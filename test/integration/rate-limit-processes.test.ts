import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "vitest"
import { childEnv, freePort, type Running, runCli, startService } from "../support/process.ts"
import { freshDatabase, testRedisUrl } from "../support/stores.ts"

/**
 * The per-key limit is one count for the whole deployment (Redis, one atomic step per request:
 * services/api/RateLimiter.ts, Bus.incr): two runner processes answering the same key give it
 * its limit once, not once each.
 */
describe("the API's per-key limit across processes", () => {
  it("two runners sharing Redis allow a key 10 requests a minute together, not 10 each", () =>
    Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const databaseUrl = yield* freshDatabase
      // One secrets key for every process: API keys are stored as keyed hashes under it.
      const secretsKey = randomBytes(32).toString("base64")
      const runners: Array<Running> = []
      yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all(runners.map((r) => r.stop()))))
      const envOf = (dataDir: string, extra: Record<string, string> = {}) =>
        Effect.gen(function*() {
          return childEnv({
            DATABASE_URL: databaseUrl,
            REDIS_URL: testRedisUrl,
            DATA_DIR: dataDir,
            PORT: String(yield* Effect.promise(freePort)),
            RUNNER_PORT: String(yield* Effect.promise(freePort)),
            POLLER_SHARDS: "4",
            API_RATE_LIMIT_PER_MINUTE: "10",
            SECRETS_KEY: secretsKey,
            ...extra
          })
        })
      for (let i = 0; i < 2; i++) {
        const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), `statusgrid-limit-${i}-`))
        yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dataDir, { recursive: true, force: true })))
        runners.push(yield* Effect.promise(() => Effect.runPromise(envOf(dataDir)).then((env) => startService(env, 90_000, ["runner"]))))
      }
      const cliDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-limit-cli-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(cliDir, { recursive: true, force: true })))
      const created = yield* Effect.promise(() =>
        Effect.runPromise(envOf(cliDir)).then((env) => runCli(["org", "create", "--name", "Limits", "--slug", "limits"], env))
      )
      assert.strictEqual(created.code, 0, created.stderr)
      const key = (JSON.parse(created.stdout.trim().split("\n").at(-1)!) as { admin_api_key: string }).admin_api_key

      // Inside one minute window, so that the count does not start over under the test.
      const left = 60_000 - (Date.now() % 60_000)
      if (left < 15_000) yield* Effect.sleep(left + 200)
      const statuses: Array<number> = []
      for (let i = 0; i < 12; i++) {
        const runner = runners[i % 2]!
        const response = yield* Effect.promise(() => fetch(`${runner.url}/api/v1/organization`, { headers: { authorization: `Bearer ${key}` } }))
        yield* Effect.promise(() => response.arrayBuffer())
        statuses.push(response.status)
      }
      assert.deepStrictEqual(statuses, [...Array.from({ length: 10 }, () => 200), 429, 429])
    }))), 180_000)
})
