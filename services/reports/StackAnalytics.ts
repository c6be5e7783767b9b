import { Clock, Context, Effect, Layer } from "effect"
import type { Forbidden, NotFound } from "../domain/api/Errors.ts"
import type { StackAnalytics } from "../domain/Analytics.ts"
import type { HistorySubject } from "../domain/History.ts"
import type { Principal } from "../domain/Principal.ts"
import { healthDurationsOf, levelPeriodsOf, stackPeriodsOf } from "../domain/StackDurations.ts"
import { durationsOf, hourOfWeek, meanTimeToResolution, outagesOf, type Range, uptimeOf } from "../domain/StatusDurations.ts"
import { Analytics, type SubjectAnalytics, wireAnalytics, wireRange } from "../history/Analytics.ts"
import { IncidentStats } from "../history/IncidentStats.ts"
import type { HistoryUnavailable } from "../history/StatusHistory.ts"
import { type Board, StackBoard } from "../orgs/StackBoard.ts"
import { Stacks } from "../orgs/Stacks.ts"

/**
 * A stack's analytics over a range (`GET /stacks/{id}/analytics`, the
 * portal's stack analytics page and the scheduled reports): each item's
 * figures (Analytics.forSubjects, one read for all), the stack's own from
 * the items' periods by StackHealth's rule (services/domain/StackDurations.ts),
 * and the incidents of its sources and components (IncidentStats).
 */
export interface StackItemRef {
  readonly kind: "component" | "source" | "monitor"
  readonly name: string
  readonly source_key: string | null
  readonly component_id: string | null
  readonly monitor_id: string | null
  readonly subject: HistorySubject
  /** The component's id in the API (uuid), for incidents naming it. */
  readonly component_uuid: string | null
}

/** The items of a board's one stack, in order, named and as ClickHouse subjects. */
export const stackItemsOf = (board: Board): Array<StackItemRef> => {
  const stack = board.stacks[0]
  if (stack === undefined) return []
  const sources = new Map(stack.sources.map((s) => [s.key, s]))
  const monitors = new Map(stack.monitors.map((m) => [m.id, m]))
  return stack.items.map((item): StackItemRef => {
    switch (item.kind) {
      case "component": {
        const component = sources.get(item.source_key)?.components.find((c) => c.external_id === item.external_id)
        return {
          kind: "component",
          name: component?.name ?? item.external_id,
          source_key: item.source_key,
          component_id: item.external_id,
          monitor_id: null,
          subject: { kind: "source", id: item.source_key, component: item.external_id },
          component_uuid: component?.id ?? null
        }
      }
      case "source":
        return {
          kind: "source",
          name: sources.get(item.key)?.name ?? item.key,
          source_key: item.key,
          component_id: null,
          monitor_id: null,
          subject: { kind: "source", id: item.key, component: "" },
          component_uuid: null
        }
      case "monitor":
        return {
          kind: "monitor",
          name: monitors.get(item.id)?.name ?? item.id,
          source_key: null,
          component_id: null,
          monitor_id: item.id,
          subject: { kind: "monitor", id: item.id, component: "" },
          component_uuid: null
        }
    }
  })
}

/** The stack's own figures from its items' (the range is theirs). */
export const stackFiguresOf = (items: ReadonlyArray<SubjectAnalytics>, range: Range) => {
  const periods = stackPeriodsOf(items.map((i) => i.periods), range)
  const levels = levelPeriodsOf(periods)
  const durations = durationsOf(levels)
  // An outage at the range's start is cut when one of the items' outages there was.
  const startsCut = items.some((i) => i.outages[0]?.cut === true)
  const outages = outagesOf(levels, range, startsCut ? "down" : null)
  return {
    health_ms: healthDurationsOf(periods),
    analytics: wireAnalytics({
      uptime: uptimeOf(durations),
      durations,
      outages,
      mttr_ms: meanTimeToResolution(outages),
      hour_of_week: hourOfWeek(outages.filter((o) => !o.cut).map((o) => o.start))
    })
  }
}

export class StackAnalyticsReader extends Context.Service<StackAnalyticsReader, {
  /** The stack `id` of the principal's organization over `range`. */
  read(principal: Principal, id: string, range: Range): Effect.Effect<StackAnalytics, Forbidden | NotFound | HistoryUnavailable>
  /** The same by the stack's slug (the portal's stack pages). */
  readBySlug(principal: Principal, slug: string, range: Range): Effect.Effect<StackAnalytics, Forbidden | NotFound | HistoryUnavailable>
}>()("statusgrid/reports/StackAnalyticsReader") {
  static readonly layerNoDeps = Layer.effect(
    StackAnalyticsReader,
    Effect.gen(function*() {
      const stacks = yield* Stacks
      const boards = yield* StackBoard
      const analytics = yield* Analytics
      const incidents = yield* IncidentStats
      const ofBoard = Effect.fn("StackAnalytics.ofBoard")(function*(board: Board, range: Range) {
        const stack = board.stacks[0]!
        const items = stackItemsOf(board)
        const [figures, incidentFigures] = yield* Effect.all([
          analytics.forSubjects(items.map((i) => i.subject), range),
          incidents.figures({
            sources: items.flatMap((i) => (i.kind === "source" && i.source_key !== null ? [i.source_key] : [])),
            components: items.flatMap((i) => (i.component_uuid === null ? [] : [i.component_uuid]))
          }, range)
        ], { concurrency: 2 })
        // The items' range (capped at now); a stack without items gets the same cap.
        const now = yield* Clock.currentTimeMillis
        const effective = figures[0] ?? { from: range.from, to: Math.max(range.from, Math.min(range.to, now)) }
        const own = stackFiguresOf(figures, { from: effective.from, to: effective.to })
        return {
          id: stack.id,
          slug: stack.slug,
          name: stack.name,
          ...wireRange(effective),
          analytics: own.analytics,
          health_ms: own.health_ms,
          items: items.map((item, i) => ({
            kind: item.kind,
            name: item.name,
            source_key: item.source_key,
            component_id: item.component_id,
            monitor_id: item.monitor_id,
            analytics: wireAnalytics(figures[i]!)
          })),
          incidents: incidentFigures
        } satisfies StackAnalytics
      })
      return StackAnalyticsReader.of({
        read: (principal, id, range) =>
          stacks.get(principal, id).pipe(
            Effect.flatMap((stack) => boards.stack(principal, stack.slug)),
            Effect.flatMap((board) => ofBoard(board, range))
          ),
        readBySlug: (principal, slug, range) => boards.stack(principal, slug).pipe(Effect.flatMap((board) => ofBoard(board, range)))
      })
    })
  )

  static readonly layer = StackAnalyticsReader.layerNoDeps.pipe(
    Layer.provide(Layer.mergeAll(Stacks.layer, StackBoard.layer, Analytics.layer, IncidentStats.layer))
  )
}
