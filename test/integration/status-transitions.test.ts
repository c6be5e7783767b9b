import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import type { StreamEvent } from "../../services/domain/Event.ts"
import { Monitors } from "../../services/orgs/Monitors.ts"
import { Bus } from "../../services/platform/Bus.ts"
import * as MemoryBus from "../../services/platform/Bus/Memory.ts"
import { ClickHouse } from "../../services/platform/ClickHouse.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { SecretBox } from "../../services/platform/SecretBox.ts"
import * as Cluster from "../../services/poller/Cluster.ts"
import { MonitorAgents } from "../../services/monitors/MonitorAgents.ts"
import * as Poller from "../../services/poller/Poller.ts"
import { RedisKeys } from "../../services/platform/RedisKeys.ts"
import { ShardReloads } from "../../services/domain/ShardReloads.ts"
import { Publisher } from "../../services/platform/Publisher.ts"
import { TransitionWriter } from "../../services/poller/TransitionWriter.ts"
import * as Simulator from "../../services/simulator/Server.ts"
import { waitFor } from "../support/eventually.ts"
import { freshDatabase, tempDir, withConfig } from "../support/stores.ts"

/**
 * Every status change seen by the poller writes one `status_transitions`
 * row with the id of its event: component and source flips made through the
 * simulator, and a website monitor going up, down and up again.
 */
class Sim extends Context.Service<Sim, Simulator.Simulator>()("test/transitions/Sim") {}
/** A local endpoint answering the status the test sets. */
class Target extends Context.Service<Target, { readonly url: string; status: number }>()("test/transitions/Target") {}

const target = Layer.effect(Target, Effect.acquireRelease(
  Effect.callback<{ readonly url: string; status: number; readonly server: Http.Server }>((resume) => {
    const state = { status: 200 }
    const server = Http.createServer((_req, res) => res.writeHead(state.status, { "content-type": "text/plain" }).end("ok"))
    server.listen(0, "127.0.0.1", () => {
      const url = `http://localhost:${(server.address() as AddressInfo).port}/health`
      resume(Effect.succeed(Object.assign(state, { url, server })))
    })
  }),
  ({ server }) => Effect.callback<void>((resume) => {
    server.closeAllConnections()
    server.close(() => resume(Effect.void))
  })
))

const stores = Layer.mergeAll(
  Layer.unwrap(Effect.map(freshDatabase, (url) => Postgres.layerServer(url, { maxConnections: 6 }))),
  Layer.unwrap(Effect.map(tempDir("transitions-ch"), (dir) => ClickHouse.layerEmbedded(dir, "statusgrid"))),
  Publisher.layer.pipe(Layer.provideMerge(MemoryBus.layer))
)
const migrated = Layer.effectDiscard(Effect.gen(function*() {
  yield* Migrations.migratePostgres()
  yield* Migrations.migrateClickHouse()
}))

const TestLayer = Layer.unwrap(Effect.map(tempDir("transitions-spill"), (spill) =>
  Layer.mergeAll(
    Poller.layer.pipe(Layer.provide(Cluster.single)),
    Monitors.layer.pipe(Layer.provide(Layer.mergeAll(SecretBox.layer, MonitorAgents.layer))),
    Layer.effect(Sim, Simulator.make({ port: 0, host: "127.0.0.1", sources: 0 })),
    target
  ).pipe(Layer.provide(withConfig({
    POLLER_SHARDS: "2",
    POLLER_INTERVAL_OVERRIDE_S: "1",
    POLLER_KEEPER_MS: "300",
    POLLER_REFRESH_MS: "500",
    RESULTS_FLUSH_MS: "100",
    RESULTS_SPILL_DIR: spill,
    MONITOR_ALLOW_PRIVATE: "true",
    DATA_DIR: spill
  })))
)).pipe(Layer.provideMerge(migrated), Layer.provideMerge(stores))

/** Status events on the stream, read through a consumer group created before the test acts. */
const streamEvents = (group: string) =>
  Effect.gen(function*() {
    const bus = yield* Bus
    yield* bus.xgroupCreate(RedisKeys.events, group, "$")
    const seen: Array<StreamEvent> = []
    return Effect.gen(function*() {
      const entries = yield* bus.xreadgroup(RedisKeys.events, group, "c", { count: 100, blockMs: 100 })
      for (const e of entries) seen.push(JSON.parse(e.fields["payload"]!) as StreamEvent)
      return seen
    })
  })

interface Row {
  readonly component_id: string
  readonly previous_status: string
  readonly status: string
  readonly incident_id: string
  readonly event_id: string
}

const transitionRows = (kind: "source" | "monitor", id: string) =>
  Effect.gen(function*() {
    yield* (yield* TransitionWriter).flush
    const rows = yield* (yield* ClickHouse).query(
      `SELECT component_id, previous_status, status, incident_id, event_id FROM status_transitions
       WHERE subject_kind = '${kind}' AND subject_id = '${id}' ORDER BY changed_at, component_id`
    )
    return rows as unknown as ReadonlyArray<Row>
  })

const byKey = (rows: ReadonlyArray<Row>) => rows.map((r) => JSON.stringify(r)).toSorted()

describe("status_transitions", () => {
  layer(TestLayer, { timeout: 120_000, excludeTestServices: true })("written by the poller", (it) => {
    it.effect("component and source flips through the simulator: one row per change, with from, to and event id", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const sql = yield* SqlClient
        const read = yield* streamEvents("transitions-sources")
        const source = sim.state.add({ key: "flip-1", name: "Flip 1", provider: "statuspage_io", components: 3 })
        yield* sql`INSERT INTO sources (key, name, kind, provider_type, status_page_url)
          VALUES (${source.key}, ${source.name}, 'catalog', 'statuspage_io', ${source.baseUrl})`
        // The first snapshot is what the source already is: checked, and no change yet.
        yield* waitFor(15_000, "first check", Effect.map(
          sql<{ n: number }>`SELECT count(*)::int AS n FROM sources LEFT JOIN source_checks ON source_id = id WHERE key = 'flip-1' AND checked_at IS NOT NULL`,
          (rows) => (rows[0]!.n > 0 ? true : undefined)
        ))
        const [first, second] = source.components.filter((c) => !c.is_group)
        // One flip at a time, each seen (as its event) before the next.
        const flip = (id: string, status: "operational" | "degraded" | "critical") =>
          Effect.gen(function*() {
            sim.state.setComponent(source.key, id, { status })
            return yield* waitFor(20_000, `${id} ${status}`, Effect.map(read, (events) =>
              events.some((e) => "component" in e && e.component?.id === id && e.component.current_status === status)
                ? events
                : undefined))
          })
        yield* flip(first!.id, "critical")
        yield* flip(second!.id, "degraded")
        yield* flip(first!.id, "operational")
        const events = yield* flip(second!.id, "operational")
        const changes = events.filter((e) => e.type === "component.status_changed" || e.type === "source.status_changed")
        const expected = changes.map((e): Row =>
          "component" in e && e.component !== undefined
            ? {
              component_id: e.component.id,
              previous_status: e.component.previous_status,
              status: e.component.current_status,
              incident_id: ("incident" in e ? e.incident?.id : undefined) ?? "",
              event_id: e.id
            }
            : {
              component_id: "",
              previous_status: (e as { previous_status: string }).previous_status,
              status: (e as { current_status: string }).current_status,
              incident_id: "",
              event_id: e.id
            }
        )
        const rows = yield* transitionRows("source", source.key)
        console.log(JSON.stringify({ events: changes.length, rows: rows.length }))
        assert.isAtLeast(expected.filter((r) => r.component_id !== "").length, 2)
        assert.deepStrictEqual(byKey(rows), byKey(expected))
        // Each flip of the first component, from and to.
        assert.deepStrictEqual(
          rows.filter((r) => r.component_id === first!.id).map((r) => [r.previous_status, r.status]),
          [["operational", "critical"], ["critical", "operational"]]
        )
      }))

    it.effect("a website monitor going up, down and up: one row per change, with the monitor event's id", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const endpoint = yield* Target
        const read = yield* streamEvents("transitions-monitors")
        const [org] = yield* sql<{ id: string }>`
          INSERT INTO organizations (slug, name) VALUES ('transitions', 'Transitions test') RETURNING id`
        const created = yield* Monitors.use((m) =>
          m.create(org!.id, { name: "Health", url: endpoint.url, interval: 60, alert_threshold: 1 })
        )
        yield* ShardReloads.use((r) => r.monitors([created.id]))
        yield* waitFor(15_000, "up", Effect.map(
          sql<{ state: string }>`SELECT state FROM monitors WHERE id = ${created.id}::uuid`,
          (rows) => (rows[0]?.state === "up" ? true : undefined)
        ))
        endpoint.status = 503
        const down = yield* waitFor(15_000, "monitor.down", Effect.map(read, (events) => events.find((e) => e.type === "monitor.down")))
        endpoint.status = 200
        const recovered = yield* waitFor(15_000, "monitor.recovered", Effect.map(read, (events) => events.find((e) => e.type === "monitor.recovered")))
        const rows = yield* transitionRows("monitor", created.id)
        assert.deepStrictEqual(rows.map((r) => [r.previous_status, r.status, r.event_id]), [
          ["pending", "up", ""],
          ["up", "down", down.id],
          ["down", "up", recovered.id]
        ])
      }))
  })
})
