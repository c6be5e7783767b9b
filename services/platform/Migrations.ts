import { Effect, Schema } from "effect"
import { Migrator } from "effect/sql"
import { SqlClient } from "effect/sql/SqlClient"
import { ClickHouse } from "./ClickHouse.ts"
import * as SqlFiles from "./SqlFiles.ts"

export interface Applied {
  readonly id: number
  readonly name: string
}

const runPostgres = Migrator.make({})

/**
 * Applies `migrations/postgres/NNNN_name.sql` not yet applied, in id order,
 * in one transaction under a table lock (so concurrent runners are safe).
 * Returns what it applied.
 */
export const migratePostgres = Effect.fn("Migrations.migratePostgres")(function*(dir = SqlFiles.migrationsDir("postgres")) {
  const files = yield* SqlFiles.load(dir)
  const applied = yield* runPostgres({
    table: "schema_migrations",
    loader: Effect.succeed(files.map((m) =>
      [
        m.id,
        m.name,
        // The loader's effect yields the migration to run (its "import").
        Effect.succeed(Effect.gen(function*() {
          const sql = yield* SqlClient
          for (const statement of m.statements) yield* sql.unsafe(statement)
        }))
      ] as const
    ))
  })
  return applied.map(([id, name]): Applied => ({ id, name }))
})

const AppliedRow = Schema.Struct({ id: Schema.Number })

/**
 * Applies `migrations/clickhouse/NNNN_name.sql` not yet applied, in id order,
 * recording each in `schema_migrations`. ClickHouse DDL is not transactional,
 * so every statement is written to be re-runnable (IF NOT EXISTS) and a
 * migration interrupted half-way completes on the next run.
 */
export const migrateClickHouse = Effect.fn("Migrations.migrateClickHouse")(function*(
  dir = SqlFiles.migrationsDir("clickhouse")
) {
  const ch = yield* ClickHouse
  const files = yield* SqlFiles.load(dir)
  yield* ch.command(
    "CREATE TABLE IF NOT EXISTS schema_migrations (id UInt32, name String, applied_at DateTime64(3, 'UTC') DEFAULT now64(3)) " +
      "ENGINE = ReplacingMergeTree ORDER BY id"
  )
  const rows = yield* ch.query("SELECT id FROM schema_migrations FINAL")
  const done = new Set(rows.map((row) => Schema.decodeUnknownSync(AppliedRow)(row).id))
  const applied: Array<Applied> = []
  for (const m of files) {
    if (done.has(m.id)) continue
    for (const statement of m.statements) yield* ch.command(statement)
    yield* ch.insert("schema_migrations", [{ id: m.id, name: m.name }])
    applied.push({ id: m.id, name: m.name })
  }
  return applied
})

/** Both stores, PostgreSQL first. */
export const migrateAll = Effect.fn("Migrations.migrateAll")(function*() {
  const postgres = yield* migratePostgres()
  const clickhouse = yield* migrateClickHouse()
  for (const m of postgres) yield* Effect.logInfo("applied migration").pipe(Effect.annotateLogs({ store: "postgres", ...m }))
  for (const m of clickhouse) {
    yield* Effect.logInfo("applied migration").pipe(Effect.annotateLogs({ store: "clickhouse", ...m }))
  }
  return { postgres, clickhouse }
})
