import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "vitest"
import { waitForValue } from "../support/eventually.ts"
import * as FaultProxy from "../support/faultProxy.ts"
import { childEnv, freePort, startService } from "../support/process.ts"
import { freshDatabase, testRedisUrl } from "../support/stores.ts"

interface Readiness {
  readonly status: number
  readonly body: { status: string; stores: Record<string, string>; shards: { shards: number; placed: number } | null }
}

const readiness = async (url: string): Promise<Readiness> => {
  const response = await fetch(`${url}/readyz`)
  return { status: response.status, body: await response.json() as Readiness["body"] }
}

/**
 * `/readyz` for orchestrators: 503 `not_ready` naming the store that does not answer while PostgreSQL
 * or Redis is away (each behind a TCP fault proxy), 200 `ready` again once it is back; `/healthz` says
 * the same about the stores.
 */
describe("/readyz when a store is away", () => {
  it("503 while PostgreSQL or Redis does not answer, 200 once it is back", () =>
    Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const databaseUrl = new URL(yield* freshDatabase)
      const redisUrl = new URL(testRedisUrl)
      const postgres = yield* FaultProxy.scopedTo(databaseUrl.toString())
      const redis = yield* FaultProxy.scopedTo(redisUrl.toString())
      databaseUrl.host = `127.0.0.1:${postgres.port}`
      const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-readyz-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dataDir, { recursive: true, force: true })))
      const env = childEnv({
        DATABASE_URL: databaseUrl.toString(),
        // A database of this file's own beside the test process's (test/support/stores.ts): the service reads `sg:events` in a consumer group.
        REDIS_URL: `redis://127.0.0.1:${redis.port}/${(Number(redisUrl.pathname.slice(1) || "0") + 4) % 16}`,
        DATA_DIR: dataDir,
        PORT: String(yield* Effect.promise(freePort)),
        HOST: "127.0.0.1",
        POLLER_SHARDS: "4"
      })
      const running = yield* Effect.acquireRelease(
        Effect.promise(() => startService(env, 90_000)),
        (r) => Effect.promise(() => r.stop())
      )

      const ready = yield* Effect.promise(() => readiness(running.url))
      assert.strictEqual(ready.status, 200)
      assert.deepStrictEqual([ready.body.status, ready.body.stores["postgres"], ready.body.stores["bus"]], ["ready", "up", "up"])

      for (const [store, proxy] of [["bus", redis], ["postgres", postgres]] as const) {
        yield* Effect.promise(() => proxy.cut())
        const away = yield* Effect.promise(() => waitForValue(`/readyz 503 without ${store}`, async () => {
          const r = await readiness(running.url)
          return r.status === 503 ? r : undefined
        }, 20_000))
        assert.strictEqual(away.body.status, "not_ready", store)
        assert.strictEqual(away.body.stores[store], "down", store)
        const health = yield* Effect.promise(() => fetch(`${running.url}/healthz`))
        assert.strictEqual(health.status, 503, `/healthz without ${store}`)
        yield* Effect.promise(() => health.arrayBuffer())

        proxy.pass()
        const back = yield* Effect.promise(() => waitForValue(`/readyz 200 with ${store} back`, async () => {
          const r = await readiness(running.url)
          return r.status === 200 ? r : undefined
        }, 30_000))
        assert.strictEqual(back.body.status, "ready", store)
        assert.strictEqual(back.body.stores[store], "up", store)
      }
    }))), 180_000)
})
