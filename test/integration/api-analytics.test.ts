import { assert, describe, layer } from "@effect/vitest"
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Migrations from "../../services/platform/Migrations.ts"
import { apiServer, call, newTenant } from "../support/api.ts"
import { checksEvery, checksEvery15, historyWriters, statusChange } from "../support/history.ts"
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

/** The q-quantile of sorted values, interpolated between ranks (as ClickHouse's t-digest approximates it). */
const quantile = (sorted: ReadonlyArray<number>, q: number) => {
  const rank = q * (sorted.length - 1)
  const low = Math.floor(rank)
  return sorted[low]! + (sorted[Math.min(low + 1, sorted.length - 1)]! - sorted[low]!) * (rank - low)
}

/** A t-digest's error is in rank: values here are their own ranks (1 ms apart), so 1.5 % of the count, plus one. */
const closeToQuantile = (actual: number, sorted: ReadonlyArray<number>, q: number, what: string) =>
  assert.closeTo(actual, quantile(sorted, q), sorted.length * 0.015 + 1, `${what} p${q * 100}`)

interface ResponsePoint {
  readonly at: string
  readonly checks: number
  readonly mean_ms: number
  readonly p50_ms: number
  readonly p95_ms: number
  readonly p99_ms: number
  readonly max_ms: number
}

/** The test's source of regions: two regional components and a global one, with its incidents. */
const regionalSource = (start: number) => {
  const at = (h: number) => new Date(start + h * hour).toISOString()
  return Effect.gen(function*() {
    const sql = yield* SqlClient
    yield* sql`
      INSERT INTO sources (key, name, kind, provider_type, status_page_url, check_class, poll_interval_s)
      VALUES ('rg-cloud', 'Regional Cloud', 'catalog', 'aws', 'https://status.invalid', 'critical', 60)`
    const components = yield* sql<{ id: string; external_id: string }>`
      INSERT INTO components (source_id, external_id, name, is_group, region, position)
      SELECT s.id, c.external_id, c.name, false, c.region, c.position FROM sources s,
        (VALUES ('use1', 'Compute (us-east-1)', 'us-east-1', 0), ('euw1', 'Compute (eu-west-1)', 'eu-west-1', 1), ('global', 'Console', NULL, 2))
          AS c (external_id, name, region, position)
      WHERE s.key = 'rg-cloud' RETURNING id, external_id`
    const id = (ext: string) => components.find((c) => c.external_id === ext)!.id
    // [external id, impact, region, started (h), resolved (h) or null, components]
    const incidents: ReadonlyArray<readonly [string, string, string | null, number, number | null, ReadonlyArray<string>]> = [
      ["i-before", "major", "us-east-1", -2, 1, ["use1"]], // began before the range: left out
      ["i-use1", "major", "us-east-1", 2, 3, ["use1"]], // 1 h
      ["i-euw1", "minor", "eu-west-1", 4, 4.5, ["euw1"]], // 30 min
      ["i-console", "critical", null, 5, null, ["global"]], // still open
      ["i-maint", "maintenance", "us-east-1", 1, 2, ["use1"]] // maintenance posted as an incident: left out
    ]
    for (const [ext, impact, region, started, resolved, named] of incidents) {
      const [row] = yield* sql<{ id: string }>`
        INSERT INTO incidents (source_id, external_id, title, status, impact, region, started_at, updated_at, resolved_at)
        SELECT id, ${ext}, ${ext}, ${resolved === null ? "investigating" : "resolved"}, ${impact}, ${region},
          ${at(started)}::timestamptz, ${at(started)}::timestamptz, ${resolved === null ? null : at(resolved)}::timestamptz
        FROM sources WHERE key = 'rg-cloud' RETURNING id`
      for (const c of named) yield* sql`INSERT INTO incident_components (incident_id, component_id) VALUES (${row!.id}, ${id(c)})`
    }
    return { id }
  })
}

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

    it.effect("a regional source: incidents by impact, region and component with their MTTR; regions; status-page response-time percentiles per hour and day", () =>
      Effect.gen(function*() {
        const now = Math.floor((yield* Clock.currentTimeMillis) / hour) * hour
        const start = now - 6 * hour
        yield* regionalSource(start)
        const use1Down = (t: number) => t >= start + 2 * hour && t < start + 3 * hour
        const euw1Degraded = (t: number) => t >= start + 4 * hour && t < start + 4 * hour + 30 * minute
        // The status page fetched every minute; the n-th fetch of the range took n + 1 ms, so each value is its own rank.
        const latencyAt = (t: number) => Math.round((t - start) / minute) + 1
        yield* (yield* Writers).write(
          [
            ...checksEvery(minute, "source", "rg-cloud", "", start, now, () => "operational", latencyAt),
            ...checksEvery15("source", "rg-cloud", "use1", start, now, (t) => use1Down(t) ? "critical" : "operational"),
            ...checksEvery15("source", "rg-cloud", "euw1", start, now, (t) => euw1Degraded(t) ? "degraded" : "operational"),
            ...checksEvery15("source", "rg-cloud", "global", start, now, () => "operational")
          ],
          [
            statusChange("source", "rg-cloud", "use1", start - hour, "operational", "operational"),
            statusChange("source", "rg-cloud", "use1", start + 2 * hour, "operational", "critical"),
            statusChange("source", "rg-cloud", "use1", start + 3 * hour, "critical", "operational"),
            statusChange("source", "rg-cloud", "euw1", start + 4 * hour, "operational", "degraded"),
            statusChange("source", "rg-cloud", "euw1", start + 4 * hour + 30 * minute, "degraded", "operational")
          ]
        )
        const r = yield* call("GET", `/sources/rg-cloud/analytics?from=${iso(start)}&to=${iso(now)}`)
        assert.strictEqual(r.status, 200, JSON.stringify(r.body))
        const body = r.body as {
          incidents: {
            count: number
            per_week: number
            by_impact: Record<string, number>
            resolved: number
            open: number
            mttr_ms: number
            longest_ms: number
            components_affected: number
            components: Array<{ name: string; incidents: number }>
            regions: Array<{ region: string; incidents: number }>
            hour_of_week: Array<Array<number>>
          }
          regions: Array<{ region: string; components: number; uptime: number; durations_ms: Record<string, number>; outage_count: number; incidents: number }>
          response_times: { hourly: Array<ResponsePoint>; daily: Array<ResponsePoint> }
        }
        // Incidents that began in the range, maintenance left out: i-use1 (1 h), i-euw1 (30 min), i-console (open).
        const inc = body.incidents
        assert.strictEqual(inc.count, 3)
        assert.closeTo(inc.per_week, (3 * 7 * 24) / 6, 1e-9)
        assert.deepStrictEqual(inc.by_impact, { critical: 1, major: 1, minor: 1, none: 0 })
        assert.strictEqual(inc.resolved, 2)
        assert.strictEqual(inc.open, 1)
        assert.strictEqual(inc.mttr_ms, (hour + 30 * minute) / 2)
        assert.strictEqual(inc.longest_ms, hour)
        assert.strictEqual(inc.components_affected, 3)
        assert.deepStrictEqual(inc.components.map((c) => [c.name, c.incidents]), [["Compute (eu-west-1)", 1], ["Compute (us-east-1)", 1], ["Console", 1]])
        assert.deepStrictEqual(inc.regions, [{ region: "eu-west-1", incidents: 1 }, { region: "us-east-1", incidents: 1 }])
        const startOf = (h: number) => new Date(start + h * hour)
        for (const h of [2, 4, 5]) {
          const d = startOf(h)
          assert.isAtLeast(inc.hour_of_week[(d.getUTCDay() + 6) % 7]![d.getUTCHours()]!, 1, `incident at +${h} h`)
        }
        assert.strictEqual(inc.hour_of_week.flat().reduce((a, b) => a + b, 0), 3)

        // Regions: us-east-1 one hour down of six, eu-west-1 30 minutes degraded (up); the global console is in none.
        assert.deepStrictEqual(body.regions.map((g) => [g.region, g.components, g.outage_count, g.incidents]), [
          ["eu-west-1", 1, 0, 1],
          ["us-east-1", 1, 1, 1]
        ])
        assert.strictEqual(body.regions[0]!.uptime, 100)
        assert.strictEqual(body.regions[0]!.durations_ms["degraded"], 30 * minute)
        assert.closeTo(body.regions[1]!.uptime, (5 / 6) * 100, 1e-9)

        // Response times: each hour's 60 fetches and each UTC day's, against the values computed here.
        const fetches = Array.from({ length: 360 }, (_, n) => ({ at: start + n * minute, ms: n + 1 }))
        const rt = body.response_times
        assert.strictEqual(rt.hourly.length, 6)
        for (const [h, point] of rt.hourly.entries()) {
          const values = fetches.filter((f) => f.at >= start + h * hour && f.at < start + (h + 1) * hour).map((f) => f.ms)
          assert.strictEqual(point.at, iso(start + h * hour))
          assert.strictEqual(point.checks, 60)
          assert.closeTo(point.mean_ms, values.reduce((a, b) => a + b, 0) / 60, 1e-9)
          assert.strictEqual(point.max_ms, Math.max(...values))
          closeToQuantile(point.p50_ms, values, 0.5, `hour ${h}`)
          closeToQuantile(point.p95_ms, values, 0.95, `hour ${h}`)
          closeToQuantile(point.p99_ms, values, 0.99, `hour ${h}`)
        }
        const days = [...new Set(fetches.map((f) => Math.floor(f.at / (24 * hour))))]
        assert.strictEqual(rt.daily.length, days.length)
        for (const [i, day] of days.entries()) {
          const values = fetches.filter((f) => Math.floor(f.at / (24 * hour)) === day).map((f) => f.ms)
          assert.strictEqual(rt.daily[i]!.at, iso(day * 24 * hour))
          assert.strictEqual(rt.daily[i]!.checks, values.length)
          closeToQuantile(rt.daily[i]!.p50_ms, values, 0.5, `day ${i}`)
          closeToQuantile(rt.daily[i]!.p95_ms, values, 0.95, `day ${i}`)
          closeToQuantile(rt.daily[i]!.p99_ms, values, 0.99, `day ${i}`)
        }
      }))

    it.effect("a stack: down while its banner showed an outage, time at each banner, its items, the incidents naming its components", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant()
        const now = Math.floor((yield* Clock.currentTimeMillis) / hour) * hour
        const start = now - 6 * hour
        const sql = yield* SqlClient
        const [use1, euw1] = yield* sql<{ id: string; external_id: string }>`
          SELECT c.id, c.external_id FROM components c JOIN sources s ON s.id = c.source_id
          WHERE s.key = 'rg-cloud' AND c.external_id IN ('use1', 'euw1') ORDER BY c.position`
        const stack = yield* call("POST", "/stacks", { key: tenant.keys.admin, body: { name: "Checkout" } })
        assert.strictEqual(stack.status, 201, JSON.stringify(stack.body))
        const stackId = (stack.body as { id: string }).id
        const monitor = yield* call("POST", "/monitors", { key: tenant.keys.admin, body: { name: "Checkout API", url: "http://127.0.0.1:9/pay" } })
        const monitorId = (monitor.body as { id: string }).id
        for (const item of [{ kind: "component", component_id: use1!.id }, { kind: "component", component_id: euw1!.id }, { kind: "monitor", monitor_id: monitorId }]) {
          const added = yield* call("POST", `/stacks/${stackId}/items`, { key: tenant.keys.admin, body: item })
          assert.strictEqual(added.status, 201, JSON.stringify(added.body))
        }
        // The source's history is the previous test's: us-east-1 critical +2 h → +3 h, eu-west-1 degraded +4 h → +4 h 30.
        // The monitor: down +2 h 30 → +3 h 30.
        const monitorDown = (t: number) => t >= start + 2.5 * hour && t < start + 3.5 * hour
        yield* (yield* Writers).write(
          checksEvery15("monitor", monitorId, "", start, now, (t) => monitorDown(t) ? "down" : "up"),
          [
            statusChange("monitor", monitorId, "", start - hour, "pending", "up"),
            statusChange("monitor", monitorId, "", start + 2.5 * hour, "up", "down"),
            statusChange("monitor", monitorId, "", start + 3.5 * hour, "down", "up")
          ]
        )
        const r = yield* call("GET", `/stacks/${stackId}/analytics?from=${iso(start)}&to=${iso(now)}`, { key: tenant.keys.viewer })
        assert.strictEqual(r.status, 200, JSON.stringify(r.body))
        const body = r.body as {
          name: string
          analytics: { uptime: number; durations_ms: Record<string, number>; outages: Array<{ start: string; end: string }>; mttr_ms: number }
          health_ms: Record<string, number>
          items: Array<{ kind: string; name: string; analytics: { outage_count: number; uptime: number } }>
          incidents: { count: number; components: Array<{ name: string }> }
        }
        assert.strictEqual(body.name, "Checkout")
        // [0, 2 h) up; [2 h, 2 h 30) 1 of 3 out: partial; [2 h 30, 3 h) 2 of 3: major; [3 h, 3 h 30) partial;
        // [3 h 30, 4 h) up; [4 h, 4 h 30) degraded; [4 h 30, 6 h) up.
        assert.deepStrictEqual(body.health_ms, {
          operational: 4 * hour,
          degraded: 30 * minute,
          partial_outage: hour,
          major_outage: 30 * minute,
          maintenance: 0,
          unknown: 0
        })
        assert.deepStrictEqual(body.analytics.outages.map((o) => [o.start, o.end]), [[iso(start + 2 * hour), iso(start + 3.5 * hour)]])
        assert.strictEqual(body.analytics.mttr_ms, 90 * minute)
        assert.closeTo(body.analytics.uptime, (4.5 / 6) * 100, 1e-9)
        assert.deepStrictEqual(body.items.map((i) => [i.kind, i.name, i.analytics.outage_count]), [
          ["component", "Compute (us-east-1)", 1],
          ["component", "Compute (eu-west-1)", 0],
          ["monitor", "Checkout API", 1]
        ])
        // The incidents naming its components: i-use1 and i-euw1 (the console's is not in the stack).
        assert.strictEqual(body.incidents.count, 2)
        assert.strictEqual((yield* call("GET", `/stacks/${stackId}/analytics`, { key: (yield* newTenant()).keys.admin })).status, 404)
        const bad = yield* call("GET", `/stacks/${stackId}/analytics?from=later`, { key: tenant.keys.viewer })
        assert.strictEqual(bad.status, 400)
        assert.strictEqual((bad.body as { field: string }).field, "from")
      }))

    it.effect("a monitor's check log pages newest first with next_before until the last page", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant()
        const created = yield* call("POST", "/monitors", { key: tenant.keys.admin, body: { name: "Log", url: "http://127.0.0.1:9/log" } })
        const id = (created.body as { id: string }).id
        const now = Math.floor((yield* Clock.currentTimeMillis) / minute) * minute
        // Seven checks a minute apart, 100 to 106 ms: the newest is the slowest.
        yield* (yield* Writers).write(checksEvery(minute, "monitor", id, "", now - 7 * minute, now, () => "up", (t) => 100 + (7 - (now - t) / minute)), [])
        const seen: Array<number> = []
        let before: string | null = null
        let pages = 0
        do {
          const r = yield* call("GET", `/monitors/${id}/checks?limit=3${before === null ? "" : `&before=${encodeURIComponent(before)}`}`, { key: tenant.keys.viewer })
          assert.strictEqual(r.status, 200, JSON.stringify(r.body))
          const body = r.body as { checks: Array<{ checked_at: string; latency_ms: number }>; next_before: string | null }
          seen.push(...body.checks.map((c) => c.latency_ms))
          before = body.next_before
          pages += 1
        } while (before !== null && pages < 10)
        assert.deepStrictEqual(seen, [106, 105, 104, 103, 102, 101, 100])
        assert.strictEqual(pages, 3)
        const bad = yield* call("GET", `/monitors/${id}/checks?before=yesterday`, { key: tenant.keys.viewer })
        assert.strictEqual(bad.status, 400)
        assert.strictEqual((bad.body as { field: string }).field, "before")
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
