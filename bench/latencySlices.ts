import { percentile, round } from "./figures.ts"

/**
 * A latency's spread over time: the measured requests cut into slices of `sliceMs` by their scheduled
 * time, each slice's p99, and the slices over `limitMs`. A p99 over a whole run says how many requests
 * were late; the slices say whether they were late together (a stall: every request of a few hundred
 * milliseconds) or spread out (a queue that never drains), which have different causes.
 */
export interface LatencySlices {
  readonly slice_ms: number
  readonly slices: number
  /** Slices whose p99 is above `limit_ms`. */
  readonly over_limit: number
  readonly limit_ms: number
  /** The slowest slices, slowest first: `at_s` is the slice's start from the first measured request. */
  readonly worst: ReadonlyArray<{ readonly at_s: number; readonly p99_ms: number; readonly p50_ms: number }>
}

/**
 * `scheduledMs[i]` is request i's scheduled time (any origin) and `latencyMs[i]` its latency. Slices start
 * at the earliest scheduled time; the last, partial slice counts as one.
 */
export const latencySlices = (
  scheduledMs: ReadonlyArray<number>,
  latencyMs: ReadonlyArray<number>,
  options: { readonly sliceMs: number; readonly limitMs: number; readonly worst?: number }
): LatencySlices & { readonly starts: ReadonlyArray<{ readonly startMs: number; readonly p99: number }> } => {
  const first = scheduledMs.reduce((a, b) => Math.min(a, b), Infinity)
  const bySlice = new Map<number, Array<number>>()
  for (const [i, at] of scheduledMs.entries()) {
    const slice = Math.floor((at - first) / options.sliceMs)
    const of = bySlice.get(slice)
    const latency = latencyMs[i]!
    if (of === undefined) bySlice.set(slice, [latency])
    else of.push(latency)
  }
  const slices = [...bySlice].map(([slice, values]) => {
    const sorted = values.toSorted((a, b) => a - b)
    return { slice, startMs: first + slice * options.sliceMs, p99: percentile(sorted, 99), p50: percentile(sorted, 50) }
  })
  const worst = slices.toSorted((a, b) => b.p99 - a.p99).slice(0, options.worst ?? 5)
  return {
    slice_ms: options.sliceMs,
    slices: slices.length,
    over_limit: slices.filter((s) => s.p99 > options.limitMs).length,
    limit_ms: options.limitMs,
    worst: worst.map((s) => ({ at_s: round((s.slice * options.sliceMs) / 1000, 2), p99_ms: round(s.p99, 1), p50_ms: round(s.p50, 1) })),
    starts: slices.map((s) => ({ startMs: s.startMs, p99: s.p99 }))
  }
}

/**
 * Of the slices over `limitMs`, how many began within `beforeMs` after one of `events` (times on the same
 * clock as the slices' starts), and the same share over all slices: a cause's share of the stalls
 * against what chance gives.
 */
export const slicesAfter = (
  starts: ReadonlyArray<{ readonly startMs: number; readonly p99: number }>,
  events: ReadonlyArray<number>,
  o: { readonly sliceMs: number; readonly limitMs: number; readonly beforeMs: number }
) => {
  const near = (startMs: number) => events.some((at) => at >= startMs - o.beforeMs && at < startMs + o.sliceMs)
  const slow = starts.filter((s) => s.p99 > o.limitMs)
  return {
    over_limit_near: slow.filter((s) => near(s.startMs)).length,
    over_limit: slow.length,
    all_near: starts.filter((s) => near(s.startMs)).length,
    all: starts.length
  }
}
