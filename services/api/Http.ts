import { NodeHttpServer } from "@effect/platform-node"
import { Config, Effect, Layer } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { createServer } from "node:http"
import { Health } from "../platform/Health.ts"
import { LiveHub } from "../platform/LiveHub.ts"
import { ApiRoutes, routerConfig } from "./ApiHttp.ts"
import { PortalRoutesLive } from "./Portal.ts"
import { closeStreamsOnShutdown } from "./LiveStream.ts"

/** `GET /healthz`: each store's state; 200 when all are up, 503 otherwise. */
export const HealthRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const health = yield* Health
  yield* router.add("GET", "/healthz", Effect.gen(function*() {
    const report = yield* health.check
    return yield* HttpServerResponse.json(report, { status: report.status === "ok" ? 200 : 503 })
  }))
}))

/** Everything the process serves: health, /api/v1, and the portal for every other path (services/api/Portal.ts). */
export const routes = Layer.mergeAll(HealthRoutes, ApiRoutes, PortalRoutesLive)

/** Logs the address a person can open once the server listens. */
const announce = (host: string) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const { address } = yield* HttpServer.HttpServer
    if (address._tag === "UnixPathAddress") return
    const shown = host === "0.0.0.0" || host === "::" ? "localhost" : host.includes(":") ? `[${host}]` : host
    yield* Effect.logInfo("statusgrid is up").pipe(Effect.annotateLogs({ url: `http://${shown}:${address.port}` }))
  }))

/**
 * A served router with the process's one LiveHub built first (the routes reuse it) and the open
 * event streams ended before the server waits for its responses (closeStreamsOnShutdown).
 */
export const withLiveStreams = <A, E, R>(served: Layer.Layer<A, E, R>) =>
  closeStreamsOnShutdown.pipe(Layer.provideMerge(served), Layer.provideMerge(LiveHub.layer))

/** One HTTP server on `HOST`:`PORT` for everything the process serves. */
export const serverLayer = Layer.unwrap(Effect.gen(function*() {
  const port = yield* Config.Port("PORT").pipe(Config.withDefault(8080))
  const host = yield* Config.String("HOST").pipe(Config.withDefault("0.0.0.0"))
  return withLiveStreams(Layer.mergeAll(HttpRouter.serve(routes, { disableListenLog: true, routerConfig }), announce(host))).pipe(
    Layer.provide(NodeHttpServer.layer(createServer, { port, host }))
  )
}))
