/** A calendar month (UTC): year and month 1-12. */
export interface MonthRef {
  readonly year: number
  readonly month: number
}

/** One cell of the month grid. */
export interface CalendarDay {
  /** `YYYY-MM-DD` */
  readonly date: string
  /** Midnight UTC, in ms. */
  readonly start: number
  /** Whether it belongs to the month shown (the first and last weeks show neighbours' days). */
  readonly inMonth: boolean
}

const dayMs = 86_400_000

/** `?month=YYYY-MM`, or the month of `now` when absent or malformed (years 2000-2999). */
export const monthOf = (param: string | null, now: Date): MonthRef => {
  const m = /^(2\d{3})-(0[1-9]|1[0-2])$/.exec(param ?? "")
  return m === null ? { year: now.getUTCFullYear(), month: now.getUTCMonth() + 1 } : { year: Number(m[1]), month: Number(m[2]) }
}

export const shiftMonth = (ref: MonthRef, by: number): MonthRef => {
  const index = ref.year * 12 + (ref.month - 1) + by
  return { year: Math.floor(index / 12), month: (index % 12) + 1 }
}

/** The weeks (Monday first) covering the month: 4 to 6 rows of 7 days. */
export const monthGrid = (ref: MonthRef): ReadonlyArray<ReadonlyArray<CalendarDay>> => {
  const first = Date.UTC(ref.year, ref.month - 1, 1)
  const last = Date.UTC(ref.year, ref.month, 0)
  const mondayOffset = (new Date(first).getUTCDay() + 6) % 7
  const weeks: Array<Array<CalendarDay>> = []
  for (let start = first - mondayOffset * dayMs; start <= last; start += 7 * dayMs) {
    weeks.push(Array.from({ length: 7 }, (_, i) => {
      const at = start + i * dayMs
      const date = new Date(at)
      return { date: date.toISOString().slice(0, 10), start: at, inMonth: date.getUTCMonth() === ref.month - 1 }
    }))
  }
  return weeks
}
