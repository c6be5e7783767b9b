import { assert, describe, it } from "@effect/vitest"
import { DueQueue } from "./DueQueue.ts"

describe("DueQueue", () => {
  it("pops entries in due order, only once due", () => {
    const q = new DueQueue()
    const dues = Array.from({ length: 500 }, (_, i) => ({ key: `s${i}`, due: (i * 7919) % 1000 }))
    for (const d of dues) q.set(d.key, d.due)
    assert.strictEqual(q.popDue(-1), undefined)
    const out: Array<number> = []
    let e
    while ((e = q.popDue(10_000))) out.push(e.due)
    assert.deepStrictEqual(out, dues.map((d) => d.due).toSorted((a, b) => a - b))
    assert.strictEqual(q.size, 0)
  })

  it("moves a key when set again, and deletes", () => {
    const q = new DueQueue()
    q.set("a", 10)
    q.set("b", 20)
    q.set("c", 30)
    q.set("c", 5)
    q.set("a", 40)
    q.delete("b")
    assert.isFalse(q.has("b"))
    assert.deepStrictEqual([q.popDue(100)?.key, q.popDue(100)?.key, q.popDue(100)?.key], ["c", "a", undefined])
  })
})
