import { Schema, SchemaTransformation } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { MaintenanceStatus } from "../Snapshot.ts"
import { CategoryId, CheckClass, SourceKey } from "../Source.ts"
import { AnalyticsQuery, SourceAnalytics } from "../Analytics.ts"
import { HistoryQuery, SourceHistory } from "../History.ts"
import { ComponentStatus, IncidentImpact, IncidentStatus, SourceStatus } from "../Status.ts"
import { InvalidParameter, NotFound } from "./Errors.ts"
import { Page, PageQuery } from "./Paging.ts"
import { NullOr } from "../NullOr.ts"

/** Page size of `GET /sources`: 50 unless `limit` says otherwise, at most 500. */
export const defaultLimit = 50
export const maxLimit = 500
/** At most this many keys in `filter`, the most a page can hold. */
export const maxFilterKeys = 500
/** Longest `search` text accepted. */
export const maxSearchLength = 200

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** An instant on the wire: ISO 8601 in UTC with milliseconds, e.g. `2026-01-02T03:04:05.678Z`. */
const UtcTimestamp = Schema.String.annotate({ format: "date-time" }).pipe(
  Schema.decodeTo(Schema.DateTimeUtc, SchemaTransformation.dateTimeUtcFromString)
)

/** Reliability indicators of a source, as sent on the wire; services/api/README.md says how each is set. */
export const Reliability = Schema.Struct({
  verified: Schema.Boolean.annotate({
    description: "A curated catalog source (not synthetic, not custom) that the poller has read in a known provider format."
  }),
  realtime: Schema.Boolean.annotate({ description: "Checked more often than once a minute (poll interval under 60 s)." }),
  historical: Schema.Boolean.annotate({
    description: "Incident history is on record: the poller has stored at least one incident (see /sources/{key}/incidents)."
  }),
  regional: Schema.Boolean.annotate({
    description: "The source reports status per region (its last snapshot named regions, see `regions`), or is limited to regions."
  })
}).annotate({ identifier: "Reliability" })

/** One region's status, as the provider's regional feed (AWS, GCP, Azure) last reported it. */
export const RegionStatus = Schema.Struct({
  region: Schema.String.annotate({ description: "The provider's region id, e.g. us-east-1." }),
  status: SourceStatus
}).annotate({ identifier: "RegionStatus" })
export type RegionStatus = typeof RegionStatus.Type
export type Reliability = typeof Reliability.Type

/** A catalog source as `/api/v1/sources` returns it. */
export const Source = Schema.Struct({
  id: Schema.String.annotate({ format: "uuid" }),
  name: Schema.String,
  key: Schema.String.annotate({ description: "Unique key of the source, used in paths." }),
  description: Schema.String,
  status: SourceStatus,
  logo_url: Schema.NullOr(Schema.String),
  status_page_url: Schema.NullOr(Schema.String),
  service_url: Schema.NullOr(Schema.String),
  components_count: Count.annotate({ description: "Components the source reports." }),
  incidents_count: Count.annotate({ description: "Incidents recorded for the source." }),
  categories: Schema.Array(CategoryId),
  last_checked_at: NullOr(UtcTimestamp).annotate({
    description: "Last status update, ISO 8601 UTC; null until the first check."
  }),
  check_class: CheckClass.annotate({ description: "Poll class: critical 30 s, high 60 s, standard 5 min, low 15 min." }),
  provider_type: Schema.NullOr(Schema.String).annotate({
    description: "Format the source is read in (statuspage_io, instatus, rss, ...); null until detected."
  }),
  reliability: Reliability,
  regions: Schema.Array(RegionStatus).annotate({
    description: "Each region's status, ordered by region; empty for providers without regions."
  })
}).annotate({ identifier: "Source" })
export type Source = typeof Source.Type

/** One page of `GET /sources`. */
export const SourceList = Schema.Struct({
  data: Schema.Array(Source),
  next_cursor: Schema.NullOr(Schema.String).annotate({
    description: "Pass as `cursor` to get the next page; null on the last page."
  }),
  limit: Count.annotate({ description: "The page size that was applied." })
}).annotate({ identifier: "SourceList" })
export type SourceList = typeof SourceList.Type

/** A component of a source, with its sub-components nested in `children`. */
export interface Component {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly status: ComponentStatus
  readonly is_group: boolean
  readonly region: string | null
  readonly children: ReadonlyArray<Component>
}

export const Component = Schema.Struct({
  id: Schema.String.annotate({ format: "uuid" }),
  name: Schema.String,
  description: Schema.String,
  status: ComponentStatus,
  is_group: Schema.Boolean,
  region: Schema.NullOr(Schema.String),
  children: Schema.Array(Schema.suspend((): Schema.Codec<Component> => Component))
}).annotate({ identifier: "Component" })

/** `GET /sources/{key}/components`: the top-level components, ordered by position. */
export const ComponentList = Schema.Struct({
  data: Schema.Array(Component)
}).annotate({ identifier: "ComponentList" })
export type ComponentList = typeof ComponentList.Type

/** A component named by an incident or a maintenance: its id in `/sources/{key}/components` and its name. */
export const ComponentRef = Schema.Struct({
  id: Schema.String.annotate({ format: "uuid" }),
  name: Schema.String
}).annotate({ identifier: "ComponentRef" })
export type ComponentRef = typeof ComponentRef.Type

/** One update the provider published on an incident. */
export const IncidentUpdate = Schema.Struct({
  id: Schema.String.annotate({ format: "uuid" }),
  provider_id: Schema.String.annotate({ description: "The provider's own id of the update." }),
  status: IncidentStatus,
  body: Schema.String,
  created_at: UtcTimestamp
}).annotate({ identifier: "IncidentUpdate" })
export type IncidentUpdate = typeof IncidentUpdate.Type

/** An incident of a source as the poller recorded it. */
export const Incident = Schema.Struct({
  id: Schema.String.annotate({ format: "uuid" }),
  provider_id: Schema.String.annotate({ description: "The provider's own id of the incident." }),
  title: Schema.String,
  status: IncidentStatus,
  impact: IncidentImpact,
  url: Schema.NullOr(Schema.String),
  region: Schema.NullOr(Schema.String).annotate({ description: "The region the incident is about, where the provider says." }),
  started_at: UtcTimestamp,
  updated_at: UtcTimestamp,
  resolved_at: NullOr(UtcTimestamp).annotate({
    description: "null while open; when the provider resolved it, or when it stopped listing it."
  }),
  update_count: Count.annotate({ description: "Updates the provider counts; `updates` holds those it published in full." }),
  updates: Schema.Array(IncidentUpdate).annotate({ description: "Oldest first." }),
  components: Schema.Array(ComponentRef).annotate({ description: "Affected components, by name." })
}).annotate({ identifier: "Incident" })
export type Incident = typeof Incident.Type

/** `GET /sources/{key}/incidents`: newest first. */
export const IncidentList = Page(Incident, "IncidentList")
export type IncidentList = typeof IncidentList.Type

/** A maintenance announced by the source's provider. */
export const ProviderMaintenance = Schema.Struct({
  id: Schema.String.annotate({ format: "uuid" }),
  provider_id: Schema.String.annotate({ description: "The provider's own id of the maintenance." }),
  title: Schema.String,
  status: MaintenanceStatus.annotate({
    description: "As the provider says; one it stops listing is `completed` once its window had begun, else `cancelled`."
  }),
  url: Schema.NullOr(Schema.String),
  scheduled_for: UtcTimestamp,
  scheduled_until: NullOr(UtcTimestamp),
  components: Schema.Array(ComponentRef).annotate({ description: "Components under maintenance, by name." })
}).annotate({ identifier: "ProviderMaintenance" })
export type ProviderMaintenance = typeof ProviderMaintenance.Type

/** `GET /sources/{key}/maintenances`: latest window first, so upcoming ones lead. */
export const ProviderMaintenanceList = Page(ProviderMaintenance, "ProviderMaintenanceList")
export type ProviderMaintenanceList = typeof ProviderMaintenanceList.Type

const isSourceKey = Schema.is(SourceKey)

/** `filter`: comma-separated source keys, decoded into the list of keys; blanks around keys and empty items are ignored. */
export const KeyList = Schema.String.annotate({
  description: `Comma-separated source keys, 1 to ${maxFilterKeys}: only these sources.`
}).pipe(
  Schema.decodeTo(
    Schema.Array(Schema.String).pipe(Schema.check(Schema.makeFilter((keys: ReadonlyArray<string>) => {
      if (keys.length === 0) return "it lists no key"
      if (keys.length > maxFilterKeys) return `it lists ${keys.length} keys`
      const bad = keys.find((k) => !isSourceKey(k))
      return bad === undefined ||
        `${JSON.stringify(bad.length > 40 ? `${bad.slice(0, 40)}…` : bad)} is not a source key (lower-case letters, digits and inner hyphens)`
    }))),
    SchemaTransformation.transform<ReadonlyArray<string>, string>({
      decode: (s) => s.split(",").map((k) => k.trim()).filter((k) => k !== ""),
      encode: (keys) => keys.join(",")
    })
  )
)

/** `limit`: digits only, so "1e2" or "0x10" are not taken for numbers. */
export const Limit = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^[0-9]{1,9}$/u)),
  Schema.annotate({ description: `Page size, 1 to ${maxLimit}; ${defaultLimit} when absent.` }),
  Schema.decodeTo(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: maxLimit })),
    SchemaTransformation.numberFromString
  )
)

export const ListQuery = Schema.Struct({
  category: Schema.optional(CategoryId.annotate({ description: "Only sources in this category." })),
  search: Schema.optional(Schema.String.pipe(
    // No name, key or description holds a control character (PostgreSQL text cannot hold NUL, and the
    // search column joins the three with U+001F: migrations/postgres/0026_source_search.sql).
    Schema.check(
      Schema.isMaxLength(maxSearchLength),
      Schema.makeFilter((s: string) => ![...s].some((c) => c < " "), { message: "search cannot contain control characters" })
    ),
    Schema.annotate({ description: "Case-insensitive substring of the name, key or description." })
  )),
  status: Schema.optional(SourceStatus.annotate({ description: "Only sources in this status." })),
  filter: Schema.optional(KeyList),
  cursor: Schema.optional(Schema.String.annotate({ description: "Opaque: the `next_cursor` of the previous page." })),
  limit: Schema.optional(Limit)
})

const KeyParams = { key: Schema.String.annotate({ description: "The source's key." }) }

/** The sources read API: the catalog's sources, one source, one source's components. */
export class SourcesGroup extends HttpApiGroup.make("sources")
  .add(
    HttpApiEndpoint.get("list", "/", {
      query: ListQuery,
      success: SourceList
    }).annotateMerge(OpenApi.annotations({
      summary: "List sources",
      description: "Catalog sources ordered by key, a page at a time. `category`, `status`, `search` and `filter` combine with AND."
    })),
    HttpApiEndpoint.get("get", "/:key", {
      params: KeyParams,
      success: Source,
      error: NotFound
    }).annotateMerge(OpenApi.annotations({ summary: "Get one source" })),
    HttpApiEndpoint.get("components", "/:key/components", {
      params: KeyParams,
      success: ComponentList,
      error: NotFound
    }).annotateMerge(OpenApi.annotations({
      summary: "List a source's components",
      description: "Top-level components ordered by position; sub-components nested in `children`."
    })),
    HttpApiEndpoint.get("incidents", "/:key/incidents", {
      params: KeyParams,
      query: PageQuery,
      success: IncidentList,
      error: NotFound
    }).annotateMerge(OpenApi.annotations({
      summary: "List a source's incidents",
      description: "Open and past incidents the poller recorded, newest first (by start), with their updates " +
        "and affected components, a page at a time."
    })),
    HttpApiEndpoint.get("maintenances", "/:key/maintenances", {
      params: KeyParams,
      query: PageQuery,
      success: ProviderMaintenanceList,
      error: NotFound
    }).annotateMerge(OpenApi.annotations({
      summary: "List a source's maintenances",
      description: "Maintenances the provider announced, upcoming and past, latest window first, a page at a time."
    })),
    HttpApiEndpoint.get("history", "/:key/history", {
      params: KeyParams,
      query: HistoryQuery,
      success: SourceHistory,
      error: NotFound
    }).annotateMerge(OpenApi.annotations({
      summary: "Status history of a source and its components",
      description: "`window=24h` (default): 24 hourly cells, the last one the current hour; `window=90d`: 90 daily " +
        "cells (UTC), the last one today. Each cell holds the most significant status seen (down, degraded, " +
        "maintenance, operational) or `no_data`, and its uptime. Uptime is checks not down / checks, leaving out " +
        "checks in maintenance and checks whose status page could not be read; `uptime_30d` covers the last 30 UTC days."
    })),
    HttpApiEndpoint.get("analytics", "/:key/analytics", {
      params: KeyParams,
      query: AnalyticsQuery,
      success: SourceAnalytics,
      error: [NotFound, InvalidParameter]
    }).annotateMerge(OpenApi.annotations({
      summary: "Analytics of a source and its components over a range",
      description: "From status durations (time, not check counts): milliseconds at each level, uptime = (counted − down) / " +
        "counted × 100 where counted leaves out maintenance and unknown time (before the first known status, unread pages, " +
        "hours without any check), each outage with its start, end and duration, the mean time to resolution, and outage " +
        "starts by hour of the week (UTC). `from` defaults to 30 days before `to`, `to` to now (a later `to` is capped at now); " +
        "`from` must be before `to` and within the last 400 days."
    }))
  )
  .prefix("/sources")
  .annotateMerge(OpenApi.annotations({
    title: "Sources",
    description: "The catalog of external services whose status statusgrid reads."
  }))
{}
