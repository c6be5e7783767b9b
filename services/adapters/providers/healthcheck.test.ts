import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { fetched, fixture, simulatedAll } from "../../../test/support/fetched.ts"
import { generateSource } from "../../simulator/generate.ts"
import { healthCheckRenderer } from "../../simulator/renderers/healthcheck.ts"
import type { SourceConfig } from "../Adapter.ts"
import { healthCheck } from "./healthcheck.ts"

const url = "https://orders.example.com/health"
const now = new Date("2026-03-16T12:00:00.000Z")

const parse = (documents: ReadonlyArray<ReturnType<typeof fetched>>, source: SourceConfig = { url }) =>
  healthCheck.parse(documents, source, now)
const answer = (body: string | Uint8Array, status = 200, contentType = "application/json") =>
  [fetched(url, body, { status, contentType })]
const byId = <A extends { readonly id: string }>(items: ReadonlyArray<A>, id: string): A => {
  const item = items.find((i) => i.id === id)
  assert.isDefined(item, `no item ${id}`)
  return item!
}

describe("health_check endpoints and detection", () => {
  it("fetches the URL itself and has no detection of its own (it is detect.ts's last resort)", () => {
    assert.deepStrictEqual(healthCheck.endpoints({ url }), [url])
    assert.deepStrictEqual(healthCheck.detect, {})
  })
})

describe("health_check parse: JSON health shapes", () => {
  it.effect("reads an RFC health+json body: verdict, one component per check, worst result per check", () =>
    Effect.gen(function*() {
      const snapshot = yield* parse([fixture("healthcheck", "rfc-health.json", url, { contentType: "application/health+json" })])
      assert.strictEqual(snapshot.provider, "health_check")
      assert.deepStrictEqual(snapshot.components.map((c) => [c.id, c.status, c.parent_id, c.is_group, c.position]), [
        ["postgres:responseTime", "operational", null, false, 0],
        ["redis:connections", "degraded", null, false, 1],
        ["uptime", "operational", null, false, 2],
        // Node 1 passes, node 2 fails: the check is as bad as its worst result.
        ["cpu:utilization", "critical", null, false, 3]
      ])
      assert.deepStrictEqual([snapshot.reported_status, snapshot.status], ["degraded", "degraded"])
      assert.strictEqual(snapshot.description, "Degraded (HTTP 200, status: warn, failing: redis:connections, cpu:utilization)")
      assert.deepStrictEqual([snapshot.incidents, snapshot.maintenances, snapshot.regions, snapshot.warnings], [[], [], [], []])
    }))

  it.effect("reads Spring Boot Actuator: DOWN with a 503, nested components as a group with children", () =>
    Effect.gen(function*() {
      const snapshot = yield* parse([fixture("healthcheck", "spring-actuator-health.json", url, { status: 503 })])
      assert.strictEqual(snapshot.components.length, 7)
      const db = byId(snapshot.components, "db")
      assert.deepStrictEqual([db.is_group, db.status, db.parent_id], [true, "critical", null])
      const reporting = byId(snapshot.components, "db/reporting")
      assert.deepStrictEqual([reporting.name, reporting.status, reporting.parent_id, reporting.is_group], ["reporting", "critical", "db", false])
      assert.strictEqual(byId(snapshot.components, "db/primary").status, "operational")
      assert.strictEqual(byId(snapshot.components, "readinessState").status, "critical")
      assert.strictEqual(byId(snapshot.components, "diskSpace").status, "operational")
      assert.deepStrictEqual([snapshot.reported_status, snapshot.status], ["down", "down"])
      assert.include(snapshot.description, "HTTP 503")
      assert.include(snapshot.description, "status: DOWN")
    }))

  it.effect("the body's verdict counts even when the HTTP status is 200", () =>
    Effect.gen(function*() {
      const snapshot = yield* parse([fixture("healthcheck", "spring-actuator-health.json", url)])
      assert.deepStrictEqual([snapshot.reported_status, snapshot.status], ["down", "down"])
    }))

  it.effect("reads {healthy} and {ok} booleans", () =>
    Effect.gen(function*() {
      const unhealthy = yield* parse(answer(`{"healthy":false,"uptime":31}`))
      assert.deepStrictEqual([unhealthy.status, unhealthy.description], ["down", "Down (HTTP 200, healthy: false)"])
      const ok = yield* parse(answer(`{"ok":true}`))
      assert.deepStrictEqual([ok.status, ok.reported_status, ok.description], ["operational", "operational", "Healthy (HTTP 200, ok: true)"])
    }))

  it.effect("an unknown status value reads degraded with a warning; a declared UNKNOWN reads operational", () =>
    Effect.gen(function*() {
      const starting = yield* parse(answer(`{"status":"STARTING"}`))
      assert.strictEqual(starting.status, "degraded")
      assert.deepStrictEqual(starting.warnings, [`unknown health status "starting", read as degraded`])
      const unknown = yield* parse(answer(`{"status":"UNKNOWN","components":{"mail":{"status":"UNKNOWN"}}}`))
      assert.deepStrictEqual([unknown.status, unknown.warnings], ["operational", []])
      assert.strictEqual(byId(unknown.components, "mail").status, "operational")
    }))

  it.effect("reads a UTF-16LE body with a byte-order mark", () =>
    Effect.gen(function*() {
      const text = `{"status":"fail","checks":{"queue":[{"status":"fail"}]}}`
      const bytes = new Uint8Array(2 + text.length * 2)
      bytes.set([0xff, 0xfe])
      for (let i = 0; i < text.length; i++) bytes[2 + i * 2] = text.charCodeAt(i)
      const snapshot = yield* parse(answer(bytes))
      assert.deepStrictEqual(snapshot.components.map((c) => [c.id, c.status]), [["queue", "critical"]])
      assert.strictEqual(snapshot.status, "down")
    }))
})

describe("health_check parse: plain HTTP", () => {
  it.effect("2xx is operational; 429 and 5xx are down; other 4xx degraded, never an AdapterError", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [number, string, string]> = [
        [200, "OK", "operational"],
        [204, "", "operational"],
        [503, "<!DOCTYPE html><html><body>Service Unavailable</body></html>", "down"],
        [500, "Internal Server Error", "down"],
        [429, "Too Many Requests", "down"],
        [404, "Not Found", "degraded"],
        [401, `{"error":"unauthorized"}`, "degraded"]
      ]
      for (const [status, body, expected] of cases) {
        const snapshot = yield* parse(answer(body, status, "text/plain"))
        assert.strictEqual(snapshot.status, expected, `HTTP ${status}`)
        assert.strictEqual(snapshot.reported_status, expected, `HTTP ${status}`)
        assert.include(snapshot.description, `HTTP ${status}`)
        assert.deepStrictEqual(snapshot.components, [])
      }
    }))

  it.effect("JSON without a recognised status is plain HTTP", () =>
    Effect.gen(function*() {
      const snapshot = yield* parse(answer(`{"version":"2.3.1","commit":"9f1c2ab"}`))
      assert.deepStrictEqual([snapshot.status, snapshot.description], ["operational", "Healthy (HTTP 200)"])
    }))

  it.effect("a truncated JSON body is degraded with a warning, not a crash", () =>
    Effect.gen(function*() {
      const snapshot = yield* parse(answer(`{"status":"pass","checks":{"db":[{"sta`))
      assert.strictEqual(snapshot.status, "degraded")
      assert.strictEqual(snapshot.reported_status, "operational")
      assert.include(snapshot.description, "invalid JSON body")
      assert.strictEqual(snapshot.warnings.length, 1)
    }))

  it.effect("options.expect: the body must contain the text", () =>
    Effect.gen(function*() {
      const source = { url, options: { expect: "database: ok" } }
      const missing = yield* parse(answer("database: down", 200, "text/plain"), source)
      assert.strictEqual(missing.status, "degraded")
      assert.strictEqual(missing.description, `Degraded (HTTP 200, expected text "database: ok" not found)`)
      const present = yield* parse(answer("cache: ok\ndatabase: ok", 200, "text/plain"), source)
      assert.strictEqual(present.status, "operational")
    }))

  it.effect("nothing fetched is invalid_shape", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(parse([]))
      assert.strictEqual(error.reason, "invalid_shape")
    }))
})

describe("health_check round trip through the simulator", () => {
  it.effect("the rendered health+json reads back as the model's leaf components and verdict", () =>
    Effect.gen(function*() {
      const source = generateSource({ key: "orders", name: "Orders", provider: "health_check", baseUrl: "http://127.0.0.1:4100/s/orders", now })
      const leaves = source.components.filter((c) => !c.is_group)
      const read = () => healthCheck.parse(simulatedAll(healthCheck.endpoints({ url: source.baseUrl }), healthCheckRenderer, source, now), { url: source.baseUrl }, now)

      const healthy = yield* read()
      assert.deepStrictEqual([healthy.status, healthy.description], ["operational", "Healthy (HTTP 200, status: pass)"])
      assert.deepStrictEqual(healthy.components.map((c) => c.name), leaves.map((c) => c.name))

      leaves[0]!.status = "critical"
      leaves[1]!.status = "degraded"
      source.incidents.push({
        id: "inc-1",
        title: "Database failover",
        status: "investigating",
        impact: "critical",
        created_at: now,
        updated_at: now,
        resolved_at: null,
        updates: [],
        components: [leaves[0]!.id],
        region: null
      })
      const troubled = yield* read()
      const statusOf = (name: string) => troubled.components.find((c) => c.name === name)?.status
      assert.strictEqual(statusOf(leaves[0]!.name), "critical")
      assert.strictEqual(statusOf(leaves[1]!.name), "degraded")
      assert.strictEqual(statusOf(leaves[2]!.name), "operational")
      assert.deepStrictEqual([troubled.reported_status, troubled.status], ["down", "down"])
      assert.include(troubled.description, "status: fail")
    }))
})
