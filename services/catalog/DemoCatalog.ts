import { Array as Arr, Effect, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { checkClassIntervalSeconds, keyFromName } from "../domain/Source.ts"

export class DemoCatalogError extends Schema.TaggedError<DemoCatalogError>()("DemoCatalogError", {
  cause: Schema.Defect()
}) {}

export interface CatalogEntry {
  readonly key: string
  readonly name: string
  readonly status_page_url: string
}

/**
 * Parses the seed list (name TAB status page URL, with a header row) into
 * catalog entries with unique keys: a repeated name gets "-2", "-3", ...
 * Rows without a name or an http(s) URL are skipped.
 */
export const parseTsv = (text: string): Array<CatalogEntry> => {
  const seen = new Map<string, number>()
  const out: Array<CatalogEntry> = []
  for (const line of text.split(/\r?\n/).slice(1)) {
    const [rawName, rawUrl] = line.split("\t")
    const name = rawName?.trim() ?? ""
    const url = rawUrl?.trim() ?? ""
    if (name === "" || !/^https?:\/\/\S+$/i.test(url)) continue
    const base = keyFromName(name)
    const n = (seen.get(base) ?? 0) + 1
    seen.set(base, n)
    out.push({ key: n === 1 ? base : `${base.slice(0, 124)}-${n}`, name, status_page_url: url })
  }
  return out
}

export const seedFile = Path.resolve(import.meta.dirname, "data", "status-pages.tsv")

/**
 * Loads the demo catalog (1,143 real public status pages) into `sources` as
 * standard-class catalog sources whose provider type is still to be detected.
 * Existing keys are left as they are, so running it again changes nothing.
 * Returns how many sources it added.
 */
export const seed = Effect.fn("DemoCatalog.seed")(function*() {
  const sql = yield* SqlClient
  const text = yield* Effect.tryPromise({
    try: () => Fs.readFile(seedFile, "utf8"),
    catch: (cause) => new DemoCatalogError({ cause })
  })
  const rows: Array<Record<string, unknown>> = parseTsv(text).map((e) => ({
    key: e.key,
    name: e.name,
    kind: "catalog",
    status_page_url: e.status_page_url,
    check_class: "standard",
    poll_interval_s: checkClassIntervalSeconds.standard
  }))
  let added = 0
  for (let i = 0; i < rows.length; i += 500) {
    const batch = rows.slice(i, i + 500)
    if (!Arr.isReadonlyArrayNonEmpty(batch)) break
    const inserted = yield* sql`INSERT INTO sources ${sql.insert(batch)} ON CONFLICT (key) DO NOTHING RETURNING key`
    added += inserted.length
  }
  return added
})
