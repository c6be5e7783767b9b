import { Schema } from "effect"

/**
 * `Schema.NullOr(schema)` with null tried first, for members that are declarations (a `Date`, a
 * `DateTime`, a string decoded to one). Effect's union tries its members in order and skips only those
 * whose type rules the input out; a declaration cannot be ruled out, so under `Schema.NullOr` every null
 * first fails that member (building its issue) and then matches null: 4.5 µs a value instead of 0.4,
 * paid per field and per row (a page of 100 sources never checked decoded in 1.2 ms instead of 0.6).
 */
export const NullOr = <S extends Schema.Top>(schema: S) => Schema.Union([Schema.Null, schema])
