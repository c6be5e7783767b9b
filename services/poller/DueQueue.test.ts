import { assert, describe, it } from "@effect/vitest"
import { prng } from "../platform/Prng.ts"
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

  it("peeks the earliest due entry without taking it out; set moves it on as a shard's loop does", () => {
    const q = new DueQueue()
    for (let i = 0; i < 50; i++) q.set(`s${i}`, (i * 37) % 50)
    assert.strictEqual(q.peekDueAt(-1), undefined)
    const seen: Array<string> = []
    let next
    // Each source checked once, every 100 ms: rescheduled in place past the window.
    while ((next = q.peekDueAt(49))) {
      seen.push(next.key)
      q.set(next.key, next.due + 100)
    }
    assert.strictEqual(seen.length, 50)
    assert.strictEqual(new Set(seen).size, 50)
    assert.strictEqual(q.size, 50)
    assert.strictEqual(q.peekDue(), 100)
    const top = q.peekDueAt(100)!
    q.delete(top.key)
    assert.isFalse(q.has(top.key))
    assert.strictEqual(q.size, 49)
  })

  it("keeps due order through random moves, deletes and pops (against a sorted list)", () => {
    const random = prng(7)
    const q = new DueQueue()
    const model = new Map<string, number>()
    for (let step = 0; step < 20_000; step++) {
      const key = `s${Math.floor(random() * 300)}`
      const roll = random()
      if (roll < 0.6) {
        const due = Math.floor(random() * 1_000)
        q.set(key, due)
        model.set(key, due)
      } else if (roll < 0.75) {
        q.delete(key)
        model.delete(key)
      } else {
        const now = Math.floor(random() * 1_000)
        const popped = q.popDue(now)
        const earliest = Math.min(...model.values())
        if (popped === undefined) assert.isTrue(model.size === 0 || earliest > now)
        else {
          assert.strictEqual(popped.due, earliest)
          assert.strictEqual(model.get(popped.key), popped.due)
          model.delete(popped.key)
        }
      }
      assert.strictEqual(q.size, model.size)
      assert.strictEqual(q.peekDue(), model.size === 0 ? undefined : Math.min(...model.values()))
    }
  })
})
