import type { Page } from "../domain/api/Paging.ts"

/**
 * A catalog source's JSON as the API answers it (`Source` of domain/api/Sources.ts, in its field order),
 * built by PostgreSQL over the `sources` row aliased `s` (decision 0026). The public list and read
 * answer this text without building, decoding and encoding an object per source in the process; the
 * portal's loaders decode the same text with `Source`, and test/integration/sources-api.test.ts decodes
 * every listed source's text with `SourceList` (no field more or fewer) beside its field-by-field checks.
 *
 * - `categories`: in the catalog's order, the `categories` table's `position` (`CategoryId`'s order);
 * - `last_checked_at`: `source_checks` (migration 0028), to the millisecond as `DateTime` prints it;
 * - `regions`: each region's id and status, in the stored order, and nothing else the poller stored.
 */
export const sourceJson = (s: string) => `json_build_object(
  'id', ${s}.id, 'name', ${s}.name, 'key', ${s}.key, 'description', ${s}.description, 'status', ${s}.status,
  'logo_url', ${s}.logo_url, 'status_page_url', ${s}.status_page_url, 'service_url', ${s}.service_url,
  'components_count', ${s}.components_count, 'incidents_count', ${s}.incidents_count,
  'categories', ARRAY(
    SELECT sc.category_id FROM source_categories sc JOIN categories cat ON cat.id = sc.category_id
    WHERE sc.source_id = ${s}.id ORDER BY cat.position),
  'last_checked_at', (
    SELECT to_char(c.checked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    FROM source_checks c WHERE c.source_id = ${s}.id),
  'check_class', ${s}.check_class, 'provider_type', ${s}.provider_type,
  'reliability', json_build_object(
    'verified', ${s}.verified, 'realtime', ${s}.poll_interval_s < 60, 'historical', ${s}.has_history,
    'regional', cardinality(${s}.regions) > 0 OR jsonb_array_length(${s}.region_statuses) > 0),
  'regions', CASE WHEN jsonb_array_length(${s}.region_statuses) = 0 THEN '[]'::json ELSE (
    SELECT json_agg(json_build_object('region', r.value ->> 'region', 'status', r.value ->> 'status') ORDER BY r.ord)
    FROM jsonb_array_elements(${s}.region_statuses) WITH ORDINALITY AS r(value, ord)) END
)::text`

/** A page of sources' JSON texts as `SourceList`'s JSON: the texts joined as they are. */
export const pageJson = (page: Page<string>): string =>
  `{"data":[${page.data.join(",")}],"next_cursor":${JSON.stringify(page.next_cursor)},"limit":${page.limit}}`

/**
 * A component's JSON without its `children` (`Component` of domain/api/Sources.ts, in its field order),
 * built by PostgreSQL over the `components` row aliased `c`; `withChildren` closes it with its children.
 */
export const componentJson = (c: string) => `json_build_object(
  'id', ${c}.id, 'name', ${c}.name, 'description', ${c}.description, 'status', ${c}.status,
  'is_group', ${c}.is_group, 'region', ${c}.region
)::text`

/** A component's JSON (`componentJson`, an object's text) with its children's texts as its last field. */
export const withChildren = (json: string, children: ReadonlyArray<string>): string =>
  `${json.slice(0, json.lastIndexOf("}"))},"children":[${children.join(",")}]}`
