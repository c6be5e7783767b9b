import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Catalog from "../../services/catalog/Catalog.ts"
import { CategoryId, categoryNames, inCategoryOrder } from "../../services/domain/Source.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { freshDatabase } from "../support/stores.ts"

const server = Layer.unwrap(Effect.map(freshDatabase, (url) => Postgres.layerServer(url, { maxConnections: 4 })))

const count = (query: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const rows = yield* sql.unsafe<{ n: number }>(query)
    return rows[0]!.n
  })

describe("Catalog", () => {
  layer(server, { timeout: 120_000, excludeTestServices: true })("on PostgreSQL", (it) => {
    it.effect("the default catalog is the real seed: 1,143 status pages in all six categories, nothing synthetic", () =>
      Effect.gen(function*() {
        yield* Migrations.migratePostgres()
        const entries = yield* Catalog.realSeed()
        assert.strictEqual(entries.length, 1143)
        assert.isTrue(entries.every((e) => !e.synthetic && !e.key.startsWith("sim-")))
        assert.isTrue(entries.some((e) => e.name === "Circle CI" && e.status_page_url === "https://status.circleci.com"))

        assert.strictEqual(yield* Catalog.seedIfEmpty(), entries.length)
        assert.strictEqual(yield* Catalog.seedIfEmpty(), 0)
        assert.strictEqual(yield* count("SELECT count(*)::int AS n FROM sources WHERE kind = 'catalog'"), entries.length)
        const sql = yield* SqlClient
        const byCategory = yield* sql<{ category_id: string; n: number }>`
          SELECT category_id, count(*)::int AS n FROM source_categories GROUP BY category_id ORDER BY category_id`
        assert.deepStrictEqual(byCategory.map((r) => r.category_id), ["cdn_dns", "cloud", "communication", "devtools", "monitoring", "payment"])
        for (const r of byCategory) assert.isAbove(r.n, 20)
        // The domain's list of categories is the table's, in its order and with its names (lists order a
        // source's categories by `inCategoryOrder`, not by a join per row).
        const table = yield* sql<{ id: string; name: string }>`SELECT id, name FROM categories ORDER BY position, id`
        assert.deepStrictEqual(table.map((c) => c.id), [...CategoryId.literals])
        assert.deepStrictEqual(table.map((c) => c.name), CategoryId.literals.map((c) => categoryNames[c]))
        assert.deepStrictEqual(inCategoryOrder(["cdn_dns", "payment", "cloud"]), ["cloud", "payment", "cdn_dns"])
        // Check classes set the poll interval.
        assert.strictEqual(
          yield* count("SELECT count(*)::int AS n FROM sources WHERE check_class = 'critical' AND poll_interval_s <> 30"),
          0
        )
        // Hosts that give the provider away are typed at load time.
        const [github] = yield* sql<{ provider_type: string | null }>`
          SELECT provider_type FROM sources WHERE status_page_url = 'https://www.githubstatus.com'`
        assert.deepStrictEqual(github, { provider_type: "github" })
      }))

    it.effect("synthetic sources are served and polled only while a demo enables them; the real ones are untouched", () =>
      Effect.gen(function*() {
        const enabledSynthetic = "SELECT count(*)::int AS n FROM sources WHERE synthetic AND enabled"
        const enabledReal = "SELECT count(*)::int AS n FROM sources WHERE kind = 'catalog' AND NOT synthetic AND enabled"
        const real = yield* count(enabledReal)
        assert.deepStrictEqual(yield* Catalog.enableSynthetic(Catalog.syntheticEntries(50, "http://127.0.0.1:4555")), { enabled: 50, changed: 0 })
        assert.strictEqual(yield* count(enabledSynthetic), 50)
        // A smaller demo at another simulator address: the rest is disabled, URLs follow, detection's place is reset.
        const sql = yield* SqlClient
        yield* sql`UPDATE sources SET poll_url = 'http://127.0.0.1:4555/elsewhere' WHERE synthetic`
        const again = yield* Catalog.enableSynthetic(Catalog.syntheticEntries(20, "http://127.0.0.1:4666"))
        assert.deepStrictEqual(again, { enabled: 20, changed: 50 })
        assert.strictEqual(yield* count(enabledSynthetic), 20)
        assert.strictEqual(yield* count("SELECT count(*)::int AS n FROM sources WHERE synthetic AND enabled AND poll_url IS NULL AND status_page_url LIKE 'http://127.0.0.1:4666/s/sim-%'"), 20)
        // Seeding counts real sources only.
        assert.strictEqual(yield* Catalog.seedIfEmpty(), 0)

        assert.strictEqual(yield* Catalog.disableSynthetic(), 20)
        assert.strictEqual(yield* Catalog.disableSynthetic(), 0)
        assert.strictEqual(yield* count(enabledSynthetic), 0)
        assert.strictEqual(yield* count("SELECT count(*)::int AS n FROM sources WHERE synthetic"), 50)
        assert.strictEqual(yield* count(enabledReal), real)
        // A benchmark or a demo on such a data directory enables its own again.
        assert.deepStrictEqual(yield* Catalog.enableSynthetic(Catalog.syntheticEntries(20, "http://127.0.0.1:4666")), { enabled: 20, changed: 20 })
        assert.strictEqual(yield* count(enabledSynthetic), 20)
        yield* sql`DELETE FROM sources WHERE synthetic`
      }))

    it.effect("export and import round-trip in both formats, updating by key", () =>
      Effect.gen(function*() {
        const exported = yield* Catalog.exportAll()
        const csv = yield* Catalog.parseFile(Catalog.toCsv(exported), "csv")
        const json = yield* Catalog.parseFile(JSON.stringify(exported), "json")
        assert.deepStrictEqual(csv, json)
        assert.strictEqual(csv.length, exported.length)
        const edited = csv.map((e) => (e.key === "circle-ci" ? { ...e, description: "Edited by an operator." } : e))
        const result = yield* Catalog.load(edited)
        assert.deepStrictEqual(result, { inserted: 0, updated: exported.length })
        const after = yield* Catalog.exportAll()
        assert.strictEqual(after.find((e) => e.key === "circle-ci")?.description, "Edited by an operator.")
      }))

    it.effect("an invalid row fails the file, naming the row and field, and loads nothing", () =>
      Effect.gen(function*() {
        const good = { key: "new-source", name: "New", status_page_url: "https://status.new.example", categories: ["cloud"], check_class: "high" }
        const bad = { ...good, key: "other", categories: ["weather"] }
        const error = yield* Effect.flip(Catalog.parseFile(JSON.stringify([good, bad]), "json"))
        assert.match(error.message, /^row 2: /)
        assert.match(error.message, /categories/)
        const badType = yield* Effect.flip(Catalog.parseFile(JSON.stringify([{ ...good, provider_type: "myspace" }]), "json"))
        assert.match(badType.message, /unknown provider type "myspace"/)
        const dup = yield* Effect.flip(Catalog.parseFile(JSON.stringify([good, good]), "json"))
        assert.match(dup.message, /appears twice/)
        assert.strictEqual(yield* count("SELECT count(*)::int AS n FROM sources WHERE key IN ('new-source', 'other')"), 0)

        const csvMissing = yield* Effect.flip(Catalog.parseFile("key,name\nx,X\n", "csv"))
        assert.match(csvMissing.message, /lacks columns: description/)
      }))

    it.effect("refuses a key held by an organization's custom source, and rolls back", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const [org] = yield* sql<{ id: string }>`INSERT INTO organizations (slug, name) VALUES ('acme', 'Acme') RETURNING id`
        yield* sql`INSERT INTO sources (organization_id, key, name, kind) VALUES (${org!.id}, 'acme-internal', 'Internal', 'manual')`
        const entries = yield* Catalog.parseFile(JSON.stringify([
          { key: "fresh-one", name: "Fresh", status_page_url: "https://status.fresh.example", categories: ["cloud"], check_class: "low" },
          { key: "acme-internal", name: "Clash", status_page_url: "https://status.clash.example", categories: ["cloud"], check_class: "low" }
        ]), "json")
        const error = yield* Effect.flip(Catalog.load(entries))
        assert.match(error.message, /acme-internal belongs to an organization's custom source/)
        assert.strictEqual(yield* count("SELECT count(*)::int AS n FROM sources WHERE key = 'fresh-one'"), 0)
      }))
  })
})
