import { Schema, SchemaTransformation } from "effect"

/**
 * Status history read from ClickHouse's rollups (services/history/README.md):
 * strips of cells for the portal's stack and source pages and the API, and
 * the 30-day uptime figure. Shared by the API and the portal.
 */

/** `24h`: 24 hourly cells, the last one the current hour. `90d`: 90 daily cells (UTC days), the last one today. */
export const HistoryWindow = Schema.Literals(["24h", "90d"])
export type HistoryWindow = typeof HistoryWindow.Type

/** How many days the uptime figure covers (today included). */
export const uptimeDays = 30

/**
 * The most significant status seen in a cell: `down` (any check down or
 * critical) over `degraded` over `maintenance` over `operational`.
 * `no_data`: no check was recorded, or none whose answer could be read.
 * Monitors' `up` is `operational` here.
 */
export const CellStatus = Schema.Literals(["operational", "degraded", "down", "maintenance", "no_data"])
export type CellStatus = typeof CellStatus.Type

/** An instant on the wire: ISO 8601 in UTC with milliseconds. */
const UtcTimestamp = Schema.String.annotate({ format: "date-time" }).pipe(
  Schema.decodeTo(Schema.DateTimeUtc, SchemaTransformation.dateTimeUtcFromString)
)

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** Percent of the counted checks that were not down, 0 to 100; null when no check counts. */
const Percent = Schema.NullOr(Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 100 }))).annotate({
  description: "Checks not down / checks, in percent; maintenance and unread checks left out; null without counted checks."
})

/** One cell of a strip: an hour or a UTC day. */
export const HistoryCell = Schema.Struct({
  start: UtcTimestamp.annotate({ description: "Start of the hour or day (UTC)." }),
  status: CellStatus,
  checks: Count.annotate({ description: "Checks recorded in the cell, all of them." }),
  uptime: Percent
}).annotate({ identifier: "HistoryCell" })
export type HistoryCell = typeof HistoryCell.Type

/**
 * An uptime figure and the counts it comes from:
 * `percent = (counted_checks - down_checks) / counted_checks × 100`, where
 * `counted_checks = checks - maintenance_checks - unread_checks`.
 */
export const Uptime = Schema.Struct({
  percent: Percent,
  checks: Count,
  counted_checks: Count.annotate({ description: "Checks that count: not in maintenance and read." }),
  down_checks: Count.annotate({ description: "Checks that saw down (sources, monitors) or critical (components)." }),
  maintenance_checks: Count,
  unread_checks: Count.annotate({
    description: "Source checks whose status page could not be fetched or read: they say nothing about the provider."
  }),
  from: UtcTimestamp,
  to: UtcTimestamp.annotate({ description: "Exclusive end." })
}).annotate({ identifier: "Uptime" })
export type Uptime = typeof Uptime.Type

/** A subject's strip over one window, with its uptime over the window and over the last 30 days. */
export const StatusStrip = Schema.Struct({
  window: HistoryWindow,
  cell: Schema.Literals(["1h", "1d"]),
  cells: Schema.Array(HistoryCell).annotate({ description: "Oldest first; every cell of the window, `no_data` where nothing was recorded." }),
  uptime: Uptime.annotate({ description: "Over the whole window." }),
  uptime_30d: Uptime.annotate({ description: `Over the last ${uptimeDays} UTC days, today included, from the daily rollup.` })
}).annotate({ identifier: "StatusStrip" })
export type StatusStrip = typeof StatusStrip.Type

/** A component's strip in `GET /sources/{key}/history`. */
export const ComponentHistory = Schema.Struct({
  id: Schema.String.annotate({ format: "uuid", description: "The component's id in /sources/{key}/components." }),
  name: Schema.String,
  history: StatusStrip
}).annotate({ identifier: "ComponentHistory" })
export type ComponentHistory = typeof ComponentHistory.Type

/** `GET /sources/{key}/history`: the source as a whole and each of its components (groups left out). */
export const SourceHistory = Schema.Struct({
  key: Schema.String,
  history: StatusStrip,
  components: Schema.Array(ComponentHistory).annotate({ description: "Components ordered by position; groups are not checked and are left out." })
}).annotate({ identifier: "SourceHistory" })
export type SourceHistory = typeof SourceHistory.Type

/** `GET /organizations/{org}/monitors/{id}/history`. */
export const MonitorHistory = Schema.Struct({
  id: Schema.String.annotate({ format: "uuid" }),
  history: StatusStrip
}).annotate({ identifier: "MonitorHistory" })
export type MonitorHistory = typeof MonitorHistory.Type

/** `?window=`: `24h` when absent. */
export const HistoryQuery = Schema.Struct({
  window: Schema.optional(HistoryWindow.annotate({ description: "24h (hourly cells, the default) or 90d (daily cells)." }))
})

/**
 * What `StatusHistory` reads: a source or monitor as a whole (`component`
 * "") or one of a source's components (its provider id, `components.external_id`).
 */
export interface HistorySubject {
  readonly kind: "source" | "monitor"
  readonly id: string
  readonly component: string
}
