import type { OidcFailureReason } from "#services/identity/Oidc.ts"
import { isSecure, safeNext } from "../../lib/session.server.ts"

/**
 * What an OpenID Connect sign-in keeps between leaving for the provider and
 * coming back (services/identity/README.md step 2): provider, state, PKCE
 * verifier, nonce and the page to return to, in a short-lived HttpOnly cookie
 * scoped to /signin (there is no session yet). SameSite=Lax: the provider's
 * redirect back is a top-level GET, which carries it.
 */
export interface PendingSignIn {
  readonly provider: string
  readonly state: string
  readonly verifier: string
  readonly nonce: string
  readonly next: string | undefined
}

const cookieName = "sg_oidc"
const maxAgeS = 600

const attributes = (request: Request) => `Path=/signin; HttpOnly; SameSite=Lax${isSecure(request) ? "; Secure" : ""}`

export const pendingCookie = (request: Request, pending: PendingSignIn) =>
  `${cookieName}=${Buffer.from(JSON.stringify(pending)).toString("base64url")}; Max-Age=${maxAgeS}; ${attributes(request)}`

export const clearPendingCookie = (request: Request) => `${cookieName}=; Max-Age=0; ${attributes(request)}`

const text = (value: unknown) => (typeof value === "string" ? value : "")

/** The pending sign-in of the request's cookie, if any and well-formed. */
export const pendingFrom = (request: Request): PendingSignIn | undefined => {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const eq = part.indexOf("=")
    if (eq === -1 || part.slice(0, eq).trim() !== cookieName) continue
    try {
      const raw: unknown = JSON.parse(Buffer.from(part.slice(eq + 1).trim(), "base64url").toString("utf8"))
      if (typeof raw !== "object" || raw === null) return undefined
      const o = raw as Record<string, unknown>
      const pending = { provider: text(o["provider"]), state: text(o["state"]), verifier: text(o["verifier"]), nonce: text(o["nonce"]), next: safeNext(text(o["next"])) }
      return pending.state !== "" && pending.verifier !== "" && pending.nonce !== "" ? pending : undefined
    } catch {
      return undefined
    }
  }
  return undefined
}

/**
 * The callback address registered at the provider: this server's own origin as the request reached it
 * (the scheme and host a proxy of `TRUSTED_PROXIES` forwarded, services/api/TrustedProxies.ts; a
 * client's own X-Forwarded-Host is never read) + `/signin/<provider>/callback`.
 */
export const callbackUrl = (request: Request, provider: string) =>
  `${new URL(request.url).origin}/signin/${encodeURIComponent(provider)}/callback`

const providerNames: Readonly<Record<string, string>> = { google: "Google", microsoft: "Microsoft" }

/** How the pages name the provider of this id. */
export const providerName = (id: string) => providerNames[id] ?? id

/** What the person is told when a sign-in through a provider fails (Oidc's OidcSignInFailed `reason`; the details go to the log). */
export const failureMessage = (reason: OidcFailureReason, provider: string): string => {
  switch (reason) {
    case "unreachable":
      return `${provider} could not be reached. Try again, or sign in with your password.`
    case "refused":
      return `${provider} would not complete this sign-in. Start again.`
    case "unverified":
      return `${provider}'s answer could not be verified.`
    case "tenant":
      return "Accounts of your Microsoft organization cannot sign in here. An administrator of this statusgrid can allow it."
  }
}
