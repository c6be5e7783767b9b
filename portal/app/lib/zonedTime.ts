/**
 * Wall-clock times in a named time zone (IANA, e.g. "Europe/Berlin"), for
 * forms whose `datetime-local` inputs carry no zone. Pure Intl, no library.
 */

const formatters = new Map<string, Intl.DateTimeFormat>()
const formatterOf = (zone: string) => {
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

/** Whether Intl knows the zone. */
export const isTimeZone = (zone: string): boolean => {
  if (zone.trim() === "") return false
  try {
    formatterOf(zone)
    return true
  } catch {
    return false
  }
}

/** The wall clock of `at` in `zone` as milliseconds of a UTC date with the same fields. */
const wallClock = (at: number, zone: string): number => {
  const parts = Object.fromEntries(formatterOf(zone).formatToParts(new Date(at)).map((p) => [p.type, p.value]))
  return Date.UTC(Number(parts["year"]), Number(parts["month"]) - 1, Number(parts["day"]), Number(parts["hour"]), Number(parts["minute"]), Number(parts["second"]))
}

const localPattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/

/**
 * The instant of a wall-clock time (`YYYY-MM-DDTHH:MM`, as `datetime-local`
 * sends it) in `zone`; undefined for a malformed or impossible time. A time
 * skipped by a daylight-saving jump moves forward by the jump; a repeated
 * one takes its first occurrence.
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
  const offset = (at: number) => wallClock(at, zone) - at
  const before = wanted - offset(wanted - 86_400_000)
  const after = wanted - offset(wanted + 86_400_000)
  const fitting = [before, after].filter((t) => wallClock(t, zone) === wanted).toSorted((a, b) => a - b)
  // None fits: the time was skipped; the offset before the jump moves it forward by the jump.
  return new Date(fitting[0] ?? before)
}

/** `at` as the `datetime-local` value of its wall clock in `zone` (minutes). */
export const localValue = (at: Date | string, zone: string): string =>
  new Date(wallClock(new Date(at).getTime(), zone)).toISOString().slice(0, 16)
