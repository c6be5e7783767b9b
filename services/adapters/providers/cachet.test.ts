import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { fetched, fixture, fixtureBytes, simulatedAll } from "../../../test/support/fetched.ts"
import type { Renderer, SimSource } from "../../simulator/Model.ts"
import { generateSource } from "../../simulator/generate.ts"
import { cachetV2Renderer, cachetV3Renderer } from "../../simulator/renderers/cachet.ts"
import { cachetV2, cachetV3 } from "./cachet.ts"

const base = "https://status.example.com"
const source = { url: base }
const now = new Date("2026-09-23T16:00:00.000Z")
const [v2ComponentsUrl, v2GroupsUrl, v2IncidentsUrl, v2SchedulesUrl] = cachetV2.endpoints(source) as [string, string, string, string]
const [v3ComponentsUrl, v3GroupsUrl, v3IncidentsUrl, v3SchedulesUrl] = cachetV3.endpoints(source) as [string, string, string, string]

const doc = (url: string, body: unknown) => fetched(url, JSON.stringify(body))
const missing = (url: string) => fetched(url, "Not Found", { status: 404, contentType: "text/plain" })
const sampleText = (file: string) => new TextDecoder().decode(fixtureBytes("cachet", file))

const v2Component = (id: number, status: number | string, extra: Record<string, unknown> = {}) => ({
  id,
  name: `Component ${id}`,
  description: "",
  status,
  order: id,
  group_id: 0,
  enabled: true,
  ...extra
})
const v2Page = (data: ReadonlyArray<unknown>) => ({ meta: { pagination: { total: data.length, count: data.length } }, data })

const v3Component = (id: string, value: number | string | { human: string; value: number | string }, extra: Record<string, unknown> = {}) => ({
  id,
  type: "components",
  attributes: { id: Number(id), name: `Component ${id}`, order: Number(id), status: typeof value === "object" ? value : { human: "?", value }, ...extra },
  relationships: {}
})

const simSource = (key: string, provider: string): SimSource =>
  generateSource({ key, name: "Demo", provider, baseUrl: `http://127.0.0.1:4100/s/${key}`, now })

/** Sets one leaf critical, opens an incident on it and schedules a maintenance. */
const mutate = (sim: SimSource) => {
  const leaf = sim.components.find((c) => !c.is_group)!
  leaf.status = "critical"
  const started = new Date(now.getTime() - 3_600_000)
  const later = new Date(now.getTime() - 600_000)
  sim.incidents.push({
    id: "41",
    title: "API down",
    status: "identified",
    impact: "critical",
    created_at: started,
    updated_at: later,
    resolved_at: null,
    updates: [
      { id: "7", status: "investigating", body: "Looking", created_at: started },
      { id: "8", status: "identified", body: "Found it", created_at: later }
    ],
    components: [leaf.id],
    region: null
  })
  const start = new Date(now.getTime() + 86_400_000)
  sim.maintenances.push({
    id: "5",
    title: "DB upgrade",
    status: "scheduled",
    scheduled_for: start,
    scheduled_until: new Date(start.getTime() + 3_600_000),
    components: [leaf.id],
    created_at: now,
    updated_at: now
  })
  return { leaf, started, later, start }
}

describe("cachet_v2 adapter", () => {
  it("fetches components first, then groups, incidents (newest first) and schedules", () => {
    assert.deepStrictEqual(cachetV2.endpoints({ url: `${base}/` }), [
      `${base}/api/v1/components?per_page=100`,
      `${base}/api/v1/components/groups?per_page=100`,
      `${base}/api/v1/incidents?sort=id&order=desc&per_page=50`,
      `${base}/api/v1/schedules?per_page=50`
    ])
    assert.deepStrictEqual(cachetV2.endpoints({ url: `${base}/api/v1/components?page=2` }), cachetV2.endpoints(source))
  })

  it.effect("reads the shared sample, flat when the groups are not served", () =>
    Effect.gen(function*() {
      const snapshot = yield* cachetV2.parse(
        [fixture("cachet", "cachet-v2-components.json", v2ComponentsUrl), missing(v2GroupsUrl), missing(v2IncidentsUrl), missing(v2SchedulesUrl)],
        source,
        now
      )
      assert.deepStrictEqual(
        snapshot.components.map((c) => [c.id, c.name, c.description, c.status, c.parent_id, c.is_group, c.position]),
        [
          ["1", "API", "Public API", "operational", null, false, 0],
          ["2", "Website", "", "degraded", null, false, 1]
        ]
      )
      assert.strictEqual(snapshot.provider, "cachet_v2")
      assert.strictEqual(snapshot.reported_status, null)
      assert.strictEqual(snapshot.status, "degraded")
      assert.deepStrictEqual(snapshot.incidents, [])
      assert.deepStrictEqual(snapshot.warnings, [])
    }))

  it.effect("nests the sample's components in their groups (group_id 0 = none)", () =>
    Effect.gen(function*() {
      const snapshot = yield* cachetV2.parse(
        [
          fixture("cachet", "cachet-v2-components.json", v2ComponentsUrl),
          doc(v2GroupsUrl, v2Page([{ id: 1, name: "Core", order: 0 }, { id: 2, name: "Empty", order: 1 }]))
        ],
        source,
        now
      )
      assert.deepStrictEqual(
        snapshot.components.map((c) => [c.id, c.status, c.parent_id, c.is_group, c.position]),
        [
          ["group:1", "operational", null, true, 0],
          ["1", "operational", "group:1", false, 1],
          ["2", "degraded", null, false, 2]
        ]
      )
    }))

  it.effect("maps numeric statuses 0 to 7, as numbers or strings", () =>
    Effect.gen(function*() {
      const snapshot = yield* cachetV2.parse(
        [doc(v2ComponentsUrl, v2Page([0, 1, 2, 3, 4, 5, 6, 7].map((s) => v2Component(s + 1, s % 2 === 0 ? s : String(s)))))],
        source,
        now
      )
      assert.deepStrictEqual(
        snapshot.components.map((c) => c.status),
        ["operational", "operational", "degraded", "degraded", "critical", "degraded", "degraded", "degraded"]
      )
      // 0 is Cachet's own "Unknown": no warning; 5 to 7 do not exist in Cachet 2.
      assert.deepStrictEqual(snapshot.warnings, [
        "unknown component status \"5\", read as degraded",
        "unknown component status \"6\", read as degraded",
        "unknown component status \"7\", read as degraded"
      ])
    }))

  it.effect("skips disabled components", () =>
    Effect.gen(function*() {
      const snapshot = yield* cachetV2.parse(
        [doc(v2ComponentsUrl, v2Page([v2Component(1, 4, { enabled: false }), v2Component(2, 1, { enabled: 0 }), v2Component(3, 1)]))],
        source,
        now
      )
      assert.deepStrictEqual(snapshot.components.map((c) => c.id), ["3"])
      assert.strictEqual(snapshot.status, "operational")
    }))

  it.effect("reads incidents, their updates and impact, scheduled ones and schedules", () =>
    Effect.gen(function*() {
      const snapshot = yield* cachetV2.parse(
        [
          doc(v2ComponentsUrl, v2Page([v2Component(1, 4), v2Component(2, 1)])),
          missing(v2GroupsUrl),
          doc(v2IncidentsUrl, v2Page([
            {
              id: 12,
              component_id: 1,
              name: "API down",
              status: 2,
              message: "Looking",
              occurred_at: "2026-09-23 14:00:00",
              created_at: "2026-09-23 14:00:00",
              updated_at: "2026-09-23 14:30:00",
              updates: [
                { id: 3, status: 2, created_at: "2026-09-23 14:30:00" },
                { id: 2, status: 1, created_at: "2026-09-23 14:10:00" }
              ]
            },
            {
              id: 11,
              component_id: 2,
              name: "Slow search",
              status: "4",
              created_at: "2026-09-22 09:00:00",
              updated_at: "2026-09-22 10:00:00",
              updates: [{ id: 1, status: 4, created_at: "2026-09-22 09:45:00" }]
            },
            { id: 10, component_id: 0, name: "Emails delayed", status: 1, created_at: "2026-09-23 15:00:00", updated_at: "2026-09-23 15:00:00" },
            { id: 9, component_id: 0, name: "Old-style maintenance", status: 0, scheduled_at: "2026-09-25 02:00:00", created_at: "2026-09-20 00:00:00" },
            { id: 8, component_id: 0, name: "Past maintenance", status: 0, scheduled_at: "2026-09-01 02:00:00", created_at: "2026-08-20 00:00:00" }
          ])),
          doc(v2SchedulesUrl, v2Page([
            { id: 1, name: "Upgrade", status: 0, scheduled_at: "2026-09-24 01:00:00", completed_at: "2026-09-24 02:00:00" },
            { id: 2, name: "Failover", status: 1, scheduled_at: "2026-09-23 15:30:00", completed_at: null },
            { id: 3, name: "Done", status: 2, scheduled_at: "2026-09-20 01:00:00", completed_at: "2026-09-20 02:00:00" }
          ]))
        ],
        source,
        now
      )
      assert.deepStrictEqual(
        snapshot.incidents.map((i) => [i.id, i.status, i.impact, i.created_at, i.updated_at, i.resolved_at, i.update_count, i.components]),
        [
          ["10", "investigating", "minor", "2026-09-23T15:00:00.000Z", "2026-09-23T15:00:00.000Z", null, 1, []],
          ["12", "identified", "critical", "2026-09-23T14:00:00.000Z", "2026-09-23T14:30:00.000Z", null, 3, ["1"]],
          ["11", "resolved", "none", "2026-09-22T09:00:00.000Z", "2026-09-22T10:00:00.000Z", "2026-09-22T09:45:00.000Z", 2, ["2"]]
        ]
      )
      assert.strictEqual(snapshot.incidents[1]!.url, `${base}/incidents/12`)
      assert.deepStrictEqual(
        snapshot.maintenances.map((m) => [m.id, m.title, m.status, m.scheduled_for, m.scheduled_until]),
        [
          ["9", "Old-style maintenance", "scheduled", "2026-09-25T02:00:00.000Z", null],
          ["1", "Upgrade", "scheduled", "2026-09-24T01:00:00.000Z", "2026-09-24T02:00:00.000Z"],
          ["2", "Failover", "in_progress", "2026-09-23T15:30:00.000Z", null]
        ]
      )
      // Half the leaves are critical (degraded), but the open incident on a major outage is critical.
      assert.strictEqual(snapshot.status, "down")
      assert.deepStrictEqual(snapshot.warnings, [])
    }))

  it.effect("reads an unknown incident status as investigating with a warning", () =>
    Effect.gen(function*() {
      const snapshot = yield* cachetV2.parse(
        [doc(v2ComponentsUrl, v2Page([])), missing(v2GroupsUrl), doc(v2IncidentsUrl, v2Page([{ id: 1, name: "?", status: 9 }]))],
        source,
        now
      )
      assert.strictEqual(snapshot.incidents[0]!.status, "investigating")
      assert.deepStrictEqual(snapshot.warnings, ["unknown incident status \"9\", read as investigating"])
    }))

  it.effect("fails with http_status, html_catch_all or not_json on a bad component list", () =>
    Effect.gen(function*() {
      const status = yield* Effect.flip(cachetV2.parse([fetched(v2ComponentsUrl, "err", { status: 500 })], source, now))
      assert.strictEqual(status.reason, "http_status")
      const html = yield* Effect.flip(
        cachetV2.parse([fetched(v2ComponentsUrl, "<!doctype html><html><body>SPA</body></html>", { contentType: "text/html" })], source, now)
      )
      assert.strictEqual(html.reason, "html_catch_all")
      const truncated = yield* Effect.flip(cachetV2.parse([fetched(v2ComponentsUrl, sampleText("cachet-v2-components.json").slice(0, -30))], source, now))
      assert.strictEqual(truncated.reason, "not_json")
    }))

  it.effect("fails with invalid_shape, naming the document, on Cachet 3's list or a malformed secondary", () =>
    Effect.gen(function*() {
      const v3Doc = yield* Effect.flip(cachetV2.parse([fixture("cachet", "cachet-v3-components.json", v2ComponentsUrl)], source, now))
      assert.strictEqual(v3Doc.reason, "invalid_shape")
      assert.include(v3Doc.message, "Cachet 2 component list")
      const groups = yield* Effect.flip(cachetV2.parse([doc(v2ComponentsUrl, v2Page([])), doc(v2GroupsUrl, { data: "nope" })], source, now))
      assert.strictEqual(groups.reason, "invalid_shape")
      assert.strictEqual(groups.url, v2GroupsUrl)
      assert.include(groups.message, "component group list")
    }))

  it.effect("round-trips the simulator's model through the renderer", () =>
    Effect.gen(function*() {
      const sim = simSource("cachet2-demo", "cachet_v2")
      const { leaf, started, later, start } = mutate(sim)
      const snapshot = yield* cachetV2.parse(simulatedAll(cachetV2.endpoints({ url: sim.baseUrl }), cachetV2Renderer, sim, now), { url: sim.baseUrl }, now)
      for (const c of sim.components) {
        const parsed = snapshot.components.find((p) => p.id === (c.is_group ? `group:${c.id}` : c.id))!
        assert.deepStrictEqual([parsed.name, parsed.is_group, parsed.parent_id], [c.name, c.is_group, c.parent_id && `group:${c.parent_id}`])
        if (!c.is_group) assert.strictEqual(parsed.status, c.status)
      }
      assert.strictEqual(snapshot.components.find((c) => c.id === `group:${leaf.parent_id}`)!.status, "critical")
      assert.deepStrictEqual(
        snapshot.incidents.map((i) => [i.id, i.status, i.impact, i.created_at, i.updated_at, i.update_count, i.components]),
        [["41", "identified", "critical", started.toISOString(), later.toISOString(), 2, [leaf.id]]]
      )
      assert.deepStrictEqual(
        snapshot.maintenances.map((m) => [m.id, m.status, m.scheduled_for]),
        [["5", "scheduled", start.toISOString()]]
      )
      assert.strictEqual(snapshot.status, "down")
      assert.deepStrictEqual(snapshot.warnings, [])
    }))
})

describe("cachet_v3 adapter", () => {
  it("fetches JSON:API collections with their relationships included", () => {
    assert.deepStrictEqual(cachetV3.endpoints({ url: base }), [
      `${base}/api/components?include=group&per_page=100`,
      `${base}/api/component-groups?include=components&per_page=100`,
      `${base}/api/incidents?include=components,updates&per_page=50`,
      `${base}/api/schedules?include=components&sort=-scheduled_at&per_page=50`
    ])
    assert.deepStrictEqual(cachetV3.endpoints({ url: `${base}/api/components` }), cachetV3.endpoints(source))
  })

  it.effect("reads the shared sample", () =>
    Effect.gen(function*() {
      const snapshot = yield* cachetV3.parse(
        [fixture("cachet", "cachet-v3-components.json", v3ComponentsUrl), missing(v3GroupsUrl), missing(v3IncidentsUrl), missing(v3SchedulesUrl)],
        source,
        now
      )
      assert.deepStrictEqual(snapshot.components, [{
        id: "1",
        name: "API",
        description: "Public API",
        status: "operational",
        parent_id: null,
        is_group: false,
        position: 0,
        region: null
      }])
      assert.strictEqual(snapshot.provider, "cachet_v3")
      assert.strictEqual(snapshot.status, "operational")
      assert.strictEqual(snapshot.description, "All Systems Operational")
      assert.deepStrictEqual(snapshot.warnings, [])
    }))

  it.effect("maps status values 0 to 7, as objects, bare numbers or strings", () =>
    Effect.gen(function*() {
      const values: ReadonlyArray<number | string | { human: string; value: number | string }> = [
        { human: "?", value: 0 },
        1,
        "2",
        { human: "Partial Outage", value: "3" },
        { human: "Major Outage", value: 4 },
        { human: "Unknown", value: 5 },
        { human: "Under Maintenance", value: 6 },
        { human: "?", value: 7 }
      ]
      const snapshot = yield* cachetV3.parse([doc(v3ComponentsUrl, { data: values.map((v, i) => v3Component(String(i + 1), v)) })], source, now)
      assert.deepStrictEqual(
        snapshot.components.map((c) => c.status),
        ["degraded", "operational", "degraded", "degraded", "critical", "operational", "maintenance", "degraded"]
      )
      // 5 is Cachet's own "unknown": no warning; 0 and 7 do not exist in Cachet 3.
      assert.deepStrictEqual(snapshot.warnings, [
        "unknown component status \"0\", read as degraded",
        "unknown component status \"7\", read as degraded"
      ])
    }))

  it.effect("finds groups from the component, its attribute or the group's list, and accepts [] relationships", () =>
    Effect.gen(function*() {
      const snapshot = yield* cachetV3.parse(
        [
          doc(v3ComponentsUrl, {
            data: [
              { ...v3Component("1", 1), relationships: { group: { data: { type: "componentGroups", id: "10" } } } },
              v3Component("2", 2, { component_group_id: 10 }),
              { ...v3Component("3", 4), relationships: [] },
              v3Component("4", 1)
            ]
          }),
          doc(v3GroupsUrl, {
            data: [
              { id: "10", type: "componentGroups", attributes: { name: "Core", order: 1 }, relationships: [] },
              {
                id: "11",
                type: "componentGroups",
                attributes: { name: "Edge", order: 0 },
                relationships: { components: { data: [{ type: "components", id: "3" }] } }
              }
            ]
          })
        ],
        source,
        now
      )
      assert.deepStrictEqual(
        snapshot.components.map((c) => [c.id, c.status, c.parent_id, c.is_group]),
        [
          ["group:11", "critical", null, true],
          ["3", "critical", "group:11", false],
          ["group:10", "degraded", null, true],
          ["1", "operational", "group:10", false],
          ["2", "degraded", "group:10", false],
          ["4", "operational", null, false]
        ]
      )
    }))

  it.effect("reads JSON:API incidents and schedules", () =>
    Effect.gen(function*() {
      const snapshot = yield* cachetV3.parse(
        [
          doc(v3ComponentsUrl, { data: [v3Component("1", { human: "Partial Outage", value: 3 }), v3Component("2", 6)] }),
          missing(v3GroupsUrl),
          doc(v3IncidentsUrl, {
            data: [{
              id: "5",
              type: "incidents",
              attributes: {
                name: "Partial outage",
                status: { human: "Watching", value: 3 },
                component_id: null,
                occurred: { human: "1 hour ago", string: "2026-09-23 15:00:00" },
                created: { human: "1 hour ago", string: "2026-09-23 15:00:00" },
                updated: { human: "5 minutes ago", string: "2026-09-23 15:55:00" }
              },
              relationships: { components: { data: [{ type: "components", id: "1" }] }, updates: { data: [{ type: "updates", id: "9" }] } }
            }]
          }),
          doc(v3SchedulesUrl, {
            data: [{
              id: "3",
              type: "schedules",
              attributes: {
                name: "Storage move",
                status: { human: "In Progress", value: 1 },
                scheduled: { string: "2026-09-23 15:00:00" },
                completed: { string: null }
              },
              relationships: { components: { data: [{ type: "components", id: "2" }] } }
            }]
          })
        ],
        source,
        now
      )
      assert.deepStrictEqual(
        snapshot.incidents.map((i) => [i.id, i.status, i.impact, i.created_at, i.updated_at, i.update_count, i.components]),
        [["5", "monitoring", "major", "2026-09-23T15:00:00.000Z", "2026-09-23T15:55:00.000Z", 2, ["1"]]]
      )
      assert.deepStrictEqual(snapshot.maintenances, [{
        id: "3",
        title: "Storage move",
        status: "in_progress",
        scheduled_for: "2026-09-23T15:00:00.000Z",
        scheduled_until: null,
        components: ["2"],
        url: null
      }])
      assert.strictEqual(snapshot.status, "degraded")
    }))

  it.effect("fails with a clear AdapterError on bad documents", () =>
    Effect.gen(function*() {
      const status = yield* Effect.flip(cachetV3.parse([fetched(v3ComponentsUrl, "", { status: 502 })], source, now))
      assert.strictEqual(status.reason, "http_status")
      const html = yield* Effect.flip(cachetV3.parse([fetched(v3ComponentsUrl, "<html><body>Login</body></html>")], source, now))
      assert.strictEqual(html.reason, "html_catch_all")
      const truncated = yield* Effect.flip(cachetV3.parse([fetched(v3ComponentsUrl, sampleText("cachet-v3-components.json").slice(0, 500))], source, now))
      assert.strictEqual(truncated.reason, "not_json")
      const shape = yield* Effect.flip(cachetV3.parse([fixture("cachet", "cachet-v2-components.json", v3ComponentsUrl)], source, now))
      assert.strictEqual(shape.reason, "invalid_shape")
      assert.include(shape.message, "Cachet 3 component list")
    }))

  it.effect("round-trips the simulator's model through the renderer", () =>
    Effect.gen(function*() {
      const sim = simSource("cachet3-demo", "cachet_v3")
      const { leaf, started, later, start } = mutate(sim)
      const other = sim.components.filter((c) => !c.is_group)[1]!
      other.status = "maintenance"
      const snapshot = yield* cachetV3.parse(simulatedAll(cachetV3.endpoints({ url: sim.baseUrl }), cachetV3Renderer, sim, now), { url: sim.baseUrl }, now)
      for (const c of sim.components) {
        const parsed = snapshot.components.find((p) => p.id === (c.is_group ? `group:${c.id}` : c.id))!
        assert.deepStrictEqual([parsed.name, parsed.is_group, parsed.parent_id], [c.name, c.is_group, c.parent_id && `group:${c.parent_id}`])
        if (!c.is_group) assert.strictEqual(parsed.status, c.status)
      }
      assert.deepStrictEqual(
        snapshot.incidents.map((i) => [i.id, i.status, i.impact, i.created_at, i.updated_at, i.update_count, i.components]),
        [["41", "identified", "critical", started.toISOString(), later.toISOString(), 2, [leaf.id]]]
      )
      assert.deepStrictEqual(
        snapshot.maintenances.map((m) => [m.id, m.status, m.scheduled_for, m.components]),
        [["5", "scheduled", start.toISOString(), [leaf.id]]]
      )
      assert.strictEqual(snapshot.status, "down")
      assert.deepStrictEqual(snapshot.warnings, [])
    }))
})

const rendered = (renderer: Renderer, sim: SimSource, path: string) => JSON.parse(String(renderer.routes[path]!(sim, now).body)) as unknown

describe("cachet detection", () => {
  const simV2 = simSource("cachet2-detect", "cachet_v2")
  const simV3 = simSource("cachet3-detect", "cachet_v3")

  it("tells Cachet 2 from Cachet 3 by their component lists", () => {
    const v2Probe = cachetV2.detect.probe
    const v3Probe = cachetV3.detect.probe
    assert.strictEqual(v2Probe.path, "/api/v1/components")
    assert.strictEqual(v3Probe.path, "/api/components")
    const v2Sample = JSON.parse(sampleText("cachet-v2-components.json")) as unknown
    const v3Sample = JSON.parse(sampleText("cachet-v3-components.json")) as unknown
    const v2Rendered = rendered(cachetV2Renderer, simV2, v2Probe.path)
    const v3Rendered = rendered(cachetV3Renderer, simV3, v3Probe.path)
    assert.isTrue(v2Probe.accepts(v2Sample))
    assert.isTrue(v2Probe.accepts(v2Rendered))
    assert.isFalse(v2Probe.accepts(v3Sample))
    assert.isFalse(v2Probe.accepts(v3Rendered))
    assert.isTrue(v3Probe.accepts(v3Sample))
    assert.isTrue(v3Probe.accepts(v3Rendered))
    assert.isFalse(v3Probe.accepts(v2Sample))
    assert.isFalse(v3Probe.accepts(v2Rendered))
    // Neither is fooled by a ping, which both versions answer alike, nor by an empty list.
    assert.isFalse(v2Probe.accepts({ data: "Pong!" }))
    assert.isFalse(v3Probe.accepts({ data: [], links: {}, meta: {} }))
  })

  it("serves the ping both versions answer", () => {
    assert.deepStrictEqual(rendered(cachetV2Renderer, simV2, "/api/v1/ping"), { data: "Pong!" })
    assert.deepStrictEqual(rendered(cachetV3Renderer, simV3, "/api/ping"), { data: "Pong!" })
  })

  it("claims each version's page by its HTML markers", () => {
    const pageV2 = cachetV2Renderer.page(simV2, now)
    const pageV3 = cachetV3Renderer.page(simV3, now)
    assert.isTrue(cachetV2.detect.html(pageV2))
    assert.isFalse(cachetV3.detect.html(pageV2))
    assert.isTrue(cachetV3.detect.html(pageV3))
    assert.isFalse(cachetV2.detect.html(pageV3))
    assert.isFalse(cachetV2.detect.html("<!DOCTYPE html><html><body>Status</body></html>"))
  })
})
