import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger } from "effect"
import { TestConsole } from "effect/testing"
import { nextBoundary } from "../services/poller/Poller.ts"
import { type PollerStatsSnapshot, statsLogAnnotations } from "../services/poller/PollerStats.ts"
import { parseRunnerLine } from "./runnerProcess.ts"

const snapshot: PollerStatsSnapshot = {
  checks: 600,
  checksSinceStart: 1400,
  failures: 6,
  notModified: 12,
  changes: 3,
  sources: 150,
  shards: 8,
  shardStarts: 9,
  lag: { p50: 1.5, p99: 12.25, max: 40, samples: 600 }
}

/** The lines a runner writes (LOG_FORMAT=json is the console JSON logger). */
const logged = (effect: Effect.Effect<void>) =>
  effect.pipe(
    Effect.andThen(TestConsole.logLines),
    Effect.provide(Logger.layer([Logger.consoleJson])),
    Effect.provide(TestConsole.layer),
    Effect.map((lines) => lines.map(String))
  )

describe("the runners benchmark's reading of runner logs", () => {
  it.effect("reads back the figures of a runner's \"poller stats\" line", () =>
    Effect.gen(function*() {
      const [line] = yield* logged(
        Effect.logInfo("poller stats").pipe(Effect.annotateLogs(statsLogAnnotations(snapshot, 1_000_000, 1_020_000)))
      )
      assert.deepStrictEqual(parseRunnerLine(line!), {
        kind: "stats",
        stats: {
          from_ms: 1_000_000,
          to_ms: 1_020_000,
          checks: 600,
          failures: 6,
          not_modified: 12,
          changes: 3,
          lag_p50_ms: 1.5,
          lag_p99_ms: 12.25,
          lag_max_ms: 40,
          lag_samples: 600,
          checks_since_start: 1400,
          sources: 150,
          shards: 8,
          shard_starts: 9
        }
      })
    }))

  it.effect("tells the runner up, its shards starting, other logs and other output apart", () =>
    Effect.gen(function*() {
      const [up, shard, warning, partial] = yield* logged(Effect.gen(function*() {
        yield* Effect.logInfo("statusgrid is up").pipe(Effect.annotateLogs({ url: "http://127.0.0.1:8080" }))
        yield* Effect.logInfo("shard started").pipe(Effect.annotateLogs({ shard: 3, sources: 20 }))
        yield* Effect.logWarning("could not record check times")
        // A stats line without the figures the benchmark needs: the two disagree, which must not go unseen.
        yield* Effect.logInfo("poller stats").pipe(Effect.annotateLogs({ checks: 1 }))
      }))
      assert.deepStrictEqual(parseRunnerLine(up!), { kind: "up", url: "http://127.0.0.1:8080" })
      assert.deepStrictEqual(parseRunnerLine(shard!), { kind: "shard-started" })
      assert.deepStrictEqual(parseRunnerLine(warning!), { kind: "log", level: "WARN", line: warning! })
      assert.strictEqual(parseRunnerLine(partial!).kind, "unreadable-stats")
      assert.deepStrictEqual(parseRunnerLine("node: warning"), { kind: "text", line: "node: warning" })
    }))

  it("puts the stats periods at multiples of the period on the wall clock", () => {
    assert.strictEqual(nextBoundary(1_000_001, 20_000), 1_020_000)
    assert.strictEqual(nextBoundary(1_020_000, 20_000), 1_040_000)
    assert.strictEqual(nextBoundary(1_039_999, 20_000), 1_040_000)
  })
})
