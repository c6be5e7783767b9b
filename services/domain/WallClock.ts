/**
 * Wall-clock time in IANA time zones, with Intl only (no library, no
 * Effect): the notifier's rule schedules, the rule and window schemas and
 * the portal's forms (`datetime-local` inputs carry no zone) read local
 * times through these, in the server and in the browser.
 */

/** The fields of a local time (month 1-12, hour 0-23). */
export interface WallClockParts {
  readonly year: number
  readonly month: number
  readonly day: number
  readonly hour: number
  readonly minute: number
  readonly second: number
}

const formatters = new Map<string, Intl.DateTimeFormat>()

/** One formatter per zone (building one is the expensive part); throws a RangeError for an unknown zone. */
const formatterOf = (zone: string): Intl.DateTimeFormat => {
  let f = formatters.get(zone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit"
    })
    formatters.set(zone, f)
  }
  return f
}

/** True when Intl knows the IANA time zone (at most 64 characters). */
export const isTimeZone = (zone: string): boolean => {
  if (zone.trim() === "" || zone.length > 64) return false
  try {
    formatterOf(zone)
    return true
  } catch {
    return false
  }
}

/**
 * The wall clock of `at` in `zone`. Throws a RangeError for an unknown zone
 * or an invalid date (zones are validated on write). An hour "24" (older
 * engines' midnight) is read as 0.
 */
export const wallClock = (at: Date, zone: string): WallClockParts => {
  const parts: Record<string, string> = {}
  for (const p of formatterOf(zone).formatToParts(at)) parts[p.type] = p.value
  return {
    year: Number(parts["year"]),
    month: Number(parts["month"]),
    day: Number(parts["day"]),
    hour: Number(parts["hour"]) % 24,
    minute: Number(parts["minute"]),
    second: Number(parts["second"])
  }
}

/** The wall clock of `at` in `zone` as the milliseconds of the UTC instant with the same fields. */
const wallClockMs = (at: number, zone: string): number => {
  const p = wallClock(new Date(at), zone)
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second)
}

const localPattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/

/**
 * The instant of a wall-clock time (`YYYY-MM-DDTHH:MM[:SS]`, as `datetime-local`
 * sends it) in `zone`; undefined for a malformed or impossible time or an
 * unknown zone. A time skipped by a daylight-saving jump moves forward by
 * the jump; a repeated one takes its first occurrence.
 */
export const zonedInstant = (local: string, zone: string): Date | undefined => {
  const m = localPattern.exec(local)
  if (m === null || !isTimeZone(zone)) return undefined
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? "0"].map(Number) as [number, number, number, number, number, number]
  const wanted = Date.UTC(year, month - 1, day, hour, minute, second)
  const check = new Date(wanted)
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) {
    return undefined
  }
  // The offsets a day before and a day after cover any transition at this time; the earlier fitting instant wins.
  const offset = (at: number) => wallClockMs(at, zone) - at
  const before = wanted - offset(wanted - 86_400_000)
  const after = wanted - offset(wanted + 86_400_000)
  const fitting = [before, after].filter((t) => wallClockMs(t, zone) === wanted).toSorted((a, b) => a - b)
  // None fits: the time was skipped; the offset before the jump moves it forward by the jump.
  return new Date(fitting[0] ?? before)
}

/** `at` as the `datetime-local` value of its wall clock in `zone` (to the minute). */
export const localValue = (at: Date | string, zone: string): string =>
  new Date(wallClockMs(new Date(at).getTime(), zone)).toISOString().slice(0, 16)
