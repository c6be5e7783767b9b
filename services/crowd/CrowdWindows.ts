/**
 * Sources' windows of reports kept in the process between scores (services/crowd/README.md
 * "Windows"). A batch reads only each source's rows created since its last read, not the whole
 * window again; at most every `slackEveryMs` a source's read reaches back `slackMs` before the last
 * read that did (reports another process committed late), and a source's window is read whole again
 * every `refreshMs`. Each scope's (the source's, a component's, a region's)
 * distinct reporters by network are counted as rows enter and leave each window, so a score costs
 * the rows that moved, not the window's: a burst on one source otherwise reads and counts its
 * whole window (thousands of rows) for every batch.
 *
 * Plain TypeScript: `CrowdReports` reads the rows and hands them over; the counts are those of
 * `windowNetworks` (a reporter once, in the network of its latest report), which a score at an
 * earlier moment still uses.
 */
import { type CrowdEvidence, type CrowdParameters, windowNetworks } from "../domain/CrowdScore.ts"

/** A report of a source's window, as scores read it. */
export interface WindowRow {
  readonly at: number
  readonly reporter: string
  readonly network: string
  readonly componentId: string | null
  readonly region: string | null
}

export interface WindowOptions {
  /** How late another process's committed report is still read (by the next read reaching back). */
  readonly slackMs: number
  /**
   * How often a source's read reaches back `slackMs` before the last one that did; the reads between
   * start at the last read. A report committed late (up to `slackMs`) by another process is counted
   * within this much after its commit; one committed on time, at the next read.
   */
  readonly slackEveryMs: number
  /** How often a source's window is read whole again (reports committed later than `slackMs` are seen then). */
  readonly refreshMs: number
  /** Sources kept at most (the least recently read whole first dropped). */
  readonly maxSources: number
}

/** A scope's reporters in the window and the short windows, as `crowdScore` takes them. */
export type ScopeEvidence = Pick<CrowdEvidence, "networks" | "recent">

/** A source's evidence at one moment: the source's, and the components' and regions' reported in the window. */
export interface SourceEvidence {
  readonly all: ScopeEvidence
  readonly components: ReadonlyMap<string, ScopeEvidence>
  readonly regions: ReadonlyMap<string, ScopeEvidence>
}

/** One window length's distinct reporters by network, moved as rows enter (`added`) and leave (`head`). */
interface Counter {
  readonly length: number
  /** Rows before this index have entered the window. */
  added: number
  /** Rows before this index have left it. */
  head: number
  /**
   * Each reporter in the window: the position (`Sliding.base` + index) of its latest row there, a
   * small integer kept in the map's own storage (no object and no boxed number per reporter). Rows
   * enter and leave in time order, so the reporter leaves with that row.
   */
  readonly reporters: Map<string, number>
  /** Reporters by network. */
  readonly networks: Map<string, number>
  reporterCount: number
  counted: number
}

/**
 * A scope's rows (in time order) and its counters, one per window length (the whole window first).
 * Rows enter each window once `now` reaches them and leave once `now − length` passes them.
 */
class Sliding {
  private rows: Array<WindowRow> = []
  /** The position of `rows[0]`: rows dropped from the front move it on. */
  private base = 0
  private readonly counters: Array<Counter>
  private readonly perNetwork: number

  constructor(lengths: ReadonlyArray<number>, perNetwork: number) {
    this.perNetwork = perNetwork
    this.counters = lengths.map((length) => ({ length, added: 0, head: 0, reporters: new Map(), networks: new Map(), reporterCount: 0, counted: 0 }))
  }

  /** Whether a row of the same reporter and time is here (one report per reporter, source and fixed window, so per time). */
  has(row: WindowRow): boolean {
    let lo = 0
    let hi = this.rows.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.rows[mid]!.at < row.at) lo = mid + 1
      else hi = mid
    }
    for (let i = lo; i < this.rows.length && this.rows[i]!.at === row.at; i++) {
      if (this.rows[i]!.reporter === row.reporter) return true
    }
    return false
  }

  /**
   * Adds a row in time order, unless it is no later than the last `advance`'s `now` and older than a
   * row already counted (false: the counts would need it in the past; the caller counts again).
   */
  insert(row: WindowRow): boolean {
    let at = this.rows.length
    while (at > 0 && this.rows[at - 1]!.at > row.at) at--
    if (at < this.counters[0]!.added) return false
    if (at === this.rows.length) this.rows.push(row)
    else this.rows.splice(at, 0, row)
    return true
  }

  private network(c: Counter, network: string, by: 1 | -1) {
    const before = c.networks.get(network) ?? 0
    const after = before + by
    if (after === 0) c.networks.delete(network)
    else c.networks.set(network, after)
    c.reporterCount += by
    c.counted += Math.min(after, this.perNetwork) - Math.min(before, this.perNetwork)
  }

  /** Moves every window to `now` (never earlier than the last `now`). */
  advance(now: number) {
    for (const c of this.counters) {
      // Rows enter in time order: the one entering is its reporter's latest.
      while (c.added < this.rows.length && this.rows[c.added]!.at <= now) {
        const row = this.rows[c.added]!
        const latest = c.reporters.get(row.reporter)
        if (latest === undefined) this.network(c, row.network, 1)
        else {
          const before = this.rows[latest - this.base]!.network
          if (before !== row.network) {
            this.network(c, before, -1)
            this.network(c, row.network, 1)
          }
        }
        c.reporters.set(row.reporter, this.base + c.added++)
      }
      // A reporter's rows leave oldest first: it leaves the window with its latest.
      while (c.head < c.added && this.rows[c.head]!.at <= now - c.length) {
        const row = this.rows[c.head]!
        if (c.reporters.get(row.reporter) === this.base + c.head) {
          c.reporters.delete(row.reporter)
          this.network(c, row.network, -1)
        }
        c.head++
      }
    }
    // The whole window's head is the lowest: rows before it have left every window.
    const gone = this.counters[0]!.head
    if (gone > 1024 && gone * 2 > this.rows.length) {
      this.rows = this.rows.slice(gone)
      this.base += gone
      for (const c of this.counters) {
        c.added -= gone
        c.head -= gone
      }
    }
  }

  /** Rows in the whole window. */
  get size() {
    const c = this.counters[0]!
    return c.added - c.head
  }

  /** The counts at the last `advance`. */
  evidence(): ScopeEvidence {
    const [whole, ...short] = this.counters.map((c) => ({ reporters: c.reporterCount, networks: c.networks.size, counted: c.counted }))
    return { networks: whole!, recent: short }
  }

  /** The rows that have not left the whole window (those after the last `now` too). */
  inWindow(): ReadonlyArray<WindowRow> {
    const c = this.counters[0]!
    return this.rows.slice(c.head)
  }
}

interface Kept {
  readonly all: Sliding
  readonly components: Map<string, Sliding>
  readonly regions: Map<string, Sliding>
  /** The `now` of the last read: every row created up to it and committed by then is here, but late ones of another process. */
  readTo: number
  /** The `now` of the last read that reached back `slackMs` (or read whole): every row up to it, less the slack, is here. */
  slackReadAt: number
  /** When the window was last read whole. */
  readonly readWholeAt: number
}

/** One source's read after its first: rows created after `from` (exclusive); `slack` when it reaches back `slackMs`. */
export interface SinceRead {
  readonly id: string
  readonly from: number
  readonly slack: boolean
}

/** What a read must fetch: `whole` sources from the window's start, `since` the others each from its own `from`. */
export interface WindowRead {
  readonly whole: ReadonlyArray<string>
  readonly since: ReadonlyArray<SinceRead>
}

const noRows = (): Array<WindowRow> => []
const byTime = (a: WindowRow, b: WindowRow) => a.at - b.at

/** `scope`'s entry in `scopes`, made when new. */
const scopeOf = <A>(scopes: Map<string, A>, scope: string, make: () => A) => {
  const found = scopes.get(scope)
  if (found !== undefined) return found
  const made = make()
  scopes.set(scope, made)
  return made
}

/** The evidence of rows read for a moment not kept (a score of the past): `windowNetworks` over each scope's. */
const evidenceOfRows = (rows: ReadonlyArray<WindowRow>, now: number, p: CrowdParameters): SourceEvidence => {
  const components = new Map<string, Array<WindowRow>>()
  const regions = new Map<string, Array<WindowRow>>()
  const inWindow = rows.filter((r) => r.at > now - p.windowMs && r.at <= now)
  for (const row of inWindow) {
    if (row.componentId !== null) scopeOf(components, row.componentId, noRows).push(row)
    if (row.region !== null) scopeOf(regions, row.region, noRows).push(row)
  }
  const evidence = (of: ReadonlyArray<WindowRow>) => windowNetworks(of, now, p)
  return {
    all: evidence(inWindow),
    components: new Map([...components].map(([id, of]) => [id, evidence(of)])),
    regions: new Map([...regions].map(([region, of]) => [region, evidence(of)]))
  }
}

export const makeWindows = (p: CrowdParameters, o: WindowOptions) => {
  const kept = new Map<string, Kept>()
  const lengths = [p.windowMs, ...p.shortWindowsMs]
  const sliding = () => new Sliding(lengths, p.perNetwork)

  const usable = (entry: Kept | undefined, now: number): entry is Kept =>
    entry !== undefined && now >= entry.readTo && now - entry.readWholeAt < o.refreshMs

  /** Which of `ids` to read whole and which from their last read (or, every `slackEveryMs`, from before it) at `now`. */
  const plan = (ids: ReadonlyArray<string>, now: number): WindowRead => {
    const whole: Array<string> = []
    const since: Array<SinceRead> = []
    for (const id of ids) {
      const entry = kept.get(id)
      if (!usable(entry, now)) {
        whole.push(id)
        continue
      }
      const slack = now - entry.slackReadAt >= o.slackEveryMs
      since.push({ id, from: Math.max(slack ? entry.slackReadAt - o.slackMs : entry.readTo, now - p.windowMs), slack })
    }
    return { whole, since }
  }

  /** A kept window of `rows` (in any order), read whole at `now`. */
  const keep = (rows: ReadonlyArray<WindowRow>, now: number, readWholeAt: number): Kept => {
    const entry: Kept = { all: sliding(), components: new Map(), regions: new Map(), readTo: now, slackReadAt: now, readWholeAt }
    for (const row of rows.toSorted(byTime)) {
      if (!entry.all.has(row)) place(entry, row)
    }
    return entry
  }

  /** Adds `row` to `entry`'s scopes; false when it comes before rows already counted (see `Sliding.insert`). */
  const place = (entry: Kept, row: WindowRow): boolean => {
    if (!entry.all.insert(row)) return false
    if (row.componentId !== null) scopeOf(entry.components, row.componentId, sliding).insert(row)
    if (row.region !== null) scopeOf(entry.regions, row.region, sliding).insert(row)
    return true
  }

  /** Adds the rows `entry` does not have; one before rows already counted (another process's, late) makes it again. */
  const merge = (id: string, entry: Kept, rows: ReadonlyArray<WindowRow>): Kept => {
    for (const [i, row] of rows.entries()) {
      if (entry.all.has(row) || place(entry, row)) continue
      const rebuilt = keep([...entry.all.inWindow(), ...rows.slice(i)], entry.readTo, entry.readWholeAt)
      rebuilt.slackReadAt = entry.slackReadAt
      kept.set(id, rebuilt)
      return rebuilt
    }
    return entry
  }

  /** Moves `entry`'s windows to `now`, forgetting rows and scopes that left the window. */
  const advance = (entry: Kept, now: number) => {
    entry.all.advance(now)
    for (const scopes of [entry.components, entry.regions]) {
      for (const [scope, counts] of scopes) {
        counts.advance(now)
        if (counts.size === 0) scopes.delete(scope)
      }
    }
    entry.readTo = Math.max(entry.readTo, now)
  }

  const evidenceOf = (entry: Kept): SourceEvidence => ({
    all: entry.all.evidence(),
    components: new Map([...entry.components].map(([id, s]) => [id, s.evidence()])),
    regions: new Map([...entry.regions].map(([region, s]) => [region, s.evidence()]))
  })

  /**
   * The evidence at `now` of a read planned by `plan`: `rows` by source (the `whole` sources' whole
   * window, each `since` source's rows after its `from`). Kept for the next read unless `now` is in the past
   * of what is kept (a score at an earlier moment reads the window whole and changes nothing).
   */
  const apply = (read: WindowRead, rows: ReadonlyMap<string, ReadonlyArray<WindowRow>>, now: number): Map<string, SourceEvidence> => {
    const evidence = new Map<string, SourceEvidence>()
    for (const id of read.whole) {
      const fresh = rows.get(id) ?? []
      const entry = kept.get(id)
      if (entry !== undefined && now < entry.readTo) {
        evidence.set(id, evidenceOfRows(fresh, now, p))
        continue
      }
      kept.delete(id)
      if (kept.size >= o.maxSources) kept.delete(kept.keys().next().value!)
      const made = keep(fresh, now, now)
      kept.set(id, made)
      advance(made, now)
      evidence.set(id, evidenceOf(made))
    }
    for (const { id, slack } of read.since) {
      const entry = merge(id, kept.get(id)!, rows.get(id) ?? [])
      advance(entry, now)
      if (slack) entry.slackReadAt = Math.max(entry.slackReadAt, now)
      evidence.set(id, evidenceOf(entry))
    }
    return evidence
  }

  return { plan, apply }
}
