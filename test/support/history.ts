import { Effect, Schema } from "effect"
import type { CheckResultRow } from "../../services/domain/CheckResult.ts"
import { StatusTransitionRow } from "../../services/domain/StatusTransition.ts"
import { makeWriter, ResultWriter } from "../../services/poller/ResultWriter.ts"

/**
 * Known histories for the analytics tests: checks at a fixed interval and
 * status changes, written through the poller's own writers (check results
 * feed the rollups through the migrations' views) into the `ClickHouse` in
 * context.
 */

const iso = (ms: number) => new Date(ms).toISOString()

/** A check of a subject every 15 minutes over `[from, to)`, with the status `statusAt` gives for its instant. */
export const checksEvery15 = (
  kind: "source" | "monitor",
  id: string,
  component: string,
  from: number,
  to: number,
  statusAt: (ms: number) => string
): Array<CheckResultRow> => checksEvery(15 * 60_000, kind, id, component, from, to, statusAt)

/** A check every `stepMs` over `[from, to)`: its status from `statusAt`, its response time from `latencyAt` (100 ms by default). */
export const checksEvery = (
  stepMs: number,
  kind: "source" | "monitor",
  id: string,
  component: string,
  from: number,
  to: number,
  statusAt: (ms: number) => string,
  latencyAt: (ms: number) => number = () => 100
): Array<CheckResultRow> => {
  const rows: Array<CheckResultRow> = []
  for (let t = from; t < to; t += stepMs) {
    rows.push({
      checked_at: iso(t), subject_kind: kind, subject_id: id, component_id: component, status: statusAt(t),
      latency_ms: latencyAt(t), http_status: 200, bytes: 0, error: "", region: "", shard: 0
    })
  }
  return rows
}

/** One `status_transitions` row. */
export const statusChange = (
  kind: "source" | "monitor",
  id: string,
  component: string,
  ms: number,
  previous: string,
  status: string
): StatusTransitionRow => ({
  changed_at: iso(ms), subject_kind: kind, subject_id: id, component_id: component, previous_status: previous, status, incident_id: "", event_id: ""
})

/** The two writers over a spill directory: `write` stores checks and changes, each flushed. Scoped. */
export const historyWriters = (spillDir: string) =>
  Effect.gen(function*() {
    const results = yield* ResultWriter.make({ spillDir, flushMs: 20 })
    const changes = yield* makeWriter({ spillDir: `${spillDir}/transitions`, flushMs: 20 }, {
      table: "status_transitions",
      decodeRows: Schema.decodeUnknownSync(Schema.Array(StatusTransitionRow)),
      what: "status transitions"
    })
    return {
      write: (checks: ReadonlyArray<CheckResultRow>, transitions: ReadonlyArray<StatusTransitionRow>) =>
        Effect.gen(function*() {
          yield* results.write(checks)
          yield* results.flush
          yield* changes.write(transitions)
          yield* changes.flush
        }).pipe(Effect.orDie)
    }
  })
