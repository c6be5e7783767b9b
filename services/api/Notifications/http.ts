import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../domain/api/Api.ts"
import { CurrentPrincipal } from "../../domain/Principal.ts"
import { Channels } from "../../orgs/Channels.ts"
import { Rules } from "../../orgs/Rules.ts"
import { SecretBox } from "../../platform/SecretBox.ts"

/** Handlers of the `notifications` group: channels, test sends, rules and the notification center. */
export const NotificationsHttpNoDeps = HttpApiBuilder.group(
  Api,
  "notifications",
  Effect.fn(function*(handlers) {
    const channels = yield* Channels
    const rules = yield* Rules
    return handlers.handleAll({
      listChannels: ({ query }) => CurrentPrincipal.use((p) => channels.list(p, query)),
      createChannel: ({ payload }) => CurrentPrincipal.use((p) => channels.create(p, payload)),
      getChannel: ({ params }) => CurrentPrincipal.use((p) => channels.get(p, params.id)),
      updateChannel: ({ params, payload }) => CurrentPrincipal.use((p) => channels.update(p, params.id, payload)),
      deleteChannel: ({ params }) => CurrentPrincipal.use((p) => channels.remove(p, params.id)),
      testChannel: ({ params }) => CurrentPrincipal.use((p) => channels.sendTest(p, params.id)),
      listRules: ({ query }) => CurrentPrincipal.use((p) => rules.list(p, query)),
      createRule: ({ payload }) => CurrentPrincipal.use((p) => rules.create(p, payload)),
      getRule: ({ params }) => CurrentPrincipal.use((p) => rules.get(p, params.id)),
      updateRule: ({ params, payload }) => CurrentPrincipal.use((p) => rules.update(p, params.id, payload)),
      deleteRule: ({ params }) => CurrentPrincipal.use((p) => rules.remove(p, params.id)),
      listDeliveries: ({ query }) => CurrentPrincipal.use((p) => channels.deliveries(p, query)),
      getDelivery: ({ params }) => CurrentPrincipal.use((p) => channels.delivery(p, params.id)),
      retryDelivery: ({ params }) => CurrentPrincipal.use((p) => channels.retryDelivery(p, params.id))
    })
  })
)

/** The group with its services; needs only a SqlClient (and OrgAuth, provided with the API). */
export const NotificationsHttp = NotificationsHttpNoDeps.pipe(
  Layer.provide(Layer.mergeAll(Channels.layer, Rules.layer).pipe(Layer.provide(SecretBox.layer)))
)
