import * as Fs from "node:fs"

/** The figures every benchmark prints, computed one way. */

/**
 * Peak resident set of this process in MiB: Linux's VmHWM (getrusage's
 * maxRSS survives exec, so a child would report its parent's size at spawn),
 * maxRSS elsewhere.
 */
export const peakRssMb = (): number => {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(Fs.readFileSync("/proc/self/status", "utf8"))
    if (match) return Math.round(Number(match[1]) / 1024)
  } catch {
    // not Linux
  }
  return Math.round(process.resourceUsage().maxRSS / 1024)
}

/** `n` rounded to `digits` decimals. */
export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits

/** The nearest-rank percentile of sorted values; 0 when there are none. */
export const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
