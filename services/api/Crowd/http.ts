import { Effect, Layer } from "effect"
import type { HttpServerRequest } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { CrowdReports } from "../../crowd/CrowdReports.ts"
import { Api } from "../../domain/api/Api.ts"
import type { RateLimited } from "../../domain/api/Errors.ts"
import { sessionTokenFrom } from "../../identity/SessionCookie.ts"
import { Sessions } from "../../identity/Sessions.ts"
import { SecretBox } from "../../platform/SecretBox.ts"
import { rateLimitedResponse } from "../RateLimited.ts"

/**
 * The client's address: the socket's peer, or behind a proxy of `TRUSTED_PROXIES` the client it
 * forwarded (`TrustedProxies.ts` sets the request's address before any route reads it). A client's own
 * X-Forwarded-For is never read. The portal's pages get the same address in `peerHeader`
 * (services/api/Portal.ts).
 */
export const peerAddress = (request: HttpServerRequest.HttpServerRequest): string => {
  const address = request.remoteAddress
  const value = typeof address === "string" ? address : address._tag === "Some" ? address.value : undefined
  return value ?? "unknown"
}

/** The header the server sets on every request it hands the portal: the socket's peer, replacing any the client sent. */
export const peerHeader = "x-statusgrid-peer"

/** The crowd reports service over the server's secrets key: one value, given to the API's handlers and to the portal. */
export const crowdReportsLayer = CrowdReports.layer.pipe(Layer.provide(SecretBox.layer))

/** 429 with Retry-After and the API's error body, as the API key limiter answers. */
const tooMany = (error: RateLimited) => rateLimitedResponse(error.message, error.retry_after_s)

/** The signed-in person of a request's session cookie (its `Cookie` header), if any; an ended session reports anonymously. */
export const reporterOf = (sessions: Sessions["Service"]) => (cookie: string | undefined) => {
  const token = sessionTokenFrom(cookie)
  return token === undefined
    ? Effect.succeed(undefined)
    : sessions.resolve(token).pipe(Effect.map((s) => s.user_id), Effect.orElseSucceed(() => undefined))
}

/** Handlers of the `crowd` group: reports and the score of catalog sources (public; a portal session makes the person the reporter). */
export const CrowdHttpNoDeps = HttpApiBuilder.group(
  Api,
  "crowd",
  Effect.fn(function*(handlers) {
    const crowd = yield* CrowdReports

    const userOf = reporterOf(yield* Sessions)

    return handlers.handleAll({
      report: ({ params, payload, request }) =>
        Effect.gen(function*() {
          return yield* crowd.report({
            sourceKey: params.key,
            symptom: payload.symptom,
            componentId: payload.component_id,
            region: payload.region,
            address: peerAddress(request),
            userId: yield* userOf(request.headers["cookie"])
          })
        }).pipe(Effect.catchTag("RateLimited", (e) => Effect.succeed(tooMany(e)))),
      score: ({ params }) => crowd.score(params.key),
      record: ({ params }) => crowd.record(params.key)
    })
  })
)

/** Handlers of the `crowd` group over PostgreSQL and the bus (needs a `SqlClient` and `Bus`). */
export const CrowdHttp = CrowdHttpNoDeps.pipe(
  Layer.provide(Layer.mergeAll(crowdReportsLayer, Sessions.layer))
)
