import { Effect, Result, Schema, SchemaGetter } from "effect"

/**
 * Rows read from PostgreSQL are decoded by a Schema at the store boundary,
 * never cast: a row that does not match (a schema drift, a bug in a query)
 * is a defect whose message names the table and the field.
 */
export class RowDecodeError extends Schema.TaggedError<RowDecodeError>()("RowDecodeError", {
  table: Schema.String,
  message: Schema.String
}) {}

/** How rows are decoded. */
export interface RowOptions {
  /**
   * The columns were validated when they were written (rule settings): check
   * their shape, skip the filters (time zone lookups, lengths) on hot paths.
   */
  readonly validatedOnWrite?: boolean
}

/**
 * The decoder of the rows of `table` (or of a query over it), compiled once
 * when the store is built: call it on every result, never build one per row.
 */
export const rowsOf = <S extends Schema.ConstraintDecoder<unknown>>(table: string, row: S, options: RowOptions = {}) => {
  const decode = Schema.decodeUnknownResult(Schema.Array(row), { disableChecks: options.validatedOnWrite === true })
  return (rows: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<S["Type"]>> => {
    const decoded = decode(rows)
    return Result.isSuccess(decoded)
      ? Effect.succeed(decoded.success)
      : Effect.die(new RowDecodeError({ table, message: `a row of ${table} does not match its Schema: ${decoded.failure.message}` }))
  }
}

/** The first row of a result, decoded as `rowsOf` does, or undefined. */
export const firstOf = <S extends Schema.ConstraintDecoder<unknown>>(table: string, row: S) => {
  const decode = rowsOf(table, row)
  return (rows: ReadonlyArray<unknown>): Effect.Effect<S["Type"] | undefined> =>
    rows.length === 0 ? Effect.succeed(undefined) : Effect.map(decode(rows.slice(0, 1)), (decoded) => decoded[0])
}

/** A jsonb column: the driver parses it, or hands its text when it does not know the type; decoded once, here. */
export const JsonColumn = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S) =>
  Schema.Union([Schema.fromJsonString(schema), schema])

/** A PostgreSQL array: an array, or its text form (`{a,b}`) when the driver does not know the element type. */
const arrayColumn = <S extends Schema.Top & { readonly DecodingServices: never }>(item: S, parse: (text: string) => unknown) =>
  Schema.Union([
    Schema.Array(item),
    Schema.String.pipe(Schema.decodeTo(Schema.Array(item), {
      decode: SchemaGetter.transform((text: string) => parse(text) as ReadonlyArray<S["Encoded"]>),
      encode: SchemaGetter.transform((items: ReadonlyArray<S["Encoded"]>) => `{${items.join(",")}}`)
    }))
  ])

const elements = (text: string): Array<string> => text.replace(/^\{|\}$/g, "").split(",").filter((s) => s !== "")

/** int[] (or its text form). */
export const IntArrayColumn = arrayColumn(Schema.Number, (text) => elements(text).map(Number))

/** text[] or an enum array (or its text form; elements are plain identifiers). */
export const TextArrayColumn = <S extends Schema.Top & { readonly DecodingServices: never; readonly Encoded: string }>(item: S) =>
  arrayColumn(item, elements)

/**
 * A synchronous decoder of one record built from a row (for mappers such as
 * a list's), compiled once; a mismatch throws the RowDecodeError, a defect.
 */
export const recordOf = <S extends Schema.ConstraintDecoder<unknown>>(table: string, schema: S) => {
  const decode = Schema.decodeUnknownResult(schema)
  return (value: unknown): S["Type"] => {
    const decoded = decode(value)
    if (Result.isSuccess(decoded)) return decoded.success
    throw new RowDecodeError({ table, message: `a row of ${table} does not match its Schema: ${decoded.failure.message}` })
  }
}
