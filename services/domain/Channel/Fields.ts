import { Result, Schema, SchemaIssue } from "effect"

/** One problem with one input field, named as on the wire (`settings.webhook_url`, `schedule.timezone`). */
export interface FieldIssue {
  readonly field: string
  readonly message: string
}

// Validation with field names.

const formatter = SchemaIssue.makeFormatterStandardSchemaV1({
  // Optional fields' type errors read "Expected boolean | undefined": the `undefined` is noise to API users.
  leafHook: (issue) => SchemaIssue.defaultLeafHook(issue).replace(/ \| undefined$/, "")
})

const pathOf = (prefix: string, path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined): string =>
  [prefix, ...(path ?? []).map((s) => String(typeof s === "object" && s !== null ? s.key : s))].filter((s) => s !== "").join(".")

/**
 * Decodes `input` with `schema` (unknown fields are errors), or gives the
 * first problem with its field as a dotted path under `prefix`.
 */
export const decodeFields = <S extends Schema.ConstraintDecoder<unknown>>(
  schema: S,
  input: unknown,
  prefix: string,
  what = "a known field"
): Result.Result<S["Type"], FieldIssue> => {
  const decoded = Schema.decodeUnknownResult(schema)(input, { errors: "first", onExcessProperty: "error" })
  if (Result.isSuccess(decoded)) return Result.succeed(decoded.success)
  const [issue] = formatter(decoded.failure.issue).issues
  const field = pathOf(prefix, issue?.path)
  const message = issue === undefined
    ? "is invalid"
    : issue.message === "Expected no excess property"
    ? `is not ${what}`
    : issue.message === "Missing key"
    ? "is required"
    : issue.message
  return Result.fail({ field: field === "" ? "body" : field, message })
}
