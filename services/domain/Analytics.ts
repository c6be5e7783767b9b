import { Schema, SchemaTransformation } from "effect"

/**
 * Analytics from status durations on the wire (services/history/README.md
 * "Uptime from durations"; the rule in StatusDurations.ts): the API's
 * `GET /sources/{key}/analytics` and `GET /monitors/{id}/analytics`, and the
 * portal's analytics pages. Shared by the API and the portal.
 */

/** An instant on the wire: ISO 8601 in UTC. */
const UtcTimestamp = Schema.String.annotate({ format: "date-time" }).pipe(
  Schema.decodeTo(Schema.DateTimeUtc, SchemaTransformation.dateTimeUtcFromString)
)

/** How far back a range may start, and how long it may be. */
export const maxAnalyticsDays = 400
/** The range when none is asked: the last 30 days up to now. */
export const defaultAnalyticsDays = 30

/** `?from=&to=`: ISO 8601 instants; `to` defaults to now, `from` to 30 days before `to`. */
export const AnalyticsQuery = Schema.Struct({
  from: Schema.optional(UtcTimestamp.annotate({ description: "Start of the range (ISO 8601). Default: 30 days before `to`." })),
  to: Schema.optional(UtcTimestamp.annotate({ description: "End of the range, exclusive (ISO 8601). Default and latest: now." }))
})

const Ms = Schema.Number.check(Schema.isGreaterThanOrEqualTo(0))

export const LevelDurations = Schema.Struct({
  down: Ms,
  degraded: Ms,
  maintenance: Ms,
  operational: Ms,
  unknown: Ms.annotate({ description: "Time nobody saw: before the first known status, unread pages, paused monitors, hours without checks." })
}).annotate({ identifier: "LevelDurations", description: "Milliseconds at each level over the range." })

export const Outage = Schema.Struct({
  start: Schema.String.annotate({ format: "date-time" }),
  end: Schema.NullOr(Schema.String.annotate({ format: "date-time" })).annotate({ description: "null: still down at the range's end." }),
  duration_ms: Ms,
  cut: Schema.Boolean.annotate({ description: "It began before the range; its start is the range's." })
}).annotate({ identifier: "Outage" })
export type Outage = typeof Outage.Type

/** One subject's figures over the range. */
export const SubjectAnalytics = Schema.Struct({
  uptime: Schema.NullOr(Schema.Number).annotate({
    description: "(counted − down) / counted × 100, counted = time minus maintenance minus unknown; null when nothing counts."
  }),
  durations_ms: LevelDurations,
  outages: Schema.Array(Outage).annotate({ description: "Each stretch of down, in order." }),
  outage_count: Schema.Int,
  mttr_ms: Schema.NullOr(Ms).annotate({ description: "Mean duration of the outages that began and ended in the range; null without one." }),
  hour_of_week: Schema.Array(Schema.Array(Schema.Int)).annotate({
    description: "Outage starts by UTC weekday (7 rows, Monday first) and hour (24 columns)."
  })
}).annotate({ identifier: "SubjectAnalytics" })
export type SubjectAnalytics = typeof SubjectAnalytics.Type

const Range = {
  from: Schema.String.annotate({ format: "date-time" }),
  to: Schema.String.annotate({ format: "date-time", description: "Exclusive; now when the range asked for reached past it." })
}

/** `GET /sources/{key}/analytics`: the source as a whole and each checked component. */
export const SourceAnalytics = Schema.Struct({
  key: Schema.String,
  ...Range,
  analytics: SubjectAnalytics,
  components: Schema.Array(Schema.Struct({
    id: Schema.String.annotate({ format: "uuid" }),
    name: Schema.String,
    analytics: SubjectAnalytics
  })).annotate({ description: "Components ordered by position; groups are not checked and are left out." })
}).annotate({ identifier: "SourceAnalytics" })
export type SourceAnalytics = typeof SourceAnalytics.Type

/** `GET /monitors/{id}/analytics`. */
export const MonitorAnalytics = Schema.Struct({
  id: Schema.String.annotate({ format: "uuid" }),
  ...Range,
  analytics: SubjectAnalytics
}).annotate({ identifier: "MonitorAnalytics" })
export type MonitorAnalytics = typeof MonitorAnalytics.Type
