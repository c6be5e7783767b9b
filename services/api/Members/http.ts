import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../domain/api/Api.ts"

/** Handlers of the `members` group. */
export const MembersHttp = HttpApiBuilder.group(
  Api,
  "members",
  (handlers) => Effect.succeed(handlers.handleAll({}))
)
