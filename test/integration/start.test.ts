import { Effect, Layer, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, assert, describe, it } from "vitest"
import { ClickHouse } from "../../services/platform/ClickHouse.ts"
import type { HealthReport } from "../../services/platform/Health.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { childEnv, freePort, repoRoot, runCli, startService } from "../support/process.ts"
import { freshDatabase, testRedisUrl, withConfig } from "../support/stores.ts"

const dirs: Array<string> = []
const tempDataDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-start-"))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) Fs.rmSync(dir, { recursive: true, force: true })
})

/** The ids of the migration files of one store, in order. */
const migrationIds = (kind: string) =>
  Fs.readdirSync(Path.join(repoRoot, "migrations", kind)).filter((f) => f.endsWith(".sql")).map((f) => Number(f.slice(0, 4))).toSorted((a, b) => a - b)

const health = async (url: string) => {
  const response = await fetch(`${url}/healthz`)
  return { status: response.status, body: (await response.json()) as HealthReport }
}

/** Opens a stopped service's embedded stores from this process, runs `f`, and closes them. */
const withEmbeddedStores = async <A>(
  dataDir: string,
  f: Effect.Effect<A, unknown, SqlClient | ClickHouse>
): Promise<A> => {
  const stores = Layer.merge(Postgres.layerEmbedded, ClickHouse.layer).pipe(Layer.provide(withConfig({ DATA_DIR: dataDir })))
  const runtime = ManagedRuntime.make(stores)
  try {
    return await runtime.runPromise(f)
  } finally {
    await runtime.dispose()
  }
}

describe("statusgrid start", () => {
  it("runs on embedded stores, refuses a second process on the same data, and keeps data across restarts", async () => {
    const dataDir = tempDataDir()
    const env = childEnv({ DATA_DIR: dataDir, PORT: String(await freePort()) })

    const first = await startService(env)
    const { status, body } = await health(first.url)
    assert.strictEqual(status, 200)
    assert.strictEqual(body.status, "ok")
    assert.deepStrictEqual(
      Object.fromEntries(Object.entries(body.stores).map(([name, s]) => [name, [s.status, s.backend]])),
      { postgres: ["up", "pglite"], clickhouse: ["up", "chdb"], bus: ["up", "memory"] }
    )
    assert.isTrue(first.logs.some((l) => l["message"] === "loaded the default catalog"))

    const second = await runCli(["start"], childEnv({ DATA_DIR: dataDir, PORT: String(await freePort()) }))
    assert.notStrictEqual(second.code, 0)
    assert.include(second.stdout + second.stderr, "the data directory is in use")

    assert.strictEqual(await first.stop(), 0)

    // While it is stopped, add data to both stores.
    await withEmbeddedStores(dataDir, Effect.gen(function*() {
      const sql = yield* SqlClient
      yield* sql`INSERT INTO organizations (slug, name) VALUES ('persisted', 'Persisted')`
      const ch = yield* ClickHouse
      yield* ch.insert("check_results", [
        { checked_at: "2026-11-22T00:00:00Z", subject_kind: "source", subject_id: "persisted", status: "down" }
      ])
    }))

    const again = await startService(env)
    assert.strictEqual((await health(again.url)).body.status, "ok")
    assert.isFalse(again.logs.some((l) => l["message"] === "loaded the default catalog"))
    assert.isFalse(again.logs.some((l) => l["message"] === "applied migration"))
    assert.strictEqual(await again.stop(), 0)

    const kept = await withEmbeddedStores(dataDir, Effect.gen(function*() {
      const sql = yield* SqlClient
      const [orgs] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM organizations WHERE slug = 'persisted'`
      const [sources] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM sources WHERE kind = 'catalog'`
      const ch = yield* ClickHouse
      const [checks] = yield* ch.query("SELECT count() AS n FROM check_results WHERE subject_id = 'persisted'")
      return { orgs: orgs!.n, sources: sources!.n, checks: checks!["n"] }
    }))
    assert.deepStrictEqual(kept, { orgs: 1, sources: 1143, checks: 1 })
  }, 180_000)

  it("uses PostgreSQL and Redis servers when DATABASE_URL and REDIS_URL are set", () =>
    Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const databaseUrl = yield* freshDatabase
      const env = childEnv({
        DATA_DIR: tempDataDir(),
        PORT: String(yield* Effect.promise(freePort)),
        DATABASE_URL: databaseUrl,
        REDIS_URL: testRedisUrl
      })
      const migrated = yield* Effect.promise(() => runCli(["migrate"], env))
      assert.strictEqual(migrated.code, 0, migrated.stderr)
      // Log lines come first; the summary is the last line.
      const applied = JSON.parse(migrated.stdout.trim().split("\n").at(-1)!) as { postgres: Array<{ id: number }>; clickhouse: Array<{ id: number }> }
      // Every migration file, in order, on a new database.
      assert.deepStrictEqual(applied.postgres.map((m) => m.id), migrationIds("postgres"))
      assert.deepStrictEqual(applied.clickhouse.map((m) => m.id), migrationIds("clickhouse"))

      const running = yield* Effect.promise(() => startService(env))
      const { status, body } = yield* Effect.promise(() => health(running.url))
      assert.strictEqual(status, 200)
      assert.deepStrictEqual(
        Object.fromEntries(Object.entries(body.stores).map(([name, s]) => [name, [s.status, s.backend]])),
        { postgres: ["up", "postgres"], clickhouse: ["up", "chdb"], bus: ["up", "redis"] }
      )
      assert.strictEqual(yield* Effect.promise(running.stop), 0)

      const sources = yield* Effect.gen(function*() {
        const sql = yield* SqlClient
        const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM sources`
        return row!.n
      }).pipe(Effect.provide(Postgres.layerServer(databaseUrl)))
      assert.strictEqual(sources, 1143)
    }))), 180_000)

  it("refuses to start, naming the store, when a configured server is unreachable", async () => {
    const port = await freePort()
    const result = await runCli(["start"], childEnv({
      DATA_DIR: tempDataDir(),
      PORT: String(await freePort()),
      REDIS_URL: `redis://127.0.0.1:${port}`
    }))
    assert.notStrictEqual(result.code, 0)
    assert.match(result.stdout + result.stderr, /BusError.*ECONNREFUSED|ECONNREFUSED.*BusError/s)
  }, 60_000)
})
