import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../domain/api/Api.ts"

/** Handlers of the `stacks` group. */
export const StacksHttp = HttpApiBuilder.group(
  Api,
  "stacks",
  (handlers) => Effect.succeed(handlers.handleAll({}))
)
