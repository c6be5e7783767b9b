import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { fetched, fixture, fixtureBytes, simulatedAll } from "../../../test/support/fetched.ts"
import { generateSource } from "../../simulator/generate.ts"
import { instatusRenderer } from "../../simulator/renderers/instatus.ts"
import { instatus } from "./instatus.ts"

const base = "https://tldv.instatus.com"
const summaryUrl = `${base}/summary.json`
const componentsUrl = `${base}/v2/components.json`
const now = new Date("2026-09-23T16:00:00.000Z")
const source = { url: base }

const parseJson = (summary: unknown, components?: unknown) =>
  instatus.parse(
    [
      fetched(summaryUrl, JSON.stringify(summary)),
      ...(components === undefined ? [] : [fetched(componentsUrl, JSON.stringify(components))])
    ],
    source,
    now
  )

const up = { page: { name: "Acme", url: base, status: "UP" } }

describe("instatus adapter", () => {
  it("lists its two endpoints below the page URL, also when given the summary's URL", () => {
    assert.deepStrictEqual(instatus.endpoints({ url: `${base}/` }), [summaryUrl, componentsUrl])
    assert.deepStrictEqual(instatus.endpoints({ url: summaryUrl }), [summaryUrl, componentsUrl])
  })

  it.effect("reads the shared summary and component samples", () =>
    Effect.gen(function*() {
      const snapshot = yield* instatus.parse(
        [fixture("instatus", "instatus-summary.json", summaryUrl), fixture("instatus", "instatus-v2-components.json", componentsUrl)],
        source,
        now
      )
      assert.strictEqual(snapshot.provider, "instatus")
      assert.deepStrictEqual(
        snapshot.components.map((c) => [c.id, c.name, c.status, c.parent_id, c.is_group, c.position]),
        [
          ["group:Platform", "Platform", "degraded", null, true, 0],
          ["cm86c68hh003drlefrrklqlw1", "Public API", "degraded", "group:Platform", false, 1],
          ["cm86c68hh003drlefrrklqlw2", "WebApp", "operational", null, false, 2]
        ]
      )
      assert.strictEqual(snapshot.incidents.length, 1)
      const incident = snapshot.incidents[0]!
      assert.strictEqual(incident.id, "cl4a8n3070721qtmzvts760c4")
      assert.strictEqual(incident.title, "We're facing an issue with our API")
      assert.strictEqual(incident.status, "investigating")
      assert.strictEqual(incident.impact, "critical")
      assert.strictEqual(incident.created_at, "2022-06-11T18:55:50.000Z")
      assert.strictEqual(incident.resolved_at, null)
      // The component list names the incident it is affected by.
      assert.deepStrictEqual(incident.components, ["cm86c68hh003drlefrrklqlw1"])
      assert.strictEqual(incident.url, "https://testing-widget.instatus.com/incident/cl4a8n3070721qtmzvts760c4")
      assert.deepStrictEqual(snapshot.maintenances, [{
        id: "cl4a8nlv50918qtmzdlw60ivu",
        title: "Database maintenance",
        status: "scheduled",
        scheduled_for: "2022-06-11T18:55:54.000Z",
        scheduled_until: "2022-06-11T19:55:54.000Z",
        components: [],
        url: "https://testing-widget.instatus.com/maintenance/cl4a8nlv50918qtmzdlw60ivu"
      }])
      assert.strictEqual(snapshot.reported_status, "degraded")
      // HASISSUES reads degraded, the open MAJOROUTAGE incident makes it down.
      assert.strictEqual(snapshot.status, "down")
      assert.strictEqual(snapshot.description, "Major outage")
      assert.deepStrictEqual(snapshot.warnings, [])
    }))

  it.effect("still returns the summary when the component list answers non-2xx", () =>
    Effect.gen(function*() {
      const snapshot = yield* instatus.parse(
        [fixture("instatus", "instatus-summary.json", summaryUrl), fetched(componentsUrl, "Not Found", { status: 404, contentType: "text/plain" })],
        source,
        now
      )
      assert.deepStrictEqual(snapshot.components, [])
      assert.strictEqual(snapshot.incidents.length, 1)
      assert.deepStrictEqual(snapshot.incidents[0]!.components, [])
      assert.strictEqual(snapshot.status, "down")
    }))

  it.effect("reads an all-up page with both lists omitted", () =>
    Effect.gen(function*() {
      const snapshot = yield* parseJson(up, { components: [] })
      assert.strictEqual(snapshot.status, "operational")
      assert.strictEqual(snapshot.description, "All Systems Operational")
      assert.deepStrictEqual(snapshot.incidents, [])
      assert.deepStrictEqual(snapshot.maintenances, [])
    }))

  it.effect("maps every component status", () =>
    Effect.gen(function*() {
      const statuses = ["OPERATIONAL", "UNDERMAINTENANCE", "DEGRADEDPERFORMANCE", "PARTIALOUTAGE", "MINOROUTAGE", "MAJOROUTAGE"]
      const snapshot = yield* parseJson(up, { components: statuses.map((status) => ({ id: status, name: status, status, group: null })) })
      assert.deepStrictEqual(
        snapshot.components.map((c) => c.status),
        ["operational", "maintenance", "degraded", "degraded", "degraded", "critical"]
      )
      assert.deepStrictEqual(snapshot.warnings, [])
    }))

  it.effect("reads the docs' bare array with isParent and children", () =>
    Effect.gen(function*() {
      const snapshot = yield* parseJson(up, [
        {
          id: "p1",
          name: "Infrastructure",
          status: "OPERATIONAL",
          isParent: true,
          children: [
            { id: "c1", name: "Database", status: "MAJOROUTAGE", description: "Primary DB" },
            { id: "c2", name: "Cache", status: "OPERATIONAL" }
          ]
        },
        { id: "c3", name: "Website", status: "OPERATIONAL", isParent: false, children: [] }
      ])
      assert.deepStrictEqual(
        snapshot.components.map((c) => [c.id, c.status, c.parent_id, c.is_group, c.position]),
        [
          ["p1", "critical", null, true, 0],
          ["c1", "critical", "p1", false, 1],
          ["c2", "operational", "p1", false, 2],
          ["c3", "operational", null, false, 3]
        ]
      )
      assert.strictEqual(snapshot.components[1]!.description, "Primary DB")
      // One of three leaves critical: degraded, worse than the UP indicator.
      assert.strictEqual(snapshot.status, "degraded")
    }))

  it.effect("accepts a group as a string or as {id, name}, one group component each", () =>
    Effect.gen(function*() {
      const snapshot = yield* parseJson(up, {
        components: [
          { id: "a", name: "API", status: "OPERATIONAL", group: "Core" },
          { id: "b", name: "Auth", status: "PARTIALOUTAGE", group: "Core" },
          { id: "c", name: "EU", status: "OPERATIONAL", group: { id: "g-eu", name: "Regions" } },
          { id: "d", name: "US", status: "OPERATIONAL", group: { id: "g-eu", name: "Regions" } }
        ]
      })
      assert.deepStrictEqual(
        snapshot.components.map((c) => [c.id, c.parent_id, c.is_group, c.status]),
        [
          ["group:Core", null, true, "degraded"],
          ["a", "group:Core", false, "operational"],
          ["b", "group:Core", false, "degraded"],
          ["g-eu", null, true, "operational"],
          ["c", "g-eu", false, "operational"],
          ["d", "g-eu", false, "operational"]
        ]
      )
    }))

  it.effect("accepts openstatus's {text, type} page status", () =>
    Effect.gen(function*() {
      const snapshot = yield* parseJson({
        page: { name: "Acme", url: base, updated: "2026-09-23T15:00:00.000Z" },
        status: { text: "Under maintenance", type: "UNDERMAINTENANCE" }
      }, [])
      assert.strictEqual(snapshot.reported_status, "maintenance")
      assert.strictEqual(snapshot.status, "maintenance")
      assert.strictEqual(snapshot.description, "Under maintenance")
    }))

  it.effect("reads unknown values as degraded with a warning, never failing", () =>
    Effect.gen(function*() {
      const snapshot = yield* parseJson(
        { page: { status: "HALFWAY" }, activeIncidents: [{ name: "Odd", status: "PONDERING", impact: "SIDEWAYS", url: `${base}/incident/x1` }] },
        { components: [{ id: "a", name: "API", status: "WOBBLY", group: null }] }
      )
      assert.strictEqual(snapshot.components[0]!.status, "degraded")
      assert.strictEqual(snapshot.reported_status, "degraded")
      assert.strictEqual(snapshot.incidents[0]!.id, "x1")
      assert.strictEqual(snapshot.incidents[0]!.status, "investigating")
      assert.strictEqual(snapshot.incidents[0]!.impact, "major")
      assert.deepStrictEqual(snapshot.warnings, [
        "unknown page status \"HALFWAY\", read as degraded",
        "unknown component status \"WOBBLY\", read as degraded",
        "unknown incident status \"PONDERING\", read as investigating",
        "unknown incident impact \"SIDEWAYS\", read as major"
      ])
      assert.strictEqual(snapshot.status, "degraded")
    }))

  it.effect("fails with html_catch_all when a custom domain answers /summary.json with its HTML", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        instatus.parse([fetched(summaryUrl, "<!DOCTYPE html><html><body>Railway</body></html>", { contentType: "text/html" })], source, now)
      )
      assert.strictEqual(error.reason, "html_catch_all")
    }))

  it.effect("fails with not_json on a truncated summary", () =>
    Effect.gen(function*() {
      const bytes = fixtureBytes("instatus", "instatus-summary.json")
      const error = yield* Effect.flip(instatus.parse([fetched(summaryUrl, bytes.subarray(0, 300))], source, now))
      assert.strictEqual(error.reason, "not_json")
      assert.strictEqual(error.url, summaryUrl)
    }))

  it.effect("fails with http_status when the summary answers non-2xx", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(instatus.parse([fetched(summaryUrl, "oops", { status: 503 })], source, now))
      assert.strictEqual(error.reason, "http_status")
      assert.include(error.message, "503")
    }))

  it.effect("fails with invalid_shape, naming the problem, on a summary without a page status", () =>
    Effect.gen(function*() {
      const missing = yield* Effect.flip(parseJson({ page: { name: "Acme" } }))
      assert.strictEqual(missing.reason, "invalid_shape")
      assert.include(missing.message, "page.status")
      const wrong = yield* Effect.flip(parseJson({ incidents: [] }))
      assert.strictEqual(wrong.reason, "invalid_shape")
      assert.include(wrong.message, "page")
    }))

  it.effect("fails with invalid_shape when a 2xx component list is not one", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(parseJson(up, { components: [{ id: 1, name: "API" }] }))
      assert.strictEqual(error.reason, "invalid_shape")
      assert.strictEqual(error.url, componentsUrl)
    }))

  it.effect("round-trips the simulator's model through the renderer", () =>
    Effect.gen(function*() {
      const sim = generateSource({ key: "instatus-demo", name: "Demo", provider: "instatus", baseUrl: "http://127.0.0.1:4100/s/instatus-demo", now })
      const leaf = sim.components.find((c) => !c.is_group)!
      const group = sim.components.find((c) => c.id === leaf.parent_id)!
      leaf.status = "critical"
      const started = new Date(now.getTime() - 30 * 60_000)
      sim.incidents.push({
        id: "inc-1",
        title: "API errors",
        status: "identified",
        impact: "critical",
        created_at: started,
        updated_at: started,
        resolved_at: null,
        updates: [{ id: "u1", status: "identified", body: "Found it", created_at: started }],
        components: [leaf.id],
        region: null
      })
      const start = new Date(now.getTime() + 86_400_000)
      sim.maintenances.push({
        id: "mnt-1",
        title: "Database upgrade",
        status: "scheduled",
        scheduled_for: start,
        scheduled_until: new Date(start.getTime() + 2 * 3_600_000),
        components: [],
        created_at: now,
        updated_at: now
      })
      const snapshot = yield* instatus.parse(simulatedAll(instatus.endpoints({ url: sim.baseUrl }), instatusRenderer, sim, now), { url: sim.baseUrl }, now)

      const leaves = sim.components.filter((c) => !c.is_group)
      assert.strictEqual(snapshot.components.filter((c) => !c.is_group).length, leaves.length)
      assert.strictEqual(snapshot.components.filter((c) => c.is_group).length, 2)
      for (const c of leaves) {
        const parsed = snapshot.components.find((p) => p.id === c.id)!
        assert.strictEqual(parsed.name, c.name)
        assert.strictEqual(parsed.status, c.status)
        assert.strictEqual(parsed.parent_id, `group:${sim.components.find((g) => g.id === c.parent_id)!.name}`)
      }
      assert.strictEqual(snapshot.components.find((c) => c.id === `group:${group.name}`)!.status, "critical")
      assert.strictEqual(snapshot.incidents.length, 1)
      const incident = snapshot.incidents[0]!
      assert.deepStrictEqual(
        [incident.id, incident.status, incident.impact, incident.created_at, incident.resolved_at],
        ["inc-1", "identified", "critical", started.toISOString(), null]
      )
      assert.deepStrictEqual(incident.components, [leaf.id])
      assert.deepStrictEqual(
        snapshot.maintenances.map((m) => [m.id, m.status, m.scheduled_for, m.scheduled_until]),
        [["mnt-1", "scheduled", start.toISOString(), new Date(start.getTime() + 2 * 3_600_000).toISOString()]]
      )
      assert.strictEqual(snapshot.reported_status, "degraded")
      assert.strictEqual(snapshot.status, "down")
      assert.deepStrictEqual(snapshot.warnings, [])
    }))

  it.effect("reads the rendered maintenance-only page as maintenance", () =>
    Effect.gen(function*() {
      const sim = generateSource({ key: "instatus-mnt", name: "Demo", provider: "instatus", baseUrl: "http://127.0.0.1:4100/s/instatus-mnt", now })
      sim.maintenances.push({
        id: "mnt-2",
        title: "Failover",
        status: "in_progress",
        scheduled_for: new Date(now.getTime() - 600_000),
        scheduled_until: null,
        components: [],
        created_at: now,
        updated_at: now
      })
      const snapshot = yield* instatus.parse(simulatedAll(instatus.endpoints({ url: sim.baseUrl }), instatusRenderer, sim, now), { url: sim.baseUrl }, now)
      assert.strictEqual(snapshot.reported_status, "maintenance")
      assert.strictEqual(snapshot.maintenances[0]!.status, "in_progress")
      assert.strictEqual(snapshot.status, "maintenance")
    }))
})

describe("instatus detection", () => {
  const sim = generateSource({ key: "instatus-detect", name: "Demo", provider: "instatus", baseUrl: "http://127.0.0.1:4100/s/x", now })

  it("claims instatus.com hosts by parsed hostname only", () => {
    const host = instatus.detect.host
    assert.isTrue(host(new URL("https://tldv.instatus.com/")))
    assert.isTrue(host(new URL("https://instatus.com")))
    assert.isFalse(host(new URL("https://notinstatus.com/")))
    assert.isFalse(host(new URL("https://status.example.com/?ref=x.instatus.com")))
  })

  it("accepts the rendered and sample summaries, not Statuspage's or Better Stack's documents", () => {
    const { path, accepts } = instatus.detect.probe
    assert.strictEqual(path, "/summary.json")
    const rendered = JSON.parse(String(instatusRenderer.routes[path]!(sim, now).body)) as unknown
    assert.isTrue(accepts(rendered))
    assert.isTrue(accepts(JSON.parse(new TextDecoder().decode(fixtureBytes("instatus", "instatus-summary.json")))))
    assert.isFalse(accepts({ page: { id: "kctbh9vrtdwd", name: "GitHub" }, status: { indicator: "none" }, components: [] }))
    assert.isFalse(accepts(JSON.parse(new TextDecoder().decode(fixtureBytes("betterstack", "betterstack-index.json")))))
    assert.isFalse(accepts({ page: { status: "operational" } }))
  })

  it("finds its marker in the rendered page", () => {
    assert.isTrue(instatus.detect.html(instatusRenderer.page(sim, now)))
    assert.isFalse(instatus.detect.html("<!DOCTYPE html><html><body>Status</body></html>"))
  })
})
