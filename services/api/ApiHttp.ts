import { ByteSize, Cause, Effect, Layer } from "effect"
import type { unhandled } from "effect/Types"
import { HttpIncomingMessage, HttpRouter, HttpServerError, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder, HttpApiError } from "effect/http-api"
import { Api } from "../domain/api/Api.ts"
import { ApiErrors, type ErrorBody, type InternalError, type InvalidParameter, PayloadTooLarge, type UnsupportedMediaType } from "../domain/api/Errors.ts"
import { internalError, invalidParameter } from "./ApiErrorValues.ts"
import { ApiKeys } from "../orgs/ApiKeys.ts"
import { SecretBox } from "../platform/SecretBox.ts"
import { CrowdHttp } from "./Crowd/http.ts"
import { CrowdIngestLive } from "./Crowd/ingest.ts"
import { CustomSourcesHttp } from "./CustomSources/http.ts"
import { AlertsHttp } from "./Alerts/http.ts"
import { LiveRoutes } from "./LiveStream.ts"
import { ShortLinkRoutes } from "./ShortLinks.ts"
import { MaintenanceHttp } from "./Maintenance/http.ts"
import { MembersHttp } from "./Members/http.ts"
import { MonitorsHttp } from "./Monitors/http.ts"
import { NotificationsHttp } from "./Notifications/http.ts"
import { OrganizationHttp } from "./Organization/http.ts"
import { StacksHttp } from "./Stacks/http.ts"
import { ReportsHttp } from "./Reports/http.ts"
import { OrgAuthLive } from "./OrgAuth.ts"
import { RateLimiter } from "./RateLimiter.ts"
import { checkBody } from "./RequestBody.ts"
import { SourcesHttp } from "./Sources/http.ts"
import { TvLinksHttp } from "./TvLinks/http.ts"

export const openapiPath = "/api/v1/openapi.json"

/** Request bodies larger than this are refused (413): the largest legitimate one is a monitor with a 64 KiB body. */
export const maxBodyBytes = 512 * 1024
const maxBodySize = ByteSize.bytes(maxBodyBytes)

/** Reading a body past MaxBodySize fails the request with this (a defect, as the body stream broke). */
const isBodyTooLarge = (defect: unknown): boolean =>
  HttpServerError.isHttpServerError(defect) && defect.reason._tag === "RequestParseError" &&
  (defect.reason.reason === "BodyTooLarge" || String(defect.reason.cause).includes("maxBytes exceeded"))

/**
 * Server side of `ApiErrors`: a body that is not JSON or holds a NUL is
 * refused first (services/api/RequestBody.ts); a request that fails decoding becomes a 400
 * naming the parameter; a response that fails encoding and any defect become
 * a 500 with the same body, logged with its cause. Typed errors of the
 * handlers pass through untouched.
 */
export const ApiErrorsLive = Layer.succeed(ApiErrors, (httpEffect, { endpoint, group }) =>
  Effect.andThen(checkBody(endpoint), httpEffect).pipe(
    Effect.provideService(HttpIncomingMessage.MaxBodySize, maxBodySize),
    Effect.catch((error): Effect.Effect<never, unhandled | InvalidParameter | UnsupportedMediaType | InternalError> => {
      if (!HttpApiError.HttpApiSchemaError.is(error)) return Effect.fail(error)
      if (error.kind === "Body" || error.kind === "ResponseHeaders") {
        return Effect.logError("API response failed encoding", Cause.fail(error)).pipe(
          Effect.annotateLogs({ endpoint: `${group.identifier}.${endpoint.identifier}` }),
          Effect.andThen(Effect.fail(internalError()))
        )
      }
      return Effect.fail(invalidParameter(error))
    }),
    Effect.catchDefect((defect): Effect.Effect<never, PayloadTooLarge | InternalError> =>
      isBodyTooLarge(defect) ? Effect.fail(new PayloadTooLarge({ message: `the request body is larger than ${maxBodyBytes / 1024} KiB` })) :
      Effect.logError("API request failed", Cause.die(defect)).pipe(
        Effect.annotateLogs({ endpoint: `${group.identifier}.${endpoint.identifier}` }),
        Effect.andThen(Effect.fail(internalError()))
      )
    )
  ))

const unknownPath = (request: HttpServerRequest.HttpServerRequest) =>
  HttpServerResponse.json(
    {
      code: "not_found",
      message: `no endpoint ${request.method} ${request.url.split("?")[0]!.slice(0, 200)}`
    } satisfies ErrorBody,
    { status: 404 }
  )

/**
 * Any other path under /api/v1: the API's 404 body instead of the router's
 * empty one. Not for HEAD (the router answers HEAD with the GET route when no
 * HEAD route matches, and a HEAD catch-all would win) nor OPTIONS (CORS).
 */
const UnknownPath = HttpRouter.addAll(
  (["GET", "POST", "PUT", "PATCH", "DELETE"] as const).map((method) => HttpRouter.route(method, "/api/v1/*", unknownPath))
)

/**
 * Router settings the API needs from `HttpRouter.serve`: source keys are up to
 * 128 characters, longer than the router's default limit of 100 for a path
 * parameter, and a longer key should get the API's 404, not the router's.
 */
export const routerConfig = { maxParamLength: 1024 } as const

/**
 * New connections the kernel holds for the server to accept (Node's default is 511; Linux caps it at
 * `net.core.somaxconn`). Crowd reports come each on its own connection: in a burst a full queue drops
 * the handshake and the client tries again 0.2-1 s later (measured at 2,000 reports/s: 47,387 queue
 * overflows in 60,000 reports with 511, 23-1,367 with 4,096).
 */
export const listenBacklog = 4096

/** The handlers of every group; each group resolves its middleware (`ApiErrors`) when it is built. */
const groups = Layer.mergeAll(
  SourcesHttp,
  CrowdHttp,
  OrganizationHttp,
  MembersHttp,
  StacksHttp,
  MonitorsHttp,
  CustomSourcesHttp,
  MaintenanceHttp,
  NotificationsHttp,
  AlertsHttp,
  TvLinksHttp,
  ReportsHttp
).pipe(
  Layer.provide(OrgAuthLive),
  Layer.provide(Layer.mergeAll(ApiKeys.layer, RateLimiter.layer)),
  // API keys are keyed hashes under the secrets key (services/orgs/ApiKeys.ts)
  Layer.provide(SecretBox.layer),
  Layer.provide(ApiErrorsLive)
)

/**
 * `/api/v1`: every endpoint of `Api` and its OpenAPI document at
 * `GET /api/v1/openapi.json`. Needs the router's usual platform services and a
 * `SqlClient`; add it to the process's `routes` (services/api/Http.ts).
 */
export const ApiRoutes = Layer.mergeAll(
  HttpApiBuilder.layer(Api, { openapiPath }).pipe(Layer.provide(groups)),
  UnknownPath,
  CrowdIngestLive,
  ShortLinkRoutes,
  LiveRoutes
)
