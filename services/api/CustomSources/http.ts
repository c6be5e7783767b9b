import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../domain/api/Api.ts"

/** Handlers of the `customSources` group. */
export const CustomSourcesHttp = HttpApiBuilder.group(
  Api,
  "customSources",
  (handlers) => Effect.succeed(handlers.handleAll({}))
)
