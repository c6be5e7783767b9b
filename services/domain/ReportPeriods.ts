import { DateTime, Option } from "effect"

/**
 * The periods a scheduled report covers (issue "Analytics and reports"):
 * weekly reports cover Monday 00:00 to the next Monday 00:00, monthly ones
 * the 1st 00:00 to the next 1st, in the schedule's time zone (so a week in
 * Europe/Paris starts at Sunday 23:00 UTC in winter, and the weeks the clocks
 * change are an hour shorter or longer). A report is due once its period has ended.
 */

export const reportFrequencies = ["weekly", "monthly"] as const
export type ReportFrequency = typeof reportFrequencies[number]

export interface Period {
  readonly from: number
  readonly to: number
}

/** Whether `zone` is an IANA time zone this runtime knows. */
export const isTimeZone = (zone: string): boolean => Option.isSome(DateTime.zoneMakeNamed(zone))

/** The start of the period containing `at` (epoch ms). */
const periodStart = (frequency: ReportFrequency, zone: string, at: number): DateTime.Zoned => {
  const zoned = Option.getOrThrow(DateTime.makeZoned(at, { timeZone: zone }))
  return frequency === "weekly" ? DateTime.startOf(zoned, "week", { weekStartsOn: 1 }) : DateTime.startOf(zoned, "month")
}

const next = (frequency: ReportFrequency, start: DateTime.Zoned): DateTime.Zoned =>
  frequency === "weekly" ? DateTime.add(start, { weeks: 1 }) : DateTime.add(start, { months: 1 })

/**
 * The periods that ended in `(since, now]`, oldest first, at most `limit`
 * (the latest ones): what a schedule created at `since` owes at `now`. A
 * process that was down owes the periods it missed; the limit keeps a
 * schedule that was off for years from sending hundreds of reports.
 */
export const duePeriods = (frequency: ReportFrequency, zone: string, since: number, now: number, limit = 12): Array<Period> => {
  const out: Array<Period> = []
  let start = periodStart(frequency, zone, since)
  for (;;) {
    const end = next(frequency, start)
    const to = DateTime.toEpochMillis(end)
    if (to > now) break
    if (to > since) out.push({ from: DateTime.toEpochMillis(start), to })
    start = end
  }
  return out.slice(-limit)
}
