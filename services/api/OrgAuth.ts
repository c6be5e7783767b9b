import { Effect, Layer, Redacted } from "effect"
import { HttpServerRequest } from "effect/http"
import { OrgAuth } from "../domain/api/Auth.ts"
import { Unauthorized } from "../domain/api/Errors.ts"
import { CurrentPrincipal } from "../domain/Principal.ts"
import { ApiKeys } from "../orgs/ApiKeys.ts"
import { keyLimitMessage, rateLimitedResponse } from "./RateLimited.ts"
import { RateLimiter } from "./RateLimiter.ts"

/** The caller's address: the socket's peer, or behind a proxy of `TRUSTED_PROXIES` the client it forwarded (`TrustedProxies.ts`). */
const remoteAddress = (request: HttpServerRequest.HttpServerRequest): string | null => {
  const address = request.remoteAddress
  const value = typeof address === "string" ? address : address._tag === "Some" ? address.value : null
  return value?.replace(/^::ffff:/, "") ?? null
}

/**
 * Server side of `OrgAuth`: the bearer key becomes the caller's Principal, or
 * 401; over the per-key rate limit the answer is 429 with `Retry-After` and
 * the API's error body.
 */
export const OrgAuthLive = Layer.effect(
  OrgAuth,
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const limiter = yield* RateLimiter
    return OrgAuth.of({
      bearer: Effect.fn(function*(httpEffect, { credential }) {
        const request = yield* HttpServerRequest.HttpServerRequest
        const token = Redacted.value(credential)
        const principal = token === "" ? undefined : yield* keys.authenticate(token, remoteAddress(request))
        if (principal === undefined) {
          return yield* new Unauthorized({
            message: token === "" ? "an API key is required: Authorization: Bearer <key>" : "the API key is unknown or revoked"
          })
        }
        const decision = yield* limiter.take(principal.actor.id)
        if (!decision.allowed) {
          return rateLimitedResponse(keyLimitMessage(decision.retryAfterS), decision.retryAfterS)
        }
        return yield* Effect.provideService(httpEffect, CurrentPrincipal, principal)
      })
    })
  })
)
