import { Schema } from "effect"

/**
 * PostgreSQL `text` and `jsonb` cannot hold a NUL character: every string the
 * API stores refuses it as input (a 400 naming the field) rather than failing
 * the write (a 500). The API's body check (services/api/RequestBody.ts) also
 * refuses NUL anywhere in a JSON body, so strings no schema constrains are safe too.
 */
export const noNul = Schema.makeFilter((s: string) => !s.includes("\u0000") || "must not contain NUL characters")

/** Trimmed text of 1 to `max` characters without NUL: names, titles. */
export const Text = (max: number) =>
  Schema.Trim.check(Schema.isBetweenLength(1, max, { message: `must be 1 to ${max} characters` }), noNul)
