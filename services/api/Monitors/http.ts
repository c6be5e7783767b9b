import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../domain/api/Api.ts"

/** Handlers of the `monitors` group. */
export const MonitorsHttp = HttpApiBuilder.group(
  Api,
  "monitors",
  (handlers) => Effect.succeed(handlers.handleAll({}))
)
