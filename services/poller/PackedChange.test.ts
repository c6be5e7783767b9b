import { assert, describe, it } from "@effect/vitest"
import type { Snapshot } from "../domain/Snapshot.ts"
import { packChange, unpackChange } from "./PackedChange.ts"
import type { SnapshotChange } from "./SourceStore.ts"

const at = new Date("2026-11-22T01:00:00.000Z")

/** A page of 40 components in 4 groups, with an open incident and its updates, a maintenance and regions. */
const snapshot: Snapshot = {
  provider: "statuspage",
  status: "degraded",
  reported_status: "degraded",
  description: "Partial outage: API — λ \\ \"quoted\" & <tags>",
  components: Array.from({ length: 40 }, (_, i) => ({
    id: `c${i}`,
    name: i % 10 === 0 ? `Group ${i / 10}` : `Component ${i} (eu-west-${i % 3})`,
    description: i % 2 === 0 ? "" : `Serves requests for component ${i}; see https://example.com/docs/${i}\nSecond line`,
    status: i === 7 ? "critical" as const : "operational" as const,
    parent_id: i % 10 === 0 ? null : `c${i - (i % 10)}`,
    is_group: i % 10 === 0,
    position: i,
    region: i % 3 === 0 ? null : `region-${i % 3}`
  })),
  incidents: [{
    id: "inc1",
    title: "Elevated API errors",
    status: "identified",
    impact: "major",
    created_at: "2026-11-22T00:40:00.000Z",
    updated_at: "2026-11-22T00:55:00.000Z",
    resolved_at: null,
    update_count: 2,
    components: ["c7"],
    url: "https://status.example.com/incidents/inc1",
    region: null,
    updates: [
      { id: "u1", status: "investigating", body: "We are looking into it.", created_at: "2026-11-22T00:40:00.000Z" },
      { id: "u2", status: "identified", body: "A bad deploy.\u0000 Rolling back.", created_at: "2026-11-22T00:55:00.000Z" }
    ]
  }],
  maintenances: [{
    id: "m1",
    title: "Database upgrade",
    status: "scheduled",
    scheduled_for: "2026-11-23T02:00:00.000Z",
    scheduled_until: null,
    components: ["c11", "c12"],
    url: null
  }],
  regions: [{ region: "region-1", status: "degraded" }, { region: "region-2", status: "operational" }],
  warnings: ["unknown status 'partial' read as degraded"]
}

const change: SnapshotChange = {
  source: {
    id: "00000000-0000-0000-0000-000000000001",
    key: "acme",
    name: "Acme",
    provider_type: "statuspage",
    url: "https://status.example.com",
    poll_interval_s: 30,
    regions: [],
    trusted: true,
    last_checked_at: null
  },
  snapshot,
  since: {
    source: "2026-11-22T00:40:00.000Z",
    components: Object.fromEntries(snapshot.components.map((c) => [c.id, c.id === "c7" ? "2026-11-22T00:40:00.000Z" : "2026-11-01T00:00:00.000Z"]))
  },
  at
}

describe("PackedChange", () => {
  it("gives back the change it packed, every field and character", () => {
    const unpacked = unpackChange(packChange(change))
    assert.deepStrictEqual(unpacked, change)
    assert.strictEqual(unpacked.source, change.source)
    assert.strictEqual(unpacked.at, change.at)
  })

  it("holds a fraction of the snapshot's text, in bytes of its own", () => {
    const { packed } = packChange(change)
    const text = JSON.stringify([change.snapshot, change.since]).length
    assert.isBelow(packed.byteLength, text / 4)
    // Not a view of zlib's output chunk, which would stay alive with it.
    assert.strictEqual(packed.buffer.byteLength, packed.byteLength)
  })
})
