import { Schema } from "effect"
import { CategoryId, CheckClass } from "../domain/Source.ts"
import { SourceStatus } from "../domain/Status.ts"
import { JsonColumn, TextArrayColumn } from "./Rows.ts"

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
  last_checked_at: Schema.NullOr(Schema.DateTimeUtcFromDate),
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
