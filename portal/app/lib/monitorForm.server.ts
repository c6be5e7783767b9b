import type { MonitorRecord } from "#services/domain/api/Monitors.ts"
import type { MonitorAuth } from "#services/domain/Monitor.ts"
import type { FieldIssue } from "#services/monitors/Validate.ts"
import type { FieldErrors } from "./forms.server.ts"

/**
 * A website monitor's form (portal/app/components/settings/MonitorForm.tsx)
 * as the API's create body: the same `validateMonitor` and `Monitors` rules
 * then apply (services/monitors/Validate.ts). Nothing is checked here beyond
 * the form's own shape (a header line without a colon).
 */
export const monitorFormNames = [
  "name",
  "url",
  "method",
  "expected_status",
  "keyword",
  "keyword_mode",
  "headers",
  "auth_type",
  "auth_username",
  "auth_password",
  "auth_token",
  "interval",
  "alert_threshold",
  "timeout"
] as const

/** A whole number as a number; anything else as typed, so the Schema names the field ("Expected number, got …"). */
const numberField = (value: string): unknown => (/^-?\d{1,12}$/.test(value.trim()) ? Number(value.trim()) : value)

/** `Name: value` lines as the headers object; the first line that is not one, as an error. */
const parseHeaders = (text: string): { readonly headers: Record<string, string> } | { readonly error: string } => {
  const headers: Record<string, string> = {}
  const lines = text.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim()
    if (line === "") continue
    const colon = line.indexOf(":")
    if (colon <= 0) return { error: `line ${i + 1} is not "Name: value"` }
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim()
  }
  return { headers }
}

export interface MonitorFormInput {
  /** The create body without `auth`. */
  readonly settings: Record<string, unknown>
  /** The credentials typed; undefined when no new ones were given (kept on edit). */
  readonly auth: MonitorAuth | null | undefined
  /** What the form itself could not read. */
  readonly errors: FieldErrors
}

/**
 * Reads the form. `storedAuth` is the monitor's current kind of credentials
 * (edit): with the same kind chosen and the secret fields left blank, the
 * stored credentials are kept (`auth` undefined); "none" removes them (null).
 */
export const readMonitorForm = (fields: Record<string, string>, storedAuth: MonitorRecord["auth"]["type"] = "none"): MonitorFormInput => {
  const errors: Record<string, string> = {}
  const settings: Record<string, unknown> = {
    name: fields["name"] ?? "",
    url: fields["url"] ?? "",
    method: fields["method"] || "GET",
    expected_status: fields["expected_status"] ?? "",
    keyword_mode: fields["keyword_mode"] || "contains"
  }
  if ((fields["keyword"] ?? "") !== "") settings["keyword"] = fields["keyword"]
  for (const name of ["interval", "alert_threshold", "timeout"] as const) {
    const value = fields[name] ?? ""
    if (value.trim() !== "") settings[name] = numberField(value)
  }
  const headers = parseHeaders(fields["headers"] ?? "")
  if ("error" in headers) errors["headers"] = headers.error
  else settings["headers"] = headers.headers

  const type = fields["auth_type"] ?? "none"
  let auth: MonitorAuth | null | undefined
  if (type === "bearer") {
    const token = fields["auth_token"] ?? ""
    auth = token === "" && storedAuth === "bearer" ? undefined : { type: "bearer", token }
  } else if (type === "basic") {
    const username = fields["auth_username"] ?? ""
    const password = fields["auth_password"] ?? ""
    auth = username === "" && password === "" && storedAuth === "basic" ? undefined : { type: "basic", username, password }
  } else {
    auth = storedAuth === "none" ? undefined : null
  }
  return { settings, auth, errors }
}

/** The form field a validation issue belongs to (`auth.token` → `auth_token`, `headers.X-Foo` → `headers`). */
export const formFieldOf = (field: string): string => {
  if (field === "check_interval") return "interval"
  if (field.startsWith("headers")) return "headers"
  if (field.startsWith("auth.")) return `auth_${field.slice("auth.".length)}`
  if (field === "auth") return "auth_type"
  return monitorFormNames.includes(field as (typeof monitorFormNames)[number]) ? field : "form"
}

/** Validation issues as field errors, the first per field. */
export const issuesAsErrors = (issues: ReadonlyArray<FieldIssue>): FieldErrors => {
  const errors: Record<string, string> = {}
  for (const issue of issues) {
    const field = formFieldOf(issue.field)
    // The field's label is shown before the message; a sub-field's name (a header's) stays in it.
    errors[field] ??= issue.field.includes(".") && field === "headers" ? `${issue.field.slice("headers.".length)} ${issue.message}` : issue.message
  }
  return errors
}

/** A stored monitor's settings as the form shows them (never its credentials). */
export const formValuesOf = (m: MonitorRecord): Record<string, string> => ({
  name: m.name,
  url: m.url,
  method: m.method,
  expected_status: m.expected_status,
  keyword: m.keyword ?? "",
  keyword_mode: m.keyword_mode,
  headers: Object.entries(m.headers).map(([k, v]) => `${k}: ${v}`).join("\n"),
  auth_type: m.auth.type,
  auth_username: "",
  auth_password: "",
  auth_token: "",
  interval: String(m.interval),
  alert_threshold: String(m.alert_threshold),
  timeout: String(m.timeout)
})

/** A stored monitor as a create body, to ask `validateMonitor` for the recommendations it does not follow. */
export const settingsOfRecord = (m: MonitorRecord): Record<string, unknown> => ({
  name: m.name,
  url: m.url,
  check_type: m.check_type,
  interval: m.interval,
  alert_threshold: m.alert_threshold,
  timeout: m.timeout,
  expected_status: m.expected_status,
  method: m.method,
  headers: m.headers,
  ...(m.body !== null ? { body: m.body } : {}),
  ...(m.keyword !== null ? { keyword: m.keyword } : {}),
  keyword_mode: m.keyword_mode,
  ...(m.degraded_after_ms !== null ? { degraded_after_ms: m.degraded_after_ms } : {}),
  ssl_expiry_days: m.ssl_expiry_days,
  follow_redirects: m.follow_redirects,
  tls_verify: m.tls_verify
})
