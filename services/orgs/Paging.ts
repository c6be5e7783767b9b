import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { Fragment } from "effect/sql/Statement"
import { InvalidParameter } from "../domain/api/Errors.ts"
import { defaultPageSize, pageOf } from "../domain/api/Paging.ts"

/** A position in a list ordered by (created_at, id): the last row of the previous page. */
export interface Position {
  readonly at: string
  readonly id: string
}

const invalidCursor = () =>
  new InvalidParameter({ field: "cursor", message: "cursor is not a value this API returned as next_cursor" })

/** The type of a list's `id` column: most tables are keyed by uuid, the audit log by a bigint identity. */
export type IdType = "uuid" | "bigint"

const idPatterns: Record<IdType, RegExp> = {
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
  // At most 18 digits: always within bigint, so a forged cursor cannot fail the cast.
  bigint: /^[1-9][0-9]{0,17}$/
}
const micros = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/

/** An instant PostgreSQL accepts: the shape above, a real date and time (no February 30), year 1 or later. */
const isInstant = (at: string): boolean => {
  if (!micros.test(at) || at.startsWith("0000")) return false
  const parsed = new Date(`${at.slice(0, 23)}Z`)
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 19) === at.slice(0, 19)
}

/**
 * Select this (table alias `t`) as `cursor_at`: created_at to the microsecond, as PostgreSQL keeps it;
 * a millisecond cursor would show the last row of a page again on the next.
 */
export const cursorAt = `to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at`

/** The cursor is base64url of `<created_at ISO>|<id>`: opaque to clients, checked when it comes back. */
export const encodeCursor = (p: Position): string => Buffer.from(`${p.at}|${p.id}`, "utf8").toString("base64url")

export const decodeCursor = (cursor: string | undefined, idType: IdType = "uuid"): Effect.Effect<Position | undefined, InvalidParameter> => {
  if (cursor === undefined) return Effect.succeed(undefined)
  const [at, id, ...rest] = Buffer.from(cursor, "base64url").toString("utf8").split("|")
  if (rest.length > 0 || at === undefined || id === undefined || !idPatterns[idType].test(id) || !isInstant(at)) {
    return Effect.fail(invalidCursor())
  }
  return Effect.succeed({ at, id })
}

export interface PageRequest {
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
}

/**
 * One page of rows (table alias `t`, selecting `cursorAt` and `id`) matching
 * `where`, ordered by (created_at, id), as `{ data, next_cursor, limit }`.
 * The row mapper turns a database row into the API record; `idType` is the
 * type of `t.id` (uuid unless said).
 */
export const listPage = Effect.fn("Paging.listPage")(function*<Row extends { readonly cursor_at: string; readonly id: string }, A>(options: {
  readonly select: (where: Fragment, limit: number) => Effect.Effect<ReadonlyArray<Row>, unknown, SqlClient>
  readonly page: PageRequest
  readonly map: (row: Row) => A
  readonly idType?: IdType
}) {
  const sql = yield* SqlClient
  const limit = options.page.limit ?? defaultPageSize
  const idType = options.idType ?? "uuid"
  const after = yield* decodeCursor(options.page.cursor, idType)
  const where = after === undefined
    ? sql`true`
    : idType === "bigint"
    ? sql`(t.created_at, t.id) > (${after.at}::timestamptz, ${after.id}::bigint)`
    : sql`(t.created_at, t.id) > (${after.at}::timestamptz, ${after.id}::uuid)`
  const rows = yield* options.select(where, limit + 1).pipe(Effect.orDie)
  return pageOf(rows, limit, (last) => encodeCursor({ at: last.cursor_at, id: last.id }), options.map)
})
