import { Config, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { makeMicroCache } from "./MicroCache.ts"
import type { Fragment } from "effect/sql/Statement"
import type { Component, Source } from "../domain/api/Sources.ts"
import { CategoryId, CheckClass, SourceKey } from "../domain/Source.ts"
import { ComponentStatus, SourceStatus } from "../domain/Status.ts"

const isSourceKey = Schema.is(SourceKey)

/** No visible source has this key. */
export class SourceNotFound extends Schema.TaggedError<SourceNotFound>()("SourceNotFound", {
  key: Schema.String
}) {}

/** What `Sources.list` selects; every condition given applies (AND). */
export interface ListOptions {
  readonly category?: CategoryId | undefined
  /** Case-insensitive substring of name, key or description. */
  readonly search?: string | undefined
  /** Only these keys. */
  readonly keys?: ReadonlyArray<string> | undefined
  /** Only keys after this one (the previous page's last key). */
  readonly after?: string | undefined
  readonly limit: number
}

export interface SourcePage {
  readonly sources: ReadonlyArray<Source>
  /** Whether sources follow the last one of this page. */
  readonly more: boolean
}

/** Read access to the sources the unauthenticated API may show: enabled catalog sources. */
export class Sources extends Context.Service<Sources, {
  /** A page of sources ordered by key. */
  list(options: ListOptions): Effect.Effect<SourcePage>
  get(key: string): Effect.Effect<Source, SourceNotFound>
  /** The source's components as a tree: roots and each node's children ordered by position. */
  components(key: string): Effect.Effect<ReadonlyArray<Component>, SourceNotFound>
}>()("statusgrid/api/Sources") {
  static readonly layer = Layer.effect(Sources, Effect.gen(function*() {
    const sql = yield* SqlClient
    const decodeSources = Schema.decodeUnknownEffect(Schema.Array(SourceRow))
    const decodeComponents = Schema.decodeUnknownEffect(Schema.Array(ComponentRow))

    // The one place that decides which sources this API shows.
    const visible = sql`s.organization_id IS NULL AND s.kind = 'catalog' AND s.enabled`

    const select = (where: ReadonlyArray<Fragment>, limit: number) =>
      sql`
        SELECT s.id, s.key, s.name, s.description, s.status, s.logo_url, s.status_page_url, s.service_url,
          s.components_count, s.incidents_count, s.last_checked_at, s.check_class, s.provider_type,
          s.verified, s.poll_interval_s < 60 AS realtime, s.has_history AS historical,
          cardinality(s.regions) > 0 AS regional,
          ARRAY(
            SELECT sc.category_id FROM source_categories sc JOIN categories c ON c.id = sc.category_id
            WHERE sc.source_id = s.id ORDER BY c.position, c.id
          ) AS categories
        FROM sources s
        WHERE ${sql.and([visible, ...where])}
        ORDER BY s.key
        LIMIT ${limit}`.pipe(
          Effect.flatMap(decodeSources),
          Effect.map((rows) => rows.map(toSource))
        )

    const list = Effect.fn("Sources.list")(function*(options: ListOptions) {
      const where: Array<Fragment> = []
      if (options.after !== undefined) where.push(sql`s.key > ${options.after}`)
      if (options.keys !== undefined) where.push(sql.in("s.key", options.keys))
      if (options.category !== undefined) {
        where.push(sql`EXISTS (
          SELECT 1 FROM source_categories sc WHERE sc.source_id = s.id AND sc.category_id = ${options.category})`)
      }
      if (options.search !== undefined && options.search !== "") {
        const pattern = `%${escapeLike(options.search)}%`
        where.push(sql`(s.name ILIKE ${pattern} ESCAPE '\\' OR s.key ILIKE ${pattern} ESCAPE '\\'
          OR s.description ILIKE ${pattern} ESCAPE '\\')`)
      }
      // One row more than the page tells whether another page follows.
      const rows = yield* select(where, options.limit + 1)
      return { sources: rows.slice(0, options.limit), more: rows.length > options.limit }
    }, Effect.orDie)

    // A malformed key names no source; it never reaches the database (a NUL would fail the query).
    const find = (key: string) =>
      !isSourceKey(key) ? Effect.fail(new SourceNotFound({ key })) : select([sql`s.key = ${key}`], 1).pipe(
        Effect.orDie,
        Effect.flatMap((rows) => rows[0] === undefined ? Effect.fail(new SourceNotFound({ key })) : Effect.succeed(rows[0]))
      )

    const get = Effect.fn("Sources.get")((key: string) => find(key))

    const components = Effect.fn("Sources.components")(function*(key: string) {
      const source = yield* find(key)
      const rows = yield* sql`
        SELECT id, parent_id, name, description, status, is_group, region
        FROM components WHERE source_id = ${source.id}
        ORDER BY position, name, id`.pipe(Effect.flatMap(decodeComponents), Effect.orDie)
      return componentTree(rows)
    })

    // Public catalog reads are the same for every caller and change at most once per check: a
    // one-second micro-cache (API_CACHE_MS) turns repeated requests into memory reads.
    const ttlMs = yield* Config.Int("API_CACHE_MS").pipe(Config.withDefault(1000), Effect.orDie)
    const cached = makeMicroCache(ttlMs)
    return Sources.of({
      list: (options) => cached(`list:${JSON.stringify(options)}`, list(options)),
      get: (key) => cached(`get:${key}`, get(key)),
      components: (key) => cached(`components:${key}`, components(key))
    })
  }))
}

const SourceRow = Schema.Struct({
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
  realtime: Schema.Boolean,
  historical: Schema.Boolean,
  regional: Schema.Boolean,
  categories: Schema.Array(CategoryId)
})
type SourceRow = typeof SourceRow.Type

const toSource = ({ verified, realtime, historical, regional, ...row }: SourceRow): Source => ({
  ...row,
  reliability: { verified, realtime, historical, regional }
})

const ComponentRow = Schema.Struct({
  id: Schema.String,
  parent_id: Schema.NullOr(Schema.String),
  name: Schema.String,
  description: Schema.String,
  status: ComponentStatus,
  is_group: Schema.Boolean,
  region: Schema.NullOr(Schema.String)
})
type ComponentRow = typeof ComponentRow.Type

/** `%`, `_` and the escape character itself match literally in a LIKE pattern. */
export const escapeLike = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`)

/**
 * Nests components by `parent_id`, keeping the order of `rows` among siblings.
 * A component whose parent is missing is a root; a cycle (which the schema
 * does not forbid) is cut where it is first entered, so no component is lost.
 */
export const componentTree = (rows: ReadonlyArray<ComponentRow>): ReadonlyArray<Component> => {
  const ids = new Set(rows.map((r) => r.id))
  const children = new Map<string, Array<ComponentRow>>()
  for (const row of rows) {
    if (row.parent_id === null || !ids.has(row.parent_id)) continue
    const siblings = children.get(row.parent_id)
    if (siblings === undefined) children.set(row.parent_id, [row])
    else siblings.push(row)
  }
  const placed = new Set<string>()
  const build = (row: ComponentRow): Component => {
    placed.add(row.id)
    const { parent_id: _parent, ...fields } = row
    const kids = (children.get(row.id) ?? []).filter((c) => !placed.has(c.id))
    for (const kid of kids) placed.add(kid.id)
    return { ...fields, children: kids.map(build) }
  }
  const roots = rows.filter((r) => r.parent_id === null || !ids.has(r.parent_id)).map(build)
  // Whatever a cycle kept out of reach becomes a root, in row order.
  for (const row of rows) if (!placed.has(row.id)) roots.push(build(row))
  return roots
}
