import { Config, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { makeMicroCache } from "./MicroCache.ts"
import type { Fragment } from "effect/sql/Statement"
import { InvalidParameter } from "../domain/api/Errors.ts"
import { ComponentList, defaultLimit, type ListQuery, Source as SourceSchema, SourceList } from "../domain/api/Sources.ts"
import type { Component, Incident, IncidentList, ProviderMaintenance, ProviderMaintenanceList, Source } from "../domain/api/Sources.ts"
import { MaintenanceStatus } from "../domain/Snapshot.ts"
import { publicSourceCondition } from "../platform/SourceRow.ts"
import { rowsOf } from "../platform/Rows.ts"
import { componentJson, pageJson, sourceJson, withChildren } from "./SourceJson.ts"
import { fnWhenTracing } from "../platform/Tracing.ts"
import { type CategoryId, SourceKey } from "../domain/Source.ts"
import { IncidentImpact, IncidentStatus, type SourceStatus } from "../domain/Status.ts"
import { decodeCursor, encodeCursor, type PageRequest } from "../orgs/Paging.ts"
import { defaultPageSize, type Page, pageOf } from "../domain/api/Paging.ts"
import { NullOr } from "../domain/NullOr.ts"

const isSourceKey = Schema.is(SourceKey)

/** No visible source has this key. */
export class SourceNotFound extends Schema.TaggedError<SourceNotFound>()("SourceNotFound", {
  key: Schema.String
}) {}

/** What `Sources.list` selects; every condition given applies (AND). */
export interface ListOptions {
  readonly category?: CategoryId | undefined
  /** Only sources in this status. */
  readonly status?: SourceStatus | undefined
  /** Case-insensitive substring of name, key or description. */
  readonly search?: string | undefined
  /** Only these keys. */
  readonly keys?: ReadonlyArray<string> | undefined
  /** Only keys after this one (the previous page's last key). */
  readonly after?: string | undefined
  readonly limit: number
}

/**
 * The cursor of `GET /sources`: base64url of the last key of the previous page. Opaque to
 * clients, so the encoding may change; decoding checks it is a well-formed key.
 */
const SourceCursor = Schema.StringFromBase64Url.pipe(Schema.decodeTo(SourceKey))
export const decodeSourceCursor = Schema.decodeUnknownEffect(SourceCursor)
const encodeSourceCursor = Schema.encodeSync(SourceCursor)

const invalidCursor = () =>
  new InvalidParameter({ field: "cursor", message: "cursor is not a value this API returned as next_cursor" })

/** What `GET /api/v1/sources`' query (decoded with `ListQuery`) selects; a cursor this API did not hand out is an `InvalidParameter` on `cursor`. */
const listOptions = Effect.fnUntraced(function*(query: typeof ListQuery.Type) {
  const after = query.cursor === undefined
    ? undefined
    : yield* decodeSourceCursor(query.cursor).pipe(Effect.mapError(invalidCursor))
  return {
    category: query.category,
    status: query.status,
    search: query.search,
    keys: query.filter,
    after,
    limit: query.limit ?? defaultLimit
  } satisfies ListOptions
})

/** The portal's catalog: a page of sources for the API's query. */
export const listSources = fnWhenTracing("Sources.listSources")((query: typeof ListQuery.Type) =>
  listOptions(query).pipe(Effect.flatMap((options) => Sources.use((s) => s.list(options)))))

/** `GET /api/v1/sources`: the same page as the API's JSON. */
export const listSourcesJson = fnWhenTracing("Sources.listSourcesJson")((query: typeof ListQuery.Type) =>
  listOptions(query).pipe(Effect.flatMap((options) => Sources.use((s) => s.listJson(options)))))

/** Read access to the sources the unauthenticated API may show: enabled catalog sources. */
export class Sources extends Context.Service<Sources, {
  /** A page of sources ordered by key. */
  list(options: ListOptions): Effect.Effect<Page<Source>>
  /** The same page as the API's JSON (`SourceList`), built by PostgreSQL (SourceJson.ts). */
  listJson(options: ListOptions): Effect.Effect<string>
  get(key: string): Effect.Effect<Source, SourceNotFound>
  /** The source as the API's JSON (`Source`). */
  getJson(key: string): Effect.Effect<string, SourceNotFound>
  /** The source's components as a tree: roots and each node's children ordered by position. */
  components(key: string): Effect.Effect<ReadonlyArray<Component>, SourceNotFound>
  /** The same tree as the API's JSON (`ComponentList`), each component's object built by PostgreSQL (SourceJson.ts). */
  componentsJson(key: string): Effect.Effect<string, SourceNotFound>
  /**
   * The components a check writes rows for (not groups), ordered by position, with the provider's id that
   * names them in ClickHouse: what the history of a source needs to name its strips.
   */
  checkedComponents(key: string): Effect.Effect<ReadonlyArray<CheckedComponent>, SourceNotFound>
  /** A page of the source's recorded incidents, newest first, with their updates and affected components. */
  incidents(key: string, page: PageRequest): Effect.Effect<IncidentList, SourceNotFound | InvalidParameter>
  /** A page of the maintenances the source's provider announced, latest window first. */
  maintenances(key: string, page: PageRequest): Effect.Effect<ProviderMaintenanceList, SourceNotFound | InvalidParameter>
}>()("statusgrid/api/Sources") {
  static readonly layer = Layer.effect(Sources, Effect.gen(function*() {
    const sql = yield* SqlClient
    const decodeJsonRows = rowsOf("sources", JsonRow)
    const decodeComponentJsonRows = Schema.decodeUnknownEffect(Schema.Array(Schema.Union([ComponentJsonRow, NoComponentRow])))

    // The one place that decides which sources this API shows.
    const visible = sql.literal(publicSourceCondition)

    /**
     * The page's sources as the API's JSON (SourceJson.ts), built for the page's rows only (not for every
     * match a sort ranks). `prepared: false` for a search: a prepared statement's plan is cached after five
     * runs as a generic plan that cannot know the pattern; unprepared, each search is planned for its own
     * pattern (the trigram index of migration 0026 for a rare one, the key order for a common one).
     */
    const select = (where: ReadonlyArray<Fragment>, limit: number, prepared = true) => {
      const statement = sql`
        SELECT p.key, ${sql.literal(sourceJson("p"))} AS json
        FROM (
          SELECT s.id, s.key, s.name, s.description, s.status, s.logo_url, s.status_page_url, s.service_url,
            s.components_count, s.incidents_count, s.check_class, s.provider_type, s.verified, s.poll_interval_s,
            s.has_history, s.regions, s.region_statuses
          FROM sources s
          WHERE ${sql.and([visible, ...where])}
          ORDER BY s.key
          LIMIT ${limit}
        ) p
        ORDER BY p.key`
      return (prepared ? statement : statement.unprepared).pipe(Effect.flatMap(decodeJsonRows))
    }

    const listJson = fnWhenTracing("Sources.listJson")(Effect.fnUntraced(function*(options: ListOptions) {
      const where: Array<Fragment> = []
      if (options.after !== undefined) where.push(sql`s.key > ${options.after}`)
      if (options.keys !== undefined) where.push(sql.in("s.key", options.keys))
      if (options.category !== undefined) {
        where.push(sql`EXISTS (
          SELECT 1 FROM source_categories sc WHERE sc.source_id = s.id AND sc.category_id = ${options.category})`)
      }
      if (options.status !== undefined) where.push(sql`s.status = ${options.status}`)
      const searching = options.search !== undefined && options.search !== ""
      if (searching) {
        // `search_text`: name, key and description lower-cased and joined (migration 0026).
        where.push(sql`s.search_text LIKE lower(${`%${escapeLike(options.search)}%`}) ESCAPE '\\'`)
      }
      // One row more than the page tells whether another page follows.
      const rows = yield* select(where, options.limit + 1, !searching)
      return pageJson(pageOf(rows, options.limit, (last) => encodeSourceCursor(SourceKey.make(last.key)), (row) => row.json))
    }, Effect.orDie))

    // A malformed key names no source; it never reaches the database (a NUL would fail the query).
    const find = (key: string) =>
      !isSourceKey(key) ? Effect.fail(new SourceNotFound({ key })) : select([sql`s.key = ${key}`], 1).pipe(
        Effect.orDie,
        Effect.flatMap((rows) => rows[0] === undefined ? Effect.fail(new SourceNotFound({ key })) : Effect.succeed(rows[0].json))
      )

    const getJson = fnWhenTracing("Sources.getJson")((key: string) => find(key))

    /** A visible source's id only (what the reads of its records need), without the source's own columns. */
    const idOf = (key: string) =>
      !isSourceKey(key) ? Effect.fail(new SourceNotFound({ key })) : sql<{ id: string }>`
        SELECT s.id FROM sources s WHERE ${sql.and([visible, sql`s.key = ${key}`])}`.pipe(
          Effect.orDie,
          Effect.flatMap((rows) => rows[0] === undefined ? Effect.fail(new SourceNotFound({ key })) : Effect.succeed(rows[0]))
        )

    // One statement: the source (no row: not found) and its components' JSON (one row with no component:
    // none), nested here as text (decision 0026): no object per component is decoded or encoded.
    const componentsJson = fnWhenTracing("Sources.componentsJson")(Effect.fnUntraced(function*(key: string) {
      if (!isSourceKey(key)) return yield* new SourceNotFound({ key })
      const rows = yield* sql`
        SELECT c.id, c.parent_id, CASE WHEN c.id IS NULL THEN NULL ELSE ${sql.literal(componentJson("c"))} END AS json
        FROM sources s LEFT JOIN components c ON c.source_id = s.id
        WHERE ${sql.and([visible, sql`s.key = ${key}`])}
        ORDER BY c.position, c.name, c.id`.pipe(Effect.flatMap(decodeComponentJsonRows), Effect.orDie)
      if (rows.length === 0) return yield* new SourceNotFound({ key })
      const roots = nestRows(rows.filter((r): r is ComponentJsonRow => r.id !== null), (row, children: ReadonlyArray<string>) =>
        withChildren(row.json, children))
      return `{"data":[${roots.join(",")}]}`
    }))

    const decodeChecked = Schema.decodeUnknownEffect(Schema.Array(CheckedComponent))
    const checkedComponents = fnWhenTracing("Sources.checkedComponents")(Effect.fnUntraced(function*(key: string) {
      const source = yield* idOf(key)
      return yield* sql`
        SELECT id, external_id, name, region FROM components WHERE source_id = ${source.id} AND NOT is_group
        ORDER BY position, name, id`.pipe(Effect.flatMap(decodeChecked), Effect.orDie)
    }))

    // Incidents and maintenances are paged newest first by (time, id), with the organization lists' cursor codec.
    const decodeIncidents = Schema.decodeUnknownEffect(Schema.Array(IncidentRow))
    const decodeUpdates = Schema.decodeUnknownEffect(Schema.Array(UpdateRow))
    const decodeMaintenances = Schema.decodeUnknownEffect(Schema.Array(MaintenanceRow))
    const decodeLinks = Schema.decodeUnknownEffect(Schema.Array(LinkRow))

    /** `{ owner id: components }` of the given incidents or maintenances, each list ordered by position. */
    const linked = (table: "incident_components" | "maintenance_components", column: string, ids: ReadonlyArray<string>) =>
      ids.length === 0 ? Effect.succeed(new Map<string, Array<{ id: string; name: string }>>()) : sql`
        SELECT l.${sql(column)} AS owner, c.id, c.name FROM ${sql(table)} l JOIN components c ON c.id = l.component_id
        WHERE l.${sql(column)} IN ${sql.in(ids)}
        ORDER BY c.position, c.name, c.id`.pipe(
          Effect.flatMap(decodeLinks),
          Effect.map((rows) => groupBy(rows, (r) => r.owner, (r) => ({ id: r.id, name: r.name })))
        )

    const incidents = fnWhenTracing("Sources.incidents")(Effect.fnUntraced(function*(key: string, page: PageRequest) {
      const after = yield* decodeCursor(page.cursor)
      const source = yield* idOf(key)
      const limit = page.limit ?? defaultPageSize
      const rows = yield* sql`
        SELECT id, external_id, title, status, impact, url, region, started_at, updated_at, resolved_at, update_count,
          ${sql.literal(micros("started_at"))}
        FROM incidents
        WHERE source_id = ${source.id}
          ${after === undefined ? sql`` : sql`AND (started_at, id) < (${after.at}::timestamptz, ${after.id}::uuid)`}
        ORDER BY started_at DESC, id DESC
        LIMIT ${limit + 1}`.pipe(Effect.flatMap(decodeIncidents), Effect.orDie)
      const shown = rows.slice(0, limit)
      const ids = shown.map((r) => r.id)
      const updates = ids.length === 0 ? new Map<string, Array<typeof UpdateRow.Type>>() : yield* sql`
        SELECT id, incident_id, external_id, status, body, created_at FROM incident_updates
        WHERE incident_id IN ${sql.in(ids)}
        ORDER BY created_at, id`.pipe(
          Effect.flatMap(decodeUpdates),
          Effect.map((list) => groupBy(list, (u) => u.incident_id, (u) => u)),
          Effect.orDie
        )
      const components = yield* linked("incident_components", "incident_id", ids).pipe(Effect.orDie)
      return pageOf(rows, limit, (last) => encodeCursor({ at: last.cursor_at, id: last.id }), (r): Incident => ({
        id: r.id,
        provider_id: r.external_id,
        title: r.title,
        status: r.status,
        impact: r.impact,
        url: r.url,
        region: r.region,
        started_at: r.started_at,
        updated_at: r.updated_at,
        resolved_at: r.resolved_at,
        update_count: r.update_count,
        updates: (updates.get(r.id) ?? []).map((u) => ({
          id: u.id,
          provider_id: u.external_id,
          status: u.status,
          body: u.body,
          created_at: u.created_at
        })),
        components: components.get(r.id) ?? []
      }))
    }))

    const maintenances = fnWhenTracing("Sources.maintenances")(Effect.fnUntraced(function*(key: string, page: PageRequest) {
      const after = yield* decodeCursor(page.cursor)
      const source = yield* idOf(key)
      const limit = page.limit ?? defaultPageSize
      const rows = yield* sql`
        SELECT id, external_id, title, status, url, scheduled_for, scheduled_until, ${sql.literal(micros("scheduled_for"))}
        FROM scheduled_maintenances
        WHERE source_id = ${source.id}
          ${after === undefined ? sql`` : sql`AND (scheduled_for, id) < (${after.at}::timestamptz, ${after.id}::uuid)`}
        ORDER BY scheduled_for DESC, id DESC
        LIMIT ${limit + 1}`.pipe(Effect.flatMap(decodeMaintenances), Effect.orDie)
      const shown = rows.slice(0, limit)
      const components = yield* linked("maintenance_components", "maintenance_id", shown.map((r) => r.id)).pipe(Effect.orDie)
      return pageOf(rows, limit, (last) => encodeCursor({ at: last.cursor_at, id: last.id }), (r): ProviderMaintenance => ({
        id: r.id,
        provider_id: r.external_id,
        title: r.title,
        status: r.status,
        url: r.url,
        scheduled_for: r.scheduled_for,
        scheduled_until: r.scheduled_until,
        components: components.get(r.id) ?? []
      }))
    }))

    // Public catalog reads are the same for every caller and change at most once per check: a
    // one-second micro-cache (API_CACHE_MS) turns repeated requests into memory reads.
    const ttlMs = yield* Config.Int("API_CACHE_MS").pipe(Config.withDefault(1000), Effect.orDie)
    const cached = makeMicroCache(ttlMs)
    const cachedList = (options: ListOptions) => cached(`list:${JSON.stringify(options)}`, listJson(options))
    const cachedGet = (key: string) => cached(`get:${key}`, getJson(key))
    const cachedComponents = (key: string) => cached(`components:${key}`, componentsJson(key))
    return Sources.of({
      list: (options) => cachedList(options).pipe(Effect.flatMap(decodeSourceList)),
      listJson: cachedList,
      get: (key) => cachedGet(key).pipe(Effect.flatMap(decodeSource)),
      getJson: cachedGet,
      components: (key) => cachedComponents(key).pipe(Effect.flatMap(decodeComponentList), Effect.map((list) => list.data)),
      componentsJson: cachedComponents,
      checkedComponents: (key) => cached(`checked:${key}`, checkedComponents(key)),
      incidents: (key, page) => cached(`incidents:${key}:${page.cursor ?? ""}:${page.limit ?? ""}`, incidents(key, page)),
      maintenances: (key, page) =>
        cached(`maintenances:${key}:${page.cursor ?? ""}:${page.limit ?? ""}`, maintenances(key, page))
    })
  }))
}


/** A source's key and its JSON as the API answers it (SourceJson.ts). */
const JsonRow = Schema.Struct({ key: Schema.String, json: Schema.String })

// The portal's reads decode the API's JSON: one mapping of a row to a `Source`, PostgreSQL's.
const decodeSourceList = (json: string) => decodeSourceListJson(json).pipe(Effect.orDie)
const decodeSourceListJson = Schema.decodeUnknownEffect(Schema.fromJsonString(SourceList))
const decodeSource = (json: string) => decodeSourceJson(json).pipe(Effect.orDie)
const decodeSourceJson = Schema.decodeUnknownEffect(Schema.fromJsonString(SourceSchema))
const decodeComponentList = (json: string) => decodeComponentListJson(json).pipe(Effect.orDie)
const decodeComponentListJson = Schema.decodeUnknownEffect(Schema.fromJsonString(ComponentList))

/** Selects `column` as `cursor_at`, to the microsecond as PostgreSQL keeps it (services/orgs/Paging.ts). */
const micros = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at`

const IncidentRow = Schema.Struct({
  id: Schema.String,
  external_id: Schema.String,
  title: Schema.String,
  status: IncidentStatus,
  impact: IncidentImpact,
  url: Schema.NullOr(Schema.String),
  region: Schema.NullOr(Schema.String),
  started_at: Schema.DateTimeUtcFromDate,
  updated_at: Schema.DateTimeUtcFromDate,
  resolved_at: NullOr(Schema.DateTimeUtcFromDate),
  update_count: Schema.Number,
  cursor_at: Schema.String
})

const UpdateRow = Schema.Struct({
  id: Schema.String,
  incident_id: Schema.String,
  external_id: Schema.String,
  status: IncidentStatus,
  body: Schema.String,
  created_at: Schema.DateTimeUtcFromDate
})

const MaintenanceRow = Schema.Struct({
  id: Schema.String,
  external_id: Schema.String,
  title: Schema.String,
  status: MaintenanceStatus,
  url: Schema.NullOr(Schema.String),
  scheduled_for: Schema.DateTimeUtcFromDate,
  scheduled_until: NullOr(Schema.DateTimeUtcFromDate),
  cursor_at: Schema.String
})

const LinkRow = Schema.Struct({ owner: Schema.String, id: Schema.String, name: Schema.String })

/** Groups `items` by `keyOf`, keeping their order, each mapped by `valueOf`. */
const groupBy = <A, B>(items: ReadonlyArray<A>, keyOf: (a: A) => string, valueOf: (a: A) => B): Map<string, Array<B>> => {
  const groups = new Map<string, Array<B>>()
  for (const item of items) {
    const group = groups.get(keyOf(item))
    if (group === undefined) groups.set(keyOf(item), [valueOf(item)])
    else group.push(valueOf(item))
  }
  return groups
}

/** A component that checks write rows for: its id in the API, the provider's id (ClickHouse's `component_id`), its name and region. */
export const CheckedComponent = Schema.Struct({
  id: Schema.String,
  external_id: Schema.String,
  name: Schema.String,
  region: Schema.NullOr(Schema.String)
})
export type CheckedComponent = typeof CheckedComponent.Type

/** A component's id, parent and JSON without its children (SourceJson.ts `componentJson`). */
const ComponentJsonRow = Schema.Struct({
  id: Schema.String,
  parent_id: Schema.NullOr(Schema.String),
  json: Schema.String
})
type ComponentJsonRow = typeof ComponentJsonRow.Type
/** The source's row joined to no component. */
const NoComponentRow = Schema.Struct({ id: Schema.Null, parent_id: Schema.Null, json: Schema.Null })

/** `%`, `_` and the escape character itself match literally in a LIKE pattern. */
export const escapeLike = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`)

/**
 * Nests rows by `parent_id`, keeping the order of `rows` among siblings; `build` makes a node of a row
 * and its children's nodes. A row whose parent is missing is a root; a cycle (which the schema does
 * not forbid) is cut where it is first entered, so no row is lost.
 */
export const nestRows = <R extends { readonly id: string; readonly parent_id: string | null }, T>(
  rows: ReadonlyArray<R>,
  build: (row: R, children: ReadonlyArray<T>) => T
): Array<T> => {
  const ids = new Set(rows.map((r) => r.id))
  const children = new Map<string, Array<R>>()
  for (const row of rows) {
    if (row.parent_id === null || !ids.has(row.parent_id)) continue
    const siblings = children.get(row.parent_id)
    if (siblings === undefined) children.set(row.parent_id, [row])
    else siblings.push(row)
  }
  const placed = new Set<string>()
  const node = (row: R): T => {
    placed.add(row.id)
    const kids = (children.get(row.id) ?? []).filter((c) => !placed.has(c.id))
    for (const kid of kids) placed.add(kid.id)
    return build(row, kids.map(node))
  }
  const roots = rows.filter((r) => r.parent_id === null || !ids.has(r.parent_id)).map(node)
  // Whatever a cycle kept out of reach becomes a root, in row order.
  for (const row of rows) if (!placed.has(row.id)) roots.push(node(row))
  return roots
}
