import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { ClickHouse } from "../../services/platform/ClickHouse.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import * as Simulator from "../../services/simulator/Server.ts"
import { type ClickHouseHttp, clickHouseHttp } from "../support/clickhouseHttp.ts"
import { waitFor } from "../support/eventually.ts"
import { childEnv, freePort, type Running, runCli, startService } from "../support/process.ts"
import { freshDatabase, tempDir, testRedisUrl } from "../support/stores.ts"

/**
 * A real `statusgrid start` killed with SIGKILL while its ClickHouse server
 * is down, then started again with ClickHouse back: the check results it
 * lost are at most the documented bound (README: RESULTS_SPILL_AFTER_MS +
 * 2 × RESULTS_FLUSH_MS of checks). ClickHouse is the HTTP front over chDB of
 * test/support/clickhouseHttp.ts, taken "down" by resetting every
 * connection; the upstream pages are the simulator, whose request count is
 * the number of checks made.
 */
class Front extends Context.Service<Front, ClickHouseHttp>()("test/chkill/Front") {}
class Sim extends Context.Service<Sim, Simulator.Simulator>()("test/chkill/Sim") {}
class DatabaseUrl extends Context.Service<DatabaseUrl, string>()("test/chkill/DatabaseUrl") {}

const database = "statusgrid_sigkill"
const sources = 20
const intervalS = 1
const flushMs = 500
const spillAfterMs = 2_000
const outageMs = 8_000

const TestLayer = Layer.unwrap(Effect.gen(function*() {
  const front = yield* clickHouseHttp(yield* tempDir("chkill-ch"))
  const url = yield* freshDatabase
  return Layer.mergeAll(
    Layer.succeed(Front, front),
    Layer.succeed(DatabaseUrl, url),
    ClickHouse.layerServer(front.url, database),
    Postgres.layerServer(url, { maxConnections: 2 }),
    Layer.effect(Sim, Simulator.make({ port: 0, host: "127.0.0.1", sources: 0 }))
  )
}))

/** Kills the process with SIGKILL and waits until it is gone. */
const sigkill = (running: Running) =>
  Effect.callback<void>((resume) => {
    if (running.child.exitCode !== null || running.child.signalCode !== null) return resume(Effect.void)
    running.child.once("exit", () => resume(Effect.void))
    running.child.kill("SIGKILL")
  })

/** Source rows (one per check) with `checked_at` before `until` (ms). */
const sourceRows = (until: number) =>
  Effect.gen(function*() {
    const ch = yield* ClickHouse
    const [row] = yield* ch.query(
      `SELECT count() AS n FROM check_results WHERE component_id = '' AND checked_at < fromUnixTimestamp64Milli(${until})`
    )
    return Number(row!["n"])
  })

const spillFiles = (dir: string) =>
  Fs.existsSync(dir) ? Fs.readdirSync(dir).filter((name) => name.endsWith(".ndjson")) : []

describe("SIGKILL during a ClickHouse outage", () => {
  layer(TestLayer, { timeout: 240_000, excludeTestServices: true })("statusgrid start", (it) => {
    it.effect("loses no more check results than the documented bound", () =>
      Effect.gen(function*() {
        const front = yield* Front
        const sim = yield* Sim
        const sql = yield* SqlClient
        const dataDir = yield* tempDir("chkill-data")
        const env = childEnv({
          DATABASE_URL: yield* DatabaseUrl,
          REDIS_URL: testRedisUrl,
          CLICKHOUSE_URL: front.url,
          CLICKHOUSE_DATABASE: database,
          DATA_DIR: dataDir,
          POLLER_INTERVAL_OVERRIDE_S: String(intervalS),
          RESULTS_FLUSH_MS: String(flushMs),
          RESULTS_SPILL_AFTER_MS: String(spillAfterMs)
        })
        const migrated = yield* Effect.promise(() => runCli(["migrate"], env))
        assert.strictEqual(migrated.code, 0, migrated.stderr)
        for (let i = 0; i < sources; i++) {
          const source = sim.state.add({ key: `kill-${i}`, name: `Kill ${i}`, provider: "statuspage_io", components: 2 })
          yield* sql`INSERT INTO sources (key, name, kind, provider_type, status_page_url)
            VALUES (${source.key}, ${source.name}, 'catalog', 'statuspage_io', ${source.baseUrl})`
        }

        const first = yield* Effect.acquireRelease(
          Effect.promise(async () => startService({ ...env, PORT: String(await freePort()) })),
          sigkill
        )
        // Polling with ClickHouse up: rows arrive.
        yield* waitFor(30_000, "first rows", Effect.map(sourceRows(Date.now() + 60_000), (n) => n >= sources || undefined))

        front.down = true
        const downAt = Date.now()
        yield* Effect.sleep(outageMs)
        yield* sigkill(first)
        const killedAt = Date.now()
        const checks = sim.stats.requests
        const spilled = spillFiles(Path.join(dataDir, "spill")).length
        front.down = false

        // Started again with ClickHouse back: the spilled rows are replayed.
        const second = yield* Effect.acquireRelease(
          Effect.promise(async () => startService({ ...env, PORT: String(await freePort()) })),
          sigkill
        )
        yield* waitFor(60_000, "spill files replayed", Effect.sync(() => spillFiles(Path.join(dataDir, "spill")).length === 0 || undefined))
        const stored = yield* sourceRows(killedAt)
        yield* sigkill(second)

        const ratePerS = sources / intervalS
        const bound = Math.ceil(ratePerS * (spillAfterMs + 2 * flushMs) / 1000)
        const lost = checks - stored
        console.log(JSON.stringify({
          sources,
          interval_s: intervalS,
          clickhouse_down_s: (killedAt - downAt) / 1000,
          spill_after_ms: spillAfterMs,
          flush_ms: flushMs,
          checks,
          rows_stored: stored,
          rows_lost: lost,
          bound_rows: bound,
          spill_files_at_kill: spilled
        }))
        // No row twice, and no more lost than the bound.
        assert.isAtMost(stored, checks)
        assert.isAtMost(lost, bound)
        assert.isAbove(spilled, 0)
      }))
  })
})
