import { PgClient } from "@effect/sql-pg"
import { ConfigProvider, Effect, Layer, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

/** The PostgreSQL 15 server that infra/test starts (trust or password auth). */
export const testDatabaseUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres:postgres@127.0.0.1:5432/postgres"
/**
 * The Redis 7 server that infra/test starts, in a database of this test process's own: vitest runs two
 * files at a time (vitest.config.ts), each in a process numbered 1 or 2 (`VITEST_POOL_ID`), and files
 * that share a database would read each other's streams and keys. Databases 10-13 are the ones some
 * tests and the benchmarks name themselves.
 */
export const testRedisUrl = process.env.TEST_REDIS_URL ?? `redis://127.0.0.1:6379/${Number(process.env.VITEST_POOL_ID ?? "0") % 8}`

const withDatabase = (url: string, database: string) => {
  const u = new URL(url)
  u.pathname = `/${database}`
  return u.toString()
}

/**
 * A new empty database on the test server, dropped when the scope closes, so
 * that each suite migrates from nothing and cleans only what it made.
 */
export const freshDatabase = Effect.gen(function*() {
  const name = `sg_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`
  yield* Effect.acquireRelease(
    administer(`CREATE DATABASE ${name}`),
    () => administer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).pipe(Effect.timeout("30 seconds"), Effect.ignore)
  )
  return withDatabase(testDatabaseUrl, name)
})

/**
 * One statement on the server's `postgres` database through a connection opened for it: a pool kept open for the
 * whole suite only to drop its database at the end could hang there (its idle connection retired minutes earlier).
 */
const administer = (statement: string) =>
  Effect.scoped(Effect.flatMap(
    PgClient.make({ url: Redacted.make(testDatabaseUrl), maxConnections: 1 }),
    (admin) => admin.unsafe(statement)
  )).pipe(Effect.provide(Reactivity.layer))

/** A temporary directory removed when the scope closes. */
export const tempDir = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), `statusgrid-${prefix}-`))),
    (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
  )

/** Runs a layer with these configuration values instead of the environment. */
export const withConfig = (values: Record<string, string>) =>
  ConfigProvider.layer(ConfigProvider.fromUnknown(values))

/** A layer whose DATA_DIR is a fresh temporary directory. */
export const withTempDataDir = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  Layer.unwrap(Effect.map(tempDir("data"), (dir) => layer.pipe(Layer.provide(withConfig({ DATA_DIR: dir })))))
