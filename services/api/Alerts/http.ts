import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../domain/api/Api.ts"
import { CurrentPrincipal } from "../../domain/Principal.ts"
import { Alerts } from "../../orgs/Alerts.ts"
import { SecretBox } from "../../platform/SecretBox.ts"

/** Handlers of the `alerts` group: the organization's alerts and their acknowledgment. */
export const AlertsHttpNoDeps = HttpApiBuilder.group(
  Api,
  "alerts",
  Effect.fn(function*(handlers) {
    const alerts = yield* Alerts
    return handlers.handleAll({
      list: ({ query }) => CurrentPrincipal.use((p) => alerts.list(p, query)),
      get: ({ params }) => CurrentPrincipal.use((p) => alerts.get(p, params.id)),
      acknowledge: ({ params }) => CurrentPrincipal.use((p) => alerts.acknowledge(p, params.id))
    })
  })
)

/** The signed acknowledgment link: no API key. */
export const AlertLinksHttpNoDeps = HttpApiBuilder.group(
  Api,
  "alertLinks",
  Effect.fn(function*(handlers) {
    const alerts = yield* Alerts
    return handlers.handleAll({
      showAcknowledgeLink: ({ params, query }) => alerts.showLink(params.id, query.token),
      acknowledgeByLink: ({ params, query }) => alerts.acknowledgeByLink(params.id, query.token)
    })
  })
)

export const AlertsHttp = Layer.mergeAll(AlertsHttpNoDeps, AlertLinksHttpNoDeps).pipe(
  Layer.provide(Alerts.layer.pipe(Layer.provide(SecretBox.layer)))
)
