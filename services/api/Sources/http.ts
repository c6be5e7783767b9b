import { Config, Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../domain/api/Api.ts"
import { NotFound } from "../../domain/api/Errors.ts"
import { StatusHistory } from "../../history/StatusHistory.ts"
import { makeMicroCache } from "../MicroCache.ts"
import { sourceHistory } from "../SourceHistory.ts"
import { listSources, type SourceNotFound, Sources } from "../Sources.ts"

const notFound = (e: SourceNotFound) =>
  new NotFound({ field: "key", message: `no source with key ${JSON.stringify(e.key)}` })

/** Handlers of the `sources` group, without their `Sources` service. */
export const SourcesHttpNoDeps = HttpApiBuilder.group(
  Api,
  "sources",
  Effect.fn(function*(handlers) {
    const sources = yield* Sources
    const history = yield* StatusHistory
    // Public reads, the same for every caller: the sources' micro-cache (API_CACHE_MS) keeps them off ClickHouse.
    const cached = makeMicroCache(yield* Config.Int("API_CACHE_MS").pipe(Config.withDefault(1000), Effect.orDie))
    const withServices = Effect.provideService(Sources, sources)
    const readHistory = (key: string, window: "24h" | "90d") =>
      sourceHistory(key, window).pipe(
        withServices,
        Effect.provideService(StatusHistory, history),
        Effect.catchTag("HistoryUnavailable", Effect.die)
      )
    return handlers.handleAll({
      list: ({ query }) => listSources(query).pipe(withServices),
      get: ({ params }) => sources.get(params.key).pipe(Effect.mapError(notFound)),
      components: ({ params }) =>
        sources.components(params.key).pipe(
          Effect.map((data) => ({ data })),
          Effect.mapError(notFound)
        ),
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
        return cached(`history:${params.key}:${window}`, readHistory(params.key, window)).pipe(Effect.mapError(notFound))
      }
    })
  })
)

/** Handlers of the `sources` group over PostgreSQL and ClickHouse (needs a `SqlClient` and `ClickHouse`). */
export const SourcesHttp = SourcesHttpNoDeps.pipe(Layer.provide(Layer.mergeAll(Sources.layer, StatusHistory.layer)))
