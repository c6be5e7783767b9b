import { Effect } from "effect"
import type { HistoryWindow, SourceHistory } from "../domain/History.ts"
import { StatusHistory } from "../history/StatusHistory.ts"
import { Sources } from "./Sources.ts"

/**
 * A source's status history over `window`: its own strip and one per checked component, named as in
 * `/sources/{key}/components`. One ClickHouse query (StatusHistory.forSource); the API's
 * `GET /sources/{key}/history` and the portal's source page both read it here.
 */
export const sourceHistory = Effect.fn("Sources.history")(function*(key: string, window: HistoryWindow) {
  const components = yield* Sources.use((s) => s.checkedComponents(key))
  const read = yield* StatusHistory.use((h) => h.forSource(key, components.map((c) => c.external_id), window))
  return {
    key,
    history: read.source,
    components: components.map((c, i) => ({ id: c.id, name: c.name, history: read.components[i]! }))
  } satisfies SourceHistory
})
