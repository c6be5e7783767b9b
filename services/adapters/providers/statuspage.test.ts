import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { fetched, fixture, fixtureBytes, simulatedAll } from "../../../test/support/fetched.ts"
import type { Adapter } from "../Adapter.ts"
import { generateSource } from "../../simulator/generate.ts"
import type { SimSource } from "../../simulator/Model.ts"
import { incidentIoRenderer } from "../../simulator/renderers/incidentio.ts"
import { githubRenderer, statuspageRenderer } from "../../simulator/renderers/statuspage.ts"
import { incidentIo } from "./incidentio.ts"
import { github, statuspage } from "./statuspage.ts"

const page = "https://www.githubstatus.com"
const url = `${page}/api/v2/summary.json`
const now = new Date("2026-09-23T14:00:00.000Z")

type Json = Record<string, unknown>
type Entry = Record<string, unknown>

const sample = (file: string): Json => JSON.parse(new TextDecoder().decode(fixtureBytes("statuspage", file))) as Json
const entries = (file: string, key: string): Array<Entry> => sample(file)[key] as Array<Entry>
const summary = sample("statuspage-summary.json")

/** The summary sample with some top-level keys replaced. */
const summaryWith = (patch: Json) => [fetched(url, JSON.stringify({ ...summary, ...patch }))]
const allOperational: Array<Entry> = entries("statuspage-summary.json", "components").map((c) => ({ ...c, status: "operational" }))
const quiet = { status: { indicator: "none", description: "All Systems Operational" }, components: allOperational, incidents: [] }

const parse = (documents: ReadonlyArray<ReturnType<typeof fetched>>) => statuspage.parse(documents, { url: page }, now)
const byId = <A extends { readonly id: string }>(items: ReadonlyArray<A>, id: string): A => {
  const item = items.find((i) => i.id === id)
  assert.isDefined(item, `no item ${id}`)
  return item!
}

/** Detection order of the registry for the three Statuspage-format providers. */
const detectionOrder: ReadonlyArray<Adapter> = [github, incidentIo, statuspage]
const detected = (body: unknown): string | undefined => detectionOrder.find((a) => a.detect.probe?.accepts(body))?.id
const host = (adapter: Adapter, u: string): boolean => adapter.detect.host?.(new URL(u)) ?? false

describe("statuspage endpoints", () => {
  it("fetches the summary below the page, keeping a path prefix", () => {
    assert.deepStrictEqual(statuspage.endpoints({ url: page }), [url])
    assert.deepStrictEqual(github.endpoints({ url: "http://127.0.0.1:4100/s/acme/" }), [
      "http://127.0.0.1:4100/s/acme/api/v2/summary.json"
    ])
    assert.deepStrictEqual(statuspage.endpoints({ url }), [url])
  })
})

describe("statuspage parse: shared samples", () => {
  it.effect("maps the summary sample: groups, incident, maintenance, indicator", () =>
    Effect.gen(function*() {
      const snapshot = yield* parse([fixture("statuspage", "statuspage-summary.json", url)])
      assert.strictEqual(snapshot.provider, "statuspage_io")
      assert.strictEqual(snapshot.components.length, 3)
      const group = byId(snapshot.components, "grp0000000001")
      assert.deepStrictEqual([group.is_group, group.parent_id, group.status, group.position], [true, null, "degraded", 0])
      const git = byId(snapshot.components, "8l4ygp009s5s")
      assert.deepStrictEqual([git.name, git.status, git.parent_id, git.is_group, git.position], [
        "Git Operations", "degraded", "grp0000000001", false, 1
      ])
      const api = byId(snapshot.components, "brv1bkgrwx7q")
      assert.deepStrictEqual([api.status, api.parent_id, api.description], ["operational", "grp0000000001", "Requests for GitHub APIs"])

      assert.deepStrictEqual(snapshot.incidents, [{
        id: "8zc63m64hy36",
        title: "Incident across several services",
        status: "investigating",
        impact: "minor",
        created_at: "2026-09-23T10:11:12.836Z",
        updated_at: "2026-09-23T13:35:44.672Z",
        resolved_at: null,
        update_count: 1,
        components: ["8l4ygp009s5s"],
        url: "https://stspg.io/m1ps7yrhp4n8",
        region: null,
        updates: [{
          id: "upd000000001",
          status: "investigating",
          body: "We are investigating reports of degraded performance for Git Operations.",
          created_at: "2026-09-23T13:35:44.672Z"
        }]
      }])
      assert.deepStrictEqual(snapshot.maintenances, [{
        id: "mnt000000001",
        title: "Database maintenance",
        status: "scheduled",
        scheduled_for: "2026-09-27T02:00:00.000Z",
        scheduled_until: "2026-09-27T04:00:00.000Z",
        components: [],
        url: "https://stspg.io/xxxxxxxx"
      }])
      assert.strictEqual(snapshot.reported_status, "degraded")
      assert.strictEqual(snapshot.status, "degraded")
      assert.strictEqual(snapshot.description, "Partially Degraded Service")
      assert.deepStrictEqual(snapshot.regions, [])
      assert.deepStrictEqual(snapshot.warnings, [])
    }))

  it.effect("github reads the same format under its own provider id", () =>
    Effect.gen(function*() {
      const snapshot = yield* github.parse([fixture("statuspage", "statuspage-summary.json", url)], { url: page }, now)
      assert.strictEqual(snapshot.provider, "github")
      assert.strictEqual(snapshot.components.length, 3)
    }))

  it.effect("an open minor incident makes the source degraded while the indicator says none", () =>
    Effect.gen(function*() {
      const snapshot = yield* parse(summaryWith({ ...quiet, incidents: summary["incidents"] }))
      assert.strictEqual(snapshot.reported_status, "operational")
      assert.strictEqual(snapshot.status, "degraded")
      assert.strictEqual(snapshot.description, "All Systems Operational")
    }))

  it.effect("components sample: major_outage is critical, the group rolls up, hierarchy kept", () =>
    Effect.gen(function*() {
      const components = entries("statuspage-components.json", "components")
      const snapshot = yield* parse(summaryWith({ ...quiet, components, status: sample("statuspage-status.json")["status"] }))
      const actions = byId(snapshot.components, "h2ftsgbw7kmk")
      assert.deepStrictEqual([actions.status, actions.parent_id, actions.is_group], ["critical", null, false])
      assert.strictEqual(actions.description, "Workflows, Compute and Orchestration for GitHub Actions")
      assert.strictEqual(byId(snapshot.components, "8l4ygp009s5s").parent_id, "grp0000000001")
      assert.strictEqual(byId(snapshot.components, "grp0000000001").status, "operational")
      // One of two leaves critical: degraded, not down, although the indicator says none.
      assert.strictEqual(snapshot.reported_status, "operational")
      assert.strictEqual(snapshot.status, "degraded")
    }))

  it.effect("a child named only in its group's components list still gets the group as parent", () =>
    Effect.gen(function*() {
      const components = entries("statuspage-components.json", "components")
        .map((c) => (c["id"] === "8l4ygp009s5s" ? { ...c, group_id: null, status: "major_outage" } : c))
      const snapshot = yield* parse(summaryWith({ ...quiet, components }))
      assert.strictEqual(byId(snapshot.components, "8l4ygp009s5s").parent_id, "grp0000000001")
      assert.strictEqual(byId(snapshot.components, "grp0000000001").status, "critical")
    }))

  it.effect("incidents sample: a resolved incident keeps its resolution and does not count", () =>
    Effect.gen(function*() {
      const snapshot = yield* parse(summaryWith({ ...quiet, incidents: entries("statuspage-incidents.json", "incidents") }))
      const incident = byId(snapshot.incidents, "01M36RMC01ZFWQ861WYJKC4XE1")
      assert.deepStrictEqual(
        [incident.status, incident.impact, incident.resolved_at, incident.url, incident.components, incident.update_count],
        ["resolved", "minor", "2026-09-23T09:54:16.000Z", null, [], 1]
      )
      assert.strictEqual(snapshot.status, "operational")
    }))

  it.effect("incidents come newest first", () =>
    Effect.gen(function*() {
      const [open] = entries("statuspage-summary.json", "incidents")
      const older = { ...open, id: "older0000001", created_at: "2026-09-22T10:00:00.000Z" }
      const snapshot = yield* parse(summaryWith({ incidents: [older, open] }))
      assert.deepStrictEqual(snapshot.incidents.map((i) => i.id), ["8zc63m64hy36", "older0000001"])
    }))

  it.effect("upcoming maintenances sample: affected components; in progress reads as maintenance", () =>
    Effect.gen(function*() {
      const upcoming = entries("statuspage-scheduled-maintenances-upcoming.json", "scheduled_maintenances")
      const scheduled = yield* parse(summaryWith({ ...quiet, scheduled_maintenances: upcoming }))
      assert.deepStrictEqual(scheduled.maintenances.map((m) => [m.status, m.components]), [["scheduled", ["brv1bkgrwx7q"]]])
      assert.strictEqual(scheduled.status, "operational")
      const running = yield* parse(summaryWith({ ...quiet, scheduled_maintenances: upcoming.map((m) => ({ ...m, status: "in_progress" })) }))
      assert.strictEqual(running.maintenances[0]!.status, "in_progress")
      assert.strictEqual(running.status, "maintenance")
    }))

  it.effect("every leaf in major outage with a critical indicator is down", () =>
    Effect.gen(function*() {
      const components = allOperational.map((c) => ({ ...c, status: "major_outage" }))
      const snapshot = yield* parse(summaryWith({ components, status: { indicator: "critical", description: "Major Service Outage" } }))
      assert.strictEqual(snapshot.reported_status, "down")
      assert.strictEqual(snapshot.status, "down")
      assert.strictEqual(byId(snapshot.components, "grp0000000001").status, "critical")
    }))
})

describe("statuspage parse: edge cases", () => {
  it.effect("unknown component status, indicator and impact read as degraded / minor with warnings", () =>
    Effect.gen(function*() {
      const components = allOperational.map((c) => (c["id"] === "brv1bkgrwx7q" ? { ...c, status: "sparkling" } : c))
      const incidents = entries("statuspage-summary.json", "incidents").map((i) => ({ ...i, impact: "catastrophic" }))
      const snapshot = yield* parse(summaryWith({ components, incidents, status: { indicator: "purple", description: "?" } }))
      assert.strictEqual(byId(snapshot.components, "brv1bkgrwx7q").status, "degraded")
      assert.strictEqual(snapshot.reported_status, "degraded")
      assert.strictEqual(snapshot.incidents[0]!.impact, "minor")
      assert.strictEqual(snapshot.warnings.length, 3)
      assert.isTrue(snapshot.warnings.some((w) => w.includes("\"sparkling\"")))
      assert.isTrue(snapshot.warnings.some((w) => w.includes("\"purple\"")))
      assert.isTrue(snapshot.warnings.some((w) => w.includes("\"catastrophic\"")))
    }))

  it.effect("status.json answering the summary path is invalid_shape naming the missing components", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(parse([fixture("statuspage", "statuspage-status.json", url)]))
      assert.strictEqual(error.reason, "invalid_shape")
      assert.include(error.message, "components")
    }))

  it.effect("a wrongly typed field is invalid_shape with its path", () =>
    Effect.gen(function*() {
      const components = allOperational.map((c, i) => (i === 0 ? { ...c, id: 42 } : c))
      const error = yield* Effect.flip(parse(summaryWith({ components })))
      assert.strictEqual(error.reason, "invalid_shape")
      assert.include(error.message, "[\"components\"][0][\"id\"]")
    }))

  it.effect("a truncated body is not_json", () =>
    Effect.gen(function*() {
      const bytes = fixtureBytes("statuspage", "statuspage-summary.json")
      const error = yield* Effect.flip(parse([fetched(url, bytes.subarray(0, bytes.length / 2))]))
      assert.strictEqual(error.reason, "not_json")
      assert.strictEqual(error.provider, "statuspage_io")
    }))

  it.effect("an HTML page answering the summary path is html_catch_all", () =>
    Effect.gen(function*() {
      const html = statuspageRenderer.page(generateSource({ key: "acme", name: "Acme", provider: "statuspage_io", baseUrl: page, now }), now)
      const error = yield* Effect.flip(parse([fetched(url, html, { contentType: "text/html" })]))
      assert.strictEqual(error.reason, "html_catch_all")
    }))

  it.effect("a non-2xx summary is http_status", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(parse([fetched(url, "Service Unavailable", { status: 503, contentType: "text/plain" })]))
      assert.strictEqual(error.reason, "http_status")
      assert.include(error.message, "503")
    }))
})

describe("statuspage detect", () => {
  it("matches hosts by parsed hostname, never by substring", () => {
    assert.isTrue(host(statuspage, "https://acme.statuspage.io/"))
    assert.isFalse(host(statuspage, "https://www.statuspage.io/"))
    assert.isFalse(host(statuspage, "https://statuspage.io.evil.example/"))
    assert.isFalse(host(statuspage, "https://evil.example/acme.statuspage.io"))
    assert.isTrue(host(github, "https://www.githubstatus.com/"))
    assert.isTrue(host(github, "https://githubstatus.com/"))
    assert.isFalse(host(github, "https://githubstatus.com.evil.example/"))
    assert.isFalse(host(github, "https://notgithubstatus.com/"))
  })

  it("statuspage's probe wants a summary shape, not any JSON", () => {
    const accepts = statuspage.detect.probe.accepts
    assert.strictEqual(statuspage.detect.probe.path, "/api/v2/summary.json")
    assert.isTrue(accepts(summary))
    assert.isFalse(accepts(sample("statuspage-status.json")))
    assert.isFalse(accepts({ page: { name: "Railway", url: "https://status.railway.com", status: "UP" }, activeIncidents: [] }))
    assert.isFalse(accepts("<!DOCTYPE html><html></html>"))
  })

  it("in registry order, GitHub's summary is github and another page's is statuspage_io", () => {
    assert.strictEqual(detected(summary), "github")
    assert.strictEqual(detected({ ...summary, page: { ...(summary["page"] as Json), id: "y2j98763l56x", url: "https://status.mongodb.com" } }), "statuspage_io")
    assert.strictEqual(detected({ ...summary, page: { id: "abc", url: "https://eu.githubstatus.com" } }), "github")
  })

  it("finds Statuspage's markers and feed link in the page, not in an incident.io page", () => {
    const source = generateSource({ key: "acme", name: "Acme", provider: "statuspage_io", baseUrl: "http://127.0.0.1:4100/s/acme/", now })
    const html = statuspageRenderer.page(source, now)
    assert.isTrue(statuspage.detect.html(html))
    assert.include(html, `<link rel="alternate" type="application/atom+xml" title="Acme Status History" href="http://127.0.0.1:4100/s/acme/history.atom">`)
    assert.isFalse(statuspage.detect.html(incidentIoRenderer.page(source, now)))
  })
})

/** The model with a critical leaf, an open incident on it, a resolved one and a running maintenance. */
const troubled = (provider: string, key: string): { source: SimSource; leaf: string; other: string } => {
  const source = generateSource({ key, name: "Acme", provider, baseUrl: `http://127.0.0.1:4100/s/${key}`, now })
  const [leaf, other] = source.components.filter((c) => !c.is_group)
  leaf!.status = "critical"
  const at = (minutes: number) => new Date(now.getTime() - minutes * 60_000)
  source.incidents.push(
    {
      id: "inc-old", title: "Old trouble", status: "resolved", impact: "critical", created_at: at(600), updated_at: at(500),
      resolved_at: at(500), updates: [], components: [leaf!.id], region: null
    },
    {
      id: "inc-now", title: "API errors", status: "identified", impact: "major", created_at: at(30), updated_at: at(10),
      resolved_at: null, components: [leaf!.id], region: null,
      updates: [
        { id: "upd-1", status: "investigating", body: "Looking into it.", created_at: at(30) },
        { id: "upd-2", status: "identified", body: "Found it.", created_at: at(10) }
      ]
    }
  )
  source.maintenances.push({
    id: "mnt-1", title: "DB upgrade", status: "in_progress", scheduled_for: at(20), scheduled_until: at(-40),
    components: [other!.id], created_at: at(2000), updated_at: at(20)
  })
  return { source, leaf: leaf!.id, other: other!.id }
}

describe("statuspage round trip through the simulator", () => {
  it.effect("the snapshot reflects the model", () =>
    Effect.gen(function*() {
      const { source, leaf, other } = troubled("statuspage_io", "acme")
      const documents = simulatedAll(statuspage.endpoints({ url: source.baseUrl }), statuspageRenderer, source, now)
      const snapshot = yield* statuspage.parse(documents, { url: source.baseUrl }, now)

      assert.strictEqual(snapshot.components.length, source.components.length)
      for (const model of source.components) {
        const c = byId(snapshot.components, model.id)
        assert.deepStrictEqual([c.name, c.parent_id, c.is_group, c.position], [model.name, model.parent_id, model.is_group, model.position])
        if (!model.is_group) assert.strictEqual(c.status, model.status, model.name)
      }
      const group = byId(source.components, source.components.find((c) => c.id === leaf)!.parent_id!)
      assert.strictEqual(byId(snapshot.components, group.id).status, "critical")

      assert.strictEqual(snapshot.incidents.length, 1)
      const incident = snapshot.incidents[0]!
      assert.deepStrictEqual(
        [incident.id, incident.title, incident.status, incident.impact, incident.resolved_at, incident.update_count, incident.components],
        ["inc-now", "API errors", "identified", "major", null, 2, [leaf]]
      )
      assert.strictEqual(incident.created_at, new Date(now.getTime() - 30 * 60_000).toISOString())
      assert.match(incident.url ?? "", /^https:\/\/stspg\.io\/[a-z0-9]{12}$/)
      assert.deepStrictEqual(snapshot.maintenances.map((m) => [m.id, m.status, m.components]), [["mnt-1", "in_progress", [other]]])
      assert.strictEqual(snapshot.reported_status, "degraded")
      assert.strictEqual(snapshot.status, "degraded")
      assert.strictEqual(snapshot.description, "Partial System Outage")
      assert.deepStrictEqual(snapshot.warnings, [])
    }))

  it.effect("all leaves critical is down; only a maintenance running is maintenance", () =>
    Effect.gen(function*() {
      const source = generateSource({ key: "beta", name: "Beta", provider: "statuspage_io", baseUrl: "http://127.0.0.1:4100/s/beta", now })
      const read = () => statuspage.parse(simulatedAll(statuspage.endpoints({ url: source.baseUrl }), statuspageRenderer, source, now), { url: source.baseUrl }, now)
      const calm = yield* read()
      assert.deepStrictEqual([calm.status, calm.reported_status, calm.incidents, calm.maintenances], ["operational", "operational", [], []])

      source.maintenances.push({
        id: "mnt-2", title: "Network work", status: "in_progress", scheduled_for: now, scheduled_until: null,
        components: [], created_at: now, updated_at: now
      })
      const maintenance = yield* read()
      assert.deepStrictEqual([maintenance.status, maintenance.reported_status], ["maintenance", "maintenance"])

      for (const c of source.components) c.status = "critical"
      const down = yield* read()
      assert.deepStrictEqual([down.status, down.reported_status], ["down", "down"])
    }))

  it("renders deterministically, groups in their worst child's status, and detection picks statuspage_io", () => {
    const { source, leaf } = troubled("statuspage_io", "acme")
    const render = () => statuspageRenderer.routes["/api/v2/summary.json"]!(source, now).body
    assert.strictEqual(render(), render())
    const body = JSON.parse(render() as string) as { components: Array<{ id: string; status: string; components?: Array<string> }> }
    const group = body.components.find((c) => c.components?.includes(leaf))
    assert.strictEqual(group?.status, "major_outage")
    assert.strictEqual(detected(body), "statuspage_io")
    assert.isFalse(github.detect.probe.accepts(body))
    assert.isFalse(incidentIo.detect.probe.accepts(body))
  })

  it.effect("github: the rendered page reads back and is detected as github", () =>
    Effect.gen(function*() {
      const { source, leaf } = troubled("github", "github")
      const documents = simulatedAll(github.endpoints({ url: source.baseUrl }), githubRenderer, source, now)
      const snapshot = yield* github.parse(documents, { url: source.baseUrl }, now)
      assert.strictEqual(snapshot.provider, "github")
      assert.strictEqual(byId(snapshot.components, leaf).status, "critical")
      assert.strictEqual(snapshot.incidents[0]!.id, "inc-now")
      assert.strictEqual(snapshot.status, "degraded")

      const body = JSON.parse(new TextDecoder().decode(documents[0]!.body)) as { page: { id: string; url: string } }
      assert.deepStrictEqual([body.page.id, body.page.url], ["kctbh9vrtdwd", "https://www.githubstatus.com"])
      assert.strictEqual(detected(body), "github")
      assert.isTrue(statuspage.detect.html(githubRenderer.page(source, now)))
    }))
})
