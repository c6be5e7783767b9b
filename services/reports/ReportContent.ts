import { Clock, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { ReportContent, ReportStack } from "../domain/Report.ts"
import type { ReportFrequency } from "../domain/ReportPeriods.ts"
import type { Principal } from "../domain/Principal.ts"
import type { Period } from "../domain/ReportPeriods.ts"
import { Analytics } from "../history/Analytics.ts"
import type { HistoryUnavailable } from "../history/StatusHistory.ts"
import { rowsOf } from "../platform/Rows.ts"
import { StackAnalyticsReader } from "./StackAnalytics.ts"

/** A schedule as the generator needs it. */
export interface ScheduleFacts {
  readonly id: string
  readonly organization_id: string
  readonly name: string
  readonly frequency: ReportFrequency
  readonly time_zone: string
  readonly stack_ids: ReadonlyArray<string>
  readonly sla_target: number
  readonly created_by: string | null
}

const OrgRow = Schema.Struct({ name: Schema.String, slug: Schema.String, plan_id: Schema.Literals(["free", "pro", "enterprise"]) })
const IdRow = Schema.Struct({ id: Schema.String })

/** How many monitors the report names as slowest. */
export const slowestMonitors = 5

const iso = (ms: number) => new Date(ms).toISOString()

/**
 * A report's figures for one schedule and period: each stack's analytics
 * (StackAnalyticsReader, the API's reader, with a viewer's access as the
 * schedule's author), its uptime against the target, and the slowest of the
 * monitors the stacks show (their response times over the period).
 */
export class ReportContents extends Context.Service<ReportContents, {
  generate(schedule: ScheduleFacts, period: Period): Effect.Effect<ReportContent, HistoryUnavailable>
}>()("statusgrid/reports/ReportContents") {
  static readonly layerNoDeps = Layer.effect(ReportContents, Effect.gen(function*() {
    const sql = yield* SqlClient
    const stacks = yield* StackAnalyticsReader
    const analytics = yield* Analytics
    const orgRows = rowsOf("organizations", OrgRow)
    const idRows = rowsOf("stacks", IdRow)

    const generate = Effect.fn("ReportContents.generate")(function*(schedule: ScheduleFacts, period: Period) {
      const [org] = yield* sql`SELECT o.name, o.slug, o.plan_id FROM organizations o WHERE o.id = ${schedule.organization_id}::uuid`
        .pipe(Effect.orDie, Effect.flatMap(orgRows))
      const ids = yield* sql`
        SELECT id FROM stacks WHERE organization_id = ${schedule.organization_id}::uuid
          AND (cardinality(${schedule.stack_ids}::uuid[]) = 0 OR id = ANY(${schedule.stack_ids}::uuid[]))
        ORDER BY created_at, id`.pipe(Effect.orDie, Effect.flatMap(idRows))
      const principal: Principal = {
        organization_id: schedule.organization_id,
        organization_slug: org!.slug,
        plan: org!.plan_id,
        role: "viewer",
        actor: { kind: "user", id: schedule.created_by ?? schedule.organization_id },
        ip: null
      }
      const figures = yield* Effect.forEach(ids, (s) =>
        stacks.read(principal, s.id, period).pipe(
          // A stack deleted since the list was read is left out.
          Effect.catchTags({ NotFound: () => Effect.succeed(null), Forbidden: () => Effect.succeed(null) })
        ), { concurrency: 4 })
      const shown = figures.filter((f) => f !== null)
      const reportStacks = shown.map((f): ReportStack => {
        const d = f.analytics.durations_ms
        const counted = d.down + d.degraded + d.operational
        return {
          id: f.id,
          name: f.name,
          uptime: f.analytics.uptime,
          downtime_ms: d.down,
          outage_count: f.analytics.outage_count,
          mttr_ms: f.analytics.mttr_ms,
          sla_met: f.analytics.uptime === null ? null : f.analytics.uptime >= schedule.sla_target,
          allowed_downtime_ms: Math.round(counted * (1 - schedule.sla_target / 100)),
          outages: f.analytics.outages.map((o) => ({ start: o.start, end: o.end, duration_ms: o.duration_ms })),
          items: f.items.map((i) => ({
            kind: i.kind,
            name: i.name,
            uptime: i.analytics.uptime,
            downtime_ms: i.analytics.durations_ms.down,
            outage_count: i.analytics.outage_count
          })),
          incidents: { count: f.incidents.count, mttr_ms: f.incidents.mttr_ms }
        }
      })
      // The monitors the stacks show, once each, by their response times over the period.
      const monitors = new Map<string, string>()
      for (const f of shown) for (const i of f.items) if (i.monitor_id !== null) monitors.set(i.monitor_id, i.name)
      const times = yield* Effect.forEach([...monitors], ([id, name]) =>
        analytics.responseTimes({ kind: "monitor", id, component: "" }, period).pipe(Effect.map((t) => {
          const checks = t.daily.reduce((n, p) => n + p.checks, 0)
          return {
            id,
            name,
            checks,
            mean_ms: checks === 0 ? 0 : t.daily.reduce((sum, p) => sum + p.mean * p.checks, 0) / checks,
            p95_ms: Math.max(0, ...t.daily.map((p) => p.p95))
          }
        })), { concurrency: 4 })
      return {
        organization: { name: org!.name, slug: org!.slug },
        schedule: {
          id: schedule.id,
          name: schedule.name,
          frequency: schedule.frequency,
          time_zone: schedule.time_zone,
          sla_target: schedule.sla_target
        },
        from: iso(period.from),
        to: iso(period.to),
        generated_at: iso(yield* Clock.currentTimeMillis),
        stacks: reportStacks,
        slowest_monitors: times.filter((m) => m.checks > 0).toSorted((a, b) => b.mean_ms - a.mean_ms).slice(0, slowestMonitors)
      } satisfies ReportContent
    })
    return ReportContents.of({ generate })
  }))

  static readonly layer = ReportContents.layerNoDeps.pipe(Layer.provide(Layer.mergeAll(StackAnalyticsReader.layer, Analytics.layer)))
}
