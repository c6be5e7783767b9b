import { SchemaIssue } from "effect"
import type { HttpApiError } from "effect/http-api"
import { InternalError, InvalidParameter } from "../domain/api/Errors.ts"
import { maxFilterKeys, maxLimit, maxSearchLength } from "../domain/api/Sources.ts"
import { CategoryId } from "../domain/Source.ts"

/**
 * What each query parameter must be, said once for every endpoint that takes it.
 * A Map, not an object literal: a body field may be named `constructor` or `__proto__`.
 */
const expectations: ReadonlyMap<string, string> = new Map([
  ["category", `category must be given once, as one of ${CategoryId.literals.join(", ")}`],
  ["limit", `limit must be given once, as an integer from 1 to ${maxLimit}`],
  ["search", `search must be given once, as text of at most ${maxSearchLength} characters without NUL`],
  ["filter", `filter must be given once, as a comma-separated list of 1 to ${maxFilterKeys} source keys`],
  ["cursor", "cursor must be given once, as the next_cursor of a previous page"],
  ["window", "window must be given once, as 24h or 90d"]
])
/** Parameters whose schema says which part is wrong, worth adding to the message. */
const detailed = new Set(["filter"])

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

const segment = (s: PropertyKey | { readonly key: PropertyKey }): string =>
  String(typeof s === "object" && s !== null ? s.key : s)

/** A request that failed decoding, as the parameter it names and why. */
export const invalidParameter = (error: HttpApiError.HttpApiSchemaError): InvalidParameter => {
  const [issue] = formatIssues(error.cause.issue).issues
  const path = issue?.path ?? []
  // A body field is named by its whole path (`settings.webhook_url`, `headers.X-Token`); a query or path parameter by its name.
  const field = path.length === 0
    ? error.kind.toLowerCase()
    : error.kind === "Payload" ? path.map(segment).join(".") : segment(path[0]!)
  // Only query parameters have a set sentence; a body field of the same name is described by its issue.
  const expected = error.kind === "Payload" ? undefined : expectations.get(field)
  const message = expected === undefined
    ? `${field} is invalid${issue === undefined ? "" : `: ${issue.message}`}`
    : detailed.has(field) && issue !== undefined
    ? `${expected}; ${issue.message}`
    : expected
  return new InvalidParameter({ field, message })
}

/** The 500's error: its cause is logged, never sent. */
export const internalError = () => new InternalError({ message: "internal error; it has been logged" })
