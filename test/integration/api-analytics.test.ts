import { assert, describe, layer } from "@effect/vitest"
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Migrations from "../../services/platform/Migrations.ts"
import { apiServer, call, newTenant } from "../support/api.ts"
import { checksEvery15, historyWriters, statusChange } from "../support/history.ts"
import { tempDir } from "../support/stores.ts"

/**
 * `GET /sources/{key}/analytics` and `GET /monitors/{id}/analytics` over
 * embedded chDB: checks and status changes written through the poller's
 * writers at times relative to now, the figures read back through the API
 * (the rule's own cases, worked out by hand, are in analytics.test.ts and
 * StatusDurations.test.ts); bad ranges are 400 naming the parameter.
 */

const minute = 60_000
const hour = 60 * minute

/** The poller's two writers, check results and status changes (test/support/history.ts). */
class Writers extends Context.Service<Writers, Effect.Success<ReturnType<typeof historyWriters>>>()("test/api-analytics/Writers") {
  static readonly layer = Layer.effect(Writers, Effect.flatMap(tempDir("api-analytics-spill"), historyWriters))
}

const TestLayer = Writers.layer.pipe(
  Layer.provideMerge(Layer.effectDiscard(Migrations.migrateClickHouse())),
  Layer.provideMerge(apiServer({ API_CACHE_MS: "0" }))
)

const iso = (ms: number) => new Date(ms).toISOString()

describe("analytics API", () => {
  layer(TestLayer, { timeout: 120_000, excludeTestServices: true })("/sources/{key}/analytics, /monitors/{id}/analytics", (it) => {
    it.effect("a source and its component over the last 6 hours: an outage of one hour, its MTTR, the component's own figures", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        yield* sql`
          INSERT INTO sources (key, name, kind, provider_type, status_page_url, check_class, poll_interval_s)
          VALUES ('an-acme', 'Acme', 'catalog', 'statuspage_io', 'https://status.invalid', 'standard', 300)`
        const [component] = yield* sql<{ id: string }>`
          INSERT INTO components (source_id, external_id, name, is_group, position)
          SELECT id, 'api-ext', 'API', false, 0 FROM sources WHERE key = 'an-acme' RETURNING id`
        // Whole minutes, so that a range from `start` holds whole 15-minute checks.
        const now = Math.floor((yield* Clock.currentTimeMillis) / hour) * hour
        const start = now - 6 * hour
        const down = (t: number) => t >= now - 3 * hour && t < now - 2 * hour
        yield* (yield* Writers).write(
          [
            ...checksEvery15("source", "an-acme", "", start - hour, now, (t) => down(t) ? "down" : "operational"),
            ...checksEvery15("source", "an-acme", "api-ext", start - hour, now, (t) => down(t) ? "critical" : "operational")
          ],
          [
            statusChange("source", "an-acme", "", now - 3 * hour, "operational", "down"),
            statusChange("source", "an-acme", "", now - 2 * hour, "down", "operational"),
            statusChange("source", "an-acme", "api-ext", now - 3 * hour, "operational", "critical"),
            statusChange("source", "an-acme", "api-ext", now - 2 * hour, "critical", "operational")
          ]
        )
        const r = yield* call("GET", `/sources/an-acme/analytics?from=${iso(start)}&to=${iso(now)}`)
        assert.strictEqual(r.status, 200, JSON.stringify(r.body))
        const body = r.body as {
          key: string
          from: string
          to: string
          analytics: { uptime: number; outage_count: number; mttr_ms: number; durations_ms: Record<string, number>; outages: Array<{ start: string; end: string }> }
          components: Array<{ id: string; name: string; analytics: { uptime: number; outage_count: number } }>
        }
        assert.strictEqual(body.from, iso(start))
        assert.strictEqual(body.to, iso(now))
        assert.strictEqual(body.analytics.outage_count, 1)
        assert.deepStrictEqual(body.analytics.outages.map((o) => [o.start, o.end]), [[iso(now - 3 * hour), iso(now - 2 * hour)]])
        assert.strictEqual(body.analytics.mttr_ms, hour)
        assert.deepStrictEqual(body.analytics.durations_ms, { down: hour, degraded: 0, maintenance: 0, operational: 5 * hour, unknown: 0 })
        assert.closeTo(body.analytics.uptime, (5 / 6) * 100, 1e-9)
        assert.deepStrictEqual(body.components.map((c) => [c.id, c.name, c.analytics.outage_count]), [[component!.id, "API", 1]])

        // The default range is the last 30 days: before the first check, unknown, not up.
        const month = (yield* call("GET", "/sources/an-acme/analytics")).body as typeof body
        assert.strictEqual(month.analytics.outage_count, 1)
        assert.isAbove(month.analytics.durations_ms["unknown"]!, 29 * 24 * hour)
        assert.strictEqual(Date.parse(month.to) - Date.parse(month.from), 30 * 24 * hour)
      }))

    it.effect("bad ranges are 400 naming the parameter; an unknown source is 404", () =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const cases: ReadonlyArray<readonly [string, string]> = [
          ["from=yesterday", "from"],
          ["to=2026-13-45T00:00:00Z", "to"],
          [`from=${iso(now - hour)}&to=${iso(now - 2 * hour)}`, "from"],
          [`from=${iso(now + hour)}`, "from"],
          [`from=${iso(now - 500 * 24 * hour)}`, "from"]
        ]
        for (const [query, field] of cases) {
          const r = yield* call("GET", `/sources/an-acme/analytics?${query}`)
          assert.strictEqual(r.status, 400, query)
          assert.strictEqual((r.body as { code: string; field: string }).field, field, `${query}: ${JSON.stringify(r.body)}`)
        }
        const missing = yield* call("GET", "/sources/no-such-source/analytics")
        assert.strictEqual(missing.status, 404)
      }))

    it.effect("a monitor's analytics for its organization only; a paused stretch is unknown", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant()
        const other = yield* newTenant()
        const created = yield* call("POST", "/monitors", { key: tenant.keys.admin, body: { name: "Shop", url: "http://127.0.0.1:9/shop" } })
        assert.strictEqual(created.status, 201, JSON.stringify(created.body))
        const id = (created.body as { id: string }).id
        const now = Math.floor((yield* Clock.currentTimeMillis) / hour) * hour
        yield* (yield* Writers).write(
          checksEvery15("monitor", id, "", now - 4 * hour, now, (t) => t >= now - 90 * minute && t < now - 60 * minute ? "down" : "up"),
          [
            statusChange("monitor", id, "", now - 4 * hour, "pending", "up"),
            statusChange("monitor", id, "", now - 90 * minute, "up", "down"),
            statusChange("monitor", id, "", now - 60 * minute, "down", "up")
          ]
        )
        const r = yield* call("GET", `/monitors/${id}/analytics?from=${iso(now - 4 * hour)}&to=${iso(now)}`, { key: tenant.keys.viewer })
        assert.strictEqual(r.status, 200, JSON.stringify(r.body))
        const a = (r.body as { analytics: { uptime: number; mttr_ms: number; durations_ms: Record<string, number> } }).analytics
        assert.strictEqual(a.mttr_ms, 30 * minute)
        assert.strictEqual(a.durations_ms["down"], 30 * minute)
        assert.closeTo(a.uptime, (210 / 240) * 100, 1e-9)
        assert.strictEqual((yield* call("GET", `/monitors/${id}/analytics`, { key: other.keys.admin })).status, 404)
        assert.strictEqual((yield* call("GET", `/monitors/${id}/analytics`)).status, 401)
        const bad = yield* call("GET", `/monitors/${id}/analytics?to=soon`, { key: tenant.keys.viewer })
        assert.strictEqual(bad.status, 400)
        assert.strictEqual((bad.body as { field: string }).field, "to")
      }))
  })
})
