import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { fetched, fixture, fixtureBytes, simulatedAll } from "../../../test/support/fetched.ts"
import type { Fetched } from "../Adapter.ts"
import { generateSource } from "../../simulator/generate.ts"
import type { SimSource } from "../../simulator/Model.ts"
import { incidentIoRenderer, ulidFor } from "../../simulator/renderers/incidentio.ts"
import { statuspageRenderer } from "../../simulator/renderers/statuspage.ts"
import { incidentIo } from "./incidentio.ts"
import { github, statuspage } from "./statuspage.ts"

const page = "https://status.openai.com"
const url = `${page}/api/v2/summary.json`
const now = new Date("2026-09-23T16:00:00.000Z")

type Json = Record<string, unknown>

const sample = (provider: string, file: string): Json =>
  JSON.parse(new TextDecoder().decode(fixtureBytes(provider, file))) as Json
const compat = sample("incidentio", "incidentio-compat-summary.json")
const [conversations] = compat["components"] as Array<Json>

/** The compat sample with some top-level keys replaced. */
const compatWith = (patch: Json): Array<Fetched> => [fetched(url, JSON.stringify({ ...compat, ...patch }))]
const parse = (documents: ReadonlyArray<Fetched>) => incidentIo.parse(documents, { url: page }, now)

const host = (u: string): boolean => incidentIo.detect.host(new URL(u))
const accepts = incidentIo.detect.probe.accepts
const at = (minutes: number): Date => new Date(now.getTime() - minutes * 60_000)

const baseUrl = "http://127.0.0.1:4100/s/openai"
const read = (source: SimSource) =>
  incidentIo.parse(simulatedAll(incidentIo.endpoints({ url: baseUrl }), incidentIoRenderer, source, now), { url: baseUrl }, now)

const login = { ...conversations, id: "01JMXBRMFE6N2NNT7DG6XZQ6PX", name: "Login", position: 1 }

/** An open incident as incident.io's compat API sends it: no components, null shortlink. */
const openIncident = {
  id: "01JN0000000000000000000001",
  name: "Elevated login errors",
  status: "investigating",
  impact: "major",
  created_at: "2026-09-23T15:10:00Z",
  updated_at: "2026-09-23T15:20:00Z",
  started_at: "2026-09-23T15:10:00Z",
  monitoring_at: null,
  resolved_at: null,
  shortlink: null,
  page_id: "01HXXXXXXXXXXXXXXXXXXXXXXX",
  incident_updates: [
    { id: "u2", status: "investigating", body: "Still looking.", created_at: "2026-09-23T15:20:00Z", affected_components: null },
    { id: "u1", status: "investigating", body: "Looking.", created_at: "2026-09-23T15:10:00Z", affected_components: null }
  ]
}

describe("incident.io parse", () => {
  it.effect("reads the compat sample: null lists, flat components", () =>
    Effect.gen(function*() {
      const snapshot = yield* parse([fixture("incidentio", "incidentio-compat-summary.json", url)])
      assert.strictEqual(snapshot.provider, "incident_io")
      assert.deepStrictEqual(snapshot.components, [{
        id: "01JMXBRMFE6N2NNT7DG6XZQ6PW",
        name: "Conversations",
        description: "",
        status: "operational",
        parent_id: null,
        is_group: false,
        position: 0,
        region: null
      }])
      assert.deepStrictEqual([snapshot.incidents, snapshot.maintenances, snapshot.warnings], [[], [], []])
      assert.deepStrictEqual([snapshot.status, snapshot.reported_status], ["operational", "operational"])
      assert.strictEqual(snapshot.description, "All Systems Operational")
    }))

  it.effect("full_outage is critical: one of two leaves degrades the source, all of them take it down", () =>
    Effect.gen(function*() {
      const partial = yield* parse(compatWith({ components: [{ ...conversations, status: "full_outage" }, login] }))
      assert.strictEqual(partial.components[0]!.status, "critical")
      assert.strictEqual(partial.status, "degraded")
      const full = yield* parse(compatWith({ components: [{ ...conversations, status: "full_outage" }] }))
      assert.strictEqual(full.status, "down")
      assert.deepStrictEqual(full.warnings, [])
    }))

  it.effect("null components read as none, the indicator still counts", () =>
    Effect.gen(function*() {
      const snapshot = yield* parse(compatWith({ components: null, status: { indicator: "major", description: "Partial System Outage" } }))
      assert.deepStrictEqual(snapshot.components, [])
      assert.strictEqual(snapshot.status, "degraded")
      assert.strictEqual(snapshot.description, "Partial System Outage")
    }))

  it.effect("an incident without components or shortlink counts while the indicator says none", () =>
    Effect.gen(function*() {
      const snapshot = yield* parse(compatWith({ incidents: [openIncident] }))
      assert.deepStrictEqual(snapshot.incidents, [{
        id: "01JN0000000000000000000001",
        title: "Elevated login errors",
        status: "investigating",
        impact: "major",
        created_at: "2026-09-23T15:10:00.000Z",
        updated_at: "2026-09-23T15:20:00.000Z",
        resolved_at: null,
        update_count: 2,
        components: [],
        url: null,
        region: null,
        updates: [
          { id: "u1", status: "investigating", body: "Looking.", created_at: "2026-09-23T15:10:00.000Z" },
          { id: "u2", status: "investigating", body: "Still looking.", created_at: "2026-09-23T15:20:00.000Z" }
        ]
      }])
      assert.deepStrictEqual([snapshot.reported_status, snapshot.status], ["operational", "degraded"])
    }))

  it.effect("incident.io's maintenance lifecycle names are understood; a running one is maintenance", () =>
    Effect.gen(function*() {
      const maintenance = {
        id: "01JN0000000000000000000002", name: "Database upgrade", status: "maintenance_in_progress",
        scheduled_for: "2026-09-23T15:00:00Z", scheduled_until: null, shortlink: null
      }
      const snapshot = yield* parse(compatWith({ scheduled_maintenances: [maintenance] }))
      assert.deepStrictEqual(snapshot.maintenances, [{
        id: "01JN0000000000000000000002",
        title: "Database upgrade",
        status: "in_progress",
        scheduled_for: "2026-09-23T15:00:00.000Z",
        scheduled_until: null,
        components: [],
        url: null
      }])
      assert.strictEqual(snapshot.status, "maintenance")
    }))

  it.effect("a completed maintenance is dropped; a resolved incident without resolved_at closes at its update", () =>
    Effect.gen(function*() {
      const done = { id: "m1", name: "Old work", status: "maintenance_complete", scheduled_for: "2026-09-22T15:00:00Z" }
      const resolved = { ...openIncident, status: "resolved" }
      const snapshot = yield* parse(compatWith({ scheduled_maintenances: [done], incidents: [resolved] }))
      assert.deepStrictEqual(snapshot.maintenances, [])
      assert.strictEqual(snapshot.incidents[0]!.resolved_at, "2026-09-23T15:20:00.000Z")
      assert.strictEqual(snapshot.status, "operational")
    }))

  it.effect("an unknown component status reads as degraded with a warning", () =>
    Effect.gen(function*() {
      const snapshot = yield* parse(compatWith({ components: [{ ...conversations, status: "wobbly" }] }))
      assert.strictEqual(snapshot.components[0]!.status, "degraded")
      assert.strictEqual(snapshot.status, "degraded")
      assert.deepStrictEqual(snapshot.warnings, ["unknown component status \"wobbly\", read as degraded"])
    }))

  it.effect("the /proxy document answering the summary path is invalid_shape", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(parse([fixture("incidentio", "incidentio-proxy.json", url)]))
      assert.strictEqual(error.reason, "invalid_shape")
      assert.strictEqual(error.provider, "incident_io")
      assert.include(error.message, "page")
    }))

  it.effect("the HTML page answering the summary path is html_catch_all", () =>
    Effect.gen(function*() {
      const source = generateSource({ key: "openai", name: "OpenAI", provider: "incident_io", baseUrl: page, now })
      const error = yield* Effect.flip(parse([fetched(url, incidentIoRenderer.page(source, now), { contentType: "text/html" })]))
      assert.strictEqual(error.reason, "html_catch_all")
    }))

  it.effect("a truncated body is not_json and a 404 is http_status", () =>
    Effect.gen(function*() {
      const bytes = fixtureBytes("incidentio", "incidentio-compat-summary.json")
      const truncated = yield* Effect.flip(parse([fetched(url, bytes.subarray(0, 200))]))
      assert.strictEqual(truncated.reason, "not_json")
      const missing = yield* Effect.flip(parse([fetched(url, "Not Found", { status: 404, contentType: "text/plain" })]))
      assert.strictEqual(missing.reason, "http_status")
    }))
})

describe("incident.io detect", () => {
  it("matches incident.io hosts by parsed hostname", () => {
    assert.isTrue(host("https://status.incident.io/"))
    assert.isTrue(host("https://acme.incidentio.com/"))
    assert.isTrue(host("https://incidentio.com/"))
    assert.isFalse(host("https://evil-incident.io/"))
    assert.isFalse(host("https://status.incident.io.evil.example/"))
    assert.isFalse(host("https://status.example.com/?via=status.incident.io"))
  })

  it("the probe wants a summary with incident.io traits, and leaves Statuspage's alone", () => {
    assert.strictEqual(incidentIo.detect.probe.path, "/api/v2/summary.json")
    assert.isTrue(accepts(compat))
    // No null list left: the ULID component ids still tell.
    assert.isTrue(accepts({ ...compat, incidents: [], scheduled_maintenances: [] }))
    assert.isTrue(accepts({ ...compat, components: null, incidents: [], scheduled_maintenances: [] }))
    assert.isFalse(accepts(sample("statuspage", "statuspage-summary.json")))
    assert.isFalse(accepts(sample("incidentio", "incidentio-proxy.json")))
    assert.isFalse(accepts({ page: { name: "Railway", status: "UP" }, activeIncidents: null }))
  })

  it("an incident.io summary is incident_io in registry order, not github or statuspage_io", () => {
    const order = [github, incidentIo, statuspage]
    assert.strictEqual(order.find((a) => a.detect.probe.accepts(compat))?.id, "incident_io")
  })

  it("recognises its page, not a Statuspage page, even one that mentions incident.io", () => {
    const source = generateSource({ key: "openai", name: "OpenAI", provider: "incident_io", baseUrl: page, now })
    assert.isTrue(incidentIo.detect.html(incidentIoRenderer.page(source, now)))
    assert.isFalse(incidentIo.detect.html(statuspageRenderer.page(source, now)))
    source.components[0]!.name = "Alerts via incident.io"
    assert.isFalse(incidentIo.detect.html(statuspageRenderer.page(source, now)))
  })
})

describe("incident.io round trip through the simulator", () => {

  it.effect("an all-clear model renders null lists that read back as operational", () =>
    Effect.gen(function*() {
      const source = generateSource({ key: "openai", name: "OpenAI", provider: "incident_io", baseUrl, now })
      const body = JSON.parse(incidentIoRenderer.routes["/api/v2/summary.json"]!(source, now).body as string) as Json
      assert.deepStrictEqual([body["incidents"], body["scheduled_maintenances"]], [null, null])
      assert.isTrue(accepts(body))
      assert.isFalse(github.detect.probe.accepts(body))
      const snapshot = yield* read(source)
      assert.deepStrictEqual([snapshot.status, snapshot.incidents, snapshot.maintenances], ["operational", [], []])
    }))

  it.effect("the snapshot reflects the model: flat leaves, incident, maintenance", () =>
    Effect.gen(function*() {
      const source = generateSource({ key: "openai", name: "OpenAI", provider: "incident_io", baseUrl, now })
      const leaves = source.components.filter((c) => !c.is_group)
      leaves[0]!.status = "critical"
      leaves[1]!.status = "degraded"
      source.incidents.push({
        id: "inc-1", title: "Elevated errors", status: "monitoring", impact: "minor", created_at: at(45), updated_at: at(5),
        resolved_at: null, components: [leaves[0]!.id], region: null,
        updates: [
          { id: "u-1", status: "investigating", body: "Looking.", created_at: at(45) },
          { id: "u-2", status: "monitoring", body: "Fix deployed.", created_at: at(5) }
        ]
      })
      source.maintenances.push({
        id: "mnt-1", title: "Upgrade", status: "scheduled", scheduled_for: at(-600), scheduled_until: at(-660),
        components: [leaves[2]!.id], created_at: at(3000), updated_at: at(3000)
      })

      const snapshot = yield* read(source)
      assert.strictEqual(snapshot.components.length, leaves.length)
      leaves.forEach((model, position) => {
        const c = snapshot.components.find((s) => s.id === ulidFor(model.id))
        assert.isDefined(c, model.name)
        assert.deepStrictEqual([c!.name, c!.status, c!.parent_id, c!.is_group, c!.position], [model.name, model.status, null, false, position])
      })
      assert.deepStrictEqual(snapshot.incidents, [{
        id: ulidFor("inc-1"),
        title: "Elevated errors",
        status: "monitoring",
        impact: "minor",
        created_at: at(45).toISOString(),
        updated_at: at(5).toISOString(),
        resolved_at: null,
        update_count: 2,
        components: [],
        url: null,
        region: null,
        updates: [
          { id: ulidFor("u-1"), status: "investigating", body: "Looking.", created_at: at(45).toISOString() },
          { id: ulidFor("u-2"), status: "monitoring", body: "Fix deployed.", created_at: at(5).toISOString() }
        ]
      }])
      assert.deepStrictEqual(snapshot.maintenances.map((m) => [m.title, m.status, m.scheduled_for]), [["Upgrade", "scheduled", at(-600).toISOString()]])
      assert.strictEqual(snapshot.reported_status, "degraded")
      assert.strictEqual(snapshot.status, "degraded")
      assert.deepStrictEqual(snapshot.warnings, [])

      const body = JSON.parse(new TextDecoder().decode(simulatedAll([`${baseUrl}/api/v2/summary.json`], incidentIoRenderer, source, now)[0]!.body)) as Json
      assert.isTrue(accepts(body))
      assert.isFalse(github.detect.probe.accepts(body))
      assert.include(JSON.stringify(body), "\"full_outage\"")
    }))

  it.effect("every leaf critical reads as down", () =>
    Effect.gen(function*() {
      const source = generateSource({ key: "openai", name: "OpenAI", provider: "incident_io", baseUrl, now })
      for (const c of source.components) c.status = "critical"
      const snapshot = yield* read(source)
      assert.deepStrictEqual([snapshot.status, snapshot.reported_status], ["down", "down"])
    }))

  it("ulidFor gives distinct, stable ULID-shaped ids", () => {
    const ids = Array.from({ length: 500 }, (_, i) => ulidFor(`openai${String(i).padStart(6, "0")}`))
    for (const id of ids) assert.match(id, /^[0-9A-HJKMNP-TV-Z]{26}$/)
    assert.strictEqual(new Set(ids).size, ids.length)
    assert.strictEqual(ulidFor("x"), ulidFor("x"))
  })
})
