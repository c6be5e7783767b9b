import { Config, Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { randomBytes } from "node:crypto"
import { isFrameAncestor, maxFrameAncestors } from "../domain/Organization.ts"

/** A fresh nonce for one page: 128 random bits, base64. */
export const makeNonce = (): string => randomBytes(16).toString("base64")

/**
 * Framing, per page (issue #19): every answer is framed nowhere (`X-Frame-Options: DENY`, CSP
 * `frame-ancestors 'none'`) except the pages an organization lets other sites frame, its TV links
 * and public share pages, and only by the origins it lists (`organizations.frame_ancestors`,
 * `PATCH /api/v1/organization/settings`). The smallest mechanism that keeps one place deciding:
 * - the page's loader knows the organization and puts its origins on its own answer in this
 *   internal header, space-separated (portal/app/components/tv/screen.server.ts);
 * - the portal's handler (services/api/Portal.ts), which writes each page's CSP with its nonce,
 *   takes the header off every answer (it never reaches a browser) and writes the origins, each
 *   checked again (`frameAncestorsOf`), as the policy's `frame-ancestors`;
 * - `withSecurityHeaders` sends `X-Frame-Options: DENY` unless the answer's own CSP names
 *   origins in `frame-ancestors`: X-Frame-Options cannot list origins (`ALLOW-FROM` is obsolete
 *   and ignored), and browsers that know CSP follow `frame-ancestors` over it anyway.
 * No header, an empty one or one with nothing valid: framed nowhere, as before.
 */
export const frameAncestorsHeader = "x-statusgrid-frame-ancestors"

/** The origins a page's `frameAncestorsHeader` names, each checked (only an origin may reach the CSP), at most `maxFrameAncestors`. */
export const frameAncestorsOf = (value: string | null | undefined): ReadonlyArray<string> =>
  value === null || value === undefined ? [] : value.split(" ").filter(isFrameAncestor).slice(0, maxFrameAncestors)

const frameAncestorsDirective = (origins: ReadonlyArray<string>) =>
  origins.length === 0 ? "frame-ancestors 'none'" : `frame-ancestors ${origins.join(" ")}`

/** Whether a CSP lets some origin frame the answer: a `frame-ancestors` directive other than `'none'`. */
const allowsFraming = (policy: string): boolean =>
  policy.split(";").some((directive) => {
    const [name, ...sources] = directive.trim().split(/\s+/)
    return name?.toLowerCase() === "frame-ancestors" && sources.length > 0 && !(sources.length === 1 && sources[0] === "'none'")
  })

/**
 * The portal's Content-Security-Policy (services/api/README.md, "Security headers"): scripts only
 * from this origin or carrying the page's nonce (React Router's hydration data and module loader,
 * the TV page's dark-mode line); styles from this origin and inline (React's `style` attributes,
 * the charts' SVG); connections (fetch, the live event stream) to this origin only; no plugins, no
 * `<base>` elsewhere, forms posted here only, and the page framed nowhere, or only by
 * `frameAncestors` (a TV link or share page whose organization allows them).
 */
export const portalContentSecurityPolicy = (nonce: string, frameAncestors: ReadonlyArray<string> = []): string =>
  [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}'`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "worker-src 'self'",
    "manifest-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    frameAncestorsDirective(frameAncestors)
  ].join("; ")

/** Every other answer (JSON, files, event streams) runs nothing and is framed nowhere. */
const otherContentSecurityPolicy = "default-src 'none'; frame-ancestors 'none'"

/** HSTS for an installation served over HTTPS: 180 days, this host only (other hosts of the domain are not ours to pin). */
const strictTransportSecurity = "max-age=15552000"

/**
 * The headers every answer carries whatever route made it (services/api/README.md, "Security
 * headers"): `nosniff`; `Referrer-Policy: same-origin` (share, TV, invitation and calendar links
 * carry tokens in their paths: other sites get no referrer; this origin's requests keep theirs, and
 * their `Origin`, which the CSRF checks read); no framing (`X-Frame-Options: DENY` and CSP
 * `frame-ancestors 'none'`) unless the answer's own CSP lists where it may be framed (see
 * `frameAncestorsHeader`); a CSP for answers that set none (pages set theirs with their nonce);
 * `Cache-Control: no-store` for answers that set no caching of their own: API answers carry keys,
 * tokens and secrets, and pages show live data; HSTS when `PUBLIC_URL` is https. `own` are the
 * answer's own headers.
 */
export const securityHeadersFor = (https: boolean, own: { readonly [name: string]: string | undefined }): Record<string, string> => {
  const headers: Record<string, string> = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin"
  }
  const policy = own["content-security-policy"]
  if (policy === undefined) headers["content-security-policy"] = otherContentSecurityPolicy
  if (policy === undefined || !allowsFraming(policy)) headers["x-frame-options"] = "DENY"
  if (own["cache-control"] === undefined) headers["cache-control"] = "no-store"
  if (https) headers["strict-transport-security"] = strictTransportSecurity
  return headers
}

/** `securityHeadersFor` on a route's answer. */
export const withSecurityHeaders = (https: boolean) => (response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.setHeaders(response, securityHeadersFor(https, response.headers))

/** Whether `PUBLIC_URL` is https (then every answer carries HSTS). */
export const PublicHttps = Config.String("PUBLIC_URL").pipe(
  Config.withDefault("http://localhost:8080"),
  Config.map((url) => url.toLowerCase().startsWith("https:"))
)

/** `withSecurityHeaders` on every route's answer (a global middleware of the one server). */
export const SecurityHeadersLive = Layer.unwrap(Effect.gen(function*() {
  const add = withSecurityHeaders(yield* PublicHttps)
  return HttpRouter.middleware((httpEffect) => Effect.map(httpEffect, add), { global: true })
}))
