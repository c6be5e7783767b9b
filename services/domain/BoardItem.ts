import { type StackHealth, stackHealth } from "./StackHealth.ts"
import type { ComponentStatus, MonitorState, SourceStatus } from "./Status.ts"

/**
 * One stack item with its current status, by the ids live deltas carry
 * (services/api/README.md "Live updates"): a component by its source's key
 * and the source's own component id, a whole source by key, a monitor by id.
 * The portal's boards (services/orgs/StackBoard.ts) send these to the page,
 * which applies deltas to them and recomputes the banner with `boardHealth`:
 * the rule the server used, with no server code in the browser.
 */
export type BoardItem =
  | { readonly kind: "component"; readonly source_key: string; readonly external_id: string; readonly status: ComponentStatus }
  | { readonly kind: "source"; readonly key: string; readonly status: SourceStatus }
  | { readonly kind: "monitor"; readonly id: string; readonly status: MonitorState }

/** The banner of a stack from its items (services/domain/StackHealth.ts). */
export const boardHealth = (items: ReadonlyArray<BoardItem>): StackHealth => stackHealth(items)
