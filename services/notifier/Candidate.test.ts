import { assert, describe, it } from "@effect/vitest"
import { candidateOf, componentTrigger, subjectOf } from "./Candidate.ts"

describe("componentTrigger", () => {
  it("maps a component's new status to the rule trigger it fires", () => {
    assert.strictEqual(componentTrigger("operational", "critical"), "component.critical")
    assert.strictEqual(componentTrigger("critical", "degraded"), "component.degraded")
    assert.strictEqual(componentTrigger("operational", "maintenance"), "component.maintenance")
    assert.strictEqual(componentTrigger("degraded", "operational"), "component.recovered")
    assert.strictEqual(componentTrigger("operational", "operational"), undefined)
  })
})

/** The candidate of a source's own status change. */
const change = (previous: string, current: string) =>
  candidateOf({
    id: "e1",
    type: "source.status_changed",
    timestamp: "2026-11-23T10:00:00.000Z",
    source: { key: "vpn", name: "VPN" },
    previous_status: previous,
    current_status: current
  })

describe("candidateOf: a source's own status", () => {
  it("fires the component triggers: down is critical, back to operational a recovery", () => {
    const down = change("operational", "down")!
    assert.deepStrictEqual([down.kind, down.trigger, down.level, down.status, down.recovery], ["source", "component.critical", "critical", "down", false])
    assert.strictEqual(subjectOf(down, null), "source:vpn")
    const back = change("down", "operational")!
    assert.deepStrictEqual([back.trigger, back.level, back.recovery], ["component.recovered", "info", true])
    assert.strictEqual(change("operational", "degraded")!.trigger, "component.degraded")
    assert.strictEqual(change("operational", "maintenance")!.trigger, "component.maintenance")
  })
})
