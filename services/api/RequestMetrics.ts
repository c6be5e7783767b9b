import { Effect } from "effect"
import { HttpRouter, HttpServerError, HttpServerRequest } from "effect/http"
import { HttpApi } from "effect/http-api"
import { Api } from "../domain/api/Api.ts"
import { openapiPath } from "./ApiHttp.ts"
import * as Metrics from "../platform/Metrics.ts"

/**
 * The route of a request for the HTTP metrics: the OpenAPI path of the endpoint it reaches
 * (`/api/v1/sources/:key/reports`), the router's own routes (health, metrics, event streams, short
 * links), `asset` for the portal's files and `page` for every other path. A label is never the raw
 * path, so a client cannot make a series per URL it invents (and ids and tokens stay out of the
 * metrics).
 */
interface Node {
  readonly literal: Map<string, Node>
  param: Node | undefined
  route: string | undefined
}

const node = (): Node => ({ literal: new Map(), param: undefined, route: undefined })

const add = (root: Node, template: string) => {
  let at = root
  for (const segment of template.split("/").slice(1)) {
    if (segment.startsWith(":")) at = at.param ??= node()
    else {
      let next = at.literal.get(segment)
      if (next === undefined) at.literal.set(segment, next = node())
      at = next
    }
  }
  at.route = template
}

/** The router's routes outside the OpenAPI document (services/api/Http.ts, LiveStream.ts, ShortLinks.ts). */
const routerRoutes = [
  openapiPath,
  "/healthz",
  "/readyz",
  "/metrics",
  "/api/v1/organizations/:org/stream",
  "/api/v1/tv/:token/stream",
  "/api/v1/share/:token/stream",
  "/a/:code"
]

const root = node()
HttpApi.reflect(Api, { onGroup: () => {}, onEndpoint: ({ endpoint }) => add(root, endpoint.path) })
for (const route of routerRoutes) add(root, route)

const find = (at: Node, segments: ReadonlyArray<string>, index: number): string | undefined => {
  if (index === segments.length) return at.route
  const segment = segments[index]!
  const literal = at.literal.get(segment)
  const found = literal === undefined ? undefined : find(literal, segments, index + 1)
  if (found !== undefined || at.param === undefined || segment === "") return found
  return find(at.param, segments, index + 1)
}

/** The route label of a request path (without its query). */
export const routeOf = (url: string): string => {
  const query = url.indexOf("?")
  const path = query === -1 ? url : url.slice(0, query)
  const matched = find(root, path.split("/").slice(1), 0)
  if (matched !== undefined) return matched
  if (path.startsWith("/api/")) return "/api/unknown"
  if (path.startsWith("/assets/")) return "asset"
  return "page"
}

const methods = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

/**
 * Counts each answered request (`statusgrid_http_requests_total`) and times it
 * (`statusgrid_http_request_seconds`) by route, method and status; a global middleware of the one
 * server, outermost, so the limits' 429s are counted too.
 */
export const RequestMetricsLive = HttpRouter.middleware((httpEffect) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const started = performance.now()
    const route = routeOf(request.url)
    const method = methods.has(request.method) ? request.method : "other"
    const record = (status: number) => {
      Metrics.count(Metrics.httpRequests, { route, method, status: String(status) })
      Metrics.observe(Metrics.httpSeconds, { route, method }, (performance.now() - started) / 1000)
    }
    return yield* httpEffect.pipe(
      Effect.tap((response) => Effect.sync(() => record(response.status))),
      Effect.tapCause((cause) => Effect.sync(() => record(HttpServerError.causeResponseStripped(cause)[0].status)))
    )
  }), { global: true })
