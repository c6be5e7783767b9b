import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { HttpRouter } from "effect/http"
import * as Http from "node:http"
import { ApiRoutes, routerConfig } from "../../services/api/ApiHttp.ts"
import { MetricsRoutes } from "../../services/api/MetricsRoute.ts"
import { RequestMetricsLive } from "../../services/api/RequestMetrics.ts"
import { ProcessMetricsLive } from "../../services/platform/Metrics.ts"
import { ApiBase, apiBaseLayer, call, newTenant } from "../support/api.ts"
import { eventually } from "../support/eventually.ts"
import { notifier, engine, Sim, simulatedStatuspage, simulator } from "../support/engine.ts"
import { countOf, type Scrape, scrape, valueOf } from "../support/prometheus.ts"
import { type HttpReceiver, startHttpReceiver } from "../support/receivers.ts"

/** The families issue #19 asks for, each by the name a Prometheus user will look for. */
const families = [
  // pollers: checks by kind and outcome, schedule lag, shards and their moves
  "statusgrid_checks_total",
  "statusgrid_schedule_lag_seconds",
  "statusgrid_status_changes_total",
  "statusgrid_shards",
  "statusgrid_shard_starts_total",
  "statusgrid_shard_stops_total",
  "statusgrid_scheduled",
  "statusgrid_unsaved_snapshots",
  // ClickHouse: batch sizes, insert latency, rows, spill depth
  "statusgrid_clickhouse_batch_rows",
  "statusgrid_clickhouse_insert_seconds",
  "statusgrid_clickhouse_rows_written_total",
  "statusgrid_clickhouse_insert_failures_total",
  "statusgrid_clickhouse_buffered_rows",
  "statusgrid_clickhouse_spill_rows",
  "statusgrid_clickhouse_spill_files",
  // bus: publishes, failures, buffer depth
  "statusgrid_bus_changes_published_total",
  "statusgrid_bus_events_published_total",
  "statusgrid_bus_publish_failures_total",
  "statusgrid_bus_buffer_depth",
  // notifier: events, alerts, outbox depth by status, deliveries and their latency
  "statusgrid_notifier_events_total",
  "statusgrid_notifier_alerts_total",
  "statusgrid_outbox_depth",
  "statusgrid_deliveries_total",
  "statusgrid_delivery_seconds",
  // API: requests by route and status, latency, event-stream clients
  "statusgrid_http_requests_total",
  "statusgrid_http_request_seconds",
  "statusgrid_sse_clients",
  // process
  "process_cpu_seconds_total",
  "process_resident_memory_bytes",
  "nodejs_heap_used_bytes",
  "process_start_time_seconds",
  "statusgrid_event_loop_delay_seconds"
]

class Hook extends Context.Service<Hook, HttpReceiver>()("test/metrics/Hook") {}

const hook = Layer.effect(Hook, Effect.acquireRelease(Effect.promise(() => startHttpReceiver(() => ({ status: 200 }))), (r) => Effect.promise(() => r.close())))

/** The API as the one server serves it: with `/metrics` and the request metrics middleware. */
const served = Layer.mergeAll(
  HttpRouter.serve(Layer.mergeAll(ApiRoutes, MetricsRoutes, RequestMetricsLive), { disableListenLog: true, disableLogger: true, routerConfig }),
  apiBaseLayer
).pipe(Layer.provideMerge(NodeHttpServer.layer(Http.createServer, { port: 0, host: "127.0.0.1" })))

const TestLayer = engine(
  { name: "metrics", config: { NOTIFIER_POLL_MS: "50", NOTIFIER_ALLOW_PRIVATE: "true" } },
  Layer.mergeAll(notifier, served, simulator, hook, ProcessMetricsLive)
)

const scrapeNow = Effect.gen(function*() {
  const base = yield* ApiBase
  return yield* Effect.promise(() => scrape(`${base}/metrics`))
})

describe("/metrics", () => {
  layer(TestLayer, { timeout: 90_000, excludeTestServices: true })("the Prometheus text format, scraped and parsed", (it) => {
    it.effect("every family is there, and the figures move with checks, an outage flip, a delivery, API requests and an event stream", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const receiver = yield* Hook
        const base = yield* ApiBase
        const { page, target, componentId } = yield* simulatedStatuspage("metrics-flip", "Metrics Flip", 3)
        const tenant = yield* newTenant("pro")
        const key = tenant.keys.admin
        const stack = yield* call("POST", "/stacks", { key, body: { name: "Metrics" } })
        assert.strictEqual((yield* call("POST", `/stacks/${stack.body.id}/items`, { key, body: { kind: "component", component_id: componentId } })).status, 201)
        const channel = yield* call("POST", "/channels", { key, body: { type: "webhook", name: "Ops", settings: { url: `${receiver.url}/hook` } } })
        assert.strictEqual(channel.status, 201)
        const rule = { name: "Critical", triggers: ["component.critical"], channel_ids: [channel.body.id] }
        assert.strictEqual((yield* call("POST", "/rules", { key, body: rule })).status, 201)

        const before: Scrape = yield* scrapeNow
        assert.strictEqual(before.get("statusgrid_checks_total")?.type, "COUNTER")
        assert.strictEqual(before.get("statusgrid_schedule_lag_seconds")?.type, "HISTOGRAM")
        assert.strictEqual(before.get("statusgrid_outbox_depth")?.type, "GAUGE")
        assert.isAbove(valueOf(before, "statusgrid_shards"), 0, "the runner's shards run here")
        assert.isAbove(valueOf(before, "statusgrid_scheduled"), 0, "the simulated source is on a shard")
        assert.isAbove(valueOf(before, "process_resident_memory_bytes"), 10_000_000)
        assert.isAbove(valueOf(before, "process_cpu_seconds_total"), 0)
        assert.strictEqual(valueOf(before, "statusgrid_sse_clients"), 0)

        // An event stream held open counts as a client while it is open.
        const controller = new AbortController()
        const stream = yield* Effect.promise(() =>
          fetch(`${base}/api/v1/organizations/${tenant.slug}/stream`, { headers: { authorization: `Bearer ${key}` }, signal: controller.signal }))
        assert.strictEqual(stream.status, 200)
        const open = yield* eventually(5_000, Effect.map(scrapeNow, (s) => (valueOf(s, "statusgrid_sse_clients") === 1 ? s : undefined)))
        assert.strictEqual(valueOf(open, "statusgrid_sse_clients"), 1)
        controller.abort()
        yield* eventually(5_000, Effect.map(scrapeNow, (s) => (valueOf(s, "statusgrid_sse_clients") === 0 ? true : undefined)))

        // The flip: checks see it, the bus carries its events, the notifier makes an alert, the webhook gets it.
        sim.state.openIncident(page.key, { title: "Down", impact: "critical", components: [target.id], component_status: "critical" })
        yield* eventually(15_000, Effect.sync(() => (receiver.requests.length > 0 ? true : undefined)))
        const after = yield* eventually(10_000, Effect.map(scrapeNow, (s) =>
          valueOf(s, "statusgrid_deliveries_total", { channel: "webhook", outcome: "delivered" }) >= 1 &&
            // Each writer flushes on its own timer: wait until both tables' rows of the flip are in.
            ["status_transitions", "check_results"].every((table) =>
              valueOf(s, "statusgrid_clickhouse_rows_written_total", { table }) > valueOf(before, "statusgrid_clickhouse_rows_written_total", { table }))
            ? s
            : undefined))

        const missing = families.filter((name) => !after.has(name))
        assert.deepStrictEqual(missing, [], "every family is scraped")

        const moved = (name: string, labels: Record<string, string> = {}) => valueOf(after, name, labels) - valueOf(before, name, labels)
        assert.isAbove(moved("statusgrid_checks_total", { kind: "source" }), 0, "source checks counted")
        assert.isAbove(countOf(after, "statusgrid_schedule_lag_seconds", { kind: "source" }), countOf(before, "statusgrid_schedule_lag_seconds", { kind: "source" }))
        assert.isAbove(moved("statusgrid_status_changes_total", { kind: "source" }), 0, "the flip is a change")
        assert.isAbove(moved("statusgrid_clickhouse_rows_written_total", { table: "check_results" }), 0)
        assert.isAbove(countOf(after, "statusgrid_clickhouse_insert_seconds", { table: "check_results", outcome: "ok" }), 0)
        assert.isAbove(countOf(after, "statusgrid_clickhouse_batch_rows", { table: "check_results" }), 0)
        assert.isAbove(moved("statusgrid_bus_changes_published_total", { kind: "source" }), 0)
        assert.isAbove(moved("statusgrid_bus_events_published_total"), 0, "the flip's events reach the stream")
        assert.isAbove(moved("statusgrid_notifier_events_total", { outcome: "handled" }), 0)
        assert.strictEqual(moved("statusgrid_notifier_alerts_total"), 1, "one rule matched once")
        assert.strictEqual(valueOf(after, "statusgrid_deliveries_total", { channel: "webhook", outcome: "delivered" }), 1)
        assert.strictEqual(countOf(after, "statusgrid_delivery_seconds", { channel: "webhook" }), 1)
        assert.strictEqual(valueOf(after, "statusgrid_bus_publish_failures_total"), 0)
        assert.strictEqual(valueOf(after, "statusgrid_clickhouse_spill_rows"), 0)

        // API requests by their OpenAPI route (never the raw path), method and status.
        assert.strictEqual(valueOf(after, "statusgrid_http_requests_total", { route: "/api/v1/channels", method: "POST", status: "201" }), 1)
        assert.strictEqual(valueOf(after, "statusgrid_http_requests_total", { route: "/api/v1/stacks/:id/items", method: "POST", status: "201" }), 1)
        assert.strictEqual(valueOf(after, "statusgrid_http_requests_total", { route: "/api/v1/organizations/:org/stream", method: "GET", status: "200" }), 1)
        assert.isAbove(countOf(after, "statusgrid_http_request_seconds", { route: "/api/v1/rules", method: "POST" }), 0)
        const routes = new Set(after.get("statusgrid_http_requests_total")!.metrics.map((m) => m.labels?.["route"]))
        assert.isFalse([...routes].some((r) => r?.includes(tenant.slug) || r?.includes(stack.body.id)), [...routes].join(", "))
      }))

    it.effect("an unknown path is one series, not one per path", () =>
      Effect.gen(function*() {
        const base = yield* ApiBase
        for (const path of ["/api/v1/no-such-a", "/api/v1/no-such-b", "/api/v1/sources/x/y/z"]) {
          yield* Effect.promise(() => fetch(`${base}${path}`).then((r) => r.arrayBuffer()))
        }
        const scraped = yield* scrapeNow
        const routes = scraped.get("statusgrid_http_requests_total")!.metrics.map((m) => m.labels?.["route"] ?? "")
        assert.isFalse(routes.some((r) => r.includes("no-such")), routes.join(", "))
      }))
  })
})
