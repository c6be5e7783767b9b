import { assert, describe, layer } from "@effect/vitest"
import { Context, Duration, Effect, Layer, Ref } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Publisher } from "../../services/platform/Publisher.ts"
import * as MemoryBus from "../../services/platform/Bus/Memory.ts"
import { ClickHouse, ClickHouseError } from "../../services/platform/ClickHouse.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import * as Cluster from "../../services/poller/Cluster.ts"
import * as Poller from "../../services/poller/Poller.ts"
import { PollerStats } from "../../services/poller/PollerStats.ts"
import { ResultWriter } from "../../services/poller/ResultWriter.ts"
import * as Simulator from "../../services/simulator/Server.ts"
import { freshDatabase, tempDir, withConfig } from "../support/stores.ts"

class Sim extends Context.Service<Sim, Simulator.Simulator>()("test/chdown/Sim") {}
/** While true, every ClickHouse insert fails: ClickHouse is "down" (queries still work, for counting). */
class Down extends Context.Service<Down, Ref.Ref<boolean>>()("test/chdown/Down") {}

const realClickHouse = Layer.unwrap(Effect.map(tempDir("chdown-ch"), (dir) => ClickHouse.layerEmbedded(dir, "statusgrid")))
const flakyClickHouse = Layer.effect(ClickHouse, Effect.gen(function*() {
  const real = yield* ClickHouse
  const down = yield* Down
  return ClickHouse.of({
    ...real,
    insert: (table, rows, options) =>
      Effect.flatMap(Ref.get(down), (isDown) =>
        isDown ? Effect.fail(new ClickHouseError({ operation: `insert ${table}`, cause: new Error("ClickHouse is down") })) : real.insert(table, rows, options))
  })
})).pipe(Layer.provide(realClickHouse))

const stores = Layer.mergeAll(
  Layer.unwrap(Effect.map(freshDatabase, (url) => Postgres.layerServer(url, { maxConnections: 6 }))),
  flakyClickHouse,
  Publisher.layer.pipe(Layer.provideMerge(MemoryBus.layer))
).pipe(Layer.provideMerge(Layer.effect(Down, Ref.make(false))))

const migrated = Layer.effectDiscard(Effect.gen(function*() {
  yield* Migrations.migratePostgres()
  yield* Migrations.migrateClickHouse()
}))

const TestLayer = Layer.unwrap(Effect.map(tempDir("chdown-spill"), (spill) =>
  Layer.mergeAll(
    Poller.layer.pipe(
      Layer.provide(Cluster.single),
      Layer.provide(withConfig({
        POLLER_SHARDS: "2",
        POLLER_INTERVAL_OVERRIDE_S: "1",
        POLLER_KEEPER_MS: "300",
        POLLER_REFRESH_MS: "500",
        RESULTS_FLUSH_MS: "100",
        RESULTS_MEMORY_ROWS: "40",
        RESULTS_BATCH_ROWS: "20",
        RESULTS_SPILL_DIR: spill
      }))
    ),
    Layer.effect(Sim, Simulator.make({ port: 0, host: "127.0.0.1", sources: 0 }))
  )
)).pipe(Layer.provideMerge(migrated), Layer.provideMerge(stores))

const sourceRows = Effect.gen(function*() {
  const ch = yield* ClickHouse
  const [row] = yield* ch.query("SELECT count() AS n FROM check_results WHERE component_id = ''")
  return Number(row!["n"])
})

describe("poller while ClickHouse is down", () => {
  layer(TestLayer, { timeout: 180_000, excludeTestServices: true })("with the simulator", (it) => {
    it.effect("keeps checking, buffers and spills the results, and writes every one once ClickHouse is back", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const sql = yield* SqlClient
        const down = yield* Down
        const stats = yield* PollerStats
        const writer = yield* ResultWriter
        for (let i = 0; i < 6; i++) {
          const source = sim.state.add({ key: `down-${i}`, name: `Down ${i}`, provider: "statuspage_io", components: 4 })
          yield* sql`INSERT INTO sources (key, name, kind, provider_type, status_page_url)
            VALUES (${source.key}, ${source.name}, 'catalog', 'statuspage_io', ${source.baseUrl})`
        }
        // Polling, with ClickHouse up.
        yield* Effect.sleep(Duration.seconds(3))
        assert.isAbove(yield* sourceRows, 0)

        yield* Ref.set(down, true)
        const before = yield* sourceRows
        // Down for a minute while the sources are checked every second.
        yield* Effect.sleep(Duration.minutes(1))
        const during = yield* writer.stats
        // Nothing reached ClickHouse, the checks went on, and past the memory bound rows went to disk.
        assert.strictEqual(yield* sourceRows, before)
        assert.isAbove(during.failed_attempts, 0)
        assert.isAbove(during.spilled_rows, 0)

        yield* Ref.set(down, false)
        const counted = (yield* stats.snapshot).checks
        yield* writer.flush
        const written = yield* sourceRows
        const after = (yield* stats.snapshot).checks
        console.log(JSON.stringify({ clickhouse_down_s: 60, checks: counted, rows_written: written, spilled_during: during.spilled_rows }))
        // Every check counted before the flush has its row; no row without a check.
        assert.isAtLeast(written, counted)
        assert.isAtMost(written, after)
        assert.isAbove(counted, 6 * 50)
      }), 180_000)
  })
})
