import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { fetched, fixture, simulatedAll } from "../../../test/support/fetched.ts"
import { decodeText } from "../text.ts"
import { gcpRegions } from "../../catalog/Synthetic.ts"
import { generateSource } from "../../simulator/generate.ts"
import { gcpRenderer } from "../../simulator/renderers/gcp.ts"
import { gcp } from "./gcp.ts"

const url = "https://status.cloud.google.com/incidents.json"
const sampleNow = new Date("2026-09-01T17:00:00Z")

/** A GCP incident with the fields the adapter reads; `over` replaces any of them. */
const incident = (over: Record<string, unknown>) => ({
  id: "inc-1",
  begin: "2026-09-01T10:00:00+00:00",
  end: null,
  modified: "2026-09-01T11:00:00+00:00",
  external_desc: "Elevated error rates",
  updates: [{ when: "2026-09-01T11:00:00+00:00", status: "SERVICE_DISRUPTION" }],
  most_recent_update: { when: "2026-09-01T11:00:00+00:00", status: "SERVICE_DISRUPTION" },
  status_impact: "SERVICE_DISRUPTION",
  severity: "medium",
  service_name: "Cloud Run",
  affected_products: [{ title: "Cloud Run", id: "run" }],
  uri: "incidents/inc-1",
  currently_affected_locations: [{ title: "Belgium (europe-west1)", id: "europe-west1" }],
  previously_affected_locations: [],
  ...over
})

const parseJson = (body: unknown, now = sampleNow, regions?: Array<string>) =>
  gcp.parse([fetched(url, JSON.stringify(body))], regions ? { url, regions } : { url }, now)

describe("gcp adapter", () => {
  it.effect("reads the shared sample: one open regional disruption", () =>
    Effect.gen(function*() {
      const snapshot = yield* gcp.parse([fixture("gcp", "gcp-incidents.json", url)], { url }, sampleNow)
      assert.strictEqual(snapshot.provider, "gcp")
      assert.strictEqual(snapshot.incidents.length, 1)
      const [open] = snapshot.incidents
      assert.deepStrictEqual(open, {
        id: "fPovtKbaWN9UTepMm3kJxxxx",
        title: "Multiple products experiencing elevated error rates in us-central1",
        status: "investigating",
        impact: "minor",
        created_at: "2026-09-01T14:44:00.000Z",
        updated_at: "2026-09-01T16:30:00.000Z",
        resolved_at: null,
        update_count: 1,
        components: ["fPovtKbaWN9UTepMm3kJ"],
        url: "https://status.cloud.google.com/incidents/xxxxxxxxxxxxxxxxxxxx",
        region: "us-central1",
        updates: [{
          id: "2026-09-01T16:30:00.000Z",
          status: "investigating",
          body: "**Summary:** ...",
          created_at: "2026-09-01T16:30:00.000Z"
        }]
      })
      assert.deepStrictEqual(snapshot.components.map((c) => [c.id, c.name, c.status, c.parent_id]), [
        ["fPovtKbaWN9UTepMm3kJ", "AlloyDB for PostgreSQL", "degraded", null]
      ])
      assert.deepStrictEqual(snapshot.regions, [{ region: "us-central1", status: "degraded" }])
      assert.strictEqual(snapshot.status, "degraded")
      assert.strictEqual(snapshot.reported_status, null)
      assert.strictEqual(snapshot.description, "Partial outage")
      assert.deepStrictEqual(snapshot.warnings, [])
    }))

  it.effect("a regional incident open for more than 72 hours stays in regions but no longer turns the source red", () =>
    Effect.gen(function*() {
      const later = new Date("2026-09-11T00:00:00Z")
      const snapshot = yield* gcp.parse([fixture("gcp", "gcp-incidents.json", url)], { url }, later)
      assert.strictEqual(snapshot.status, "operational")
      assert.strictEqual(snapshot.components[0]!.status, "operational")
      assert.deepStrictEqual(snapshot.regions, [{ region: "us-central1", status: "degraded" }])
    }))

  it.effect("a region filter decides which incidents count", () =>
    Effect.gen(function*() {
      const elsewhere = yield* gcp.parse([fixture("gcp", "gcp-incidents.json", url)], { url, regions: ["europe-west1"] }, sampleNow)
      assert.strictEqual(elsewhere.status, "operational")
      assert.deepStrictEqual(elsewhere.regions, [
        { region: "europe-west1", status: "operational" },
        { region: "us-central1", status: "degraded" }
      ])
      const here = yield* gcp.parse([fixture("gcp", "gcp-incidents.json", url)], { url, regions: ["us-central1"] }, sampleNow)
      assert.strictEqual(here.status, "degraded")
    }))

  it.effect("a global outage is down; AVAILABLE reads as recovered; information changes nothing", () =>
    Effect.gen(function*() {
      const snapshot = yield* parseJson([
        incident({
          id: "outage",
          begin: "2026-09-01T12:00:00+00:00",
          status_impact: "SERVICE_OUTAGE",
          affected_products: [{ title: "BigQuery", id: "bq" }],
          currently_affected_locations: [{ title: "Global", id: "global" }]
        }),
        incident({
          id: "recovered",
          most_recent_update: { when: "2026-09-01T11:00:00+00:00", status: "AVAILABLE" },
          affected_products: [{ title: "Cloud SQL", id: "sql" }]
        }),
        incident({
          id: "notice",
          begin: "2026-09-01T09:00:00+00:00",
          status_impact: "SERVICE_INFORMATION",
          affected_products: [{ title: "Cloud Build", id: "build" }]
        })
      ])
      assert.deepStrictEqual(snapshot.incidents.map((i) => [i.id, i.status, i.impact, i.region]), [
        ["outage", "investigating", "critical", null],
        ["recovered", "monitoring", "none", "europe-west1"],
        ["notice", "investigating", "none", "europe-west1"]
      ])
      const status = Object.fromEntries(snapshot.components.map((c) => [c.name, c.status]))
      assert.deepStrictEqual(status, { BigQuery: "critical", "Cloud Build": "operational", "Cloud SQL": "operational" })
      assert.strictEqual(snapshot.status, "down")
      assert.strictEqual(snapshot.description, "Major outage")
    }))

  it.effect("keeps 30 days of resolved history, newest first, and the products they name", () =>
    Effect.gen(function*() {
      const snapshot = yield* parseJson([
        incident({ id: "old", begin: "2026-07-01T10:00:00+00:00", end: "2026-07-01T12:00:00+00:00", affected_products: [{ title: "Old", id: "old" }] }),
        incident({ id: "recent", begin: "2026-08-20T10:00:00+00:00", end: "2026-08-20T12:00:00+00:00", updates: [{}, {}, {}] }),
        incident({ id: "open", begin: "2026-09-01T10:00:00+00:00" })
      ])
      assert.deepStrictEqual(snapshot.incidents.map((i) => [i.id, i.resolved_at, i.update_count]), [
        ["open", null, 1],
        ["recent", "2026-08-20T12:00:00.000Z", 3]
      ])
      assert.deepStrictEqual(snapshot.components.map((c) => c.id), ["run"])
    }))

  it.effect("a multi-location incident has no region of its own but marks each location", () =>
    Effect.gen(function*() {
      const twoPlaces = incident({
        currently_affected_locations: [{ id: "europe-west1" }, { id: "asia-east1" }]
      })
      const snapshot = yield* parseJson([twoPlaces])
      assert.isNull(snapshot.incidents[0]!.region)
      assert.deepStrictEqual(snapshot.regions, [
        { region: "asia-east1", status: "degraded" },
        { region: "europe-west1", status: "degraded" }
      ])
      // With a filter, the incident is placed in a listed location, or outside the filter when none is.
      const filtered = yield* parseJson([twoPlaces], sampleNow, ["asia-east1"])
      assert.strictEqual(filtered.incidents[0]!.region, "asia-east1")
      const outside = yield* parseJson([twoPlaces], sampleNow, ["us-east1"])
      assert.strictEqual(outside.status, "operational")
    }))

  it.effect("an unknown status_impact reads as degraded with a warning", () =>
    Effect.gen(function*() {
      const snapshot = yield* parseJson([incident({ status_impact: "SERVICE_MELTDOWN" })])
      assert.strictEqual(snapshot.incidents[0]!.impact, "minor")
      assert.strictEqual(snapshot.status, "degraded")
      assert.deepStrictEqual(snapshot.warnings, ['unknown GCP status_impact "SERVICE_MELTDOWN", read as minor'])
    }))

  it.effect("fails clearly on HTML, truncated JSON, HTTP errors and foreign shapes", () =>
    Effect.gen(function*() {
      const html = yield* Effect.flip(gcp.parse([fetched(url, "<!DOCTYPE html><html><body>app</body></html>")], { url }, sampleNow))
      assert.strictEqual(html.reason, "html_catch_all")
      const truncated = yield* Effect.flip(gcp.parse([fetched(url, '[{"id":"x","begin":"2026')], { url }, sampleNow))
      assert.strictEqual(truncated.reason, "not_json")
      const status = yield* Effect.flip(gcp.parse([fetched(url, "oops", { status: 503 })], { url }, sampleNow))
      assert.strictEqual(status.reason, "http_status")
      assert.include(status.message, "503")
      const shape = yield* Effect.flip(parseJson([{ id: "x", external_desc: "no begin", status_impact: "SERVICE_OUTAGE" }]))
      assert.strictEqual(shape.reason, "invalid_shape")
      assert.include(shape.message, "begin")
      const object = yield* Effect.flip(parseJson({ incidents: [] }))
      assert.strictEqual(object.reason, "invalid_shape")
    }))

  it("detects Google Cloud and Workspace hosts by parsed hostname only", () => {
    const host = gcp.detect.host
    assert.isTrue(host(new URL("https://status.cloud.google.com/")))
    assert.isTrue(host(new URL("https://www.google.com/appsstatus/dashboard/")))
    assert.isFalse(host(new URL("https://www.google.com/search?q=status")))
    assert.isFalse(host(new URL("https://status.cloud.google.com.example.com/")))
    assert.isFalse(host(new URL("https://example.com/status.cloud.google.com")))
  })

  it("the probe accepts incidents.json and rejects other providers' documents", () => {
    const accepts = gcp.detect.probe.accepts
    assert.isTrue(accepts(JSON.parse(decodeText(fixture("gcp", "gcp-incidents.json", url).body))))
    assert.isFalse(accepts([]))
    // Statuspage's incidents.json is an object; a bare array of Statuspage incidents lacks begin.
    assert.isFalse(accepts({ page: { id: "x" }, incidents: [] }))
    assert.isFalse(accepts([{ id: "x", name: "Outage", status: "resolved", created_at: "2026-09-01T00:00:00Z" }]))
  })
})

describe("gcp renderer round trip", () => {
  const now = new Date("2026-09-23T12:00:00Z")
  const model = () => {
    const source = generateSource({
      key: "gcp-sim",
      name: "Google Cloud",
      provider: "gcp",
      baseUrl: "http://127.0.0.1:4100/s/gcp",
      regions: gcpRegions,
      now
    })
    const leaves = source.components.filter((c) => !c.is_group)
    const broken = leaves[0]!
    broken.status = "critical"
    source.incidents.push(
      {
        id: "sim-resolved",
        title: "Slow dashboard",
        status: "resolved",
        impact: "minor",
        created_at: new Date("2026-09-18T08:00:00Z"),
        updated_at: new Date("2026-09-18T09:00:00Z"),
        resolved_at: new Date("2026-09-18T09:00:00Z"),
        updates: [
          { id: "u1", status: "investigating", body: "Looking into it", created_at: new Date("2026-09-18T08:00:00Z") },
          { id: "u2", status: "resolved", body: "Fixed", created_at: new Date("2026-09-18T09:00:00Z") }
        ],
        components: [leaves[1]!.id],
        region: leaves[1]!.region
      },
      {
        id: "sim-open",
        title: "Instances unreachable",
        status: "investigating",
        impact: "critical",
        created_at: new Date("2026-09-23T10:00:00Z"),
        updated_at: new Date("2026-09-23T11:00:00Z"),
        resolved_at: null,
        updates: [
          { id: "u3", status: "investigating", body: "Investigating", created_at: new Date("2026-09-23T10:00:00Z") },
          { id: "u4", status: "identified", body: "Cause found", created_at: new Date("2026-09-23T11:00:00Z") }
        ],
        components: [broken.id],
        region: broken.region
      }
    )
    source.maintenances.push({
      id: "sim-maint",
      title: "Network upgrade",
      status: "scheduled",
      scheduled_for: new Date("2026-09-30T00:00:00Z"),
      scheduled_until: null,
      components: [broken.id],
      created_at: now,
      updated_at: now
    })
    return { source, broken, other: leaves[1]! }
  }

  it.effect("the snapshot reflects the model, beside a realistic volume of history", () =>
    Effect.gen(function*() {
      const { broken, other, source } = model()
      const documents = simulatedAll(gcp.endpoints({ url: source.baseUrl }), gcpRenderer, source, now)
      assert.isAbove(documents[0]!.body.length, 300_000)
      const snapshot = yield* gcp.parse(documents, { url: source.baseUrl }, now)

      const open = snapshot.incidents.filter((i) => i.resolved_at === null)
      assert.deepStrictEqual(open.map((i) => [i.id, i.status, i.impact, i.region, i.update_count, i.components]), [
        ["sim-open", "investigating", "critical", broken.region, 2, [broken.id]]
      ])
      const resolved = snapshot.incidents.find((i) => i.id === "sim-resolved")!
      assert.deepStrictEqual([resolved.status, resolved.resolved_at], ["resolved", "2026-09-18T09:00:00.000Z"])
      // History older than 30 days is rendered but not kept.
      assert.isAbove(snapshot.incidents.length, 5)
      assert.isBelow(snapshot.incidents.length, 30)
      for (const i of snapshot.incidents) assert.isAtLeast(Date.parse(i.resolved_at ?? i.created_at), now.getTime() - 30 * 86_400_000)
      const created = snapshot.incidents.map((i) => Date.parse(i.created_at))
      assert.deepStrictEqual(created, created.toSorted((a, b) => b - a))

      const component = snapshot.components.find((c) => c.id === broken.id)!
      assert.deepStrictEqual([component.name, component.status, component.parent_id], [broken.name, "critical", null])
      assert.strictEqual(snapshot.components.find((c) => c.id === other.id)?.status, "operational")
      assert.strictEqual(snapshot.status, "down")
      assert.deepStrictEqual(snapshot.regions.find((r) => r.region === broken.region), { region: broken.region!, status: "down" })
      // GCP's feed has no maintenances.
      assert.deepStrictEqual(snapshot.maintenances, [])
    }))

  it("renders deterministically and the rendered document passes the probe", () => {
    const { source } = model()
    const render = () => gcpRenderer.routes["/incidents.json"]!(source, now).body
    assert.strictEqual(render(), render())
    assert.isTrue(gcp.detect.probe.accepts(JSON.parse(render() as string)))
  })
})
