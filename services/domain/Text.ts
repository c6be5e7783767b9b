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

/**
 * Turns a display name into a slug for keys and URLs: "Payments & Billing" ->
 * "payments-and-billing" (accents dropped, "&" spelled "and", anything else
 * a hyphen), at most `maxLength` characters, `fallback` when nothing is left.
 */
export const slugOf = (name: string, maxLength: number, fallback: string): string =>
  name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/&/g, " and ")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, maxLength)
    .replace(/-+$/g, "") || fallback
