import { describe, expect, it } from "vitest"
import { type ItemStatus, stackHealth } from "./StackHealth.ts"

const c = (status: ItemStatus["status"]) => ({ kind: "component", status }) as ItemStatus
const s = (status: ItemStatus["status"]) => ({ kind: "source", status }) as ItemStatus
const m = (status: ItemStatus["status"]) => ({ kind: "monitor", status }) as ItemStatus

describe("stack health", () => {
  it("all operational (components, sources, monitors up) is All Systems Operational", () => {
    const h = stackHealth([c("operational"), s("operational"), m("up")])
    expect(h.status).toBe("operational")
    expect(h.label).toBe("All Systems Operational")
    expect(h.counts).toEqual({ operational: 3, degraded: 0, outage: 0, maintenance: 0, unknown: 0 })
  })

  it("an empty stack is operational with nothing counted", () => {
    expect(stackHealth([]).status).toBe("operational")
    expect(stackHealth([]).counts.unknown).toBe(0)
  })

  it("degraded anywhere is Degraded Performance", () => {
    expect(stackHealth([c("operational"), m("degraded")]).status).toBe("degraded")
    expect(stackHealth([s("degraded"), c("operational")]).label).toBe("Degraded Performance")
  })

  it("one outage among many is a partial outage; half or more out is a major outage", () => {
    expect(stackHealth([c("critical"), c("operational"), c("operational")]).status).toBe("partial_outage")
    expect(stackHealth([c("critical"), c("operational")]).status).toBe("major_outage")
    expect(stackHealth([s("down")]).status).toBe("major_outage")
    expect(stackHealth([m("down"), m("up"), m("up"), c("degraded")]).status).toBe("partial_outage")
    expect(stackHealth([m("down"), s("down"), c("maintenance")]).label).toBe("Major Outage")
  })

  it("worst wins: outage over degraded over maintenance", () => {
    expect(stackHealth([c("maintenance"), c("degraded")]).status).toBe("degraded")
    expect(stackHealth([c("maintenance"), c("degraded"), c("critical"), c("operational"), c("operational")]).status).toBe(
      "partial_outage"
    )
  })

  it("maintenance only when nothing is worse", () => {
    const h = stackHealth([c("maintenance"), s("operational"), m("up")])
    expect(h.status).toBe("maintenance")
    expect(h.label).toBe("Under Maintenance")
    expect(stackHealth([s("maintenance")]).status).toBe("maintenance")
  })

  it("unknown items (pending or paused monitors, no status) are counted apart and move nothing", () => {
    const h = stackHealth([m("pending"), m("paused"), c(null), c("operational")])
    expect(h.status).toBe("operational")
    expect(h.counts).toEqual({ operational: 1, degraded: 0, outage: 0, maintenance: 0, unknown: 3 })
    // An outage among only unknowns and one known item: the known one decides the share.
    expect(stackHealth([m("pending"), m("pending"), m("down")]).status).toBe("major_outage")
    expect(stackHealth([m("paused")]).status).toBe("operational")
  })
})
