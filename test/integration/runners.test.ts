import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "vitest"
import * as Catalog from "../../services/catalog/Catalog.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import * as Simulator from "../../services/simulator/Server.ts"
import { childEnv, freePort, type Running, startService } from "../support/process.ts"
import { freshDatabase, testRedisUrl } from "../support/stores.ts"

const shardStarts = (runner: Running) => runner.logs.filter((l) => l["message"] === "shard started").length

/** How long until `ok` holds (checked every 200 ms); dies after `ms`. */
const waitFor = (ms: number, ok: () => Effect.Effect<boolean, unknown>) =>
  Effect.gen(function*() {
    const started = Date.now()
    while (!(yield* ok())) {
      if (Date.now() - started > ms) return yield* Effect.die(new Error(`not within ${ms} ms`))
      yield* Effect.sleep("200 millis")
    }
    return Date.now() - started
  })

describe("statusgrid runner", () => {
  it("three runners share the shards, and a killed runner's shards run on the others", () =>
    Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const sim = yield* Simulator.make({ port: 0, host: "127.0.0.1", sources: 60 })
      const databaseUrl = yield* freshDatabase
      const sql = Effect.provide(Postgres.layerServer(databaseUrl, { maxConnections: 2 }))
      yield* Effect.gen(function*() {
        yield* Migrations.migratePostgres()
        yield* Catalog.load(Catalog.syntheticEntries(60, sim.url))
      }).pipe(sql)

      const runners: Array<Running> = []
      yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all(runners.map((r) => r.stop()))))
      for (let i = 0; i < 3; i++) {
        const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), `statusgrid-runner-${i}-`))
        const env = childEnv({
          DATABASE_URL: databaseUrl,
          REDIS_URL: testRedisUrl,
          DATA_DIR: dataDir,
          PORT: String(yield* Effect.promise(freePort)),
          RUNNER_PORT: String(yield* Effect.promise(freePort)),
          POLLER_SHARDS: "12",
          POLLER_INTERVAL_OVERRIDE_S: "2",
          POLLER_KEEPER_MS: "1000",
          // Takeover follows the lock's expiry: 8 s here (the default is 15), so the 15-s takeover bound below holds.
          RUNNER_LOCK_EXPIRATION_S: "8"
        })
        runners.push(yield* Effect.promise(() => startService(env, 60_000, ["runner"])))
      }

      const checkedSince = (since: Date) =>
        Effect.gen(function*() {
          const client = yield* SqlClient
          const [row] = yield* client<{ n: number }>`
            SELECT count(*)::int AS n FROM source_checks WHERE checked_at > ${since.toISOString()}::timestamptz`
          return row!.n
        }).pipe(sql)

      // Every runner owns some shards, and every source is being checked.
      yield* waitFor(30_000, () => Effect.succeed(runners.every((r) => shardStarts(r) > 0)))
      const start = new Date()
      yield* waitFor(15_000, () => Effect.map(checkedSince(start), (n) => n === 60))

      const victim = runners.shift()!
      const before = runners.map(shardStarts)
      victim.child.kill("SIGKILL")
      const killedAt = new Date()
      const takeover = yield* waitFor(15_000, () =>
        Effect.succeed(runners.reduce((sum, r) => sum + shardStarts(r), 0) > before.reduce((a, b) => a + b, 0)))
      const recheck = yield* waitFor(20_000, () => Effect.map(checkedSince(killedAt), (n) => n === 60))
      console.log(JSON.stringify({ runners: 3, takeover_ms: takeover, all_sources_rechecked_ms: recheck }))
      assert.isBelow(takeover, 15_000)
      assert.isBelow(recheck, 20_000)
    }))), 180_000)
})
