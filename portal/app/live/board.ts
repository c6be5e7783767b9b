import { boardHealth, boardItems } from "#services/domain/BoardItem.ts"
import type { Board, BoardComponent, BoardSource, BoardStack } from "#services/orgs/StackBoard.ts"
import type { ComponentStatus, MonitorState, SourceStatus } from "#services/domain/Status.ts"

/**
 * A board as a page receives it (its loader data): the server's `Board`
 * without what the page does not read, since every byte of it is serialized,
 * sent and hydrated (a 500-component dashboard: 107 KB of loader data with
 * them, 58 KB without): no database id of components (deltas name them by
 * the source's own id) and no item list (`boardItems` derives it from the
 * sources and monitors, exactly: components picked from a source also added
 * whole carry `picked`).
 */
export interface LiveComponent extends Omit<BoardComponent, "id"> {}
export interface LiveSource extends Omit<BoardSource, "components"> {
  readonly components: ReadonlyArray<LiveComponent>
  /** The crowd's open signal on the source (services/crowd): the "users report problems" marker; null when none. */
  readonly crowd: CrowdMarker | null
}

/** What a board shows of a crowd signal. */
export interface CrowdMarker {
  readonly started_at: string
  readonly peak_confidence: number
}
export interface LiveStack extends Omit<BoardStack, "items" | "sources"> {
  readonly sources: ReadonlyArray<LiveSource>
}
export interface LiveBoard extends Omit<Board, "stacks"> {
  readonly stacks: ReadonlyArray<LiveStack>
}

/** The page's copy of a board with the crowd's open signals by source key (in loaders: the server's board is not changed). */
export const toLiveBoard = (board: Board, crowd: ReadonlyMap<string, CrowdMarker> = new Map()): LiveBoard => ({
  ...board,
  stacks: board.stacks.map(({ items: _items, sources, ...stack }) => ({
    ...stack,
    sources: sources.map((source) => {
      const signal = crowd.get(source.key)
      return {
        ...source,
        components: source.components.map(({ id: _id, ...c }) => c),
        crowd: signal === undefined ? null : { started_at: signal.started_at, peak_confidence: signal.peak_confidence }
      }
    })
  }))
})

/** The sources' keys a board shows (for the crowd's open signals). */
export const boardSourceKeys = (board: Board): Array<string> => [...new Set(board.stacks.flatMap((s) => s.sources.map((source) => source.key)))]

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
  /** The crowd's signal on a source started (`signal`) or ended (null). */
  | { readonly kind: "crowd"; readonly key: string; readonly signal: CrowdMarker | null; readonly at: string }

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
    if (d["kind"] === "crowd" && typeof d["key"] === "string") {
      const s = d["signal"] as Record<string, unknown> | null | undefined
      const signal = typeof s === "object" && s !== null && typeof s["started_at"] === "string" && typeof s["peak_confidence"] === "number"
        ? { started_at: s["started_at"], peak_confidence: s["peak_confidence"] }
        : null
      return { kind: "crowd", key: d["key"], signal, at: typeof d["at"] === "string" ? d["at"] : new Date().toISOString() }
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
 * The board with one delta applied: the statuses of the sources, components
 * and monitors it names, and each stack's banner recomputed from its items
 * (`boardItems`) by the domain rule (`boardHealth`). Statuses the page does not know are
 * ignored (the next reload shows them). Returns the same board when nothing
 * on it changed, so React does not re-render.
 */
export const applyDelta = (board: LiveBoard, delta: LiveDelta): LiveBoard => {
  if (delta.kind === "crowd") return applyCrowd(board, delta)
  let changed = false
  const stacks = board.stacks.map((stack) => {
    let stackChanged = false
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
    return { ...stack, sources, monitors, health: boardHealth(boardItems({ sources, monitors })) }
  })
  return changed ? { ...board, stacks } : board
}

/** The crowd's marker set or dropped on every stack showing the source; the statuses are not touched. */
const applyCrowd = (board: LiveBoard, delta: Extract<LiveDelta, { readonly kind: "crowd" }>): LiveBoard => {
  let changed = false
  const stacks = board.stacks.map((stack) => {
    if (!stack.sources.some((s) => s.key === delta.key && (s.crowd?.started_at ?? null) !== (delta.signal?.started_at ?? null))) return stack
    changed = true
    return { ...stack, sources: stack.sources.map((s) => (s.key === delta.key ? { ...s, crowd: delta.signal } : s)) }
  })
  return changed ? { ...board, stacks } : board
}
