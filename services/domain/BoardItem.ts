import { type StackHealth, stackHealth } from "./StackHealth.ts"
import type { ComponentStatus, MonitorState, SourceStatus } from "./Status.ts"

/**
 * One stack item with its current status, by the ids live deltas carry
 * (services/api/README.md "Live updates"): a component by its source's key
 * and the source's own component id, a whole source by key, a monitor by id.
 * The portal's boards (services/orgs/StackBoard.ts) do not send them: the
 * page derives them from the board's sources and monitors (`boardItems`),
 * applies deltas to those and recomputes the banner with `boardHealth`: the
 * rule the server used, with no server code in the browser.
 */
export type BoardItem =
  | { readonly kind: "component"; readonly source_key: string; readonly external_id: string; readonly status: ComponentStatus }
  | { readonly kind: "source"; readonly key: string; readonly status: SourceStatus }
  | { readonly kind: "monitor"; readonly id: string; readonly status: MonitorState }

/** What `boardItems` reads of a board's stack: its sources with the components it shows, and its monitors. */
export interface BoardShape {
  readonly sources: ReadonlyArray<{
    readonly key: string
    readonly status: SourceStatus
    /** Added whole: the source is one item, and its components are listed for detail. */
    readonly whole: boolean
    /** In a whole source, `picked` marks a component also added on its own (one more item); otherwise every component is an item. */
    readonly components: ReadonlyArray<{ readonly external_id: string; readonly status: ComponentStatus; readonly picked?: boolean }>
  }>
  readonly monitors: ReadonlyArray<{ readonly id: string; readonly state: MonitorState }>
}

/**
 * A stack's items, one per stack item (as the API's `health` counts them):
 * each source added whole, each component added on its own, each monitor.
 */
export const boardItems = (stack: BoardShape): Array<BoardItem> => {
  const items: Array<BoardItem> = []
  for (const source of stack.sources) {
    if (source.whole) items.push({ kind: "source", key: source.key, status: source.status })
    for (const c of source.components) {
      if (!source.whole || c.picked === true) items.push({ kind: "component", source_key: source.key, external_id: c.external_id, status: c.status })
    }
  }
  for (const m of stack.monitors) items.push({ kind: "monitor", id: m.id, status: m.state })
  return items
}

/** The banner of a stack from its items (services/domain/StackHealth.ts). */
export const boardHealth = (items: ReadonlyArray<BoardItem>): StackHealth => stackHealth(items)
