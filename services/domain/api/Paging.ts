import { Schema, SchemaTransformation } from "effect"

/** Page size of organization lists: 50 unless `limit` says otherwise, at most 200. */
export const defaultPageSize = 50
export const maxPageSize = 200

const PageLimit = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^[0-9]{1,9}$/u)),
  Schema.annotate({ description: `Page size, 1 to ${maxPageSize}; ${defaultPageSize} when absent.` }),
  Schema.decodeTo(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: maxPageSize })),
    SchemaTransformation.numberFromString
  )
)

/** The query of every organization list: the same `cursor` and `limit` as `GET /sources`. */
export const PageQuery = {
  cursor: Schema.optional(Schema.String.annotate({ description: "Opaque: the `next_cursor` of the previous page." })),
  limit: Schema.optional(PageLimit)
}

/** One page of a list: `{ data, next_cursor, limit }`, as `GET /sources`. */
export const Page = <S extends Schema.Top>(item: S, identifier: string) =>
  Schema.Struct({
    data: Schema.Array(item),
    next_cursor: Schema.NullOr(Schema.String).annotate({
      description: "Pass as `cursor` to get the next page; null on the last page."
    }),
    limit: Schema.Int
  }).annotate({ identifier })

/** One page of a list as the API returns it: the type of `Page(item, identifier)` for items of type `A`. */
export interface Page<A> {
  readonly data: ReadonlyArray<A>
  /** Null on the last page. */
  readonly next_cursor: string | null
  readonly limit: number
}

/**
 * The one paging helper of every list: `rows` were read with one row more
 * than `limit`, which tells whether another page follows; the page shows the
 * first `limit`, mapped by `map`, and its cursor is `cursorOf` the last one
 * shown when more follow.
 */
export const pageOf = <Row, A>(
  rows: ReadonlyArray<Row>,
  limit: number,
  cursorOf: (last: Row) => string,
  map: (row: Row) => A
): Page<A> => {
  const shown = rows.slice(0, limit)
  const last = shown.at(-1)
  return {
    data: shown.map(map),
    next_cursor: rows.length > limit && last !== undefined ? cursorOf(last) : null,
    limit
  }
}
