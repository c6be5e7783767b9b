import { type AlertLevel, type RuleSchedule, type Weekday, weekdays } from "../domain/Rule.ts"
import { wallClock } from "../domain/WallClock.ts"

/**
 * Notification-rule schedules (active hours): is a
 * rule allowed to alert at an instant, in the rule's time zone?
 *
 * Windows are local wall-clock times: 09:00-17:00 in Europe/Paris is
 * 09:00-17:00 on both sides of a DST change (08:00Z-16:00Z in winter,
 * 07:00Z-15:00Z in summer). A wall-clock time skipped at spring-forward
 * simply never occurs (a window 02:00-03:00 is empty that night), and a
 * repeated one occurs twice (both passes of 02:00-03:00 at fall-back are in
 * such a window).
 */

/** A local calendar position: date `YYYY-MM-DD`, weekday, minutes since local midnight (0..1439). */
export interface LocalTime {
  readonly date: string
  readonly weekday: Weekday
  readonly minutes: number
}

/** Sunday-first, as `Date#getUTCDay`. */
const byUtcDay: ReadonlyArray<Weekday> = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

/**
 * The local date, weekday and minute of `at` in the IANA `timeZone`.
 * Throws a RangeError for an unknown zone or an invalid date (schedules are
 * validated on write). An hour "24" (older engines' midnight) is read as 0.
 */
export const localTime = (at: Date, timeZone: string): LocalTime => {
  const { year, month, day, hour, minute } = wallClock(at, timeZone)
  // The weekday follows from the local date, whatever the locale's names.
  const weekday = byUtcDay[new Date(Date.UTC(year, month - 1, day)).getUTCDay()]!
  const date = `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`
  return { date, weekday, minutes: hour * 60 + minute }
}

/** Minutes since midnight of `HH:MM` (24:00 = 1440). */
const minutesOf = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5))

const previousDay = (day: Weekday): Weekday => weekdays[(weekdays.indexOf(day) + 6) % 7]!

/**
 * True when a rule with `schedule` may alert at `at` for an alert of `level`:
 *
 * - no schedule: always;
 * - `critical_always` and a critical alert: always, holidays and off hours too;
 * - a holiday (the local date at `at` is listed): never;
 * - `start` before `end` (00:00-24:00 = whole day): the local weekday is
 *   listed and `start <= time < end`;
 * - `end` before `start` (e.g. 22:00-06:00): from `start` to midnight
 *   belongs to the day it starts on (that weekday must be listed); from
 *   midnight to `end` belongs to the previous day (the previous weekday must
 *   be listed). Holidays still go by the current local date: with days [fri]
 *   and Saturday a holiday, Saturday 00:00-06:00 is paused; with Friday a
 *   holiday, Saturday 00:00-06:00 still alerts. A holiday pauses its whole
 *   calendar day, as the user reads it.
 */
export const scheduleAllows = (schedule: RuleSchedule | null, level: AlertLevel, at: Date): boolean => {
  if (schedule === null) return true
  if (schedule.critical_always && level === "critical") return true
  const local = localTime(at, schedule.timezone)
  if (schedule.holidays.includes(local.date)) return false
  const start = minutesOf(schedule.start), end = minutesOf(schedule.end)
  if (start < end) return schedule.days.includes(local.weekday) && local.minutes >= start && local.minutes < end
  // Spans midnight (start === end is refused on write; here it would be 24 hours from start).
  if (local.minutes >= start) return schedule.days.includes(local.weekday)
  return local.minutes < end && schedule.days.includes(previousDay(local.weekday))
}

/** How far ahead `nextAllowed` looks: a week and a day covers any set of days and a holiday. */
const horizonMinutes = 8 * 1440

const nextAllowedMemo = new Map<string, number | null>()

/**
 * The first whole minute at or after `from` when `schedule` lets an alert of
 * `level` through (a window's opening), or undefined when none comes within
 * eight days (long runs of holidays). Windows open and close on whole local
 * minutes, so stepping minute by minute finds the opening exactly, DST
 * changes included. Memoized per schedule, level and minute: a burst of
 * changes at night asks the same question many times.
 */
export const nextAllowed = (schedule: RuleSchedule, level: AlertLevel, from: Date): Date | undefined => {
  const first = Math.ceil(from.getTime() / 60_000) * 60_000
  const key = `${JSON.stringify(schedule)}|${level}|${first}`
  const known = nextAllowedMemo.get(key)
  if (known !== undefined) return known === null ? undefined : new Date(known)
  let found: number | null = null
  for (let i = 0; i <= horizonMinutes; i++) {
    const at = first + i * 60_000
    if (scheduleAllows(schedule, level, new Date(at))) {
      found = at
      break
    }
  }
  if (nextAllowedMemo.size > 10_000) nextAllowedMemo.clear()
  nextAllowedMemo.set(key, found)
  return found === null ? undefined : new Date(found)
}
