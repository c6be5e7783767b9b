import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Postgres from "../../services/platform/Postgres.ts"
import { withConfig } from "../support/stores.ts"

/** The embedded PGlite on `dataDir` with `env`, and what a query says of it. */
const settings = (dataDir: string, env: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const [row] = yield* sql<{ shared_buffers: string; tables: number }>`
      SELECT current_setting('shared_buffers') AS shared_buffers, (SELECT count(*)::int FROM pg_class) AS tables`
    return row!
  }).pipe(Effect.provide(Postgres.layerEmbedded.pipe(Layer.provide(withConfig({ DATA_DIR: dataDir, ...env })))), Effect.scoped)

describe("embedded PostgreSQL (PGlite)", () => {
  it.effect("a new data directory is initialized by another process, then opened with shared_buffers of 32MB, or as configured", () =>
    Effect.gen(function*() {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sg-pglite-"))
      const first = yield* settings(dir)
      assert.strictEqual(first.shared_buffers, "32MB")
      assert.isAbove(first.tables, 0)
      assert.isTrue(Fs.existsSync(Path.join(dir, "postgres", "PG_VERSION")))
      // Opened again, it is not initialized again, and the setting follows the configuration.
      const stamp = Fs.statSync(Path.join(dir, "postgres", "PG_VERSION")).mtimeMs
      const again = yield* settings(dir, { EMBEDDED_PG_SHARED_BUFFERS: "48MB" })
      assert.strictEqual(again.shared_buffers, "48MB")
      assert.strictEqual(Fs.statSync(Path.join(dir, "postgres", "PG_VERSION")).mtimeMs, stamp)
    }), 120_000)

  it.effect("a data directory that cannot be made, and a size that is not one, are refused with one clear message", () =>
    Effect.gen(function*() {
      const base = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sg-pglite-"))
      // DATA_DIR under a file: no directory can be made there.
      const file = Path.join(base, "a-file")
      Fs.writeFileSync(file, "")
      const cannot = yield* settings(Path.join(file, "data")).pipe(Effect.flip)
      assert.match(String((cannot as { message?: string }).message ?? cannot), /a-file/)
      const badSize = yield* settings(Path.join(base, "ok"), { EMBEDDED_PG_SHARED_BUFFERS: "lots" }).pipe(Effect.flip)
      assert.include(String(badSize), "EMBEDDED_PG_SHARED_BUFFERS")
    }), 120_000)
})
