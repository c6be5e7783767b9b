import type { HistorySubject, HistoryWindow } from "#services/domain/History.ts"
import { CrowdSignals, type OpenSignal } from "#services/crowd/CrowdSignals.ts"
import { StatusHistory } from "#services/history/StatusHistory.ts"
import type { Board } from "#services/orgs/StackBoard.ts"
import { DateTime, Effect } from "effect"
import type { PortalContext } from "../../lib/effect.server.ts"
import { runEffect } from "../../lib/effect.server.ts"
import type { Strip } from "../../components/dashboard/HistoryStrip.tsx"

export { organizationOf, principalOf } from "../../lib/member.server.ts"

/**
 * The crowd's open signals of a board's sources (their markers); whatever keeps them from being read,
 * the board is shown without markers (logged), never a 500.
 */
export const crowdSignalsOf = (keys: ReadonlyArray<string>) =>
  CrowdSignals.use((c) => c.openFor(keys)).pipe(
    Effect.catchCause((cause) => Effect.as(Effect.logWarning("board: crowd signals unavailable", cause), new Map<string, OpenSignal>()))
  )

/** The key of a subject's strip: `source:<key>:<component external id>` or `monitor:<id>`. */
export const stripKey = (s: HistorySubject) => (s.kind === "monitor" ? `monitor:${s.id}` : `source:${s.id}:${s.component}`)

/**
 * What a stack page draws strips for: every component it shows (by source key and provider id), its
 * monitors, and its whole sources as themselves (the stack's own strip is made of its items' strips).
 */
export const subjectsOf = (board: Board): Array<HistorySubject> =>
  board.stacks.flatMap((stack) => [
    ...stack.sources.flatMap((source) => source.components.map((c) => ({ kind: "source" as const, id: source.key, component: c.external_id }))),
    ...stack.monitors.map((m) => ({ kind: "monitor" as const, id: m.id, component: "" })),
    ...stack.items.flatMap((i) => (i.kind === "source" ? [{ kind: "source" as const, id: i.key, component: "" }] : []))
  ])

/** The strip key of each item of a board's stack, in order: what its own strip is combined from. */
export const itemStripKeys = (board: Board): Array<string> =>
  (board.stacks[0]?.items ?? []).map((i) =>
    i.kind === "component" ? `source:${i.source_key}:${i.external_id}` : i.kind === "source" ? `source:${i.key}:` : `monitor:${i.id}`
  )

/**
 * The strips of `subjects` from StatusHistory (one ClickHouse read), by `stripKey`;
 * `unavailable` when ClickHouse did not answer, so the page shows the rest without them.
 */
export const historyOf = (context: PortalContext, request: Request, subjects: ReadonlyArray<HistorySubject>, window: HistoryWindow) =>
  runEffect(context, request, StatusHistory.use((h) => h.forSubjects(subjects, window)).pipe(
    Effect.map((strips) => ({
      unavailable: false as const,
      strips: Object.fromEntries(strips.map((strip, i): [string, Strip] => [stripKey(subjects[i]!), {
        cells: strip.cells.map((c) => [DateTime.formatIso(c.start), c.status] as const),
        uptime: strip.uptime.percent
      }]))
    })),
    Effect.catchTag("HistoryUnavailable", () => Effect.succeed({ unavailable: true as const, strips: {} as Record<string, Strip> }))
  ))
