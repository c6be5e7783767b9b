import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../domain/api/Api.ts"
import { CurrentPrincipal } from "../../domain/Principal.ts"
import { Monitors } from "../../orgs/Monitors.ts"
import { SecretBox } from "../../platform/SecretBox.ts"
import { MonitorAgents } from "../../monitors/MonitorAgents.ts"

/** Handlers of the `monitors` group: an organization's website monitors. */
export const MonitorsHttpNoDeps = HttpApiBuilder.group(
  Api,
  "monitors",
  Effect.fn(function*(handlers) {
    const monitors = yield* Monitors
    return handlers.handleAll({
      list: ({ query }) => CurrentPrincipal.use((p) => monitors.list(p, query)),
      create: ({ payload }) => CurrentPrincipal.use((p) => monitors.add(p, payload)),
      get: ({ params }) => CurrentPrincipal.use((p) => monitors.get(p, params.id)),
      update: ({ params, payload }) => CurrentPrincipal.use((p) => monitors.update(p, params.id, payload)),
      pause: ({ params }) => CurrentPrincipal.use((p) => monitors.pause(p, params.id)),
      resume: ({ params }) => CurrentPrincipal.use((p) => monitors.resume(p, params.id)),
      delete: ({ params }) => CurrentPrincipal.use((p) => monitors.remove(p, params.id))
    })
  })
)

/**
 * With the monitors service, its credential encryption and the address
 * guard's setting (MONITOR_ALLOW_PRIVATE, through MonitorAgents). ShardReloads
 * is used when the process provides it (a runner with the poller).
 */
export const MonitorsHttp = MonitorsHttpNoDeps.pipe(
  Layer.provide(Monitors.layer),
  Layer.provide(Layer.mergeAll(SecretBox.layer, MonitorAgents.layer))
)
