import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { runNotifyBench } from "../../bench/notify.ts"
import * as MemoryBus from "../../services/platform/Bus/Memory.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { freshDatabase, tempDir, withConfig } from "../support/stores.ts"

/** A fresh PostgreSQL database and an in-process bus, with these settings. */
const stores = (config: Record<string, string>) =>
  Layer.mergeAll(
    Layer.unwrap(Effect.map(freshDatabase, (url) => Postgres.layerServer(url, { maxConnections: 8 }))),
    MemoryBus.layer
  ).pipe(Layer.provideMerge(Layer.unwrap(Effect.map(tempDir("bench-notify"), (dir) => withConfig({ DATA_DIR: dir, ...config })))))

const options = { sources: 2, components: 3, rate: 50, durationS: 2, warmupS: 0, waitS: 15 }

describe("statusgrid bench notify", () => {
  it.live("counts every flip its webhook receiver got, signed and once, and removes its organization afterwards", () =>
    Effect.gen(function*() {
      const result = yield* runNotifyBench(options)
      assert.strictEqual(result.components, 6)
      assert.strictEqual(result.events_published, 100)
      assert.strictEqual(result.deliveries_received, 100)
      assert.isTrue(result.all_delivered)
      assert.strictEqual(result.missing, 0)
      assert.strictEqual(result.duplicates, 0)
      assert.strictEqual(result.bad_signatures, 0)
      // The warm-up event and the measured ones, one outbox row each; the last may still be being
      // recorded as delivered when the figures are taken.
      const outbox: Record<string, number> = result.outbox
      assert.strictEqual((outbox["delivered"] ?? 0) + (outbox["sending"] ?? 0), 101)
      assert.isAtLeast(outbox["delivered"] ?? 0, 100)
      assert.isAbove(result.latency_ms.p50, 0)
      assert.isAtMost(result.latency_ms.p50, result.latency_ms.p99)
      assert.isAtMost(result.latency_ms.p99, result.latency_ms.max)
      assert.isAbove(result.events_per_s, 0)
      const sql = yield* SqlClient
      const left = yield* sql<{ orgs: number; deliveries: number }>`
        SELECT (SELECT count(*)::int FROM organizations WHERE slug LIKE 'bench-notify-%') AS orgs,
          (SELECT count(*)::int FROM deliveries) AS deliveries`
      assert.deepStrictEqual(left, [{ orgs: 0, deliveries: 0 }])
    }).pipe(Effect.provide(stores({ NOTIFIER_ALLOW_PRIVATE: "true" }))), 60_000)

  it.live("stops with what was missing when the warm-up is not delivered", () =>
    Effect.gen(function*() {
      // Without NOTIFIER_ALLOW_PRIVATE the notifier refuses the receiver on 127.0.0.1.
      const exit = yield* Effect.exit(runNotifyBench({ ...options, waitS: 3 }))
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) assert.include(Cause.pretty(exit.cause), "0 of 1 warm-up events delivered within 3 s")
    }).pipe(Effect.provide(stores({}))), 60_000)
})
