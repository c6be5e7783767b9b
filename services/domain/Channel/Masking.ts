import { parseUrl } from "./Settings.ts"

/** How channel secrets are shown: masked, never in full. Which fields are secrets is the registry's (`../Channel.ts`). */

/** A URL secret as `https://host/…/abcd` (its last 4 characters, when the rest is long enough to stay secret). */
export const maskUrl = (value: string): string => {
  const url = parseUrl(value)
  if (url === undefined) return "…"
  const rest = value.length - url.origin.length
  return rest > 16 ? `${url.origin}/…/${value.slice(-4)}` : `${url.origin}/…`
}

/** A token as `…abcd` (its last 4 characters when it has at least 16). */
export const maskToken = (value: string): string => (value.length >= 16 ? `…${value.slice(-4)}` : "…")

const maskValue = (field: string, value: unknown): unknown => {
  if (field === "headers" && typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.keys(value).map((name) => [name, "…"]))
  }
  if (typeof value !== "string") return "…"
  return field.endsWith("_url") || field === "endpoint" ? maskUrl(value) : maskToken(value)
}

/** Settings split into `view` (every field, the `secretFields` masked) and `secrets` (those fields in clear). */
export const splitBySecretFields = (secretFields: ReadonlyArray<string>, settings: Readonly<Record<string, unknown>>) => {
  const view: Record<string, unknown> = {}
  const secrets: Record<string, unknown> = {}
  for (const [field, value] of Object.entries(settings)) {
    if (secretFields.includes(field)) {
      secrets[field] = value
      view[field] = maskValue(field, value)
    } else {
      view[field] = value
    }
  }
  return { view, secrets }
}
