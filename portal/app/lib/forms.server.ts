import { Result, Schema, SchemaIssue } from "effect"

/** Field name → the message shown next to it. */
export type FieldErrors = Readonly<Record<string, string>>

const format = SchemaIssue.makeFormatterStandardSchemaV1()

/** The text fields of a form, by name (files and repeated names are not used by these forms). */
export const formFields = (form: FormData, names: ReadonlyArray<string>): Record<string, string> =>
  Object.fromEntries(names.map((name) => {
    const value = form.get(name)
    return [name, typeof value === "string" ? value : ""]
  }))

/**
 * Decodes form fields with the Schema the API uses, every issue at once: the
 * value, or each field's first message ("must be an e-mail address").
 */
export const decodeForm = <S extends Schema.Codec<unknown, unknown>>(
  schema: S,
  fields: Record<string, string>
): { readonly ok: true; readonly value: S["Type"] } | { readonly ok: false; readonly errors: FieldErrors } => {
  const result = Schema.decodeUnknownResult(schema)(fields, { errors: "all" })
  if (Result.isSuccess(result)) return { ok: true, value: result.success }
  const errors: Record<string, string> = {}
  for (const issue of format(result.failure.issue).issues) {
    const field = String(issue.path?.[0] ?? "form")
    const key = typeof field === "object" ? String(field) : field
    errors[key] ??= issue.message
  }
  return { ok: false, errors }
}

/** A service's typed error with a `field` (InvalidParameter, Conflict...) as a field error. */
export const fieldError = (error: { readonly message: string; readonly field?: string | undefined }, fallback = "form"): FieldErrors => ({
  [error.field ?? fallback]: error.message
})

/**
 * A service message without its leading field name ("settings.account_sid must be …" → "must be …"):
 * beside the field, the field's label names it.
 */
export const withoutFieldName = (field: string | undefined, message: string): string =>
  field !== undefined && message.startsWith(`${field} `) ? message.slice(field.length + 1) : message
