/** Statuses worth another attempt: the upstream is overloaded or broken right now. */
export const isRetryableStatus = (status: number): boolean => status === 429 || status >= 500

/**
 * "Full jitter" exponential backoff: a uniform delay in
 * [0, min(cap, base * 2^(attempt - 1))), `attempt` being the attempt that just failed (1-based).
 */
export const backoffDelayMs = (attempt: number, baseMs: number, capMs: number, random: number): number =>
  Math.floor(random * Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1)))

/**
 * `Retry-After` as a delay in milliseconds: delta-seconds, or an HTTP-date
 * measured against `nowMs` (a date in the past is 0). Undefined when absent or unreadable.
 */
export const retryAfterMs = (value: string | undefined, nowMs: number): number | undefined => {
  if (value === undefined) return undefined
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000
  const date = Date.parse(trimmed)
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs)
}
