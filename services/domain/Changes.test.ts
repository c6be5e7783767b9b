import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import type { Snapshot } from "./Snapshot.ts"
import { Compared, eventsBetween, fingerprint, keep, Observation, observe, observedOf } from "./Changes.ts"

const at = new Date("2026-11-22T01:00:00.000Z")
const source = { key: "github", name: "GitHub" }

const base: Snapshot = {
  provider: "github",
  status: "operational",
  reported_status: "operational",
  description: "All Systems Operational",
  components: [
    { id: "g", name: "Git", description: "", status: "operational", parent_id: null, is_group: true, position: 0, region: null },
    { id: "api", name: "API", description: "", status: "operational", parent_id: "g", is_group: false, position: 1, region: null }
  ],
  incidents: [],
  maintenances: [],
  regions: [],
  warnings: []
}

const incident = {
  id: "inc1",
  title: "API errors",
  status: "investigating" as const,
  impact: "major" as const,
  created_at: "2026-11-22T00:59:00.000Z",
  updated_at: "2026-11-22T00:59:00.000Z",
  resolved_at: null,
  update_count: 1,
  components: ["api"],
  url: null,
  region: null
}

const firstSeen = new Date("2026-11-22T00:00:00.000Z")
/** A snapshot as first observed (all its statuses since `firstSeen`). */
const seen = (snapshot: Snapshot): Observation => observe(source, undefined, snapshot, firstSeen).observation

describe("eventsBetween", () => {
  it("the first snapshot of a source is no change", () => {
    const first = observe(source, undefined, base, at)
    assert.deepStrictEqual(first.events, [])
    assert.deepStrictEqual(first.observation.since, { source: at.toISOString(), components: { g: at.toISOString(), api: at.toISOString() } })
  })

  it("a component going critical with an incident yields source, component and incident events", () => {
    const next: Snapshot = {
      ...base,
      status: "degraded",
      components: base.components.map((c) => ({ ...c, status: "critical" as const })),
      incidents: [incident]
    }
    const events = eventsBetween(source, seen(base), next, at)
    assert.deepStrictEqual(events.map((e) => e.type), [
      "source.status_changed",
      "component.status_changed",
      "component.status_changed",
      "incident.created"
    ])
    const api = events.find((e) => e.component?.id === "api")!
    assert.deepStrictEqual(api.component, { id: "api", name: "API", previous_status: "operational", current_status: "critical" })
    assert.strictEqual(api.incident?.id, "inc1")
    // The incident names what it affects: the notifier sends it to the stacks showing those components.
    assert.deepStrictEqual(events.find((e) => e.type === "incident.created")!.incident?.components, ["api"])
    assert.strictEqual(api.timestamp, at.toISOString())
    // The same change observed again (another runner, a retry) has the same ids.
    assert.deepStrictEqual(eventsBetween(source, seen(base), next, new Date()).map((e) => e.id), events.map((e) => e.id))
    assert.strictEqual(new Set(events.map((e) => e.id)).size, events.length)
  })

  it("ids depend on what changed and when the previous status began, not on when the change was seen", () => {
    const critical = (update_count: number): Snapshot => ({
      ...base,
      status: "degraded",
      components: base.components.map((c) => ({ ...c, status: "critical" as const })),
      incidents: [{ ...incident, update_count }]
    })
    const idsOf = (observed: Observation, next: Snapshot, when: Date) =>
      eventsBetween(source, observed, next, when).filter((e) => e.type !== "incident.created").map((e) => e.id)
    // Seen before a restart, and again after it with the incident updated meanwhile: the same status changes.
    const before = idsOf(seen(base), critical(1), at)
    assert.deepStrictEqual(idsOf(seen(base), critical(2), new Date("2026-11-22T01:05:00.000Z")), before)
    // The same flip again later (operational again since 02:00): new changes.
    const again = observe(source, seen(critical(1)), base, new Date("2026-11-22T02:00:00.000Z")).observation
    assert.deepStrictEqual(again.since.components["api"], "2026-11-22T02:00:00.000Z")
    const later = idsOf(again, critical(1), new Date("2026-11-22T03:00:00.000Z"))
    assert.strictEqual(later.length, before.length)
    for (const id of later) assert.notInclude(before, id)
  })

  it("an observation read back from PostgreSQL (JSON) gives the events and ids it gave in memory", () => {
    const saved = Schema.decodeUnknownSync(Observation)(JSON.parse(JSON.stringify(seen(base))))
    const next: Snapshot = { ...base, status: "degraded", components: [base.components[0]!, { ...base.components[1]!, status: "critical" }], incidents: [incident] }
    const events = eventsBetween(source, saved, next, at)
    assert.deepStrictEqual(events.map((e) => e.type), ["source.status_changed", "component.status_changed", "incident.created"])
    assert.deepStrictEqual(events, eventsBetween(source, seen(base), next, at))
    assert.strictEqual(fingerprint(saved.snapshot), fingerprint(base))
  })

  it("a status that holds keeps its since; a changed one starts at the change", () => {
    const next: Snapshot = { ...base, components: [base.components[0]!, { ...base.components[1]!, status: "degraded" }] }
    const { observation } = observe(source, seen(base), next, at)
    assert.deepStrictEqual(observation.since, {
      source: firstSeen.toISOString(),
      components: { g: firstSeen.toISOString(), api: at.toISOString() }
    })
  })

  it("incident updates and resolution, including an incident that vanished from the feed", () => {
    const open: Snapshot = { ...base, incidents: [incident] }
    const updated: Snapshot = { ...base, incidents: [{ ...incident, status: "identified", update_count: 2 }] }
    assert.deepStrictEqual(eventsBetween(source, seen(open), updated, at).map((e) => e.type), ["incident.updated"])
    const resolved: Snapshot = { ...base, incidents: [{ ...incident, status: "resolved", resolved_at: at.toISOString() }] }
    assert.deepStrictEqual(eventsBetween(source, seen(updated), resolved, at).map((e) => e.type), ["incident.resolved"])
    const gone = eventsBetween(source, seen(open), base, at)
    assert.deepStrictEqual(gone.map((e) => [e.type, e.incident?.status]), [["incident.resolved", "resolved"]])
  })

  it("maintenance scheduled, started and completed", () => {
    const m = { id: "m1", title: "DB", status: "scheduled" as const, scheduled_for: "2026-11-23T00:00:00.000Z", scheduled_until: null, components: [], url: null }
    const scheduled: Snapshot = { ...base, maintenances: [m] }
    const started: Snapshot = { ...base, status: "maintenance", maintenances: [{ ...m, status: "in_progress" }] }
    assert.deepStrictEqual(eventsBetween(source, seen(base), scheduled, at).map((e) => e.type), ["maintenance.scheduled"])
    assert.deepStrictEqual(eventsBetween(source, seen(scheduled), started, at).map((e) => e.type), ["source.status_changed", "maintenance.started"])
    assert.deepStrictEqual(eventsBetween(source, seen(started), base, at).map((e) => e.type), ["source.status_changed", "maintenance.completed"])
  })

  it("the fingerprint ignores nothing that matters and nothing that does not change", () => {
    assert.strictEqual(fingerprint(base), fingerprint({ ...base, warnings: ["x"], description: "Other words" }))
    assert.notStrictEqual(fingerprint(base), fingerprint({ ...base, incidents: [incident] }))
  })

  it("what a shard keeps of an observation gives the events, ids and since the observation gives, without its wording", () => {
    const m = { id: "m1", title: "DB", status: "in_progress" as const, scheduled_for: "2026-11-23T00:00:00.000Z", scheduled_until: null, components: ["api"], url: "https://x/m1" }
    const worded: Snapshot = {
      ...base,
      status: "degraded",
      components: [base.components[0]!, { ...base.components[1]!, description: "The REST API", status: "degraded", region: "eu" }],
      incidents: [{ ...incident, url: "https://x/inc1", updates: [{ id: "u1", status: "investigating", body: "We are looking into it.", created_at: incident.created_at }] }],
      maintenances: [m]
    }
    // Its API component degraded an hour after the rest was first seen, so the two components' since differ.
    const observed = observe(source, seen({ ...worded, components: base.components }), worded, at).observation
    const kept = keep(observed)
    assert.strictEqual(JSON.stringify(kept).includes("REST API"), false)
    assert.strictEqual(JSON.stringify(kept).includes("looking into"), false)
    assert.deepStrictEqual(kept.components, [
      { id: "g", status: "operational", is_group: true, region: null, since: firstSeen.toISOString() },
      { id: "api", status: "degraded", is_group: false, region: "eu", since: at.toISOString() }
    ])
    assert.deepStrictEqual(observedOf(kept).since, observed.since)
    const later = new Date("2026-11-22T02:00:00.000Z")
    const nexts: ReadonlyArray<Snapshot> = [
      base,
      { ...worded, incidents: [{ ...incident, status: "resolved", resolved_at: later.toISOString() }] },
      { ...worded, incidents: [{ ...incident, status: "identified", update_count: 2 }], maintenances: [{ ...m, status: "completed" }] },
      { ...worded, components: [{ ...base.components[0]!, status: "critical" }, worded.components[1]!] }
    ]
    // The publisher's backlog spilled to disk and read back holds the same Compared.
    const readBack = Schema.decodeUnknownSync(Compared)(JSON.parse(JSON.stringify(kept)))
    for (const next of nexts) {
      const full = observe(source, observed, next, later)
      assert.isAbove(full.events.length, 0)
      const fromKept = observe(source, observedOf(kept), next, later)
      assert.deepStrictEqual(fromKept.events, full.events)
      assert.deepStrictEqual(fromKept.observation.since, full.observation.since)
      assert.deepStrictEqual(eventsBetween(source, { snapshot: readBack, since: observed.since }, next, later), full.events)
    }
  })
})
