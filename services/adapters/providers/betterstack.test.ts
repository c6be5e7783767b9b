import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { fetched, fixture, fixtureBytes, simulated, simulatedAll } from "../../../test/support/fetched.ts"
import type { SimSource } from "../../simulator/Model.ts"
import { generateSource } from "../../simulator/generate.ts"
import { betterstackRenderer } from "../../simulator/renderers/betterstack.ts"
import { parseFeedText } from "../feed.ts"
import { betterstack } from "./betterstack.ts"

const base = "https://status.betterstack.com"
const indexUrl = `${base}/index.json`
const now = new Date("2026-09-23T16:00:00.000Z")
const source = { url: base }

const page = (aggregate_state: string, included: ReadonlyArray<unknown> | null) => ({
  data: { id: "1", type: "status_page", attributes: { company_name: "Acme", aggregate_state } },
  included
})
const parseJson = (doc: unknown) => betterstack.parse([fetched(indexUrl, JSON.stringify(doc))], source, now)

const section = (id: string, name: string | null, position = 0) => ({ type: "status_page_section", id, attributes: { name, position } })
const resource = (id: string, status: string, sectionId: number | null = 1, position = 0) => ({
  type: "status_page_resource",
  id,
  attributes: { public_name: `Resource ${id}`, status, status_page_section_id: sectionId, position }
})
const report = (id: string, attributes: Record<string, unknown>, updates: ReadonlyArray<string> = []) => ({
  type: "status_report",
  id,
  attributes: { title: `Report ${id}`, report_type: "manual", ...attributes },
  relationships: { status_updates: { data: updates.map((u) => ({ id: u, type: "status_update" })) } }
})
const update = (id: string, published_at: string, affected: ReadonlyArray<[string, string]>) => ({
  type: "status_update",
  id,
  attributes: {
    message: "…",
    published_at,
    affected_resources: affected.map(([status_page_resource_id, status]) => ({ status_page_resource_id, status }))
  }
})

const simSource = (key: string, groups = 2): SimSource =>
  generateSource({ key, name: "Demo", provider: "betterstack", baseUrl: `http://127.0.0.1:4100/s/${key}`, groups, now })

const parseSim = (sim: SimSource) =>
  betterstack.parse(simulatedAll(betterstack.endpoints({ url: sim.baseUrl }), betterstackRenderer, sim, now), { url: sim.baseUrl }, now)

describe("betterstack adapter", () => {
  it("fetches /index.json below the page URL, also when given that URL", () => {
    assert.deepStrictEqual(betterstack.endpoints({ url: `${base}/` }), [indexUrl])
    assert.deepStrictEqual(betterstack.endpoints({ url: indexUrl }), [indexUrl])
  })

  it.effect("reads the shared index.json sample", () =>
    Effect.gen(function*() {
      const snapshot = yield* betterstack.parse([fixture("betterstack", "betterstack-index.json", indexUrl)], source, now)
      assert.deepStrictEqual(
        snapshot.components.map((c) => [c.id, c.name, c.status, c.parent_id, c.is_group, c.position]),
        [
          ["section:104771", "Better Stack", "degraded", null, true, 0],
          ["4018902", "Better Stack", "operational", "section:104771", false, 1],
          ["4188758", "Telemetry (Europe)", "degraded", "section:104771", false, 2]
        ]
      )
      assert.deepStrictEqual(snapshot.incidents, [{
        id: "1050825",
        title: "Delayed data processing in the Europe region",
        status: "identified",
        impact: "minor",
        created_at: "2026-09-23T13:50:00.000Z",
        updated_at: "2026-09-23T14:10:00.000Z",
        resolved_at: null,
        update_count: 1,
        components: ["4188758"],
        url: null,
        region: null
      }])
      assert.deepStrictEqual(snapshot.maintenances, [])
      assert.strictEqual(snapshot.reported_status, "degraded")
      assert.strictEqual(snapshot.status, "degraded")
      assert.strictEqual(snapshot.description, "Partial outage")
      assert.deepStrictEqual(snapshot.warnings, [])
    }))

  it.effect("reads not_monitored as operational without a warning, an unknown status as degraded with one", () =>
    Effect.gen(function*() {
      const snapshot = yield* parseJson(page("operational", [
        section("1", "Main"),
        resource("10", "not_monitored", 1, 0),
        resource("11", "downtime", 1, 1),
        resource("12", "maintenance", 1, 2),
        resource("13", "flaky", 1, 3)
      ]))
      assert.deepStrictEqual(snapshot.components.map((c) => c.status), ["critical", "operational", "critical", "maintenance", "degraded"])
      assert.deepStrictEqual(snapshot.warnings, ["unknown resource status \"flaky\", read as degraded"])
      assert.strictEqual(snapshot.status, "degraded")
    }))

  it.effect("reads an unknown aggregate_state as degraded with a warning", () =>
    Effect.gen(function*() {
      const snapshot = yield* parseJson(page("sideways", null))
      assert.strictEqual(snapshot.reported_status, "degraded")
      assert.deepStrictEqual(snapshot.warnings, ["unknown aggregate_state \"sideways\", read as degraded"])
      assert.deepStrictEqual(snapshot.components, [])
    }))

  it.effect("maps downtime to down and keeps an unnamed section's resources ungrouped, in position order", () =>
    Effect.gen(function*() {
      const snapshot = yield* parseJson(page("downtime", [
        section("1", null),
        section("2", "Later", 1),
        resource("21", "operational", 2),
        resource("11", "downtime", 1, 1),
        resource("10", "downtime", 1, 0)
      ]))
      assert.deepStrictEqual(
        snapshot.components.map((c) => [c.id, c.parent_id, c.is_group]),
        [["10", null, false], ["11", null, false], ["section:2", null, true], ["21", "section:2", false]]
      )
      assert.strictEqual(snapshot.status, "down")
    }))

  it.effect("reads a resolved report whose ends_at is null as resolved (the trap), from aggregate_state", () =>
    Effect.gen(function*() {
      const snapshot = yield* parseJson(page("operational", [
        section("1", "Main"),
        resource("10", "operational"),
        report("r1", {
          starts_at: "2026-09-23T10:00:00.000Z",
          ends_at: null,
          aggregate_state: "resolved",
          affected_resources: [{ status_page_resource_id: "10", status: "resolved" }]
        }, ["u1", "u2"]),
        update("u1", "2026-09-23T10:05:00.000Z", [["10", "downtime"]]),
        update("u2", "2026-09-23T11:00:00.000Z", [["10", "resolved"]])
      ]))
      const incident = snapshot.incidents[0]!
      assert.strictEqual(incident.status, "resolved")
      assert.strictEqual(incident.resolved_at, "2026-09-23T11:00:00.000Z")
      assert.strictEqual(incident.updated_at, "2026-09-23T11:00:00.000Z")
      assert.strictEqual(incident.update_count, 2)
      // Worst state over the report's updates.
      assert.strictEqual(incident.impact, "critical")
      assert.strictEqual(snapshot.status, "operational")
    }))

  it.effect("sorts incidents newest first and counts an open downtime report as down", () =>
    Effect.gen(function*() {
      const snapshot = yield* parseJson(page("operational", [
        report("old", { starts_at: "2026-09-20T10:00:00.000Z", ends_at: "2026-09-20T12:00:00.000Z", aggregate_state: "operational" }),
        report("new", { starts_at: "2026-09-23T15:00:00.000Z", aggregate_state: "downtime" })
      ]))
      assert.deepStrictEqual(snapshot.incidents.map((i) => [i.id, i.status, i.impact, i.resolved_at]), [
        ["new", "investigating", "critical", null],
        ["old", "resolved", "none", "2026-09-20T12:00:00.000Z"]
      ])
      assert.strictEqual(snapshot.status, "down")
    }))

  it.effect("reads maintenance reports by their times: upcoming, in progress, over", () =>
    Effect.gen(function*() {
      const snapshot = yield* parseJson(page("maintenance", [
        section("1", "Main"),
        resource("10", "maintenance"),
        report("m-next", { report_type: "maintenance", starts_at: "2026-09-24T10:00:00.000Z", ends_at: "2026-09-24T11:00:00.000Z", aggregate_state: "maintenance" }),
        report("m-now", {
          report_type: "maintenance",
          starts_at: "2026-09-23T15:30:00.000Z",
          ends_at: "2026-09-23T17:00:00.000Z",
          aggregate_state: "maintenance",
          affected_resources: [{ status_page_resource_id: 10, status: "maintenance" }]
        }),
        report("m-past", { report_type: "maintenance", starts_at: "2026-09-22T10:00:00.000Z", ends_at: "2026-09-22T11:00:00.000Z", aggregate_state: "maintenance" })
      ]))
      assert.deepStrictEqual(snapshot.maintenances.map((m) => [m.id, m.status, m.scheduled_until, m.components]), [
        ["m-next", "scheduled", "2026-09-24T11:00:00.000Z", []],
        ["m-now", "in_progress", "2026-09-23T17:00:00.000Z", ["10"]]
      ])
      assert.deepStrictEqual(snapshot.incidents, [])
      assert.strictEqual(snapshot.status, "maintenance")
    }))

  it.effect("fails with html_catch_all when the SPA answers /index.json with its shell", () =>
    Effect.gen(function*() {
      const sim = simSource("bs-spa")
      // The simulator, like the real host, answers any path with the page.
      const shell = simulated(betterstackRenderer, sim, `${sim.baseUrl}/api/v2/summary.json`, now)
      assert.strictEqual(shell.status, 200)
      const error = yield* Effect.flip(betterstack.parse([{ ...shell, url: indexUrl }], source, now))
      assert.strictEqual(error.reason, "html_catch_all")
    }))

  it.effect("fails with not_json on a truncated index.json and http_status on a non-2xx", () =>
    Effect.gen(function*() {
      const bytes = fixtureBytes("betterstack", "betterstack-index.json")
      const truncated = yield* Effect.flip(betterstack.parse([fetched(indexUrl, bytes.subarray(0, bytes.length - 40))], source, now))
      assert.strictEqual(truncated.reason, "not_json")
      const status = yield* Effect.flip(betterstack.parse([fetched(indexUrl, "", { status: 404 })], source, now))
      assert.strictEqual(status.reason, "http_status")
    }))

  it.effect("fails with invalid_shape on another JSON:API document or a malformed resource", () =>
    Effect.gen(function*() {
      const other = yield* Effect.flip(parseJson({ data: { id: "1", type: "status_report", attributes: { aggregate_state: "operational" } } }))
      assert.strictEqual(other.reason, "invalid_shape")
      assert.include(other.message, "status_page")
      const resourceError = yield* Effect.flip(parseJson(page("operational", [
        { type: "status_page_resource", id: "77", attributes: { status: "operational" } }
      ])))
      assert.strictEqual(resourceError.reason, "invalid_shape")
      assert.include(resourceError.message, "status_page_resource 77")
      assert.include(resourceError.message, "public_name")
    }))

  it.effect("round-trips the simulator's model through the renderer", () =>
    Effect.gen(function*() {
      const sim = simSource("bs-demo")
      const leaf = sim.components.find((c) => !c.is_group)!
      const other = sim.components.filter((c) => !c.is_group)[1]!
      leaf.status = "critical"
      other.status = "degraded"
      const started = new Date(now.getTime() - 3_600_000)
      const later = new Date(now.getTime() - 1_800_000)
      sim.incidents.push(
        {
          id: "inc-old",
          title: "Yesterday's blip",
          status: "resolved",
          impact: "major",
          created_at: new Date(now.getTime() - 86_400_000),
          updated_at: new Date(now.getTime() - 82_800_000),
          resolved_at: new Date(now.getTime() - 82_800_000),
          updates: [
            { id: "u-old-1", status: "investigating", body: "Looking", created_at: new Date(now.getTime() - 86_400_000) },
            { id: "u-old-2", status: "resolved", body: "Fixed", created_at: new Date(now.getTime() - 82_800_000) }
          ],
          components: [other.id],
          region: null
        },
        {
          id: "inc-now",
          title: "API down",
          status: "monitoring",
          impact: "critical",
          created_at: started,
          updated_at: later,
          resolved_at: null,
          updates: [
            { id: "u1", status: "investigating", body: "Looking", created_at: started },
            { id: "u2", status: "monitoring", body: "Fix deployed", created_at: later }
          ],
          components: [leaf.id],
          region: null
        }
      )
      sim.maintenances.push({
        id: "mnt-1",
        title: "Upgrade",
        status: "scheduled",
        scheduled_for: new Date(now.getTime() + 86_400_000),
        scheduled_until: new Date(now.getTime() + 90_000_000),
        components: [other.id],
        created_at: now,
        updated_at: now
      })
      const snapshot = yield* parseSim(sim)

      for (const c of sim.components.filter((c) => !c.is_group)) {
        const parsed = snapshot.components.find((p) => p.id === c.id)!
        assert.deepStrictEqual([parsed.name, parsed.status, parsed.parent_id], [c.name, c.status, `section:${c.parent_id}`])
      }
      const groups = snapshot.components.filter((c) => c.is_group)
      assert.deepStrictEqual(groups.map((g) => g.id), sim.components.filter((c) => c.is_group).map((g) => `section:${g.id}`))
      assert.strictEqual(groups.find((g) => g.id === `section:${leaf.parent_id}`)!.status, "critical")
      assert.deepStrictEqual(
        snapshot.incidents.map((i) => [i.id, i.status, i.impact, i.update_count, i.components, i.resolved_at]),
        [
          ["inc-now", "monitoring", "critical", 2, [leaf.id], null],
          // Better Stack has no minor/major split, and no end time on resolved reports.
          ["inc-old", "resolved", "minor", 2, [other.id], new Date(now.getTime() - 82_800_000).toISOString()]
        ]
      )
      assert.deepStrictEqual(snapshot.maintenances.map((m) => [m.id, m.status, m.components]), [["mnt-1", "scheduled", [other.id]]])
      assert.strictEqual(snapshot.reported_status, "down")
      assert.strictEqual(snapshot.status, "down")
      assert.deepStrictEqual(snapshot.warnings, [])
    }))

  it.effect("round-trips a flat source through its unnamed section", () =>
    Effect.gen(function*() {
      const sim = simSource("bs-flat", 0)
      const snapshot = yield* parseSim(sim)
      assert.strictEqual(snapshot.components.length, 12)
      assert.isTrue(snapshot.components.every((c) => !c.is_group && c.parent_id === null && c.status === "operational"))
      assert.strictEqual(snapshot.status, "operational")
    }))

  it("renders /feed.rss in the sample's format, linked from the page", () => {
    const sim = simSource("bs-feed")
    sim.incidents.push({
      id: "123456",
      title: "Database Connection Issues",
      status: "resolved",
      impact: "major",
      created_at: new Date("2024-01-15T10:00:00.000Z"),
      updated_at: new Date("2024-01-15T10:30:00.000Z"),
      resolved_at: new Date("2024-01-15T10:30:00.000Z"),
      updates: [{ id: "u", status: "resolved", body: "The database connection issue has been resolved.", created_at: new Date("2024-01-15T10:30:00.000Z") }],
      components: [],
      region: null
    })
    const sample = parseFeedText(new TextDecoder().decode(fixtureBytes("betterstack", "betterstack-feed.rss")))
    const rendered = parseFeedText(String(betterstackRenderer.routes["/feed.rss"]!(sim, now).body))
    assert.strictEqual(rendered.format, sample.format)
    assert.strictEqual(rendered.title, "Demo Status")
    const [got, want] = [rendered.items[0]!, sample.items[0]!]
    assert.deepStrictEqual([got.title, got.summary, got.published], [want.title, want.summary, want.published])
    assert.strictEqual(got.link, `${sim.baseUrl}/incidents/123456`)
    assert.include(betterstackRenderer.page(sim, now), `href="${sim.baseUrl}/feed.rss"`)
  })
})

describe("betterstack detection", () => {
  const sim = simSource("bs-detect")

  it("claims Better Stack hosts by parsed hostname only", () => {
    const host = betterstack.detect.host
    assert.isTrue(host(new URL("https://acme.betteruptime.com/")))
    assert.isTrue(host(new URL("https://betterstack.com/")))
    assert.isTrue(host(new URL("https://status.betterstack.com/")))
    assert.isFalse(host(new URL("https://mybetterstack.com/")))
    assert.isFalse(host(new URL("https://status.example.com/betteruptime.com")))
  })

  it("accepts the rendered and sample index.json by shape, not the SPA's HTML or other providers' JSON", () => {
    const { path, accepts } = betterstack.detect.probe
    assert.strictEqual(path, "/index.json")
    assert.isTrue(accepts(JSON.parse(String(betterstackRenderer.routes[path]!(sim, now).body))))
    assert.isTrue(accepts(JSON.parse(new TextDecoder().decode(fixtureBytes("betterstack", "betterstack-index.json")))))
    assert.isFalse(accepts(betterstackRenderer.page(sim, now)))
    assert.isFalse(accepts(JSON.parse(new TextDecoder().decode(fixtureBytes("instatus", "instatus-summary.json")))))
    assert.isFalse(accepts({ data: [{ id: "1", type: "components", attributes: { status: { value: 1 } } }] }))
  })

  it("finds its marker in the rendered page", () => {
    assert.isTrue(betterstack.detect.html(betterstackRenderer.page(sim, now)))
    assert.isFalse(betterstack.detect.html("<!DOCTYPE html><html><body>Status</body></html>"))
  })
})
