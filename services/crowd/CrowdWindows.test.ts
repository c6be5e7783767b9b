import { describe, expect, it } from "@effect/vitest"
import { countReporters, crowdDefaults, windowNetworks } from "../domain/CrowdScore.ts"
import { makeWindows, type SourceEvidence, type WindowRead, type WindowRow } from "./CrowdWindows.ts"

const p = crowdDefaults
const second = 1000

/** A small deterministic random stream. */
const prng = (seed: number) => () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
  return seed / 2_147_483_648
}

interface Stored extends WindowRow {
  readonly source: string
  /** When its row became visible to readers (a process commits a little after the report's time). */
  readonly committed: number
}

/** What the database answers to a planned read at `now`: rows visible at `now`, by source. */
const answer = (db: ReadonlyArray<Stored>, read: WindowRead, now: number) => {
  const rows = new Map<string, Array<Stored>>()
  for (const r of db) {
    if (r.committed > now || r.at > now) continue
    const whole = read.whole.includes(r.source) && r.at > now - p.windowMs
    const since = read.since.find((s) => s.id === r.source)
    if (!whole && !(since !== undefined && r.at > since.from)) continue
    rows.set(r.source, [...(rows.get(r.source) ?? []), r])
  }
  return rows
}

/** The counts `windowNetworks` gives from the rows of the source in the window: what the kept windows must equal. */
const truth = (rows: ReadonlyArray<Stored>, source: string, now: number, scope: (r: WindowRow) => boolean) => {
  const { networks, recent } = windowNetworks(rows.filter((r) => r.source === source && r.committed <= now && scope(r)), now, p)
  return { networks: countReporters(networks), recent: recent!.map((n) => countReporters(n)) }
}

/** A report of its own network, of no component or region. */
const row = (at: number, reporter: string): WindowRow => ({ at, reporter, network: reporter, componentId: null, region: null })

const counts = (e: SourceEvidence) => ({
  all: { networks: countReporters(e.all.networks), recent: e.all.recent!.map((n) => countReporters(n)) },
  components: new Map([...e.components].map(([id, s]) => [id, { networks: countReporters(s.networks), recent: s.recent!.map((n) => countReporters(n)) }]))
})

describe("CrowdWindows", () => {
  it("counts each scope's reporters as windowNetworks does over the rows read, read after read; every row committed is read, a late one at the next read reaching back", () => {
    const random = prng(7)
    const windows = makeWindows(p, { slackMs: 5 * second, slackEveryMs: 3 * second, refreshMs: 60 * second, maxSources: 100 })
    /** The rows each source's reads returned; and the `now` of its last read and of its last read reaching back (or whole). */
    const delivered = new Map<string, Set<Stored>>()
    const lastRead = new Map<string, number>()
    const lastSlack = new Map<string, number>()
    /** Rows a read starting at the last one missed (committed late), and those of them a later read reaching back found. */
    const missed = new Set<Stored>()
    let foundLate = 0
    let plainReads = 0
    const db: Array<Stored> = []
    const sources = ["a", "b", "c"]
    const reporters = Array.from({ length: 40 }, (_, i) => `r${i}`)
    let now = 1_700_000_000_000
    let reads = 0
    for (let step = 0; step < 600; step++) {
      now += Math.floor(random() * 4 * second)
      // A few reports created up to 2 s before now, some committed by another process up to 2 s after now (4 s late at most, within the slack): never before now, as they are new.
      for (let n = Math.floor(random() * 4); n > 0; n--) {
        const at = now - Math.floor(random() * 2 * second)
        const reporter = reporters[Math.floor(random() * reporters.length)]!
        const source = sources[Math.floor(random() * sources.length)]!
        const windowStart = Math.floor(at / p.windowMs)
        // One row per reporter, source and fixed window (the table's unique key).
        if (db.some((r) => r.source === source && r.reporter === reporter && Math.floor(r.at / p.windowMs) === windowStart)) continue
        const row: Stored = {
          source,
          at,
          reporter,
          network: `n${Math.floor(random() * 12)}`,
          componentId: random() < 0.5 ? `c${Math.floor(random() * 3)}` : null,
          region: null,
          committed: now + Math.floor(random() * 2 * second)
        }
        db.push(row)
      }
      const ids = sources.filter(() => random() < 0.7)
      if (ids.length === 0) continue
      const read = windows.plan(ids, now)
      const answered = answer(db, read, now)
      const evidence = windows.apply(read, answered, now)
      reads++
      for (const id of ids) {
        const since = read.since.find((s) => s.id === id)
        const reachesBack = since === undefined || since.slack
        // A source read lately reaches back once `slackEveryMs` has passed since it last did.
        expect(since?.slack ?? true).toBe(since === undefined || now - lastSlack.get(id)! >= 3 * second)
        const rows = delivered.get(id) ?? new Set()
        for (const r of answered.get(id) ?? []) {
          if (!rows.has(r) && missed.delete(r)) foundLate++
          rows.add(r)
        }
        delivered.set(id, rows)
        // Every row committed by now is read: at once when created after the last read or committed by the
        // last read reaching back, else at a read reaching back (a late row of another process).
        const unread = db.filter((r) => r.source === id && r.committed <= now && r.at > now - p.windowMs && !rows.has(r))
        const due = (r: Stored) => reachesBack || r.at > lastRead.get(id)! || r.committed <= lastSlack.get(id)!
        expect(unread.filter(due)).toEqual([])
        for (const r of unread) missed.add(r)
        if (!reachesBack) plainReads++
        lastRead.set(id, now)
        if (reachesBack) lastSlack.set(id, now)

        const got = counts(evidence.get(id)!)
        const seen = [...rows]
        expect(got.all).toEqual(truth(seen, id, now, () => true))
        for (const [component, c] of got.components) expect(c).toEqual(truth(seen, id, now, (r) => r.componentId === component))
        const reported = new Set(seen.filter((r) => r.componentId !== null && r.at > now - p.windowMs && r.at <= now).map((r) => r.componentId))
        expect(new Set(got.components.keys())).toEqual(reported)
      }
    }
    expect(reads).toBeGreaterThan(400)
    // The stream exercises both kinds of read, and late rows found by reaching back.
    expect(plainReads).toBeGreaterThan(100)
    expect(foundLate).toBeGreaterThan(10)
  })

  it("reads only what is new after the first read, whole again after refreshMs, and never keeps a past moment", () => {
    const windows = makeWindows(p, { slackMs: 5 * second, slackEveryMs: 3 * second, refreshMs: 60 * second, maxSources: 100 })
    const t = 1_700_000_000_000
    expect(windows.plan(["a"], t)).toEqual({ whole: ["a"], since: [] })
    windows.apply({ whole: ["a"], since: [] }, new Map([["a", [row(t - 1000, "x")]]]), t)
    // 10 s later: from 5 s (the slack) before the last read reaching back (the whole one).
    const reachingBack = { id: "a", from: t - 5 * second, slack: true }
    expect(windows.plan(["a"], t + 10 * second)).toEqual({ whole: [], since: [reachingBack] })
    // This process's own rows (a batch's RETURNING) join the rows read, and count at once.
    const e = windows.apply({ whole: [], since: [reachingBack] }, new Map([["a", [row(t + 2 * second, "y")]]]), t + 10 * second).get("a")!
    expect(countReporters(e.all.networks).reporters).toBe(2)
    // A moment before the last read: read whole, answered from those rows, the kept window untouched.
    expect(windows.plan(["a"], t)).toEqual({ whole: ["a"], since: [] })
    const past = windows.apply({ whole: ["a"], since: [] }, new Map([["a", [row(t - 1000, "x")]]]), t).get("a")!
    expect(countReporters(past.all.networks).reporters).toBe(1)
    // 1 s after the read reaching back: from the last read; 3 s after it, back again.
    expect(windows.plan(["a"], t + 11 * second).since).toEqual([{ id: "a", from: t + 10 * second, slack: false }])
    expect(windows.plan(["a"], t + 13 * second).since).toEqual([{ id: "a", from: t + 5 * second, slack: true }])
    expect(windows.plan(["a"], t + 61 * second).whole).toEqual(["a"])
  })

  it("a reporter leaves every window at once when a read comes after all have passed its latest row, and counts once in each again with a new one", () => {
    const windows = makeWindows(p, { slackMs: 5 * second, slackEveryMs: 3 * second, refreshMs: 3_600 * second, maxSources: 100 })
    const t = 1_700_000_000_000
    const minute = 60 * second
    const at = (now: number, rows: ReadonlyArray<WindowRow>) => {
      const read = windows.plan(["a"], now)
      return counts(windows.apply(read, new Map([["a", rows]]), now).get("a")!).all
    }
    const reporters = (c: ReturnType<typeof at>) => [c.networks.reporters, ...c.recent.map((r) => r.reporters)]
    expect(reporters(at(t, [row(t - 1000, "x"), row(t - 500, "y")]))).toEqual([2, 2, 2, 2, 2])
    // x again from another network: still one reporter, in the network of its latest report.
    const moved = at(t + 30 * second, [{ at: t + 20 * second, reporter: "x", network: "elsewhere", componentId: null, region: null }])
    expect(reporters(moved)).toEqual([2, 2, 2, 2, 2])
    expect(moved.networks.networks).toBe(2)
    // 11 minutes on, in one step: every window has passed both reporters' rows.
    expect(reporters(at(t + 11 * minute, []))).toEqual([0, 0, 0, 0, 0])
    expect(reporters(at(t + 11 * minute + second, [row(t + 11 * minute, "x")]))).toEqual([1, 1, 1, 1, 1])
  })
})
