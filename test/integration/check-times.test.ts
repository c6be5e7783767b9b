import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { ShardReloads } from "../../services/domain/ShardReloads.ts"
import { Bus } from "../../services/platform/Bus.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import { RedisKeys } from "../../services/platform/RedisKeys.ts"
import { pollerRunner, pollerTimings, Sim, simulator, stores } from "../support/engine.ts"
import { waitFor } from "../support/eventually.ts"
import { tempDir, withConfig } from "../support/stores.ts"

/**
 * A shard saves its sources' check times (last check, last error) to PostgreSQL every
 * `POLLER_CHECK_TIMES_MS`, and a shard that stops saves what it holds first, so that a graceful restart
 * keeps every source's cadence to the check (services/poller/README.md). Here the cadence is ten
 * minutes: the checks are held until the poller stops.
 */
const TestLayer = Layer.mergeAll(simulator, Layer.effectDiscard(Migrations.migrateAll())).pipe(
  Layer.provideMerge(stores("check-times", "memory")),
  Layer.provideMerge(Layer.unwrap(Effect.map(tempDir("check-times-data"), (dir) =>
    withConfig({ ...pollerTimings, DATA_DIR: dir, POLLER_CHECK_TIMES_MS: "600000" })
  )))
)

describe("check times", () => {
  layer(TestLayer, { timeout: 60_000, excludeTestServices: true })("one runner over PostgreSQL and chDB", (it) => {
    it.effect("held for POLLER_CHECK_TIMES_MS, saved by the shard that stops", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const sql = yield* SqlClient
        const bus = yield* Bus
        const keys = ["times-a", "times-b", "times-c"]
        for (const key of keys) {
          const page = sim.state.add({ key, name: key, provider: "statuspage_io", components: 2, groups: 0 })
          yield* sql`INSERT INTO sources (key, name, kind, provider_type, status_page_url, check_class, poll_interval_s)
            VALUES (${key}, ${key}, 'catalog', 'statuspage_io', ${page.baseUrl}, 'critical', 30)`
        }
        const stored = sql<{ key: string; at: Date | null }>`
          SELECT key, checked_at AS at FROM sources LEFT JOIN source_checks ON source_id = id WHERE key IN ${sql.in(keys)} ORDER BY key`
        const started = Date.now()

        const published = yield* Effect.gen(function*() {
          const poller = yield* Layer.build(pollerRunner)
          yield* ShardReloads.use((reloads) => reloads.sources(keys)).pipe(Effect.provide(poller))
          // Every source checked again after its first 1.5 s (the test's interval is 1 s), as the bus says.
          const states = yield* waitFor(15_000, "every source checked", Effect.gen(function*() {
            const all = yield* Effect.forEach(keys, (key) => bus.hgetall(RedisKeys.source(key)))
            return all.every((s) => s["last_checked_at"] !== undefined && Date.parse(s["last_checked_at"]) >= started + 1_500)
              ? all
              : undefined
          }))
          // Held: none saved while the poller runs (its first save is ten minutes after the shard started).
          for (const row of yield* stored) assert.isNull(row.at, `${row.key} saved before its cadence`)
          return states
        }).pipe(Effect.scoped)

        // The poller stopped: each shard saved its sources' last checks, at least as late as the bus had them then.
        const rows = yield* stored
        assert.deepStrictEqual(rows.map((r) => r.key), keys)
        for (const [i, row] of rows.entries()) {
          assert.isNotNull(row.at, `${row.key} not saved when its shard stopped`)
          assert.isAtLeast(row.at!.getTime(), Date.parse(published[i]!["last_checked_at"]!), row.key)
          assert.isAtMost(row.at!.getTime(), Date.now(), row.key)
        }
      }), 60_000)
  })
})
