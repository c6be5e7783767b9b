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

/** Response times of one hour or UTC day, milliseconds. */
export const ResponseTimePoint = Schema.Struct({
  at: Schema.String.annotate({ format: "date-time", description: "Start of the hour or day (UTC)." }),
  checks: Schema.Int,
  mean_ms: Ms,
  p50_ms: Ms,
  p95_ms: Ms,
  p99_ms: Ms.annotate({ description: "Percentiles from t-digests merged over the hour or day: approximate (within about 1 % of rank)." }),
  max_ms: Ms
}).annotate({ identifier: "ResponseTimePoint" })

export const ResponseTimes = Schema.Struct({
  hourly: Schema.Array(ResponseTimePoint).annotate({ description: "Each hour with checks; empty for ranges over 31 days. Hours without checks are absent, not zero." }),
  daily: Schema.Array(ResponseTimePoint).annotate({ description: "Each UTC day with checks, over the range's hours." })
}).annotate({ identifier: "ResponseTimes" })
export type ResponseTimes = typeof ResponseTimes.Type

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** The incidents a provider published that began in the range (services/domain/IncidentFigures.ts). */
export const IncidentAnalytics = Schema.Struct({
  count: Count.annotate({ description: "Incidents that began in the range (maintenance posted as an incident left out)." }),
  per_week: Schema.Number,
  by_impact: Schema.Struct({ critical: Count, major: Count, minor: Count, none: Count }),
  resolved: Count,
  open: Count.annotate({ description: "Not resolved by the range's end." }),
  mttr_ms: Schema.NullOr(Ms).annotate({ description: "Mean time from start to resolution of the resolved ones." }),
  longest_ms: Schema.NullOr(Ms),
  components_affected: Count,
  components: Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String, incidents: Count }))
    .annotate({ description: "The components named most often (at most 10)." }),
  regions: Schema.Array(Schema.Struct({ region: Schema.String, incidents: Count })),
  hour_of_week: Schema.Array(Schema.Array(Schema.Int)).annotate({ description: "Incident starts by UTC weekday (Monday first) and hour." })
}).annotate({ identifier: "IncidentAnalytics" })
export type IncidentAnalytics = typeof IncidentAnalytics.Type

/** One region of a source: its components' time summed, and the incidents naming it. */
export const RegionAnalytics = Schema.Struct({
  region: Schema.String,
  components: Count,
  uptime: Schema.NullOr(Schema.Number).annotate({ description: "Over the region's components' time summed (component-time), by the uptime rule." }),
  durations_ms: LevelDurations,
  outage_count: Count,
  incidents: Count
}).annotate({ identifier: "RegionAnalytics" })
export type RegionAnalytics = typeof RegionAnalytics.Type

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
  })).annotate({ description: "Components ordered by position; groups are not checked and are left out." }),
  incidents: IncidentAnalytics,
  regions: Schema.Array(RegionAnalytics).annotate({ description: "Per region the provider reports (components' regions and incidents'); empty for a global source." }),
  response_times: ResponseTimes.annotate({ description: "Response times of statusgrid's fetches of the status page." })
}).annotate({ identifier: "SourceAnalytics" })
export type SourceAnalytics = typeof SourceAnalytics.Type

/** `GET /monitors/{id}/analytics`. */
export const MonitorAnalytics = Schema.Struct({
  id: Schema.String.annotate({ format: "uuid" }),
  ...Range,
  analytics: SubjectAnalytics,
  response_times: ResponseTimes
}).annotate({ identifier: "MonitorAnalytics" })
export type MonitorAnalytics = typeof MonitorAnalytics.Type

/** Time at each banner of a stack (services/domain/StackDurations.ts). */
export const HealthDurations = Schema.Struct({
  operational: Ms,
  degraded: Ms,
  partial_outage: Ms,
  major_outage: Ms,
  maintenance: Ms,
  unknown: Ms
}).annotate({ identifier: "HealthDurations", description: "Milliseconds at each banner over the range." })

/** `GET /stacks/{id}/analytics`: the stack as its banner was, and each item. */
export const StackAnalytics = Schema.Struct({
  id: Schema.String.annotate({ format: "uuid" }),
  slug: Schema.String,
  name: Schema.String,
  ...Range,
  analytics: SubjectAnalytics.annotate({
    description: "The stack as a whole: down while its banner showed an outage (partial or major), by StackHealth's rule over the items at each instant."
  }),
  health_ms: HealthDurations,
  items: Schema.Array(Schema.Struct({
    kind: Schema.Literals(["component", "source", "monitor"]),
    name: Schema.String,
    source_key: Schema.NullOr(Schema.String),
    component_id: Schema.NullOr(Schema.String).annotate({ description: "The provider's id of the component (as live updates name it)." }),
    monitor_id: Schema.NullOr(Schema.String),
    analytics: SubjectAnalytics
  })).annotate({ description: "Each item in the stack's order." }),
  incidents: IncidentAnalytics.annotate({ description: "Incidents of the stack's whole sources, and those naming one of its components." })
}).annotate({ identifier: "StackAnalytics" })
export type StackAnalytics = typeof StackAnalytics.Type
