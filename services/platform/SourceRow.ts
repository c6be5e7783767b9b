import { Schema } from "effect"
import { CategoryId, CheckClass } from "../domain/Source.ts"
import { SourceStatus } from "../domain/Status.ts"
import { JsonColumn, TextArrayColumn } from "./Rows.ts"
import { NullOr } from "../domain/NullOr.ts"

/**
 * A `sources` row as the source lists select it: the columns of the public
 * catalog (api/Sources.ts) and of an organization's custom sources
 * (orgs/CustomSources.ts), which extends it with its own columns.
 */
export const SourceRow = Schema.Struct({
  id: Schema.String,
  key: Schema.String,
  name: Schema.String,
  description: Schema.String,
  status: SourceStatus,
  logo_url: Schema.NullOr(Schema.String),
  status_page_url: Schema.NullOr(Schema.String),
  service_url: Schema.NullOr(Schema.String),
  components_count: Schema.Number,
  incidents_count: Schema.Number,
  last_checked_at: NullOr(Schema.DateTimeUtcFromDate),
  check_class: CheckClass,
  provider_type: Schema.NullOr(Schema.String),
  verified: Schema.Boolean,
  /** `poll_interval_s < 60`. */
  realtime: Schema.Boolean,
  /** `has_history`. */
  historical: Schema.Boolean,
  /** Regions declared or reported. */
  regional: Schema.Boolean,
  region_statuses: JsonColumn(Schema.Array(Schema.Struct({ region: Schema.String, status: SourceStatus }))),
  categories: TextArrayColumn(CategoryId)
})
export type SourceRow = typeof SourceRow.Type

/**
 * A source's last check time, selected as `last_checked_at` (or `as`) beside the `sources` row aliased
 * `alias`: check times live in `source_checks` (migration 0028), written once a second by the process's `CheckTimes`.
 */
export const lastCheckedAt = (alias: string, as = "last_checked_at") =>
  `(SELECT c.checked_at FROM source_checks c WHERE c.source_id = ${alias}.id) AS ${as}`

/**
 * The one rule of which sources the public catalog shows, over the `sources` row aliased `s`: catalog
 * sources (not an organization's own), enabled. The public API (api/Sources.ts) lists and reads only
 * these, and crowd reports (crowd/CrowdReports.ts) are taken only for these.
 */
export const publicSourceCondition = "s.organization_id IS NULL AND s.kind = 'catalog' AND s.enabled"

/**
 * The `categories` column of a source list over the `sources` row aliased `alias`: the source's category ids,
 * unordered (an index-only read per row; `inCategoryOrder` of domain/Source.ts orders them, so no join and
 * sort per row).
 */
export const categoriesColumn = (alias: string) =>
  `ARRAY(SELECT sc.category_id FROM source_categories sc WHERE sc.source_id = ${alias}.id) AS categories`
