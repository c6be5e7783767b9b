/**
 * The portal's session cookie: its name, and the raw session token read from
 * a request's `Cookie` header (resolve it with `Sessions.resolve`). The portal
 * sets it; the API's live stream reads it, so both use this one name.
 */
export const sessionCookieName = "sg_session"

/** Session tokens are base64url (services/identity/Sessions.ts); anything else is not ours. */
const tokenPattern = /^[A-Za-z0-9_-]{16,256}$/

/**
 * The value of `sg_session` in a `Cookie` header, or undefined when absent or
 * malformed. A cookie header holds `name=value` pairs separated by `;`; the
 * first `sg_session` wins, as browsers send the most specific path first.
 */
export const readSessionToken = (cookieHeader: string | null | undefined): string | undefined => {
  if (cookieHeader === null || cookieHeader === undefined || cookieHeader === "") return undefined
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=")
    if (eq === -1 || part.slice(0, eq).trim() !== sessionCookieName) continue
    let value = part.slice(eq + 1).trim()
    if (value.startsWith("\"") && value.endsWith("\"") && value.length >= 2) value = value.slice(1, -1)
    return tokenPattern.test(value) ? value : undefined
  }
  return undefined
}
