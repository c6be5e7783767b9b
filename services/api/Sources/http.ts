import { Clock, Effect, Layer, Result } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { HttpServerResponse } from "effect/http"
import { Api } from "../../domain/api/Api.ts"
import { InvalidParameter, NotFound } from "../../domain/api/Errors.ts"
import { analyticsRange } from "../../history/Analytics.ts"
import { SourceHistories } from "../SourceHistory.ts"
import { listSourcesJson, type SourceNotFound, Sources } from "../Sources.ts"

const notFound = (e: SourceNotFound) =>
  new NotFound({ field: "key", message: `no source with key ${JSON.stringify(e.key)}` })

const jsonResponse = (json: string) => HttpServerResponse.text(json, { contentType: "application/json" })

/** Handlers of the `sources` group, without their `Sources` service. */
export const SourcesHttpNoDeps = HttpApiBuilder.group(
  Api,
  "sources",
  Effect.fn(function*(handlers) {
    const sources = yield* Sources
    const histories = yield* SourceHistories
    const withServices = Effect.provideService(Sources, sources)
    return handlers.handleAll({
      // The JSON PostgreSQL built, answered as it is (decision 0026); the endpoint's Schema documents it.
      list: ({ query }) => listSourcesJson(query).pipe(withServices, Effect.map(jsonResponse)),
      get: ({ params }) => sources.getJson(params.key).pipe(Effect.map(jsonResponse), Effect.mapError(notFound)),
      components: ({ params }) => sources.componentsJson(params.key).pipe(Effect.map(jsonResponse), Effect.mapError(notFound)),
      incidents: ({ params, query }) =>
        sources.incidents(params.key, query).pipe(
          Effect.catchTag("SourceNotFound", (e) => Effect.fail(notFound(e)))
        ),
      maintenances: ({ params, query }) =>
        sources.maintenances(params.key, query).pipe(
          Effect.catchTag("SourceNotFound", (e) => Effect.fail(notFound(e)))
        ),
      history: ({ params, query }) => {
        const window = query.window ?? "24h"
        return histories.read(params.key, window).pipe(Effect.catchTag("HistoryUnavailable", Effect.die), Effect.mapError(notFound))
      },
      analytics: ({ params, query }) =>
        Effect.gen(function*() {
          const range = analyticsRange(query, yield* Clock.currentTimeMillis)
          if (Result.isFailure(range)) return yield* new InvalidParameter(range.failure)
          return yield* histories.analytics(params.key, range.success).pipe(Effect.catchTag("HistoryUnavailable", Effect.die), Effect.mapError(notFound))
        })
    })
  })
)

/** Handlers of the `sources` group over PostgreSQL and ClickHouse (needs a `SqlClient` and `ClickHouse`). */
export const SourcesHttp = SourcesHttpNoDeps.pipe(Layer.provide(Layer.mergeAll(Sources.layer, SourceHistories.layer)))
