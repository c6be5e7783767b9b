import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../domain/api/Api.ts"

/** Handlers of the `maintenance` group. */
export const MaintenanceHttp = HttpApiBuilder.group(
  Api,
  "maintenance",
  (handlers) => Effect.succeed(handlers.handleAll({}))
)
