/** Statuses worth another attempt: the other side is overloaded or broken right now. */
export const isRetryableStatus = (status: number): boolean => status === 429 || status >= 500

/**
 * "Full jitter" exponential backoff: a uniform delay in
 * [0, min(cap, base * 2^(attempt - 1))), `attempt` being the attempt that just failed (1-based).
 */
export const backoffDelayMs = (attempt: number, baseMs: number, capMs: number, random: number): number =>
  Math.floor(random * Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1)))

const months: Readonly<Record<string, number>> = {
  jan: 0, feb: 1, mar: 2, apr: 3, may: 4, jun: 5, jul: 6, aug: 7, sep: 8, oct: 9, nov: 10, dec: 11
}

const imfFixdate = /^[A-Za-z]{3}, (\d{2}) ([A-Za-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/
const rfc850Date = /^[A-Za-z]{6,9}, (\d{2})-([A-Za-z]{3})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) GMT$/
const asctimeDate = /^[A-Za-z]{3} ([A-Za-z]{3}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/

const utc = (year: number, month: string, day: number, h: number, m: number, s: number): number | undefined => {
  const mon = months[month.toLowerCase()]
  if (mon === undefined || day < 1 || day > 31 || h > 23 || m > 59 || s > 60) return undefined
  return Date.UTC(year, mon, day, h, m, s)
}

/**
 * An HTTP-date (RFC 9110 §5.6.7) in milliseconds since the epoch: the
 * IMF-fixdate, and the obsolete RFC 850 and asctime forms recipients must
 * accept (all UTC; a two-digit RFC 850 year more than 50 years ahead is in
 * the past century). Undefined for anything else: `Date.parse` is not used,
 * as it reads "1.5" or "12" as dates.
 */
export const parseHttpDate = (value: string, nowMs: number): number | undefined => {
  let m = imfFixdate.exec(value)
  if (m) return utc(Number(m[3]), m[2]!, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]))
  m = rfc850Date.exec(value)
  if (m) {
    const thisYear = new Date(nowMs).getUTCFullYear()
    let year = Math.floor(thisYear / 100) * 100 + Number(m[3])
    if (year > thisYear + 50) year -= 100
    return utc(year, m[2]!, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]))
  }
  m = asctimeDate.exec(value)
  if (m) return utc(Number(m[6]), m[1]!, Number(m[2]!.trim()), Number(m[3]), Number(m[4]), Number(m[5]))
  return undefined
}

/**
 * `Retry-After` as a delay in milliseconds: delay-seconds (fractions
 * accepted, as Discord sends them; rounded up to the millisecond) or an
 * HTTP-date measured against `nowMs` (a date in the past is 0). Undefined
 * when absent or unreadable. The one parser of the poller, detection, the
 * notifier and the monitors.
 */
export const retryAfterMs = (value: string | undefined, nowMs: number): number | undefined => {
  if (value === undefined) return undefined
  const trimmed = value.trim()
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed) * 1000)
  const date = parseHttpDate(trimmed, nowMs)
  return date === undefined ? undefined : Math.max(0, date - nowMs)
}
