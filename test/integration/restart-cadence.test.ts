import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { ShardReloads } from "../../services/domain/ShardReloads.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import { pollerRunner, Sim, simulator, stores } from "../support/engine.ts"
import { tempDir, withConfig } from "../support/stores.ts"

/**
 * After a restart every source keeps its cadence (issue #18): its first check is its last check (as
 * PostgreSQL holds it) plus its interval, and the overdue ones are caught up at once; a source added
 * while the poller runs is checked at once. The poller starts on a database whose sources were last
 * checked at chosen times, as a restarted process finds them.
 */
const catchUpMs = 2_000
const TestLayer = Layer.mergeAll(simulator, Layer.effectDiscard(Migrations.migrateAll())).pipe(
  Layer.provideMerge(stores("cadence", "memory")),
  Layer.provideMerge(Layer.unwrap(Effect.map(tempDir("cadence-data"), (dir) =>
    withConfig({
      DATA_DIR: dir,
      POLLER_SHARDS: "2",
      POLLER_KEEPER_MS: "300",
      POLLER_REFRESH_MS: "600000",
      RESULTS_FLUSH_MS: "200",
      POLLER_CATCHUP_MS: String(catchUpMs)
    })
  )))
)

const intervalS = 600

describe("restart keeps the cadence", () => {
  layer(TestLayer, { timeout: 120_000, excludeTestServices: true })("one runner over PostgreSQL and chDB", (it) => {
    it.effect("overdue sources are checked within the catch-up, the others at their last check + interval, a source added later at once", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const sql = yield* SqlClient
        const now = Date.now()
        // Last checked: 700 s ago (overdue), 5 s ago (next in 595 s), 596 s ago (next in ~4 s).
        const plan = [
          ...Array.from({ length: 6 }, (_, i) => ({ key: `cad-overdue-${i}`, last: now - 700_000 })),
          ...Array.from({ length: 6 }, (_, i) => ({ key: `cad-recent-${i}`, last: now - 5_000 })),
          { key: "cad-soon", last: now - (intervalS - 4) * 1000 }
        ]
        const addSource = (key: string, last: number | null) =>
          Effect.gen(function*() {
            const page = sim.state.add({ key, name: key, provider: "statuspage_io", components: 2, groups: 0 })
            const [row] = yield* sql<{ id: string }>`
              INSERT INTO sources (key, name, kind, provider_type, status_page_url, check_class, poll_interval_s)
              VALUES (${key}, ${key}, 'catalog', 'statuspage_io', ${page.baseUrl}, 'standard', ${intervalS})
              RETURNING id`
            if (last !== null) yield* sql`INSERT INTO source_checks (source_id, checked_at) VALUES (${row!.id}::uuid, ${new Date(last)})`
          })
        for (const p of plan) yield* addSource(p.key, p.last)
        const checkedAt = Effect.map(
          sql<{ key: string; at: number | null }>`
            SELECT key, (extract(epoch FROM checked_at) * 1000)::float8 AS at
            FROM sources LEFT JOIN source_checks ON source_id = id WHERE key LIKE 'cad-%'`,
          (rows) => new Map(rows.map((r) => [r.key, r.at === null ? null : Number(r.at)]))
        )

        const started = Date.now()
        yield* Effect.gen(function*() {
          const poller = yield* Layer.build(pollerRunner)
          // The overdue and the never checked: within the catch-up window (+ the once-a-second save of check times).
          let caughtUp: number | undefined
          while (caughtUp === undefined && Date.now() - started < 15_000) {
            yield* Effect.sleep("200 millis")
            const at = yield* checkedAt
            if (plan.filter((p) => p.key.startsWith("cad-overdue")).every((p) => (at.get(p.key) ?? 0) >= started)) {
              caughtUp = Date.now() - started
            }
          }
          assert.isDefined(caughtUp, "the overdue sources were not all checked within 15 s")
          assert.isAtMost(caughtUp!, catchUpMs + 3_000)
          // The one due in ~4 s: checked then, not at once and not at a random point of its 10 minutes.
          let soon: number | null | undefined
          while (Date.now() - started < 12_000) {
            soon = (yield* checkedAt).get("cad-soon")
            if (soon !== undefined && soon !== null && soon >= started) break
            yield* Effect.sleep("200 millis")
          }
          assert.isAtLeast(soon! - started, 3_000, "checked before its cadence")
          assert.isAtMost(soon! - started, 6_000, "not checked at its cadence")
          // The recently checked: not checked again (their next check is ~10 minutes after the last).
          const at = yield* checkedAt
          for (const p of plan.filter((p) => p.key.startsWith("cad-recent"))) assert.strictEqual(at.get(p.key), p.last, p.key)

          // A source added now (never checked) is checked at once, not at a random point of its 10 minutes.
          yield* addSource("cad-added", null)
          const addedAt = Date.now()
          yield* ShardReloads.use((reloads) => reloads.sources(["cad-added"])).pipe(Effect.provide(poller))
          let added: number | null | undefined
          while (Date.now() - addedAt < 10_000) {
            added = (yield* checkedAt).get("cad-added")
            if (added !== undefined && added !== null) break
            yield* Effect.sleep("200 millis")
          }
          assert.isAtMost(added! - addedAt, 3_000, "a source just added waited for its first check")
          console.log(JSON.stringify({ test: "restart-cadence", caught_up_ms: caughtUp, soon_after_ms: soon! - started, planned_soon_ms: now + 4_000 - started }))
        }).pipe(Effect.scoped)
      }), 60_000)
  })
})
