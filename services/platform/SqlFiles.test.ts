import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as SqlFiles from "./SqlFiles.ts"

describe("splitStatements", () => {
  it("splits at top-level semicolons and drops empty and comment-only pieces", () => {
    assert.deepStrictEqual(
      SqlFiles.splitStatements("-- header\nCREATE TABLE a (x int);\n\n;  SELECT 1 ;\n-- trailing comment\n"),
      ["CREATE TABLE a (x int)", "SELECT 1"]
    )
  })

  it("keeps semicolons inside strings, identifiers and dollar quotes, and drops leading comments", () => {
    const script = [
      "INSERT INTO t VALUES ('a;b', 'it''s; fine')",
      "SELECT \"odd;name\" FROM `ch;table`",
      "/* block; comment */ SELECT 2",
      "CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; SELECT 2; $body$ LANGUAGE sql",
      "DO $$ BEGIN PERFORM 1; END $$"
    ].join(";\n")
    assert.deepStrictEqual(SqlFiles.splitStatements(script), [
      "INSERT INTO t VALUES ('a;b', 'it''s; fine')",
      "SELECT \"odd;name\" FROM `ch;table`",
      "SELECT 2",
      "CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; SELECT 2; $body$ LANGUAGE sql",
      "DO $$ BEGIN PERFORM 1; END $$"
    ])
  })

  it("keeps a backslash-escaped quote inside a ClickHouse string", () => {
    assert.deepStrictEqual(SqlFiles.splitStatements("SELECT 'a\\';b'; SELECT 3"), ["SELECT 'a\\';b'", "SELECT 3"])
  })
})

const dir = (files: Record<string, string>) => {
  const d = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-sqlfiles-"))
  for (const [name, text] of Object.entries(files)) Fs.writeFileSync(Path.join(d, name), text)
  return d
}

describe("load", () => {
  it.effect("orders migrations by id and splits each file", () =>
    Effect.gen(function*() {
      const d = dir({ "0002_second.sql": "SELECT 2; SELECT 22", "0001_first.sql": "SELECT 1", "README.md": "ignored" })
      const loaded = yield* SqlFiles.load(d)
      assert.deepStrictEqual(loaded, [
        { id: 1, name: "first", statements: ["SELECT 1"] },
        { id: 2, name: "second", statements: ["SELECT 2", "SELECT 22"] }
      ])
    }))

  it.effect("refuses a badly named file and a repeated id", () =>
    Effect.gen(function*() {
      const badName = yield* Effect.flip(SqlFiles.load(dir({ "1-first.sql": "SELECT 1" })))
      assert.match(badName.message, /NNNN_snake_name\.sql/)
      const repeated = yield* Effect.flip(SqlFiles.load(dir({ "0001_a.sql": "SELECT 1", "001_b.sql": "SELECT 2" })))
      assert.match(repeated.message, /have id 1/)
    }))

  it.effect("the repository's migrations load", () =>
    Effect.gen(function*() {
      for (const kind of ["postgres", "clickhouse"] as const) {
        const loaded = yield* SqlFiles.load(SqlFiles.migrationsDir(kind))
        assert.isAbove(loaded.length, 0)
        for (const m of loaded) assert.isAbove(m.statements.length, 0)
      }
    }))
})
