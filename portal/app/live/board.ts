import { type BoardItem, boardHealth } from "#services/domain/BoardItem.ts"
import type { Board } from "#services/orgs/StackBoard.ts"
import type { ComponentStatus, MonitorState, SourceStatus } from "#services/domain/Status.ts"

/**
 * A `delta` event of the live stream (services/api/README.md "Live updates"):
 * a source's new status with the components that changed (by the source's
 * own ids) and whether its incidents or maintenances changed, or a monitor's
 * new state.
 */
export type LiveDelta =
  | {
    readonly kind: "source"
    readonly key: string
    readonly status: string
    readonly components: ReadonlyArray<{ readonly id: string; readonly status: string }>
    /** An incident or maintenance was opened, updated or resolved with this change: the lists are read again now. */
    readonly incidents: boolean
    readonly at: string
  }
  | { readonly kind: "monitor"; readonly id: string; readonly status: string; readonly at: string }

const sourceStatuses: ReadonlySet<string> = new Set<SourceStatus>(["operational", "degraded", "down", "maintenance"])
const componentStatuses: ReadonlySet<string> = new Set<ComponentStatus>(["operational", "degraded", "critical", "maintenance"])
const monitorStates: ReadonlySet<string> = new Set<MonitorState>(["pending", "up", "degraded", "down", "paused"])

/** The event's JSON as a delta, or undefined when it is not one this page can apply. */
export const parseDelta = (text: string): LiveDelta | undefined => {
  try {
    const value: unknown = JSON.parse(text)
    if (typeof value !== "object" || value === null) return undefined
    const d = value as Record<string, unknown>
    if (d["kind"] === "source" && typeof d["key"] === "string" && typeof d["status"] === "string" && Array.isArray(d["components"])) {
      return {
        kind: "source",
        key: d["key"],
        status: d["status"],
        components: (d["components"] as Array<unknown>).flatMap((c) =>
          typeof c === "object" && c !== null && typeof (c as { id?: unknown }).id === "string" && typeof (c as { status?: unknown }).status === "string"
            ? [{ id: (c as { id: string }).id, status: (c as { status: string }).status }]
            : []
        ),
        incidents: d["incidents"] === true,
        at: typeof d["at"] === "string" ? d["at"] : new Date().toISOString()
      }
    }
    if (d["kind"] === "monitor" && typeof d["id"] === "string" && typeof d["status"] === "string") {
      return { kind: "monitor", id: d["id"], status: d["status"], at: typeof d["at"] === "string" ? d["at"] : new Date().toISOString() }
    }
  } catch {
    return undefined
  }
  return undefined
}

/**
 * The board with one delta applied: the statuses of the items, sources,
 * components and monitors it names, and each stack's banner recomputed by
 * the domain rule (`boardHealth`). Statuses the page does not know are
 * ignored (the next reload shows them). Returns the same board when nothing
 * on it changed, so React does not re-render.
 */
export const applyDelta = (board: Board, delta: LiveDelta): Board => {
  let changed = false
  const stacks = board.stacks.map((stack) => {
    let stackChanged = false
    const items = stack.items.map((item): BoardItem => {
      const next = itemAfter(item, delta)
      if (next !== item) stackChanged = true
      return next
    })
    const sources = delta.kind !== "source" ? stack.sources : stack.sources.map((source) => {
      if (source.key !== delta.key) return source
      const status = sourceStatuses.has(delta.status) ? (delta.status as SourceStatus) : source.status
      const byId = new Map(delta.components.filter((c) => componentStatuses.has(c.status)).map((c) => [c.id, c.status as ComponentStatus]))
      const components = source.components.map((c) => {
        const now = byId.get(c.external_id)
        return now === undefined || now === c.status ? c : { ...c, status: now, last_changed_at: delta.at }
      })
      if (status === source.status && components.every((c, i) => c === source.components[i])) return source
      stackChanged = true
      return { ...source, status, components, last_checked_at: delta.at, last_changed_at: status === source.status ? source.last_changed_at : delta.at }
    })
    const monitors = delta.kind !== "monitor" ? stack.monitors : stack.monitors.map((monitor) => {
      if (monitor.id !== delta.id || !monitorStates.has(delta.status) || monitor.state === delta.status) return monitor
      stackChanged = true
      return { ...monitor, state: delta.status as MonitorState, last_checked_at: delta.at, last_changed_at: delta.at }
    })
    if (!stackChanged) return stack
    changed = true
    return { ...stack, items, sources, monitors, health: boardHealth(items) }
  })
  return changed ? { ...board, stacks } : board
}

const itemAfter = (item: BoardItem, delta: LiveDelta): BoardItem => {
  if (delta.kind === "monitor") {
    return item.kind === "monitor" && item.id === delta.id && monitorStates.has(delta.status) && item.status !== delta.status
      ? { ...item, status: delta.status as MonitorState }
      : item
  }
  if (item.kind === "source") {
    return item.key === delta.key && sourceStatuses.has(delta.status) && item.status !== delta.status
      ? { ...item, status: delta.status as SourceStatus }
      : item
  }
  if (item.kind === "component" && item.source_key === delta.key) {
    const now = delta.components.find((c) => c.id === item.external_id)?.status
    return now !== undefined && componentStatuses.has(now) && now !== item.status ? { ...item, status: now as ComponentStatus } : item
  }
  return item
}
