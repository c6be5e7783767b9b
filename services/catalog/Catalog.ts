import { Array as Arr, Effect, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import type { Adapter } from "../adapters/Adapter.ts"
import { adapters, isProviderId } from "../adapters/registry.ts"
import { CategoryId, CheckClass, checkClassIntervalSeconds, keyFromName, SourceKey } from "../domain/Source.ts"
import { formatCsv, parseCsv } from "./Csv.ts"
import { syntheticSpecs, syntheticUrl } from "./Synthetic.ts"
import { rowsOf } from "../platform/Rows.ts"

/** The rows of the queries below, decoded by Schemas compiled once (services/platform/Rows.ts). */
const sourcesIdKeyInsertedRows = rowsOf("sources", Schema.Struct({
  id: Schema.String,
  key: Schema.String,
  inserted: Schema.Boolean
}))
const sourcesNRows = rowsOf("sources", Schema.Struct({ n: Schema.Number }))
const sourcesKeyRows = rowsOf("sources", Schema.Struct({ key: Schema.String }))

export class CatalogError extends Schema.TaggedError<CatalogError>()("CatalogError", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {}

const HttpUrl = Schema.String.pipe(Schema.check(Schema.isPattern(/^https?:\/\/[^\s/]+\S*$/, {
  message: "an http(s) URL"
})))

/** One catalog source as imported and exported (JSON objects, or CSV rows with `|` between categories). */
export const CatalogEntry = Schema.Struct({
  key: SourceKey,
  name: Schema.String.pipe(Schema.check(Schema.isTrimmed(), Schema.isNonEmpty())),
  description: Schema.String,
  status_page_url: HttpUrl,
  service_url: Schema.NullOr(HttpUrl),
  logo_url: Schema.NullOr(HttpUrl),
  provider_type: Schema.NullOr(Schema.String.pipe(Schema.check(Schema.makeFilter((s: string) =>
    isProviderId(s) || `unknown provider type ${JSON.stringify(s)}`
  )))),
  categories: Schema.Array(CategoryId).pipe(Schema.check(Schema.isMinLength(1))),
  check_class: CheckClass,
  synthetic: Schema.Boolean
})
export type CatalogEntry = typeof CatalogEntry.Type

export const csvColumns = [
  "key", "name", "description", "status_page_url", "service_url", "logo_url", "provider_type", "categories",
  "check_class", "synthetic"
] as const

const dataDir = Path.resolve(import.meta.dirname, "data")

/** The provider a URL's host alone gives away (no network), or null. */
const providerByHost = (url: string): string | null => {
  try {
    const parsed = new URL(url)
    return adapters.find((a: Adapter) => a.detect.host?.(parsed))?.id ?? null
  } catch {
    return null
  }
}

const readData = (file: string) =>
  Effect.tryPromise({
    try: () => Fs.readFile(Path.join(dataDir, file), "utf8"),
    catch: (cause) => new CatalogError({ message: `cannot read ${file}`, cause })
  })

const tsvRows = (text: string) => text.split(/\r?\n/).slice(1).filter((l) => l.trim() !== "").map((l) => l.split("\t"))

/**
 * The real seed: 1,143 public status pages (`data/status-pages.tsv`) with the
 * categories, check class, service URL and description of `data/seed-metadata.tsv`.
 * Keys come from names; a repeated name gets "-2", "-3", ...
 */
export const realSeed = Effect.fn("Catalog.realSeed")(function*() {
  const pages = tsvRows(yield* readData("status-pages.tsv"))
  const metadata = new Map(tsvRows(yield* readData("seed-metadata.tsv")).map((r) => [r[0]!, r]))
  const seen = new Map<string, number>()
  const entries: Array<CatalogEntry> = []
  for (const [rawName, rawUrl] of pages) {
    const name = rawName?.trim() ?? ""
    const url = rawUrl?.trim() ?? ""
    if (name === "" || !/^https?:\/\/\S+$/i.test(url)) continue
    const base = keyFromName(name)
    const n = (seen.get(base) ?? 0) + 1
    seen.set(base, n)
    const meta = metadata.get(url)
    entries.push(yield* decodeEntry({
      key: n === 1 ? base : `${base.slice(0, 124)}-${n}`,
      name,
      description: meta?.[4] ?? "",
      status_page_url: url,
      service_url: meta?.[3] || null,
      logo_url: null,
      provider_type: providerByHost(url),
      categories: (meta?.[1] ?? "devtools").split(","),
      check_class: meta?.[2] ?? "standard",
      synthetic: false
    }, `status-pages.tsv: ${name}`))
  }
  return entries
})

/** The first `count` synthetic sources, pointing at the simulator at `simulatorUrl`. */
export const syntheticEntries = (count: number, simulatorUrl: string): Array<CatalogEntry> =>
  syntheticSpecs(count).map((spec) => ({
    key: spec.key as SourceKey,
    name: spec.name,
    description: `Synthetic source served by the statusgrid simulator (${spec.provider} format).`,
    status_page_url: syntheticUrl(spec, simulatorUrl),
    service_url: null,
    logo_url: null,
    provider_type: spec.provider,
    categories: spec.categories,
    check_class: spec.check_class,
    synthetic: true
  }))

/**
 * The synthetic sources of the demo (`statusgrid start --demo`): 4,100, served by the simulator the
 * demo runs beside the service. Production installs load only the real seed.
 */
export const demoSyntheticCount = 4100

const decodeEntry = (value: unknown, where: string) =>
  Schema.decodeUnknownEffect(CatalogEntry)(value).pipe(
    Effect.mapError((error) => new CatalogError({ message: `${where}: ${error.message}` }))
  )

/**
 * A catalog file's entries, validated: a JSON array of entries, or CSV with
 * the `csvColumns` header. An invalid row fails the whole file, naming the
 * row and the field, and nothing is loaded.
 */
export const parseFile = Effect.fn("Catalog.parseFile")(function*(text: string, format: "json" | "csv") {
  let rows: Array<unknown>
  if (format === "json") {
    const parsed = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: (cause) => new CatalogError({ message: `not valid JSON: ${(cause as Error).message}` })
    })
    if (!Array.isArray(parsed)) return yield* new CatalogError({ message: "a JSON catalog is an array of sources" })
    rows = parsed
  } else {
    const table = yield* Effect.try({
      try: () => parseCsv(text),
      catch: (cause) => new CatalogError({ message: `not valid CSV: ${(cause as Error).message}` })
    })
    const [header, ...body] = table
    const missing = csvColumns.filter((c) => !header?.includes(c))
    if (!header || missing.length > 0) {
      return yield* new CatalogError({ message: `CSV header lacks columns: ${missing.join(", ")}` })
    }
    rows = body.map((cells) => {
      const field = (name: string) => cells[header.indexOf(name)] ?? ""
      const orNull = (name: string) => (field(name) === "" ? null : field(name))
      return {
        key: field("key"),
        name: field("name"),
        description: field("description"),
        status_page_url: field("status_page_url"),
        service_url: orNull("service_url"),
        logo_url: orNull("logo_url"),
        provider_type: orNull("provider_type"),
        categories: field("categories").split("|").filter((c) => c !== ""),
        check_class: field("check_class"),
        synthetic: field("synthetic") === "true"
      }
    })
  }
  const entries: Array<CatalogEntry> = []
  for (const [i, row] of rows.entries()) {
    // Optional columns may be left out of JSON objects.
    const filled = typeof row === "object" && row !== null
      ? { description: "", service_url: null, logo_url: null, provider_type: null, synthetic: false, ...row }
      : row
    entries.push(yield* decodeEntry(filled, `row ${i + 1}`))
  }
  const keys = new Set<string>()
  for (const [i, e] of entries.entries()) {
    if (keys.has(e.key)) return yield* new CatalogError({ message: `row ${i + 1}: key: ${e.key} appears twice` })
    keys.add(e.key)
  }
  return entries
})

/** A catalog row as stored: looser than an importable entry (older rows may lack categories). */
const ExportRow = Schema.Struct({
  ...CatalogEntry.fields,
  key: Schema.String,
  categories: Schema.Array(Schema.String),
  provider_type: Schema.NullOr(Schema.String)
})

export const toCsv = (entries: ReadonlyArray<typeof ExportRow.Type>): string =>
  formatCsv([
    [...csvColumns],
    ...entries.map((e) => [
      e.key, e.name, e.description, e.status_page_url, e.service_url ?? "", e.logo_url ?? "", e.provider_type ?? "",
      e.categories.join("|"), e.check_class, String(e.synthetic)
    ])
  ])

/**
 * Inserts or updates catalog sources by key, with their categories, in one
 * transaction. A key held by an organization's custom source is refused.
 * Returns how many sources were inserted and updated.
 */
export const load = Effect.fn("Catalog.load")(function*(entries: ReadonlyArray<CatalogEntry>) {
  const sql = yield* SqlClient
  const counts = yield* sql.withTransaction(Effect.gen(function*() {
    let inserted = 0
    let updated = 0
    for (const batch of Arr.chunksOf(entries, 500)) {
      const rows: Array<Record<string, unknown>> = batch.map((e) => ({
        key: e.key,
        name: e.name,
        description: e.description,
        kind: "catalog",
        provider_type: e.provider_type,
        status_page_url: e.status_page_url,
        service_url: e.service_url,
        logo_url: e.logo_url,
        check_class: e.check_class,
        poll_interval_s: checkClassIntervalSeconds[e.check_class],
        synthetic: e.synthetic
      }))
      if (!Arr.isReadonlyArrayNonEmpty(rows)) continue
      const result = yield* sql`
        INSERT INTO sources ${sql.insert(rows)}
        ON CONFLICT (key) DO UPDATE SET
          name = EXCLUDED.name, description = EXCLUDED.description,
          provider_type = coalesce(EXCLUDED.provider_type, sources.provider_type),
          status_page_url = EXCLUDED.status_page_url, service_url = EXCLUDED.service_url,
          logo_url = EXCLUDED.logo_url, check_class = EXCLUDED.check_class,
          poll_interval_s = EXCLUDED.poll_interval_s, synthetic = EXCLUDED.synthetic, updated_at = now()
        WHERE sources.kind = 'catalog'
        RETURNING id, key, (xmax = 0) AS inserted`.pipe(Effect.flatMap(sourcesIdKeyInsertedRows))
      if (result.length < rows.length) {
        const done = new Set(result.map((r) => r.key))
        const clash = batch.find((e) => !done.has(e.key))
        return yield* new CatalogError({ message: `key: ${clash?.key} belongs to an organization's custom source` })
      }
      inserted += result.filter((r) => r.inserted).length
      updated += result.filter((r) => !r.inserted).length
      const ids = result.map((r) => r.id)
      yield* sql`DELETE FROM source_categories WHERE source_id IN ${sql.in(ids)}`
      const byKey = new Map(batch.map((e) => [e.key as string, e]))
      const links: Array<Record<string, unknown>> = result.flatMap((r) => byKey.get(r.key)!.categories.map((category_id) => ({ source_id: r.id, category_id })))
      if (Arr.isReadonlyArrayNonEmpty(links)) yield* sql`INSERT INTO source_categories ${sql.insert(links)}`
    }
    return { inserted, updated }
  }))
  // After a bulk load the planner's statistics are stale until autovacuum runs (PGlite has none):
  // without them a search plans a full scan and sort instead of walking the key index.
  if (counts.inserted > 100) yield* sql`ANALYZE sources, source_categories`
  return counts
})

/** Loads the real seed when no real catalog source exists yet; returns how many it added. */
export const seedIfEmpty = Effect.fn("Catalog.seedIfEmpty")(function*() {
  const sql = yield* SqlClient
  const [row] = yield* sql`SELECT count(*)::int AS n FROM sources WHERE kind = 'catalog' AND NOT synthetic`.pipe(Effect.flatMap(sourcesNRows))
  if ((row?.n ?? 0) > 0) return 0
  const { inserted } = yield* load(yield* realSeed())
  return inserted
})

/**
 * Serves and polls exactly these synthetic sources (the demo's): loads them
 * (inserting or updating by key, so their URLs follow the simulator), enables
 * them, and disables every other synthetic source. The place read by the
 * poller is reset to the status page, since an older one may point at
 * another simulator address. Returns how many it enabled.
 */
export const enableSynthetic = Effect.fn("Catalog.enableSynthetic")(function*(entries: ReadonlyArray<CatalogEntry>) {
  const sql = yield* SqlClient
  // One transaction: a demo never starts with half its sources enabled.
  return yield* sql.withTransaction(Effect.gen(function*() {
    const synthetic = entries.filter((e) => e.synthetic)
    yield* load(synthetic)
    const keys = synthetic.map((e) => e.key as string)
    // Semi-joins on the key list (hashed), not `key = ANY(...)` per row: 4,100 keys against 4,100 rows.
    const enabled = yield* sql`
      UPDATE sources SET enabled = true, poll_url = NULL, updated_at = now()
      WHERE synthetic AND key IN (SELECT unnest(${keys}::text[])) AND (NOT enabled OR poll_url IS NOT NULL)
      RETURNING key`.pipe(Effect.flatMap(sourcesKeyRows))
    const disabled = yield* sql`
      UPDATE sources SET enabled = false, updated_at = now()
      WHERE synthetic AND enabled AND key NOT IN (SELECT unnest(${keys}::text[]))
      RETURNING key`.pipe(Effect.flatMap(sourcesKeyRows))
    return { enabled: keys.length, changed: enabled.length + disabled.length }
  }))
})

/**
 * Neither serves nor polls any synthetic source (a start without --demo):
 * they stay stored, disabled, with their history and the stack items that
 * name them. Returns how many it disabled.
 */
export const disableSynthetic = Effect.fn("Catalog.disableSynthetic")(function*() {
  const sql = yield* SqlClient
  const rows = yield* sql`
    UPDATE sources SET enabled = false, updated_at = now() WHERE synthetic AND enabled RETURNING key`.pipe(Effect.flatMap(sourcesKeyRows))
  return rows.length
})

/** Every catalog source, ordered by key, in the file format `parseFile` reads. */
export const exportAll = Effect.fn("Catalog.exportAll")(function*() {
  const sql = yield* SqlClient
  const rows = yield* sql`
    SELECT s.key, s.name, s.description, s.status_page_url, s.service_url, s.logo_url, s.provider_type,
           coalesce(array_agg(sc.category_id ORDER BY sc.category_id) FILTER (WHERE sc.category_id IS NOT NULL), '{}') AS categories,
           s.check_class, s.synthetic
    FROM sources s LEFT JOIN source_categories sc ON sc.source_id = s.id
    WHERE s.kind = 'catalog'
    GROUP BY s.id ORDER BY s.key`
  return yield* Schema.decodeUnknownEffect(Schema.Array(ExportRow))(rows).pipe(
    Effect.mapError((error) => new CatalogError({ message: `unexpected catalog row: ${error.message}` }))
  )
})
