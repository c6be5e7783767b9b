import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { fetched, fixture, simulatedAll } from "../../../test/support/fetched.ts"
import { decodeText } from "../text.ts"
import { generateSource } from "../../simulator/generate.ts"
import { slackRenderer } from "../../simulator/renderers/slack.ts"
import { slack, slackServices } from "./slack.ts"

const url = "https://slack-status.com/api/v2.0.0/current"
const sampleNow = new Date("2018-09-08T02:00:00Z")

const parseJson = (body: unknown, now = sampleNow) => slack.parse([fetched(url, JSON.stringify(body))], { url }, now)

/** A listed item with the fields Slack sends; `over` replaces any of them. */
const listed = (over: Record<string, unknown>) => ({
  id: 1,
  date_created: "2018-09-07T14:35:00-07:00",
  date_updated: "2018-09-07T15:35:00-07:00",
  title: "Something",
  type: "incident",
  status: "active",
  url: "https://slack-status.com/2018-09/1",
  services: ["Messaging"],
  notes: [],
  ...over
})

describe("slack adapter", () => {
  it.effect("reads the shared sample: one active incident on Apps/Integrations/APIs", () =>
    Effect.gen(function*() {
      const snapshot = yield* slack.parse([fixture("slack", "slack-current.json", url)], { url }, sampleNow)
      assert.deepStrictEqual(snapshot.incidents, [{
        id: "546",
        title: "Slack's forwarding email feature is failing for some customers",
        status: "investigating",
        impact: "minor",
        created_at: "2018-09-07T21:35:00.000Z",
        updated_at: "2018-09-08T01:34:15.000Z",
        resolved_at: null,
        update_count: 1,
        components: ["Apps/Integrations/APIs"],
        url: "https://slack-status.com/2018-09/7dea1cd14cd0f657",
        region: null
      }])
      assert.strictEqual(snapshot.components.length, 11)
      const apps = snapshot.components.find((c) => c.name === "Apps/Integrations/APIs")!
      assert.deepStrictEqual([apps.status, apps.parent_id, apps.is_group, apps.position], ["degraded", null, false, 9])
      assert.isTrue(snapshot.components.filter((c) => c !== apps).every((c) => c.status === "operational"))
      assert.strictEqual(snapshot.reported_status, null)
      assert.strictEqual(snapshot.status, "degraded")
      assert.strictEqual(snapshot.description, "Partial outage")
      assert.deepStrictEqual(snapshot.maintenances, [])
      assert.deepStrictEqual(snapshot.warnings, [])
    }))

  it.effect("ok with nothing listed (or a null list) is operational", () =>
    Effect.gen(function*() {
      for (const list of [[], null]) {
        const snapshot = yield* parseJson({ status: "ok", date_created: "2026-09-23T01:00:00-07:00", active_incidents: list })
        assert.deepStrictEqual([snapshot.status, snapshot.reported_status, snapshot.incidents.length], ["operational", "operational", 0])
        assert.deepStrictEqual(snapshot.components.map((c) => c.name), [...slackServices])
      }
    }))

  it.effect("maps types to impacts and the maintenance lifecycle to maintenances", () =>
    Effect.gen(function*() {
      const snapshot = yield* parseJson({
        status: "active",
        active_incidents: [
          listed({ id: 1, type: "outage", services: ["Messaging", "Huddles"] }),
          listed({ id: 2, type: "notice", date_created: "2018-09-07T16:00:00-07:00", services: ["Files"] }),
          listed({ id: 3, status: "resolved", date_created: "2018-09-07T10:00:00-07:00", services: ["Search"] }),
          listed({ id: 4, type: "notice", status: "scheduled", services: ["Workflows"] }),
          listed({ id: 5, type: "notice", status: "completed", services: ["Canvases"] })
        ]
      })
      assert.deepStrictEqual(snapshot.incidents.map((i) => [i.id, i.status, i.impact, i.resolved_at]), [
        ["2", "investigating", "none", null],
        ["1", "investigating", "critical", null],
        ["3", "resolved", "minor", "2018-09-07T22:35:00.000Z"]
      ])
      assert.deepStrictEqual(snapshot.maintenances.map((m) => [m.id, m.status, m.scheduled_for, m.components]), [
        ["4", "scheduled", "2018-09-07T21:35:00.000Z", ["Workflows"]],
        ["5", "completed", "2018-09-07T21:35:00.000Z", ["Canvases"]]
      ])
      const status = Object.fromEntries(snapshot.components.map((c) => [c.name, c.status]))
      assert.deepStrictEqual(
        [status["Messaging"], status["Huddles"], status["Files"], status["Search"], status["Workflows"]],
        ["critical", "critical", "operational", "operational", "operational"]
      )
      assert.strictEqual(snapshot.status, "down")
    }))

  it.effect("unknown values fall back with warnings; unknown services become components", () =>
    Effect.gen(function*() {
      const snapshot = yield* parseJson({
        status: "melting",
        active_incidents: [listed({ type: "apocalypse", status: "paused", services: ["Telepathy"] })]
      })
      assert.deepStrictEqual(snapshot.warnings, [
        'unknown Slack page status "melting", read as degraded',
        'unknown Slack status "paused", read as open',
        'unknown Slack incident type "apocalypse", read as minor'
      ])
      assert.deepStrictEqual([snapshot.incidents[0]!.status, snapshot.incidents[0]!.impact], ["investigating", "minor"])
      const telepathy = snapshot.components.at(-1)!
      assert.deepStrictEqual([telepathy.id, telepathy.status, telepathy.position], ["Telepathy", "degraded", 11])
      assert.strictEqual(snapshot.reported_status, "degraded")
      assert.strictEqual(snapshot.status, "degraded")
    }))

  it.effect("fails clearly on HTML, truncated JSON, HTTP errors and foreign shapes", () =>
    Effect.gen(function*() {
      const html = yield* Effect.flip(slack.parse([fetched(url, "<!doctype html><html><body>Slack</body></html>")], { url }, sampleNow))
      assert.strictEqual(html.reason, "html_catch_all")
      const truncated = yield* Effect.flip(slack.parse([fetched(url, '{"status":"active","active_incidents":[{"id":')], { url }, sampleNow))
      assert.strictEqual(truncated.reason, "not_json")
      const status = yield* Effect.flip(slack.parse([fetched(url, "", { status: 500 })], { url }, sampleNow))
      assert.strictEqual(status.reason, "http_status")
      const statuspage = yield* Effect.flip(parseJson({ page: { id: "x" }, status: { indicator: "none" } }))
      assert.strictEqual(statuspage.reason, "invalid_shape")
      assert.include(statuspage.message, "status")
    }))

  it("detects Slack by parsed hostname and by the shape of /api/v2.0.0/current", () => {
    assert.isTrue(slack.detect.host(new URL("https://slack-status.com/")))
    assert.isTrue(slack.detect.host(new URL("https://status.slack.com/")))
    assert.isFalse(slack.detect.host(new URL("https://slack-status.com.example.io/")))
    assert.isFalse(slack.detect.host(new URL("https://example.io/slack-status.com")))
    const { accepts, path } = slack.detect.probe
    assert.strictEqual(path, "/api/v2.0.0/current")
    assert.isTrue(accepts(JSON.parse(decodeText(fixture("slack", "slack-current.json", url).body))))
    assert.isTrue(accepts({ status: "ok", active_incidents: [] }))
    // Statuspage's status is an object; Instatus keeps it under page; a bare status is not enough.
    assert.isFalse(accepts({ page: { id: "x" }, status: { indicator: "none", description: "All good" }, incidents: [] }))
    assert.isFalse(accepts({ page: { name: "x", status: "UP" }, activeIncidents: [] }))
    assert.isFalse(accepts({ status: "ok" }))
  })
})

describe("slack renderer round trip", () => {
  const now = new Date("2026-09-23T12:00:00Z")
  const baseUrl = "http://127.0.0.1:4100/s/slack"
  const model = () => {
    const source = generateSource({ key: "slack-sim", name: "Slack", provider: "slack", baseUrl, components: slackServices.length, groups: 0, now })
    source.components.forEach((c, i) => (c.name = slackServices[i]!))
    const [, messaging, , , , , , files, huddles] = source.components
    messaging!.status = "critical"
    source.incidents.push(
      {
        id: "sim-resolved",
        title: "Search was slow",
        status: "resolved",
        impact: "minor",
        created_at: new Date("2026-09-22T08:00:00Z"),
        updated_at: new Date("2026-09-22T09:00:00Z"),
        resolved_at: new Date("2026-09-22T09:00:00Z"),
        updates: [],
        components: [source.components[3]!.id],
        region: null
      },
      {
        id: "sim-open",
        title: "Messages fail to send",
        status: "identified",
        impact: "critical",
        created_at: new Date("2026-09-23T10:00:00Z"),
        updated_at: new Date("2026-09-23T11:00:00Z"),
        resolved_at: null,
        updates: [
          { id: "u1", status: "investigating", body: "Looking into it", created_at: new Date("2026-09-23T10:00:00Z") },
          { id: "u2", status: "identified", body: "Fix rolling out", created_at: new Date("2026-09-23T11:00:00Z") }
        ],
        components: [messaging!.id],
        region: null
      },
      {
        id: "sim-notice",
        title: "File previews delayed",
        status: "investigating",
        impact: "none",
        created_at: new Date("2026-09-23T09:00:00Z"),
        updated_at: new Date("2026-09-23T09:00:00Z"),
        resolved_at: null,
        updates: [],
        components: [files!.id],
        region: null
      }
    )
    source.maintenances.push({
      id: "sim-maint",
      title: "Huddles upgrade",
      status: "scheduled",
      scheduled_for: new Date("2026-09-30T00:00:00Z"),
      scheduled_until: new Date("2026-09-30T02:00:00Z"),
      components: [huddles!.id],
      created_at: now,
      updated_at: now
    })
    return source
  }

  it.effect("the snapshot reflects the model", () =>
    Effect.gen(function*() {
      const source = model()
      const documents = simulatedAll(slack.endpoints({ url: baseUrl }), slackRenderer, source, now)
      assert.include(new TextDecoder().decode(documents[0]!.body), '"date_created":"2026-09-23T03:00:00-07:00"')
      const snapshot = yield* slack.parse(documents, { url: baseUrl }, now)
      assert.deepStrictEqual(snapshot.incidents.map((i) => [i.id, i.status, i.impact, i.components, i.update_count, i.created_at]), [
        ["sim-open", "investigating", "critical", ["Messaging"], 2, "2026-09-23T10:00:00.000Z"],
        ["sim-notice", "investigating", "none", ["Files"], 0, "2026-09-23T09:00:00.000Z"]
      ])
      assert.deepStrictEqual(snapshot.maintenances.map((m) => [m.id, m.status, m.scheduled_for, m.components]), [
        ["sim-maint", "scheduled", "2026-09-30T00:00:00.000Z", ["Huddles"]]
      ])
      const status = Object.fromEntries(snapshot.components.map((c) => [c.id, c.status]))
      assert.deepStrictEqual([status["Messaging"], status["Files"], status["Huddles"]], ["critical", "operational", "operational"])
      assert.strictEqual(snapshot.components.length, slackServices.length)
      assert.strictEqual(snapshot.status, "down")
      assert.isTrue(slack.detect.probe.accepts(JSON.parse(decodeText(documents[0]!.body))))
    }))

  it.effect("a healthy model renders ok, deterministically", () =>
    Effect.gen(function*() {
      const source = generateSource({ key: "slack-sim", name: "Slack", provider: "slack", baseUrl, now })
      const render = () => slackRenderer.routes["/api/v2.0.0/current"]!(source, now).body as string
      assert.strictEqual(render(), render())
      const body = JSON.parse(render())
      assert.deepStrictEqual([body.status, body.active_incidents], ["ok", []])
      assert.strictEqual((yield* slack.parse(simulatedAll(slack.endpoints({ url: baseUrl }), slackRenderer, source, now), { url: baseUrl }, now)).status, "operational")
    }))
})
