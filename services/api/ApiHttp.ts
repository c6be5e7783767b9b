import { ByteSize, Cause, Effect, Layer, SchemaIssue } from "effect"
import type { unhandled } from "effect/Types"
import { HttpIncomingMessage, HttpRouter, HttpServerError, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder, HttpApiError } from "effect/http-api"
import { Api } from "../domain/api/Api.ts"
import { ApiErrors, type ErrorBody, InternalError, InvalidParameter, PayloadTooLarge, type UnsupportedMediaType } from "../domain/api/Errors.ts"
import { maxFilterKeys, maxLimit, maxSearchLength } from "../domain/api/Sources.ts"
import { CategoryId } from "../domain/Source.ts"
import { ApiKeys } from "../orgs/ApiKeys.ts"
import { SecretBox } from "../platform/SecretBox.ts"
import { CrowdHttp } from "./Crowd/http.ts"
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

/**
 * What each query parameter must be, said once for every endpoint that takes it.
 * A Map, not an object literal: a body field may be named `constructor` or `__proto__`.
 */
const expectations: ReadonlyMap<string, string> = new Map([
  ["category", `category must be given once, as one of ${CategoryId.literals.join(", ")}`],
  ["limit", `limit must be given once, as an integer from 1 to ${maxLimit}`],
  ["search", `search must be given once, as text of at most ${maxSearchLength} characters without NUL`],
  ["filter", `filter must be given once, as a comma-separated list of 1 to ${maxFilterKeys} source keys`],
  ["cursor", "cursor must be given once, as the next_cursor of a previous page"],
  ["window", "window must be given once, as 24h or 90d"]
])
/** Parameters whose schema says which part is wrong, worth adding to the message. */
const detailed = new Set(["filter"])

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

const segment = (s: PropertyKey | { readonly key: PropertyKey }): string =>
  String(typeof s === "object" && s !== null ? s.key : s)

/** A request that failed decoding, as the parameter it names and why. */
const invalidParameter = (error: HttpApiError.HttpApiSchemaError): InvalidParameter => {
  const [issue] = formatIssues(error.cause.issue).issues
  const path = issue?.path ?? []
  // A body field is named by its whole path (`settings.webhook_url`, `headers.X-Token`); a query or path parameter by its name.
  const field = path.length === 0
    ? error.kind.toLowerCase()
    : error.kind === "Payload" ? path.map(segment).join(".") : segment(path[0]!)
  // Only query parameters have a set sentence; a body field of the same name is described by its issue.
  const expected = error.kind === "Payload" ? undefined : expectations.get(field)
  const message = expected === undefined
    ? `${field} is invalid${issue === undefined ? "" : `: ${issue.message}`}`
    : detailed.has(field) && issue !== undefined
    ? `${expected}; ${issue.message}`
    : expected
  return new InvalidParameter({ field, message })
}

/** Reading a body past MaxBodySize fails the request with this (a defect, as the body stream broke). */
const isBodyTooLarge = (defect: unknown): boolean =>
  HttpServerError.isHttpServerError(defect) && defect.reason._tag === "RequestParseError" &&
  (defect.reason.reason === "BodyTooLarge" || String(defect.reason.cause).includes("maxBytes exceeded"))

const internalError = () => new InternalError({ message: "internal error; it has been logged" })

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
  ShortLinkRoutes,
  LiveRoutes
)
