import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../domain/api/Api.ts"

/** Handlers of the `notifications` group. */
export const NotificationsHttp = HttpApiBuilder.group(
  Api,
  "notifications",
  (handlers) => Effect.succeed(handlers.handleAll({}))
)
