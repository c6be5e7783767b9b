import { Config, Context, Effect, Layer } from "effect"
import type { HistoryUnavailable } from "../history/StatusHistory.ts"
import type { SourceAnalytics } from "../domain/Analytics.ts"
import type { HistoryWindow, SourceHistory } from "../domain/History.ts"
import type { Range } from "../domain/StatusDurations.ts"
import { Analytics, regionsOf, wireAnalytics, wireRange, wireResponseTimes } from "../history/Analytics.ts"
import { IncidentStats } from "../history/IncidentStats.ts"
import { StatusHistory } from "../history/StatusHistory.ts"
import { makeMicroCache } from "./MicroCache.ts"
import { type SourceNotFound, Sources } from "./Sources.ts"

/**
 * A source's status history over a window: its own strip and one per checked
 * component, named as in `/sources/{key}/components`. One ClickHouse query
 * (StatusHistory.forSource) behind the sources' one-second micro-cache
 * (API_CACHE_MS): the reads are public, the same for every caller, and change
 * at most once per check. The API's `GET /sources/{key}/history` and the
 * portal's source page both read it here, through the one instance the server
 * builds (services/api/Portal.ts), so they share the cache. `analytics`: the
 * source's and its components' figures from status durations over a range
 * (`GET /sources/{key}/analytics`: five ClickHouse queries and one
 * PostgreSQL query for its incidents, at once; not cached, as ranges differ).
 */
export class SourceHistories extends Context.Service<SourceHistories, {
  read(key: string, window: HistoryWindow): Effect.Effect<SourceHistory, SourceNotFound | HistoryUnavailable>
  analytics(key: string, range: Range): Effect.Effect<SourceAnalytics, SourceNotFound | HistoryUnavailable>
}>()("statusgrid/api/SourceHistories") {
  static readonly layerNoDeps = Layer.effect(
    SourceHistories,
    Effect.gen(function*() {
      const sources = yield* Sources
      const history = yield* StatusHistory
      const durations = yield* Analytics
      const incidents = yield* IncidentStats
      const cached = makeMicroCache(yield* Config.Int("API_CACHE_MS").pipe(Config.withDefault(1000), Effect.orDie))
      const read = Effect.fn("Sources.history")(function*(key: string, window: HistoryWindow) {
        const components = yield* sources.checkedComponents(key)
        const read = yield* history.forSource(key, components.map((c) => c.external_id), window)
        return {
          key,
          history: read.source,
          components: components.map((c, i) => ({ id: c.id, name: c.name, history: read.components[i]! }))
        } satisfies SourceHistory
      })
      const analytics = Effect.fn("Sources.analytics")(function*(key: string, range: Range) {
        const components = yield* sources.checkedComponents(key)
        const self = { kind: "source" as const, id: key, component: "" }
        const [[source, ...rest], incidentFigures, responseTimes] = yield* Effect.all([
          durations.forSubjects([self, ...components.map((c) => ({ kind: "source" as const, id: key, component: c.external_id }))], range),
          incidents.figures({ sources: [key], components: [] }, range),
          durations.responseTimes(self, range)
        ], { concurrency: 3 })
        return {
          key,
          ...wireRange(source!),
          analytics: wireAnalytics(source!),
          components: components.map((c, i) => ({ id: c.id, name: c.name, analytics: wireAnalytics(rest[i]!) })),
          incidents: incidentFigures,
          regions: regionsOf(components.map((c, i) => ({ region: c.region, analytics: rest[i]! })), incidentFigures),
          response_times: wireResponseTimes(responseTimes)
        } satisfies SourceAnalytics
      })
      return SourceHistories.of({ read: (key, window) => cached(`history:${key}:${window}`, read(key, window)), analytics })
    })
  )

  /** Over the server's `Sources` and `StatusHistory` (the same layer values, so the same instances). */
  static readonly layer = SourceHistories.layerNoDeps.pipe(Layer.provide(Layer.mergeAll(Sources.layer, StatusHistory.layer, Analytics.layer, IncidentStats.layer)))
}
