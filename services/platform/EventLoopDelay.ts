import { type IntervalHistogram, monitorEventLoopDelay } from "node:perf_hooks"

/** How often the event loop's delay is sampled, milliseconds. */
export const resolutionMs = 20

/**
 * A histogram of the event loop's delay (`perf_hooks.monitorEventLoopDelay`, sampled every
 * `resolutionMs`), not yet enabled. It records the whole time between its timer's runs, so an idle
 * loop reads the resolution itself: read it with `delayMs`, which takes the resolution off.
 */
export const eventLoopDelay = (): IntervalHistogram => monitorEventLoopDelay({ resolution: resolutionMs })

/** A sample (nanoseconds) as the delay beyond the sampling interval, in milliseconds; 0 before any sample (NaN). */
export const beyondResolutionMs = (ns: number): number => (Number.isFinite(ns) ? Math.max(0, ns / 1e6 - resolutionMs) : 0)

const round = (ms: number) => Math.round(ms * 100) / 100

/** The delay proper (milliseconds, 2 decimals) at the median, the 99th percentile and the maximum. */
export const delayMs = (histogram: IntervalHistogram) => {
  return {
    p50: round(beyondResolutionMs(histogram.percentile(50))),
    p99: round(beyondResolutionMs(histogram.percentile(99))),
    max: round(beyondResolutionMs(histogram.max))
  }
}
