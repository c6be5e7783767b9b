import { analyticsRange } from "#services/history/Analytics.ts"
import type { Range } from "#services/domain/StatusDurations.ts"
import { DateTime, Result } from "effect"

const dayMs = 86_400_000
const isoDate = /^\d{4}-\d{2}-\d{2}$/

/** A `YYYY-MM-DD` field as the UTC midnight starting it, nothing when blank, or what is wrong with it. */
const dateOf = (text: string | null, field: string): DateTime.Utc | undefined | string => {
  if (text === null || text === "") return undefined
  if (!isoDate.test(text)) return `${field} must be a date (YYYY-MM-DD).`
  const parsed = DateTime.make(`${text}T00:00:00Z`)
  // A day that does not exist (2026-02-31) would roll over to another: refused, not moved.
  return parsed._tag === "Some" && DateTime.formatIso(DateTime.toUtc(parsed.value)).startsWith(text)
    ? DateTime.toUtc(parsed.value)
    : `${field} must be a date (YYYY-MM-DD).`
}

/**
 * The range of an analytics page from its query: `?days=7|30|90` (up to
 * now), or `?from=YYYY-MM-DD&to=YYYY-MM-DD` (UTC days, `to` included); the
 * last 30 days otherwise. A bad value falls back to the default with a
 * message naming it, shown beside the range picker (the API's checks:
 * `analyticsRange`).
 */
export const pageRange = (url: URL, now: number): { readonly range: Range; readonly days: number | null; readonly error?: string } => {
  const fallback = { range: { from: now - 30 * dayMs, to: now }, days: 30 }
  const daysParam = url.searchParams.get("days")
  const fromParam = url.searchParams.get("from")
  const toParam = url.searchParams.get("to")
  if (fromParam === null && toParam === null) {
    if (daysParam === null) return fallback
    const days = Number(daysParam)
    return [7, 30, 90].includes(days) ? { range: { from: now - days * dayMs, to: now }, days } : { ...fallback, error: "Days must be 7, 30 or 90." }
  }
  const from = dateOf(fromParam, "From")
  const toDay = dateOf(toParam, "To")
  if (typeof from === "string") return { ...fallback, error: from }
  if (typeof toDay === "string") return { ...fallback, error: toDay }
  // `to` names a day that is included: the range ends at the next midnight (or now).
  const to = toDay === undefined ? undefined : DateTime.add(toDay, { days: 1 })
  const checked = analyticsRange({ from, to }, now)
  if (Result.isFailure(checked)) return { ...fallback, error: `${checked.failure.message.replace(/^from/, "From").replace(/^to/, "To")}.` }
  return { range: checked.success, days: null }
}
