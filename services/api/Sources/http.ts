import { Config, Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../domain/api/Api.ts"
import { InvalidParameter, NotFound } from "../../domain/api/Errors.ts"
import { defaultLimit } from "../../domain/api/Sources.ts"
import type { SourceHistory } from "../../domain/History.ts"
import { StatusHistory } from "../../history/StatusHistory.ts"
import { makeMicroCache } from "../MicroCache.ts"
import { decodeSourceCursor, type SourceNotFound, Sources } from "../Sources.ts"

const invalidCursor = () =>
  new InvalidParameter({ field: "cursor", message: "cursor is not a value this API returned as next_cursor" })

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
    const sourceHistory = Effect.fn("Sources.history")(function*(key: string, window: "24h" | "90d") {
      const components = yield* sources.checkedComponents(key)
      const read = yield* history.forSource(key, components.map((c) => c.external_id), window).pipe(Effect.orDie)
      return {
        key,
        history: read.source,
        components: components.map((c, i) => ({ id: c.id, name: c.name, history: read.components[i]! }))
      } satisfies SourceHistory
    })
    return handlers.handleAll({
      list: Effect.fn(function*({ query }) {
        const after = query.cursor === undefined
          ? undefined
          : yield* decodeSourceCursor(query.cursor).pipe(Effect.mapError(invalidCursor))
        return yield* sources.list({
          category: query.category,
          search: query.search,
          keys: query.filter,
          after,
          limit: query.limit ?? defaultLimit
        })
      }),
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
        return cached(`history:${params.key}:${window}`, sourceHistory(params.key, window)).pipe(Effect.mapError(notFound))
      }
    })
  })
)

/** Handlers of the `sources` group over PostgreSQL and ClickHouse (needs a `SqlClient` and `ClickHouse`). */
export const SourcesHttp = SourcesHttpNoDeps.pipe(Layer.provide(Layer.mergeAll(Sources.layer, StatusHistory.layer)))
