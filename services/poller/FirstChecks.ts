/**
 * When a shard checks each source or monitor it has just loaded (at start, after a restart, or when
 * its shard moves to another runner): on its own cadence when the last check is recent, at once
 * (spread out) when it is overdue. Pure: `Shard.ts` applies it, FirstChecks.test.ts checks it.
 */

export interface Loaded {
  readonly key: string
  /** The last check PostgreSQL holds (epoch ms), undefined if never checked. */
  readonly lastCheckedAt: number | undefined
  readonly intervalMs: number
}

export interface CatchUp {
  /** Overdue checks are spread over about this long from now (sooner when they are few)... */
  readonly windowMs: number
  /** ...but run no faster than this (the catch-up takes longer when they are many). */
  readonly perSecond: number
}

/** A few overdue checks are not spread over the whole window: they run at least this many per second. */
const minPerSecond = 20

/**
 * The first due time of each loaded item. One whose next check (last check + interval) is still ahead
 * keeps that time, so its phase survives a restart; the overdue follow one another evenly from now,
 * the most overdue first, at the rate that spreads them over the catch-up window (at least
 * `minPerSecond`, at most `perSecond`, and within the item's own interval however many there are): a
 * restart neither leaves a 15-minute source unchecked for 15 minutes nor checks thousands in the same
 * instant. Never checked: on the shard's first load
 * (`initial`, a fresh installation's whole catalog) at a random point of one interval, so that
 * thousands of first checks, some of them against pages that hang until their timeouts, do not fill
 * the shard's concurrency at once; added later (a source or monitor just made), caught up at once.
 */
export const firstDue = (
  items: ReadonlyArray<Loaded>,
  now: number,
  catchUp: CatchUp,
  initial: boolean,
  random: () => number = Math.random
): Array<readonly [key: string, due: number]> => {
  const due: Array<readonly [string, number]> = []
  const overdue: Array<{ readonly key: string; readonly next: number; readonly intervalMs: number }> = []
  for (const item of items) {
    if (item.lastCheckedAt === undefined && initial) {
      due.push([item.key, now + random() * item.intervalMs])
      continue
    }
    const next = item.lastCheckedAt === undefined ? Number.NEGATIVE_INFINITY : item.lastCheckedAt + item.intervalMs
    if (next > now) due.push([item.key, next])
    else overdue.push({ key: item.key, next, intervalMs: item.intervalMs })
  }
  if (overdue.length === 0) return due
  overdue.sort((a, b) => a.next - b.next)
  const perSecond = Math.min(Math.max(catchUp.perSecond, 1e-9), Math.max(minPerSecond, (1000 * overdue.length) / Math.max(1, catchUp.windowMs)))
  const step = 1000 / perSecond
  // Never stretched past an item's own interval: the catch-up sets the phases the items keep, and a
  // catch-up longer than one interval would leave part of every later interval with twice the checks.
  // Spread over one interval, the items run at the rate their cadence needs anyway.
  const n = overdue.length
  overdue.forEach((o, i) => due.push([o.key, now + Math.min(i * step, (i / n) * o.intervalMs)]))
  return due
}
