import ical, { ICalCalendarMethod, ICalEventStatus } from "ical-generator"

/** One event of the maintenance calendar, as the feed and the calendar page show it. */
export interface CalendarEntry {
  /** Stable across changes, so that calendar clients replace the event they hold: `window-<id>` or `provider-<id>`. */
  readonly uid: string
  readonly kind: "window" | "provider"
  readonly title: string
  readonly description: string
  readonly starts_at: string
  /** Providers may announce a start without an end. */
  readonly ends_at: string | null
  /** What it covers: a stack's name, "the whole organization", or the provider's name. */
  readonly scope: string
  readonly cancelled: boolean
  /** Increments with each change (iCal SEQUENCE). */
  readonly revision: number
  readonly updated_at: string
  /** The provider's page for the maintenance, or the window's page in the portal. */
  readonly url: string | null
}

/** Providers' maintenances without an end are shown one hour long (the calendar needs an end). */
const openEndedMs = 3600_000

/**
 * The calendar as RFC 5545 text (ical-generator). Times are UTC (`…Z`), so
 * that every client places them in its own time zone without VTIMEZONE
 * tables; UIDs carry the host so that they are unique across installations.
 */
export const icsOf = (calendar: {
  readonly name: string
  readonly host: string
  readonly entries: ReadonlyArray<CalendarEntry>
}): string => {
  const cal = ical({
    name: calendar.name,
    prodId: { company: "statusgrid", product: "maintenance-calendar", language: "EN" },
    method: ICalCalendarMethod.PUBLISH,
    // Calendar clients that read REFRESH-INTERVAL / X-PUBLISHED-TTL come back every 15 minutes.
    ttl: 15 * 60
  })
  for (const entry of calendar.entries) {
    const start = new Date(entry.starts_at)
    const end = entry.ends_at === null ? new Date(start.getTime() + openEndedMs) : new Date(entry.ends_at)
    cal.createEvent({
      id: `${entry.uid}@${calendar.host}`,
      start,
      end,
      summary: entry.kind === "provider" ? `${entry.scope}: ${entry.title}` : entry.title,
      description: [entry.description, entry.kind === "window" ? `Covers ${entry.scope}.` : "Announced by the provider."]
        .filter((line) => line !== "").join("\n\n"),
      url: entry.url,
      sequence: entry.revision,
      stamp: new Date(entry.updated_at),
      lastModified: new Date(entry.updated_at),
      status: entry.cancelled ? ICalEventStatus.CANCELLED : ICalEventStatus.CONFIRMED
    })
  }
  return cal.toString()
}
