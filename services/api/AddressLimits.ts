import { Config, Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { peerAddress } from "./Crowd/http.ts"
import { RateLimiter } from "./RateLimiter.ts"
import { rateLimitedResponse } from "./RateLimited.ts"

/** The kinds of unauthenticated requests limited per client address (services/api/README.md, "Limits per address"). */
export type AddressClass = "signin" | "public"

/**
 * What a request is, for the limits per address: sign-in and sign-up (the password forms and the
 * start and return of an OpenID Connect sign-in), or a public read anyone may make without an
 * account (the catalog's API, share and TV pages and their streams, short links, ack links,
 * invitations, calendar feeds); anything else (pages and API calls of a session or an API key,
 * which have their own limits; the portal's files) is not counted here. Crowd reports are limited
 * per address by CrowdReports itself.
 */
export const addressClass = (method: string, path: string): AddressClass | undefined => {
  if ((method === "POST" && (path === "/signin" || path === "/signup")) || path.startsWith("/signin/")) return "signin"
  if (method === "GET" && (path === "/api/v1/sources" || path.startsWith("/api/v1/sources/"))) return "public"
  if (/^\/api\/v1\/(?:share|tv)\/[^/]+\/stream$/u.test(path)) return "public"
  if (/^\/(?:share|tv|a|invite|calendar)\//u.test(path)) return "public"
  if (/^\/alerts\/[^/]+\/ack$/u.test(path)) return "public"
  return undefined
}

const messages: Record<AddressClass, string> = {
  signin: "too many sign-in attempts from this address",
  public: "too many requests from this address"
}

/**
 * Limits per client address (the socket's peer, or the client a trusted proxy forwarded: `TrustedProxies.ts`) of unauthenticated requests, a minute at a time on
 * the bus (Redis: one count for every process; the address is part of a key that lives 61 s):
 * `ADDRESS_SIGNIN_PER_MINUTE` (20) sign-ins and sign-ups, `ADDRESS_PUBLIC_PER_MINUTE` (1200)
 * public reads; 0 turns one off. Over the limit: 429 with Retry-After, the API's error body under
 * /api/v1, a line of text for pages.
 */
export const AddressLimitsLive = Layer.unwrap(Effect.gen(function*() {
  const limits: Record<AddressClass, number> = {
    signin: yield* Config.Int("ADDRESS_SIGNIN_PER_MINUTE").pipe(Config.withDefault(20)),
    public: yield* Config.Int("ADDRESS_PUBLIC_PER_MINUTE").pipe(Config.withDefault(1200))
  }
  return HttpRouter.middleware(Effect.gen(function*() {
    const limiter = yield* RateLimiter
    return (httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const path = request.url.split("?")[0]!
        const kind = addressClass(request.method, path)
        if (kind === undefined || limits[kind] <= 0) return yield* httpEffect
        const decision = yield* limiter.take(`address:${kind}:${peerAddress(request)}`, limits[kind])
        if (decision.allowed) return yield* httpEffect
        const message = `${messages[kind]}; retry after ${decision.retryAfterS} s`
        return path.startsWith("/api/v1/")
          ? rateLimitedResponse(message, decision.retryAfterS)
          : HttpServerResponse.text(`${message}\n`, { status: 429, headers: { "retry-after": String(decision.retryAfterS) } })
      })
  }), { global: true })
})).pipe(Layer.provide(RateLimiter.layer))
