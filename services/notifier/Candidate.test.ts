import { assert, describe, it } from "@effect/vitest"
import { componentTrigger } from "./Candidate.ts"

describe("componentTrigger", () => {
  it("maps a component's new status to the rule trigger it fires", () => {
    assert.strictEqual(componentTrigger("operational", "critical"), "component.critical")
    assert.strictEqual(componentTrigger("critical", "degraded"), "component.degraded")
    assert.strictEqual(componentTrigger("operational", "maintenance"), "component.maintenance")
    assert.strictEqual(componentTrigger("degraded", "operational"), "component.recovered")
    assert.strictEqual(componentTrigger("operational", "operational"), undefined)
  })
})
