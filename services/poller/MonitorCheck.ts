import { Clock, Effect } from "effect"
import { type CheckRequest, runCheck } from "../monitors/HttpCheck.ts"
import { MonitorAgents } from "../monitors/MonitorAgents.ts"
import { type MonitorCheckState, step } from "../monitors/MonitorState.ts"
import { Publisher } from "../platform/Publisher.ts"
import type { MonitorCheckSave, PolledMonitor } from "./MonitorStore.ts"
import { PollerStats } from "./PollerStats.ts"
import { ResultWriter } from "./ResultWriter.ts"
import { monitorTransitions } from "./Transitions.ts"
import { TransitionWriter } from "./TransitionWriter.ts"
import { noCallSite, withSpanWhenTracing } from "../platform/Tracing.ts"

/** What a shard keeps of one website monitor between its checks. */
export interface MonitorEntry {
  monitor: PolledMonitor
  request: CheckRequest
  intervalMs: number
  /** in memory, ahead of PostgreSQL (saved once a second) */
  state: MonitorCheckState
}

/** Where a monitor check hands what the shard writes to PostgreSQL later. */
export interface MonitorCheckHooks {
  readonly shard: number
  /** The state after the check (saved once a second, latest per monitor). */
  readonly saved: (save: MonitorCheckSave) => void
}

/**
 * The check of one website monitor: the HTTP check (`monitors/HttpCheck.ts`), its state step, the result
 * row, the bus and the transitions. The returned function never fails.
 */
export const makeMonitorCheck = Effect.fn("MonitorCheck.make")(function*(hooks: MonitorCheckHooks) {
  const writer = yield* ResultWriter
  const transitions = yield* TransitionWriter
  const publisher = yield* Publisher
  const stats = yield* PollerStats
  const agents = yield* MonitorAgents
  const clock = yield* Clock.Clock

  // Untraced: one call per check, the monitors' hot path.
  return Effect.fnUntraced(
    function*(entry: MonitorEntry, plannedDue: number) {
      const started = clock.currentTimeMillisUnsafe()
      const outcome = yield* Effect.promise(() => runCheck(entry.request, { agentPool: agents.pool, allowPrivate: agents.allowPrivate }))
      const { monitor } = entry
      const previous = entry.state
      const { events, next } = step(previous, outcome, {
        monitor: { id: monitor.id, name: monitor.settings.name, url: monitor.settings.url },
        alert_threshold: monitor.settings.alert_threshold,
        ssl_expiry_days: monitor.settings.ssl_expiry_days
      }, new Date(outcome.checked_at))
      yield* writer.write([{
        checked_at: outcome.checked_at,
        subject_kind: "monitor",
        subject_id: monitor.id,
        component_id: "",
        status: outcome.status,
        latency_ms: Math.round(outcome.phases.total_ms),
        http_status: outcome.http_status,
        bytes: outcome.bytes,
        error: outcome.error,
        region: "",
        shard: hooks.shard,
        dns_ms: outcome.phases.dns_ms,
        connect_ms: outcome.phases.connect_ms,
        tls_ms: outcome.phases.tls_ms,
        first_byte_ms: outcome.phases.first_byte_ms,
        tls_days_left: outcome.tls?.days_left ?? null
      }])
      stats.check("monitor", outcome.status === "down" ? "failed" : "fresh", started - plannedDue)
      // The state moves only once its change is handed over to the bus; refused, the next check steps from
      // the same state again and finds the change anew.
      yield* publisher.monitorChecked({
        id: monitor.id,
        organization_id: monitor.organization_id,
        previous: previous.state,
        state: next.state,
        response_ms: outcome.phases.total_ms,
        http_status: outcome.http_status,
        error: outcome.error,
        events,
        at: outcome.checked_at
      })
      entry.state = next
      yield* transitions.write(monitorTransitions(monitor.id, previous.state, next.state, events, outcome.checked_at))
      hooks.saved({
        id: monitor.id,
        next,
        response_ms: outcome.phases.total_ms,
        http_status: outcome.http_status,
        tls_valid_to: outcome.tls?.valid_to ?? null,
        tls_issuer: outcome.tls?.issuer ?? null
      })
      if (next.state !== previous.state) stats.changed("monitor")
    },
    (effect, entry) =>
      withSpanWhenTracing(
        Effect.catchCause(effect, (cause) => Effect.logWarning("monitor check failed", cause).pipe(Effect.annotateLogs({ monitor: entry.monitor.id }))),
        "check.monitor",
        { root: true, kind: "internal", attributes: { "statusgrid.monitor.id": entry.monitor.id }, ...noCallSite }
      )
  )
})
