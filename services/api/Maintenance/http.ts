import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../domain/api/Api.ts"
import { CurrentPrincipal } from "../../domain/Principal.ts"
import { MaintenanceWindows } from "../../orgs/MaintenanceWindows.ts"

/** Handlers of the `maintenance` group: the organization's maintenance windows. */
export const MaintenanceHttpNoDeps = HttpApiBuilder.group(
  Api,
  "maintenance",
  Effect.fn(function*(handlers) {
    const windows = yield* MaintenanceWindows
    return handlers.handleAll({
      list: ({ query }) => CurrentPrincipal.use((p) => windows.list(p, query)),
      create: ({ payload }) => CurrentPrincipal.use((p) => windows.create(p, payload)),
      get: ({ params }) => CurrentPrincipal.use((p) => windows.get(p, params.id)),
      update: ({ params, payload }) => CurrentPrincipal.use((p) => windows.update(p, params.id, payload)),
      delete: ({ params }) => CurrentPrincipal.use((p) => windows.remove(p, params.id))
    })
  })
)

export const MaintenanceHttp = MaintenanceHttpNoDeps.pipe(Layer.provide(MaintenanceWindows.layer))
