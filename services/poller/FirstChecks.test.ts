import { describe, expect, it } from "vitest"
import { firstDue } from "./FirstChecks.ts"

const now = 1_800_000_000_000
const catchUp = { windowMs: 20_000, perSecond: 100 }

describe("firstDue", () => {
  it("keeps the phase of a recently checked item and spreads the overdue over the window, most overdue first", () => {
    const due = new Map(firstDue([
      { key: "recent-15min", lastCheckedAt: now - 60_000, intervalMs: 900_000 },
      { key: "recent-30s", lastCheckedAt: now - 10_000, intervalMs: 30_000 },
      { key: "late-30s", lastCheckedAt: now - 31_000, intervalMs: 30_000 },
      { key: "very-late-15min", lastCheckedAt: now - 3_600_000, intervalMs: 900_000 },
      { key: "never", lastCheckedAt: undefined, intervalMs: 60_000 },
      { key: "exactly-due", lastCheckedAt: now - 60_000, intervalMs: 60_000 }
    ], now, catchUp, false))
    expect(due.get("recent-15min")).toBe(now + 840_000)
    expect(due.get("recent-30s")).toBe(now + 20_000)
    // Four overdue: never checked, then by how long overdue; few, so 50 ms apart (20 a second) rather than over 20 s.
    expect([due.get("never"), due.get("very-late-15min"), due.get("late-30s"), due.get("exactly-due")]).toEqual([
      now,
      now + 50,
      now + 100,
      now + 150
    ])
  })

  it("spreads many overdue over the catch-up window", () => {
    const items = Array.from({ length: 1_000 }, (_, i) => ({ key: `s${i}`, lastCheckedAt: undefined, intervalMs: 900_000 }))
    const due = firstDue(items, now, catchUp, false).map(([, at]) => at).toSorted((a, b) => a - b)
    // 1,000 over 20 s: 50 a second, 20 ms apart.
    expect(due[0]).toBe(now)
    expect(due.at(-1)).toBe(now + 19_980)
  })

  it("runs the catch-up no faster than its rate: the window grows with the overdue", () => {
    const items = Array.from({ length: 5_000 }, (_, i) => ({ key: `s${i}`, lastCheckedAt: now - 1_000_000 - i, intervalMs: 900_000 }))
    const due = firstDue(items, now, catchUp, false).map(([, at]) => at).toSorted((a, b) => a - b)
    expect(due).toHaveLength(5_000)
    expect(due[0]).toBe(now)
    // 5,000 at 100/s: 50 s, evenly.
    expect(due.at(-1)).toBe(now + 49_990)
    const perSecond = new Map<number, number>()
    for (const at of due) perSecond.set(Math.floor((at - now) / 1000), (perSecond.get(Math.floor((at - now) / 1000)) ?? 0) + 1)
    expect(Math.max(...perSecond.values())).toBe(100)
  })

  it("never stretches the catch-up past an item's interval: more than one interval's worth at the rate runs at the cadence's rate", () => {
    // 5,000 sources of 30 s at 100/s would take 50 s, and their next checks would then crowd the first 20 s of every interval.
    const items = Array.from({ length: 5_000 }, (_, i) => ({ key: `s${i}`, lastCheckedAt: now - 100_000 - i, intervalMs: 30_000 }))
    const due = firstDue(items, now, catchUp, false).map(([, at]) => at).toSorted((a, b) => a - b)
    expect(due[0]).toBe(now)
    expect(due.at(-1)).toBe(now + 29_994)
    const perSecond = new Map<number, number>()
    for (const at of due) perSecond.set(Math.floor((at - now) / 1000), (perSecond.get(Math.floor((at - now) / 1000)) ?? 0) + 1)
    // 5,000 over 30 s: 166-167 a second, the rate their 30-s cadence needs.
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(167)
    expect(Math.min(...perSecond.values())).toBeGreaterThanOrEqual(166)
    // Mixed intervals: each item within its own.
    const mixed = firstDue([
      ...Array.from({ length: 3_000 }, (_, i) => ({ key: `slow${i}`, lastCheckedAt: now - 2_000_000, intervalMs: 900_000 })),
      ...Array.from({ length: 3_000 }, (_, i) => ({ key: `fast${i}`, lastCheckedAt: now - 40_000, intervalMs: 30_000 }))
    ], now, catchUp, false)
    expect(Math.max(...mixed.filter(([key]) => key.startsWith("fast")).map(([, at]) => at - now))).toBeLessThan(30_000)
    expect(Math.max(...mixed.filter(([key]) => key.startsWith("slow")).map(([, at]) => at - now))).toBeLessThan(30_000)
  })

  it("leaves nothing to catch up when every item is on its cadence", () => {
    expect(firstDue([{ key: "a", lastCheckedAt: now - 1, intervalMs: 30_000 }], now, catchUp, false)).toEqual([["a", now + 29_999]])
    expect(firstDue([], now, catchUp, true)).toEqual([])
  })

  it("on the shard's first load, places the never checked at random over one interval; the overdue are still caught up", () => {
    const random = [0.25, 0.75]
    let i = 0
    const due = new Map(firstDue([
      { key: "never-30s", lastCheckedAt: undefined, intervalMs: 30_000 },
      { key: "never-15min", lastCheckedAt: undefined, intervalMs: 900_000 },
      { key: "late", lastCheckedAt: now - 60_000, intervalMs: 30_000 },
      { key: "recent", lastCheckedAt: now - 10_000, intervalMs: 30_000 }
    ], now, catchUp, true, () => random[i++]!))
    expect(due).toEqual(new Map([["never-30s", now + 7_500], ["never-15min", now + 675_000], ["late", now], ["recent", now + 20_000]]))
  })
})
