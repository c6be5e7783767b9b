import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Https from "node:https"
import type { AddressInfo } from "node:net"
import * as Path from "node:path"
import type { MonitorEvent } from "../../services/domain/Event.ts"
import { Monitors } from "../../services/orgs/Monitors.ts"
import { Bus } from "../../services/platform/Bus.ts"
import { ClickHouse } from "../../services/platform/ClickHouse.ts"
import { SecretBox } from "../../services/platform/SecretBox.ts"
import { MonitorAgents } from "../../services/monitors/MonitorAgents.ts"
import { RedisKeys } from "../../services/platform/RedisKeys.ts"
import { ShardReloads } from "../../services/domain/ShardReloads.ts"
import { makeTestCerts } from "../support/tls.ts"
import { eventually } from "../support/eventually.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { engine } from "../support/engine.ts"
import { freshDatabase, withConfig } from "../support/stores.ts"

/** A local endpoint whose answer the test sets: status, and what it saw. */
interface Target {
  readonly url: string
  status: number
  readonly seen: Array<{ readonly authorization: string | undefined; readonly path: string }>
}
class Targets extends Context.Service<Targets, { readonly http: Target; readonly https: Target }>()("test/monitors/Targets") {}

const serve = (server: Http.Server | Https.Server, scheme: string, target: { status: number; seen: Target["seen"] }) =>
  Effect.acquireRelease(
    Effect.callback<Target>((resume) => {
      server.on("request", (req: Http.IncomingMessage, res: Http.ServerResponse) => {
        target.seen.push({ authorization: req.headers.authorization, path: req.url ?? "" })
        res.writeHead(target.status, { "content-type": "text/plain" }).end("service is fine")
      })
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as AddressInfo).port
        resume(Effect.succeed(Object.assign(target, { url: `${scheme}://localhost:${port}` })))
      })
    }),
    () => Effect.callback<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
  )

const certs = makeTestCerts(5)
const caFile = Path.join(certs.dir, "trusted-ca.pem")
Fs.writeFileSync(caFile, certs.ca)

const targets = Layer.effect(Targets, Effect.gen(function*() {
  const http = yield* serve(Http.createServer(), "http", { status: 200, seen: [] })
  const https = yield* serve(Https.createServer({ cert: certs.cert, key: certs.key }), "https", { status: 200, seen: [] })
  return { http, https }
}))

const monitors = Monitors.layer.pipe(Layer.provide(Layer.mergeAll(SecretBox.layer, MonitorAgents.layer)))

/** Every monitor checked each second; new monitors reach their shard through ShardReloads; the deltas and events of this run only. */
const TestLayer = engine({
  name: "monitors",
  bus: "redis",
  clearEvents: true,
  config: {
    // The targets are on 127.0.0.1: allowed here explicitly, as the simulator and tests do.
    MONITOR_ALLOW_PRIVATE: "true",
    MONITOR_CA_FILE: caFile
  }
}, Layer.mergeAll(monitors, targets))


const newOrganization = Effect.gen(function*() {
  const sql = yield* SqlClient
  const [org] = yield* sql<{ id: string }>`
    INSERT INTO organizations (slug, name) VALUES (${`org-${Math.random().toString(36).slice(2, 8)}`}, 'Monitors test')
    RETURNING id`
  return org!.id
})

/** Monitor events on the stream, read through a consumer group created before the test acts. */
const monitorEvents = (group: string) =>
  Effect.gen(function*() {
    const bus = yield* Bus
    yield* bus.xgroupCreate(RedisKeys.events, group, "$")
    const seen: Array<MonitorEvent> = []
    return Effect.gen(function*() {
      const entries = yield* bus.xreadgroup(RedisKeys.events, group, "c", { count: 100, blockMs: 100 })
      for (const e of entries) {
        if (e.fields["type"]?.startsWith("monitor.")) seen.push(JSON.parse(e.fields["payload"]!) as MonitorEvent)
      }
      return seen
    })
  })

describe("website monitors on the poller shards", () => {
  layer(TestLayer, { timeout: 120_000, excludeTestServices: true })("real PostgreSQL, Redis, chDB and HTTP(S) targets", (it) => {
    it.effect("down only after alert_threshold consecutive failures, recovered on the first success, rows and events", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const ch = yield* ClickHouse
        const { http } = yield* Targets
        const org = yield* newOrganization
        const read = yield* monitorEvents("threshold")
        const created = yield* Monitors.use((m) =>
          m.create(org, {
            name: "Checkout API",
            url: `${http.url}/health`,
            interval: 60,
            alert_threshold: 3,
            auth: { type: "bearer", token: "t0ken-for-the-target" }
          })
        )
        assert.deepStrictEqual(created.warnings, [])
        yield* ShardReloads.use((r) => r.monitors([created.id]))

        const up = yield* eventually(10_000, sql<{ state: string; last_http_status: number }>`
          SELECT state, last_http_status FROM monitors WHERE id = ${created.id}::uuid AND state = 'up'`
          .pipe(Effect.map((rows) => rows[0])))
        assert.deepStrictEqual(up, { state: "up", last_http_status: 200 })
        // The decrypted credentials reached the target.
        assert.include(http.seen.map((s) => s.authorization), "Bearer t0ken-for-the-target")

        http.status = 503
        const failedFrom = Date.now()
        const down = yield* eventually(15_000, read.pipe(Effect.map((events) => events.find((e) => e.type === "monitor.down"))))
        assert.strictEqual(down.monitor.id, created.id)
        assert.strictEqual(down.previous_state, "up")
        assert.strictEqual(down.http_status, 503)
        assert.strictEqual(down.error, "expected 200-299, got 503")
        // Three failed checks a second apart before the alert, not one.
        assert.isAtLeast(Date.now() - failedFrom, 1_500)
        const failuresBeforeDown = yield* eventually(5_000, ch.query(
          `SELECT count() AS n FROM check_results
           WHERE subject_kind = 'monitor' AND subject_id = '${created.id}' AND status = 'down'
             AND checked_at <= parseDateTime64BestEffort('${down.timestamp}', 3)`
        ).pipe(Effect.map((rows) => (Number(rows[0]!["n"]) >= 3 ? Number(rows[0]!["n"]) : undefined))))
        assert.strictEqual(failuresBeforeDown, 3)

        http.status = 200
        const recovered = yield* eventually(10_000, read.pipe(Effect.map((events) => events.find((e) => e.type === "monitor.recovered"))))
        assert.strictEqual(recovered.previous_state, "down")
        assert.strictEqual(recovered.current_state, "up")
        assert.isAbove(recovered.duration_ms ?? 0, 0)
        const row = yield* eventually(5_000, sql<{ state: string; consecutive_failures: number; last_error: string | null }>`
          SELECT state, consecutive_failures, last_error FROM monitors WHERE id = ${created.id}::uuid AND state = 'up'`
          .pipe(Effect.map((rows) => rows[0])))
        assert.deepStrictEqual(row, { state: "up", consecutive_failures: 0, last_error: null })

        // Exactly one down and one recovery: a failure streak alerts once.
        const events = yield* read
        assert.deepStrictEqual(events.filter((e) => e.monitor.id === created.id).map((e) => e.type), ["monitor.down", "monitor.recovered"])
        // Live state on the bus.
        const live = yield* (yield* Bus).hgetall(RedisKeys.monitor(created.id))
        assert.strictEqual(live["state"], "up")
      }))

    it.effect("an https certificate 5 days from expiry is announced once, with its phases and days left in ClickHouse", () =>
      Effect.gen(function*() {
        const ch = yield* ClickHouse
        const { https } = yield* Targets
        const org = yield* newOrganization
        const read = yield* monitorEvents("ssl")
        const created = yield* Monitors.use((m) =>
          m.create(org, { name: "Portal", url: `${https.url}/`, interval: 60, ssl_expiry_days: [30, 14, 7, 1] })
        )
        yield* ShardReloads.use((r) => r.monitors([created.id]))
        const ssl = yield* eventually(10_000, read.pipe(Effect.map((events) => events.find((e) => e.type === "monitor.ssl_expiring"))))
        assert.strictEqual(ssl.monitor.id, created.id)
        assert.strictEqual(ssl.ssl?.threshold_days, 7)
        assert.oneOf(ssl.ssl?.days_left, [4, 5])
        assert.strictEqual(ssl.ssl?.subject, "localhost")
        const rows = yield* eventually(5_000, ch.query(
          `SELECT count() AS n, min(tls_days_left) AS days, max(tls_ms) AS tls FROM check_results
           WHERE subject_kind = 'monitor' AND subject_id = '${created.id}'`
        ).pipe(Effect.map((r) => (Number(r[0]!["n"]) >= 3 ? r[0]! : undefined))))
        assert.oneOf(Number(rows["days"]), [4, 5])
        assert.isAbove(Number(rows["tls"]), 0)
        // Later checks see the same certificate: no second announcement.
        const events = yield* read
        assert.strictEqual(events.filter((e) => e.type === "monitor.ssl_expiring" && e.monitor.id === created.id).length, 1)
      }))

    it.effect("a paused monitor is not checked; creation refuses bad settings naming the field", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const { http } = yield* Targets
        const org = yield* newOrganization
        const paused = yield* Monitors.use((m) => m.create(org, { name: "Paused", url: `${http.url}/paused`, paused: true }))
        yield* ShardReloads.use((r) => r.monitors([paused.id]))
        yield* Effect.sleep("2500 millis")
        assert.notInclude(http.seen.map((s) => s.path), "/paused")
        const [row] = yield* sql<{ state: string; last_checked_at: Date | null }>`
          SELECT state, last_checked_at FROM monitors WHERE id = ${paused.id}::uuid`
        assert.deepStrictEqual(row, { state: "paused", last_checked_at: null })

        const bad = yield* Effect.flip(Monitors.use((m) =>
          m.create(org, { name: "Bad", url: `${http.url}/`, check_interval: 5, timeout: 10_000 })
        ))
        assert.include(bad.issues.map((i) => i.field), "check_interval")
        const warned = yield* Monitors.use((m) => m.create(org, { name: "Eager", url: `${http.url}/eager`, interval: 15, alert_threshold: 1, timeout: 5000 }))
        assert.includeMembers(warned.warnings.map((w) => w.field), ["interval", "alert_threshold"])
      }))
  })

  layer(
    Monitors.layer.pipe(
      Layer.provide(Layer.mergeAll(SecretBox.layer, MonitorAgents.layer)),
      Layer.provideMerge(Layer.unwrap(Effect.map(freshDatabase, (url) => Postgres.layerServer(url, { maxConnections: 2 })))),
      Layer.provide(withConfig({ DATA_DIR: "/tmp/statusgrid-monitors-test" }))
    ),
    { timeout: 60_000, excludeTestServices: true }
  )("private targets not allowed (the default)", (it) => {
    it.effect("a monitor of a loopback or private address is refused at creation, naming url", () =>
      Effect.gen(function*() {
        yield* Migrations.migratePostgres()
        const org = yield* newOrganization
        for (const url of ["http://127.0.0.1:8080/", "http://localhost/", "http://10.1.2.3/", "http://169.254.169.254/latest/meta-data"]) {
          const refused = yield* Effect.flip(Monitors.use((m) => m.create(org, { name: "Internal", url })))
          assert.strictEqual(refused.issues[0]?.field, "url", url)
          assert.match(refused.issues[0]?.message ?? "", /address/, url)
        }
        const sql = yield* SqlClient
        const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM monitors`
        assert.strictEqual(count!.n, 0)
      }))
  })
})
