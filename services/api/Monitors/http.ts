import { Clock, DateTime, Effect, Layer, Result } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../domain/api/Api.ts"
import { InvalidParameter } from "../../domain/api/Errors.ts"
import { CurrentPrincipal } from "../../domain/Principal.ts"
import { Monitors } from "../../orgs/Monitors.ts"
import { SecretBox } from "../../platform/SecretBox.ts"
import { MonitorAgents } from "../../monitors/MonitorAgents.ts"
import { StatusHistory } from "../../history/StatusHistory.ts"
import { Analytics, analyticsRange, monitorAnalytics } from "../../history/Analytics.ts"

/** Handlers of the `monitors` group: an organization's website monitors. */
export const MonitorsHttpNoDeps = HttpApiBuilder.group(
  Api,
  "monitors",
  Effect.fn(function*(handlers) {
    const monitors = yield* Monitors
    const history = yield* StatusHistory
    const durations = yield* Analytics
    return handlers.handleAll({
      list: ({ query }) => CurrentPrincipal.use((p) => monitors.list(p, query)),
      create: ({ payload }) => CurrentPrincipal.use((p) => monitors.add(p, payload)),
      get: ({ params }) => CurrentPrincipal.use((p) => monitors.get(p, params.id)),
      update: ({ params, payload }) => CurrentPrincipal.use((p) => monitors.update(p, params.id, payload)),
      pause: ({ params }) => CurrentPrincipal.use((p) => monitors.pause(p, params.id)),
      resume: ({ params }) => CurrentPrincipal.use((p) => monitors.resume(p, params.id)),
      delete: ({ params }) => CurrentPrincipal.use((p) => monitors.remove(p, params.id)),
      check: ({ params }) => CurrentPrincipal.use((p) => monitors.checkNow(p, params.id)),
      checks: ({ params, query }) =>
        CurrentPrincipal.use((p) => monitors.get(p, params.id)).pipe(
          Effect.andThen((monitor) =>
            history.monitorChecks(monitor.id, query.limit ?? 50, query.before === undefined ? undefined : DateTime.toEpochMillis(query.before))
          ),
          Effect.map((checks) => ({
            id: params.id,
            checks,
            // A full page may have older checks after it.
            next_before: checks.length === (query.limit ?? 50) ? checks.at(-1)!.checked_at : null
          })),
          Effect.catchTag("HistoryUnavailable", Effect.die)
        ),
      // The monitor is read first: the organization's own, with the same access as `get`.
      history: ({ params, query }) =>
        CurrentPrincipal.use((p) => monitors.get(p, params.id)).pipe(
          Effect.andThen((monitor) => history.forSubjects([{ kind: "monitor", id: monitor.id, component: "" }], query.window ?? "24h")),
          Effect.map(([strip]) => ({ id: params.id, history: strip! })),
          Effect.catchTag("HistoryUnavailable", Effect.die)
        ),
      analytics: ({ params, query }) =>
        Effect.gen(function*() {
          const range = analyticsRange(query, yield* Clock.currentTimeMillis)
          if (Result.isFailure(range)) return yield* new InvalidParameter(range.failure)
          const monitor = yield* CurrentPrincipal.use((p) => monitors.get(p, params.id))
          return yield* monitorAnalytics(monitor.id, range.success)
        }).pipe(Effect.provideService(Analytics, durations), Effect.catchTag("HistoryUnavailable", Effect.die))
    })
  })
)

/**
 * With the monitors service, its credential encryption and the address
 * guard's setting (MONITOR_ALLOW_PRIVATE, through MonitorAgents), and the history reader (needs `ClickHouse`). ShardReloads
 * is used when the process provides it (a runner with the poller).
 */
export const MonitorsHttp = MonitorsHttpNoDeps.pipe(
  Layer.provide(Layer.mergeAll(Monitors.layer, StatusHistory.layer, Analytics.layer)),
  Layer.provide(Layer.mergeAll(SecretBox.layer, MonitorAgents.layer))
)
