import { Config, Effect, Layer, Option, Schedule, Schema } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { directServerLayer } from "./DirectRequests.ts"
import * as Path from "node:path"
import { Bus } from "../platform/Bus.ts"
import { ClickHouse } from "../platform/ClickHouse.ts"
import { PostgresBackend } from "../platform/Postgres.ts"
import { Health } from "../platform/Health.ts"
import { LiveHub } from "../platform/LiveHub.ts"
import { ShardPlacement } from "../poller/ShardPlacement.ts"
import { ApiRoutes, listenBacklog, routerConfig } from "./ApiHttp.ts"
import { PortalRoutesLive } from "./Portal.ts"
import { AddressLimitsLive } from "./AddressLimits.ts"
import { SecurityHeadersLive } from "./SecurityHeaders.ts"
import { TrustedProxiesLive } from "./TrustedProxies.ts"
import { MetricsRoutes } from "./MetricsRoute.ts"
import { RequestMetricsLive } from "./RequestMetrics.ts"
import { closeStreamsOnShutdown } from "./LiveStream.ts"

/** `GET /healthz`: each store's state; 200 when all are up, 503 otherwise. */
export const HealthRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const health = yield* Health
  yield* router.add("GET", "/healthz", Effect.gen(function*() {
    const report = yield* health.check
    return yield* HttpServerResponse.json(report, { status: report.status === "ok" ? 200 : 503 })
  }))
}))

/**
 * `GET /readyz`, for orchestrators: 200 when every store answers and, in a process that runs
 * pollers (`start`, `runner`), every poller shard runs on some runner of the cluster
 * (ShardPlacement); 503 otherwise, with the stores' and shards' figures. `/healthz` stays the
 * stores' report.
 */
export const ReadyRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const health = yield* Health
  const placement = yield* Effect.serviceOption(ShardPlacement)
  yield* router.add("GET", "/readyz", Effect.gen(function*() {
    const [stores, shards] = yield* Effect.all([
      health.check,
      Option.match(placement, { onNone: () => Effect.succeed(null), onSome: (p) => p.check })
    ], { concurrency: "unbounded" })
    const storesReady = stores.status === "ok"
    const shardsReady = shards === null || shards.placed === shards.shards
    return yield* HttpServerResponse.json(
      {
        status: storesReady && shardsReady ? "ready" : "not_ready",
        stores: Object.fromEntries(Object.entries(stores.stores).map(([name, store]) => [name, store.status])),
        shards
      },
      { status: storesReady && shardsReady ? 200 : 503 }
    )
  }))
}))

/**
 * Everything the process serves: health, /api/v1, and the portal for every other path
 * (services/api/Portal.ts), unauthenticated requests limited per address, each answer with the
 * security headers.
 */
// Global middlewares wrap in this order: the request metrics outermost (they count the limits' 429s),
// then SecurityHeadersLive before AddressLimitsLive, so a 429 of the limits carries the security headers
// too (test/integration/address-limits.test.ts); the client's address behind trusted proxies before the
// limits, which count by it.
export const routes = Layer.mergeAll(
  HealthRoutes,
  ReadyRoutes,
  MetricsRoutes,
  ApiRoutes,
  PortalRoutesLive,
  RequestMetricsLive,
  SecurityHeadersLive,
  TrustedProxiesLive,
  AddressLimitsLive
)

/** Where a store keeps its data, in a few words: the embedded ones' directory, the servers' addresses. */
const storesLine = (postgres: PostgresBackend["Service"], clickhouse: ClickHouse["Service"], bus: Bus["Service"]) =>
  postgres.kind === "pglite" && clickhouse.kind === "chdb"
    ? `data in ${Path.dirname(Path.resolve(postgres.target))} (embedded PostgreSQL and ClickHouse)`
    : `data on PostgreSQL ${postgres.target}, ClickHouse ${clickhouse.target}` + (bus.kind === "redis" ? `, Redis ${bus.target}` : "")

/**
 * The last line of a start: where to open the portal, where the data lives and how to stop. In a
 * process with pollers it waits (15 s at most) until every shard runs, so that it comes after their
 * start-up lines. An HTTP-only process (`statusgrid http`) says it serves HTTP only, on which port.
 */
const announce = (host: string, what: "start" | "http-only") =>
  Layer.effectDiscard(Effect.gen(function*() {
    const { address } = yield* HttpServer.HttpServer
    if (address._tag === "UnixPathAddress") return
    const shown = host === "0.0.0.0" || host === "::" ? "localhost" : host.includes(":") ? `[${host}]` : host
    const url = `http://${shown}:${address.port}`
    if (what === "http-only") {
      return yield* Effect.logInfo(`statusgrid is up: HTTP only, at ${url}`).pipe(Effect.annotateLogs({ url, pid: process.pid }))
    }
    const data = storesLine(yield* PostgresBackend, yield* ClickHouse, yield* Bus)
    const placement = yield* Effect.serviceOption(ShardPlacement)
    yield* Option.match(placement, {
      onNone: () => Effect.void,
      onSome: (p) => p.check.pipe(Effect.repeat({ until: (s) => s.placed === s.shards, schedule: Schedule.spaced(250) }), Effect.timeout(15_000), Effect.ignore)
    }).pipe(
      Effect.andThen(Effect.logInfo(`statusgrid is up: open ${url} · ${data} · stop with Ctrl+C`)),
      Effect.annotateLogs({ url }),
      Effect.forkScoped
    )
  }))

/**
 * A served router with the process's one LiveHub built first (the routes reuse it) and the open
 * event streams ended before the server waits for its responses (closeStreamsOnShutdown).
 */
export const withLiveStreams = <A, E, R>(served: Layer.Layer<A, E, R>) =>
  closeStreamsOnShutdown.pipe(Layer.provideMerge(served), Layer.provideMerge(LiveHub.layer))

/**
 * Where and how the process listens: `HOST`:`PORT`, and whether the port is shared with other
 * processes (`SO_REUSEPORT`, the kernel spreading new connections over them): `HTTP_SHARE_PORT`, or
 * implied by `HTTP_PROCESSES` above 1 (decision 0020).
 */
export const ListenConfig = Config.all({
  port: Config.Port("PORT").pipe(Config.withDefault(8080)),
  host: Config.String("HOST").pipe(Config.withDefault("0.0.0.0")),
  sharePort: Config.Boolean("HTTP_SHARE_PORT").pipe(Config.withDefault(false)),
  /** One log line per request ("Sent HTTP response", at Info); off by default: /metrics counts requests and traces time them. */
  accessLog: Config.Boolean("HTTP_ACCESS_LOG").pipe(Config.withDefault(false)),
  processes: Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 64 })), "HTTP_PROCESSES").pipe(
    Config.withDefault(1)
  )
})

/**
 * One HTTP server on `HOST`:`PORT` for everything the process serves, with `alongside` started once it
 * listens (the HTTP processes beside this one, services/cli/httpProcesses.ts), and the start-up's
 * last line (`announce`).
 */
export const serverLayerWith = <E = never, R = never>(
  options: { readonly announce: "start" | "http-only"; readonly alongside?: Layer.Layer<never, E, R> }
) =>
  Layer.unwrap(Effect.gen(function*() {
    const { port, host, sharePort, processes, accessLog } = yield* ListenConfig
    const reusePort = sharePort || processes > 1
    return withLiveStreams(Layer.mergeAll(
      HttpRouter.serve(routes, { disableListenLog: true, disableLogger: !accessLog, routerConfig }),
      announce(host, options.announce),
      options.alongside ?? Layer.empty
    )).pipe(
      Layer.provide(directServerLayer({ port, host, backlog: listenBacklog, ...(reusePort ? { reusePort } : {}) }))
    )
  }))

/** One HTTP server on `HOST`:`PORT` for everything the process serves. */
export const serverLayer = serverLayerWith({ announce: "start" })
