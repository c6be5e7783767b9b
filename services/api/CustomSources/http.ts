import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Fetcher } from "../../adapters/Fetcher.ts"
import { Api } from "../../domain/api/Api.ts"
import { CurrentPrincipal } from "../../domain/Principal.ts"
import { Publisher } from "../../platform/Publisher.ts"
import { CustomSources } from "../../orgs/CustomSources.ts"

/** Handlers of the `customSources` group: an organization's private sources. */
export const CustomSourcesHttpNoDeps = HttpApiBuilder.group(
  Api,
  "customSources",
  Effect.fn(function*(handlers) {
    const sources = yield* CustomSources
    return handlers.handleAll({
      list: ({ query }) => CurrentPrincipal.use((p) => sources.list(p, query)),
      create: ({ payload }) => CurrentPrincipal.use((p) => sources.create(p, payload)),
      get: ({ params }) => CurrentPrincipal.use((p) => sources.get(p, params.key)),
      update: ({ params, payload }) => CurrentPrincipal.use((p) => sources.update(p, params.key, payload)),
      delete: ({ params }) => CurrentPrincipal.use((p) => sources.remove(p, params.key))
    })
  })
)

/**
 * With the custom sources service and the fetcher that detection uses.
 * ShardReloads is used when the process provides it (a runner with the poller).
 */
export const CustomSourcesHttp = CustomSourcesHttpNoDeps.pipe(
  Layer.provide(CustomSources.layer),
  Layer.provide(Layer.mergeAll(Fetcher.layer, Publisher.layer))
)
