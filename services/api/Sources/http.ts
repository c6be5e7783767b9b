import { Effect, Layer, Schema } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../domain/api/Api.ts"
import { InvalidParameter, NotFound } from "../../domain/api/Errors.ts"
import { defaultLimit } from "../../domain/api/Sources.ts"
import { SourceKey } from "../../domain/Source.ts"
import { type SourceNotFound, Sources } from "../Sources.ts"

/**
 * The page cursor: base64url of the last key of the previous page. Opaque to
 * clients, so the encoding may change; decoding checks it is a well-formed key.
 */
const Cursor = Schema.StringFromBase64Url.pipe(Schema.decodeTo(SourceKey))
const decodeCursor = Schema.decodeUnknownEffect(Cursor)
const encodeCursor = (key: string): string => Schema.encodeSync(Cursor)(SourceKey.make(key))

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
          : yield* decodeCursor(query.cursor).pipe(Effect.mapError(invalidCursor))
        const limit = query.limit ?? defaultLimit
        const page = yield* sources.list({
          category: query.category,
          search: query.search,
          keys: query.filter,
          after,
          limit
        })
        const last = page.sources.at(-1)
        return {
          data: page.sources,
          next_cursor: page.more && last !== undefined ? encodeCursor(last.key) : null,
          limit
        }
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
