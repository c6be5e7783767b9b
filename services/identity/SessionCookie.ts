/**
 * The portal's session cookie: `sg_session` holds the token of
 * identity/Sessions.ts `create` (the table keeps only its hash). The portal
 * sets it; the API's streams read it with `sessionTokenFrom`.
 * httpOnly, SameSite=Lax, Path=/, Secure when the request came over https.
 */
export const sessionCookieName = "sg_session"

/** Session tokens are 32 random bytes in base64url (43 characters). */
const tokenPattern = /^[A-Za-z0-9_-]{20,100}$/

/** The session token in a `Cookie` header, if any (the first well-formed `sg_session`). */
export const sessionTokenFrom = (cookieHeader: string | null | undefined): string | undefined => {
  if (!cookieHeader) return undefined
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=")
    if (eq === -1 || part.slice(0, eq).trim() !== sessionCookieName) continue
    let value = part.slice(eq + 1).trim()
    // RFC 6265 allows a quoted cookie value.
    if (value.length >= 2 && value.startsWith("\"") && value.endsWith("\"")) value = value.slice(1, -1)
    if (tokenPattern.test(value)) return value
  }
  return undefined
}

interface CookieOptions {
  /** Add `Secure`: the request came over https (directly or through a trusted proxy). */
  readonly secure: boolean
}

const attributes = ({ secure }: CookieOptions) => `Path=/; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}`

/** `Set-Cookie` value that stores `token`; a browser-session cookie (the server ends sessions, not the browser's clock). */
export const setSessionCookie = (token: string, options: CookieOptions) => `${sessionCookieName}=${token}; ${attributes(options)}`

/** `Set-Cookie` value that removes the cookie (sign-out, a session that ended). */
export const clearSessionCookie = (options: CookieOptions) => `${sessionCookieName}=; Max-Age=0; ${attributes(options)}`
