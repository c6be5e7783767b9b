import { Clock, Effect, Layer, Result } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../domain/api/Api.ts"
import { CurrentPrincipal } from "../../domain/Principal.ts"
import { Stacks } from "../../orgs/Stacks.ts"
import { InvalidParameter } from "../../domain/api/Errors.ts"
import { analyticsRange } from "../../history/Analytics.ts"
import { StackAnalyticsReader } from "../../reports/StackAnalytics.ts"

/** Handlers of the `stacks` group: stacks and their items. */
export const StacksHttpNoDeps = HttpApiBuilder.group(
  Api,
  "stacks",
  Effect.fn(function*(handlers) {
    const stacks = yield* Stacks
    const reader = yield* StackAnalyticsReader
    return handlers.handleAll({
      list: ({ query }) => CurrentPrincipal.use((p) => stacks.list(p, query)),
      create: ({ payload }) => CurrentPrincipal.use((p) => stacks.create(p, payload)),
      get: ({ params }) => CurrentPrincipal.use((p) => stacks.get(p, params.id)),
      update: ({ params, payload }) => CurrentPrincipal.use((p) => stacks.update(p, params.id, payload)),
      delete: ({ params }) => CurrentPrincipal.use((p) => stacks.remove(p, params.id)),
      addItem: ({ params, payload }) => CurrentPrincipal.use((p) => stacks.addItem(p, params.id, payload)),
      removeItem: ({ params }) => CurrentPrincipal.use((p) => stacks.removeItem(p, params.id, params.item_id)),
      analytics: ({ params, query }) =>
        Effect.gen(function*() {
          const range = analyticsRange(query, yield* Clock.currentTimeMillis)
          if (Result.isFailure(range)) return yield* new InvalidParameter(range.failure)
          return yield* CurrentPrincipal.use((p) => reader.read(p, params.id, range.success))
        }).pipe(Effect.catchTag("HistoryUnavailable", Effect.die)),
      moveItem: ({ params, payload }) =>
        CurrentPrincipal.use((p) => stacks.moveItem(p, params.id, params.item_id, payload.direction)).pipe(Effect.map((data) => ({ data })))
    })
  })
)

export const StacksHttp = StacksHttpNoDeps.pipe(Layer.provide(Layer.mergeAll(Stacks.layer, StackAnalyticsReader.layer)))
