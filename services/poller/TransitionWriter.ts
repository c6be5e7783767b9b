import { Context, Effect, Layer, Schema } from "effect"
import * as Path from "node:path"
import { StatusTransitionRow } from "../domain/StatusTransition.ts"
import { PollerStats } from "./PollerStats.ts"
import { type BatchWriter, makeWriter, optionsFromConfig } from "./ResultWriter.ts"
import { transitionsFlushMs } from "./ResultWriter/Options.ts"

/**
 * Writes `status_transitions` rows (one per status change of a source,
 * component or monitor) the way `ResultWriter` writes check results: in
 * batches off the pollers' path, spilled to disk while ClickHouse fails,
 * replayed on start, each batch with its deduplication token. Same
 * `RESULTS_*` settings and share of the cluster's rows, except that a partial
 * batch waits `TRANSITIONS_FLUSH_MS` (1 s), not `RESULTS_FLUSH_MS` (5 s):
 * transitions are few and are the record of durations (decision 0021). Its
 * spill files live in `<RESULTS_SPILL_DIR>/transitions`.
 */
export class TransitionWriter extends Context.Service<TransitionWriter, BatchWriter<StatusTransitionRow>>()(
  "statusgrid/poller/TransitionWriter"
) {
  static readonly layer = Layer.effect(
    TransitionWriter,
    Effect.gen(function*() {
      const options = yield* optionsFromConfig
      const flushMs = yield* transitionsFlushMs
      const stats = yield* PollerStats
      return yield* makeWriter({ ...options, flushMs, share: stats.share, spillDir: Path.join(options.spillDir, "transitions") }, {
        table: "status_transitions",
        decodeRows: Schema.decodeUnknownSync(Schema.Array(StatusTransitionRow)),
        what: "status transitions"
      })
    })
  )
}
