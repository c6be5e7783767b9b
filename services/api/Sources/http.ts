import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../domain/api/Api.ts"
import { InvalidParameter, NotFound } from "../../domain/api/Errors.ts"
import { defaultLimit } from "../../domain/api/Sources.ts"
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
        )
    })
  })
)

/** Handlers of the `sources` group over PostgreSQL (needs a `SqlClient`). */
export const SourcesHttp = SourcesHttpNoDeps.pipe(Layer.provide(Sources.layer))
