import { assert, describe, it } from "vitest"
import { boardHealth, boardItems } from "../../services/domain/BoardItem.ts"
import { applyDelta, type LiveBoard, type LiveSource, type LiveStack, parseDelta } from "../../portal/app/live/board.ts"

/** The pure part of the portal's live module: deltas applied to a page's board, banners by the domain rule. */
const acme: LiveSource = {
  key: "acme",
  name: "Acme",
  status: "operational",
  status_page_url: null,
  last_checked_at: null,
  last_changed_at: null,
  whole: false,
  crowd: null,
  components: [
    { external_id: "api", name: "API", status: "operational", last_changed_at: null },
    { external_id: "web", name: "Web", status: "operational", last_changed_at: null }
  ]
}

const stack = (slug: string, sources: ReadonlyArray<LiveSource>, monitors: LiveStack["monitors"]): LiveStack => ({
  id: slug,
  slug,
  name: slug,
  description: "",
  health: boardHealth(boardItems({ sources, monitors })),
  sources,
  monitors
})

const site = { id: "m1", name: "Site", url: "https://example.com", state: "up", last_checked_at: null, last_changed_at: null } as const

const board: LiveBoard = {
  stacks: [
    stack("shop", [acme], [site]),
    stack("other", [{ ...acme, key: "elsewhere", whole: true, components: [] }], [])
  ],
  incidents: [],
  maintenances: []
}

describe("live board", () => {
  it("applies a source delta to the components it names and recomputes the banner by the domain rule", () => {
    const delta = parseDelta(JSON.stringify({ kind: "source", key: "acme", status: "degraded", previous_status: "operational", components: [{ id: "api", status: "critical" }], at: "2026-11-23T10:00:00.000Z" }))!
    const next = applyDelta(board, delta)
    const shop = next.stacks[0]!
    assert.deepStrictEqual(boardItems(shop).map((i) => i.status), ["critical", "operational", "up"])
    assert.strictEqual(shop.health.status, "partial_outage")
    assert.deepStrictEqual(shop.health.counts, { operational: 2, degraded: 0, outage: 1, maintenance: 0, unknown: 0 })
    assert.strictEqual(shop.sources[0]!.status, "degraded")
    assert.strictEqual(shop.sources[0]!.components[0]!.status, "critical")
    assert.strictEqual(shop.sources[0]!.components[0]!.last_changed_at, "2026-11-23T10:00:00.000Z")
    // A stack that does not show the source is the same object (no re-render).
    assert.strictEqual(next.stacks[1], board.stacks[1])
  })

  it("applies a monitor delta; a delta naming nothing on the page, or an unknown status, leaves the board as it was", () => {
    const down = applyDelta(board, parseDelta(JSON.stringify({ kind: "monitor", id: "m1", status: "down", previous_status: "up", at: "2026-11-23T10:00:00.000Z" }))!)
    assert.strictEqual(down.stacks[0]!.monitors[0]!.state, "down")
    assert.strictEqual(down.stacks[0]!.health.status, "partial_outage")
    assert.strictEqual(applyDelta(board, parseDelta(JSON.stringify({ kind: "monitor", id: "m9", status: "down", at: "x" }))!), board)
    assert.strictEqual(applyDelta(board, parseDelta(JSON.stringify({ kind: "source", key: "acme", status: "weird", components: [{ id: "api", status: "exploded" }], at: "x" }))!), board)
    assert.isUndefined(parseDelta("not json"))
    assert.isUndefined(parseDelta(JSON.stringify({ kind: "source" })))
  })

  it("a source added whole is one item, and a component also picked from it one more: a delta moves both", () => {
    const both = stack("both", [{ ...acme, whole: true, components: acme.components.map((c) => (c.external_id === "web" ? { ...c, picked: true as const } : c)) }], [])
    const page: LiveBoard = { stacks: [both], incidents: [], maintenances: [] }
    assert.deepStrictEqual(boardItems(both).map((i) => i.kind), ["source", "component"])
    const next = applyDelta(page, parseDelta(JSON.stringify({ kind: "source", key: "acme", status: "degraded", components: [{ id: "web", status: "critical" }, { id: "api", status: "critical" }], at: "2026-11-23T10:00:00.000Z" }))!)
    // The whole source degraded, the picked component critical; the unpicked one changes on the page but is no item.
    assert.deepStrictEqual(next.stacks[0]!.health.counts, { operational: 0, degraded: 1, outage: 1, maintenance: 0, unknown: 0 })
    assert.strictEqual(next.stacks[0]!.health.status, "major_outage")
    assert.deepStrictEqual(next.stacks[0]!.sources[0]!.components.map((c) => c.status), ["critical", "critical"])
  })

  it("a crowd delta sets or drops the marker on every stack showing the source, and leaves statuses and banners alone", () => {
    const signal = { started_at: "2026-11-23T10:00:00.000Z", peak_confidence: 83 }
    const on = applyDelta(board, parseDelta(JSON.stringify({ kind: "crowd", key: "acme", signal, at: signal.started_at }))!)
    assert.deepStrictEqual(on.stacks[0]!.sources[0]!.crowd, signal)
    assert.strictEqual(on.stacks[0]!.health, board.stacks[0]!.health)
    assert.strictEqual(on.stacks[0]!.sources[0]!.status, "operational")
    // The stack that does not show acme is the same object.
    assert.strictEqual(on.stacks[1], board.stacks[1])
    // The same marker again changes nothing; the end drops it.
    assert.strictEqual(applyDelta(on, parseDelta(JSON.stringify({ kind: "crowd", key: "acme", signal, at: "x" }))!), on)
    const off = applyDelta(on, parseDelta(JSON.stringify({ kind: "crowd", key: "acme", signal: null, at: "2026-11-23T10:30:00.000Z" }))!)
    assert.isNull(off.stacks[0]!.sources[0]!.crowd)
  })
})
