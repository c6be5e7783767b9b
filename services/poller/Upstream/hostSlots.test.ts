import { assert, describe, it } from "@effect/vitest"
import { HostSlots } from "./hostSlots.ts"

describe("HostSlots", () => {
  it("gives a hostname at most its limit of slots, then passes each one released to the callers waiting, in order", async () => {
    const slots = new HostSlots(2)
    assert.isUndefined(slots.take("a.example"))
    assert.isUndefined(slots.take("a.example"))
    assert.isUndefined(slots.take("b.example"), "another hostname has its own slots")
    const order: Array<string> = []
    const third = slots.take("a.example")!.then(() => order.push("third"))
    const fourth = slots.take("a.example")!.then(() => order.push("fourth"))
    slots.release("a.example")
    await third
    assert.deepStrictEqual(order, ["third"], "the fourth still waits: two are in flight")
    slots.release("a.example")
    await fourth
    assert.deepStrictEqual(order, ["third", "fourth"])
  })

  it("forgets a hostname once its last slot is given back", () => {
    const slots = new HostSlots(1)
    slots.take("a.example")
    slots.take("b.example")
    assert.strictEqual(slots.size, 2)
    slots.release("a.example")
    assert.strictEqual(slots.size, 1)
    slots.release("b.example")
    assert.strictEqual(slots.size, 0)
    assert.isUndefined(slots.take("a.example"), "a slot again, none held")
  })
})
