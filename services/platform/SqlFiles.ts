import { Effect, Schema } from "effect"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"

export class MigrationFileError extends Schema.TaggedError<MigrationFileError>()("MigrationFileError", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {}

export interface SqlMigration {
  readonly id: number
  readonly name: string
  readonly statements: ReadonlyArray<string>
}

/**
 * Splits a SQL script into statements at top-level semicolons. Quoted strings,
 * quoted identifiers, dollar-quoted bodies and comments are kept whole, so a
 * `;` inside them does not split. Needed because both the PostgreSQL extended
 * protocol and ClickHouse's HTTP interface take one statement per request.
 */
export const splitStatements = (script: string): Array<string> => {
  const out: Array<string> = []
  let start = 0
  let i = 0
  const n = script.length
  const push = (end: number) => {
    const text = stripLeadingComments(script.slice(start, end))
    if (text.length > 0) out.push(text)
  }
  while (i < n) {
    const c = script[i]!
    const next = script[i + 1]
    if (c === "-" && next === "-") {
      const eol = script.indexOf("\n", i)
      i = eol === -1 ? n : eol + 1
    } else if (c === "/" && next === "*") {
      const end = script.indexOf("*/", i + 2)
      i = end === -1 ? n : end + 2
    } else if (c === "'" || c === "\"" || c === "`") {
      i = skipQuoted(script, i, c)
    } else if (c === "$") {
      const tag = /^\$[A-Za-z_]*\$/.exec(script.slice(i))?.[0]
      if (tag) {
        const end = script.indexOf(tag, i + tag.length)
        i = end === -1 ? n : end + tag.length
      } else {
        i++
      }
    } else if (c === ";") {
      push(i)
      i++
      start = i
    } else {
      i++
    }
  }
  push(n)
  return out
}

const skipQuoted = (s: string, from: number, quote: string): number => {
  let i = from + 1
  while (i < s.length) {
    if (s[i] === "\\" && quote !== "\"") {
      i += 2
    } else if (s[i] === quote) {
      if (s[i + 1] === quote) i += 2
      else return i + 1
    } else {
      i++
    }
  }
  return s.length
}

/** Drops whitespace and comments before a statement (they would make a comment-only piece look like one). */
const stripLeadingComments = (text: string): string => {
  let s = text.trim()
  for (;;) {
    if (s.startsWith("--")) {
      const eol = s.indexOf("\n")
      s = eol === -1 ? "" : s.slice(eol + 1).trim()
    } else if (s.startsWith("/*")) {
      const end = s.indexOf("*/")
      s = end === -1 ? "" : s.slice(end + 2).trim()
    } else {
      return s
    }
  }
}

const fileName = /^(\d+)_([a-z0-9_]+)\.sql$/

/** Reads `NNNN_name.sql` files of `dir`, ordered by id; ids must be unique. */
export const load = Effect.fn("SqlFiles.load")(function*(dir: string) {
  const files = yield* Effect.tryPromise({
    try: () => Fs.readdir(dir),
    catch: (cause) => new MigrationFileError({ message: `cannot read migrations in ${dir}`, cause })
  })
  const migrations: Array<SqlMigration> = []
  for (const file of files.filter((f) => f.endsWith(".sql")).toSorted()) {
    const match = fileName.exec(file)
    if (!match) {
      return yield* new MigrationFileError({ message: `${file}: migration files are named NNNN_snake_name.sql` })
    }
    const text = yield* Effect.tryPromise({
      try: () => Fs.readFile(Path.join(dir, file), "utf8"),
      catch: (cause) => new MigrationFileError({ message: `cannot read ${file}`, cause })
    })
    migrations.push({ id: Number(match[1]), name: match[2]!, statements: splitStatements(text) })
  }
  const ids = new Set<number>()
  for (const m of migrations) {
    if (ids.has(m.id)) return yield* new MigrationFileError({ message: `two migrations in ${dir} have id ${m.id}` })
    ids.add(m.id)
  }
  return migrations
})

/** The repository's `migrations/` folder, found relative to this file. */
export const migrationsDir = (kind: "postgres" | "clickhouse") =>
  Path.resolve(import.meta.dirname, "..", "..", "migrations", kind)
