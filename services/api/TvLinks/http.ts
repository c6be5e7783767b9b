import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../domain/api/Api.ts"
import { CurrentPrincipal } from "../../domain/Principal.ts"
import { LiveTargets } from "../../orgs/LiveTargets.ts"
import { Stacks } from "../../orgs/Stacks.ts"
import { TvLinks } from "../../orgs/TvLinks.ts"

/** Handlers of the `tvLinks` group: the organization's TV links. */
export const TvLinksHttpNoDeps = HttpApiBuilder.group(
  Api,
  "tvLinks",
  Effect.fn(function*(handlers) {
    const links = yield* TvLinks
    return handlers.handleAll({
      list: () => CurrentPrincipal.use((p) => links.list(p)),
      create: ({ payload }) => CurrentPrincipal.use((p) => links.create(p, payload)),
      revoke: ({ params }) => CurrentPrincipal.use((p) => links.revoke(p, params.id))
    })
  })
)

export const TvLinksHttp = TvLinksHttpNoDeps.pipe(Layer.provide(TvLinks.layer), Layer.provide(Layer.mergeAll(Stacks.layer, LiveTargets.layer)))
