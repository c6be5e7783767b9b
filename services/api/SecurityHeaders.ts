import { Config, Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { randomBytes } from "node:crypto"

/** A fresh nonce for one page: 128 random bits, base64. */
export const makeNonce = (): string => randomBytes(16).toString("base64")

/**
 * The portal's Content-Security-Policy (services/api/README.md, "Security headers"): scripts only
 * from this origin or carrying the page's nonce (React Router's hydration data and module loader,
 * the TV page's dark-mode line); styles from this origin and inline (React's `style` attributes,
 * the charts' SVG); connections (fetch, the live event stream) to this origin only; no plugins, no
 * `<base>` elsewhere, forms posted here only, and the page not framed anywhere.
 */
export const portalContentSecurityPolicy = (nonce: string): string =>
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
    "frame-ancestors 'none'"
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
 * `frame-ancestors 'none'`); a CSP for answers that set none (pages set theirs with their nonce);
 * `Cache-Control: no-store` for answers that set no caching of their own: API answers carry keys,
 * tokens and secrets, and pages show live data; HSTS when `PUBLIC_URL` is https.
 */
export const withSecurityHeaders = (https: boolean) => (response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse => {
  const headers: Record<string, string> = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY"
  }
  if (response.headers["content-security-policy"] === undefined) headers["content-security-policy"] = otherContentSecurityPolicy
  if (response.headers["cache-control"] === undefined) headers["cache-control"] = "no-store"
  if (https) headers["strict-transport-security"] = strictTransportSecurity
  return HttpServerResponse.setHeaders(response, headers)
}

/** `withSecurityHeaders` on every route's answer (a global middleware of the one server). */
export const SecurityHeadersLive = Layer.unwrap(Effect.gen(function*() {
  const publicUrl = yield* Config.String("PUBLIC_URL").pipe(Config.withDefault("http://localhost:8080"))
  const add = withSecurityHeaders(publicUrl.toLowerCase().startsWith("https:"))
  return HttpRouter.middleware((httpEffect) => Effect.map(httpEffect, add), { global: true })
}))
