import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, layer } from "@effect/vitest"
import { Context, DateTime, Effect, Layer, Schema } from "effect"
import { FetchHttpClient, HttpRouter, HttpServer } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { SqlClient } from "effect/sql/SqlClient"
import { createServer } from "node:http"
import { Publisher } from "../../services/platform/Publisher.ts"
import * as MemoryBus from "../../services/platform/Bus/Memory.ts"
import { ApiRoutes, routerConfig } from "../../services/api/ApiHttp.ts"
import { Api } from "../../services/domain/api/Api.ts"
import { type ErrorBody, InvalidParameter, NotFound } from "../../services/domain/api/Errors.ts"
import { type Component, type ComponentList, ComponentList as ComponentListSchema, type Source, type SourceList, SourceList as SourceListSchema } from "../../services/domain/api/Sources.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { apiClickHouse } from "../support/api.ts"
import { freshDatabase, withConfig } from "../support/stores.ts"

/** A catalog source to seed; what is not given takes the table's defaults. */
interface Seed {
  readonly key: string
  readonly name: string
  readonly description?: string
  readonly categories: ReadonlyArray<string>
  readonly status?: string
  readonly check_class?: string
  readonly poll_interval_s?: number
  readonly verified?: boolean
  readonly has_history?: boolean
  readonly regions?: ReadonlyArray<string>
  readonly provider_type?: string | null
  readonly logo_url?: string | null
  readonly service_url?: string | null
  readonly components_count?: number
  readonly incidents_count?: number
  readonly last_checked_at?: string | null
  /** What the poller stores of each region's status (services/poller/SourceStore.ts). */
  readonly region_statuses?: ReadonlyArray<{ readonly region: string; readonly status: string }>
  readonly enabled?: boolean
}

/** The longest key there can be: 128 characters. */
const longKey = `long-${"x".repeat(123)}`

const named: ReadonlyArray<Seed> = [
  {
    key: "aws",
    name: "Amazon Web Services",
    description: "Cloud computing platform",
    categories: ["cloud"],
    status: "degraded",
    check_class: "critical",
    poll_interval_s: 30,
    verified: true,
    has_history: true,
    regions: ["us-east-1", "eu-west-1"],
    provider_type: "aws",
    logo_url: "https://logos.example/aws.svg",
    service_url: "https://aws.amazon.com",
    components_count: 6,
    incidents_count: 2,
    last_checked_at: "2026-01-02T03:04:05.678Z"
  },
  { key: "azure", name: "Microsoft Azure", description: "Cloud services by Microsoft", categories: ["cloud"] },
  // Categories come back in the categories table's order (cloud before cdn_dns), not insertion order.
  {
    key: "cloudflare",
    name: "Cloudflare",
    description: "CDN, DNS and DDoS protection",
    categories: ["cdn_dns", "cloud"],
    // Kept to the microsecond; shown to the millisecond, cut (not rounded) as a `DateTime` prints it.
    last_checked_at: "2026-01-02T03:04:05.678999Z",
    region_statuses: [{ region: "eu", status: "degraded" }, { region: "apac", status: "operational" }]
  },
  { key: "discount-pay", name: "Discount Pay", description: "Payments with 100% uptime_guarantee", categories: ["payment"] },
  { key: "bulk-sms", name: "Bulk SMS", description: "Sends 1000 messages with an uptime-guarantee", categories: ["communication"] },
  { key: "github", name: "GitHub", description: "Code hosting", categories: ["devtools"], check_class: "high", poll_interval_s: 60 },
  { key: "paypal", name: "PayPal", description: "Payments and wallets", categories: ["payment"] },
  { key: "slack", name: "Slack", description: "Team Chat for work", categories: ["communication"] },
  { key: "stripe", name: "Stripe", description: "Online payment processing", categories: ["payment"] },
  { key: "old-pay", name: "Old Pay", description: "Disabled payment source", categories: ["payment"], enabled: false },
  { key: longKey, name: "Longest key", categories: ["devtools"] }
]

/** Enough plain sources to need several pages. */
const filler: ReadonlyArray<Seed> = Array.from({ length: 120 }, (_, i) => ({
  key: `sim-${String(i).padStart(4, "0")}`,
  name: `Simulated ${i}`,
  description: "Synthetic source served by the simulator",
  categories: i % 2 === 0 ? ["monitoring"] : ["monitoring", "cloud"],
  check_class: "low",
  poll_interval_s: 900
}))

/** Every source the API may show, in the API's order. */
const visibleKeys = [...named, ...filler].filter((s) => s.enabled !== false).map((s) => s.key).toSorted()

const insertSource = Effect.fn("insertSource")(function*(s: Seed) {
  const sql = yield* SqlClient
  const [row] = yield* sql<{ id: string }>`
    INSERT INTO sources ${sql.insert({
    key: s.key,
    name: s.name,
    description: s.description ?? "",
    kind: "catalog",
    status: s.status ?? "operational",
    check_class: s.check_class ?? "standard",
    poll_interval_s: s.poll_interval_s ?? 300,
    verified: s.verified ?? false,
    has_history: s.has_history ?? false,
    provider_type: s.provider_type ?? "statuspage_io",
    logo_url: s.logo_url ?? null,
    status_page_url: `https://status.example/${s.key}`,
    service_url: s.service_url ?? null,
    components_count: s.components_count ?? 0,
    incidents_count: s.incidents_count ?? 0,
    enabled: s.enabled ?? true
  })} RETURNING id`
  if (s.last_checked_at != null) {
    yield* sql`INSERT INTO source_checks (source_id, checked_at) VALUES (${row!.id}, ${s.last_checked_at}::timestamptz)`
  }
  if (s.regions !== undefined) yield* sql`UPDATE sources SET regions = ${`{${s.regions.join(",")}}`} WHERE id = ${row!.id}`
  if (s.region_statuses !== undefined) {
    yield* sql`UPDATE sources SET region_statuses = ${JSON.stringify(s.region_statuses)}::jsonb WHERE id = ${row!.id}`
  }
  for (const category of s.categories) {
    yield* sql`INSERT INTO source_categories (source_id, category_id) VALUES (${row!.id}, ${category})`
  }
  return row!.id
})

const insertComponent = Effect.fn("insertComponent")(function*(c: {
  readonly source: string
  readonly name: string
  readonly position: number
  readonly parent?: string
  readonly is_group?: boolean
  readonly region?: string
  readonly status?: string
  readonly description?: string
}) {
  const sql = yield* SqlClient
  const [row] = yield* sql<{ id: string }>`
    INSERT INTO components (source_id, external_id, parent_id, name, description, status, is_group, region, position)
    VALUES (${c.source}, ${c.name.toLowerCase()}, ${c.parent ?? null}, ${c.name}, ${c.description ?? ""},
      ${c.status ?? "operational"}, ${c.is_group ?? false}, ${c.region ?? null}, ${c.position})
    RETURNING id`
  return row!.id
})

/** The seeded ids the tests compare against. */
class Seeded extends Context.Service<Seeded, {
  readonly aws: string
  readonly components: Record<string, string>
}>()("test/Seeded") {}

const seed = Layer.effect(Seeded, Effect.gen(function*() {
  yield* Migrations.migratePostgres()
  const sql = yield* SqlClient
  const ids = new Map<string, string>()
  for (const s of [...named, ...filler]) ids.set(s.key, yield* insertSource(s))

  // An organization's custom source: it matches every query below but must never be shown.
  const [org] = yield* sql<{ id: string }>`INSERT INTO organizations (slug, name) VALUES ('acme', 'Acme') RETURNING id`
  const [custom] = yield* sql<{ id: string }>`
    INSERT INTO sources (organization_id, key, name, description, kind, status_page_url)
    VALUES (${org!.id}, 'acme-payments', 'Acme Payments', 'Our payment cloud with 100% uptime_guarantee', 'url',
      'https://status.acme.example') RETURNING id`
  yield* sql`INSERT INTO source_categories (source_id, category_id) VALUES (${custom!.id}, 'payment'), (${custom!.id}, 'cloud')`
  yield* insertComponent({ source: custom!.id, name: "Checkout", position: 0 })

  // AWS: a plain root, two groups, and a grandchild; inserted out of order on purpose.
  const aws = ids.get("aws")!
  const storage = yield* insertComponent({ source: aws, name: "Storage", position: 2, is_group: true })
  const s3 = yield* insertComponent({ source: aws, name: "S3", position: 1, parent: storage, region: "eu-west-1", status: "degraded" })
  const glacier = yield* insertComponent({ source: aws, name: "Glacier", position: 1, parent: s3 })
  const compute = yield* insertComponent({ source: aws, name: "Compute", position: 1, is_group: true, description: "Servers \"EC2\" & λ\\\n" })
  const ec2 = yield* insertComponent({ source: aws, name: "EC2", position: 2, parent: compute, region: "us-east-1", status: "critical" })
  const lambda = yield* insertComponent({ source: aws, name: "Lambda", position: 1, parent: compute })
  const consoleId = yield* insertComponent({ source: aws, name: "Console", position: 0, status: "maintenance" })

  // GitHub: a parent in another source, and a cycle the schema does not forbid.
  const github = ids.get("github")!
  const actions = yield* insertComponent({ source: github, name: "Actions", position: 0, parent: consoleId })
  const pages = yield* insertComponent({ source: github, name: "Pages", position: 1 })
  const api = yield* insertComponent({ source: github, name: "API", position: 2, parent: pages })
  yield* sql`UPDATE components SET parent_id = ${api} WHERE id = ${pages}`
  return Seeded.of({
    aws,
    components: { storage, s3, glacier, compute, ec2, lambda, console: consoleId, actions, pages, api }
  })
}))

/** Where the test server listens. */
class BaseUrl extends Context.Service<BaseUrl, string>()("test/BaseUrl") {}

const baseUrl = Layer.effect(BaseUrl, Effect.gen(function*() {
  const { address } = yield* HttpServer.HttpServer
  if (address._tag === "UnixPathAddress") return yield* Effect.die("expected a TCP address")
  return `http://127.0.0.1:${address.port}`
}))

const stores = Layer.unwrap(Effect.map(freshDatabase, (url) => Postgres.layerServer(url, { maxConnections: 4 })))

/** The API on 127.0.0.1 over a fresh database prepared by `setup`. */
const serverWith = <A, E>(setup: Layer.Layer<A, E, SqlClient>) =>
  Layer.mergeAll(HttpRouter.serve(ApiRoutes, { disableListenLog: true, disableLogger: true, routerConfig }), baseUrl).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(apiClickHouse),
    Layer.provideMerge(setup),
    Layer.provideMerge(stores),
    // The rate limiter of the organization endpoints counts on the bus; SecretBox keeps its key in DATA_DIR.
    Layer.provide(Publisher.layer.pipe(Layer.provideMerge(MemoryBus.layer))),
    Layer.provide(withConfig({ DATA_DIR: "/tmp/statusgrid-sources-api-test" }))
  )

/** A database whose sources table is gone: every query fails. */
const broken = Layer.effectDiscard(Effect.gen(function*() {
  yield* Migrations.migratePostgres()
  const sql = yield* SqlClient
  yield* sql`INSERT INTO sources (key, name, kind, status_page_url) VALUES ('aws', 'AWS', 'catalog', 'https://x')`
  yield* sql`ALTER TABLE sources RENAME TO sources_gone`
}))

interface Response<B> {
  readonly status: number
  readonly contentType: string | null
  readonly body: B
}

/** GET a path of the test server; the body parsed as JSON, read as the shape the test expects. */
const request = <B>(path: string) =>
  Effect.gen(function*() {
    const base = yield* BaseUrl
    return yield* Effect.promise(async (): Promise<Response<B>> => {
      const response = await fetch(`${base}${path}`)
      const body: B = JSON.parse(await response.text())
      return { status: response.status, contentType: response.headers.get("content-type"), body }
    })
  })

type ListBody = typeof SourceList.Encoded
type SourceBody = typeof Source.Encoded
type ComponentsBody = typeof ComponentList.Encoded
interface OpenApiBody {
  readonly openapi: string
  readonly paths: Record<string, {
    readonly get: {
      readonly parameters: ReadonlyArray<{ readonly name: string; readonly in: string; readonly schema: { readonly enum?: ReadonlyArray<string> } }>
      readonly responses: Record<string, unknown>
    }
  }>
  readonly components: { readonly schemas: Record<string, { readonly properties?: Record<string, unknown> }> }
}

const list = (query = "") => request<ListBody>(`/api/v1/sources${query}`)
const source = (key: string) => request<SourceBody>(`/api/v1/sources/${key}`)
const components = (key: string) => request<ComponentsBody>(`/api/v1/sources/${key}/components`)
const failure = (path: string) => request<ErrorBody>(path)

const keysOf = (r: Response<ListBody>): Array<string> => r.body.data.map((s) => s.key)
/** The keys of the first page of `?query`. */
const keys = (query: string) => list(`?${query}`).pipe(Effect.map(keysOf))
const search = (text: string) => keys(`search=${encodeURIComponent(text)}`)

/** Asserts the one error body: exactly code, message and field. */
const assertError = (r: Response<ErrorBody>, status: number, code: string, field: string) => {
  assert.strictEqual(r.status, status, JSON.stringify(r.body))
  assert.match(r.contentType ?? "", /^application\/json/)
  assert.deepStrictEqual(Object.keys(r.body).toSorted(), ["code", "field", "message"])
  assert.strictEqual(r.body.code, code)
  assert.strictEqual(r.body.field, field)
  assert.isAbove(r.body.message.length, 0)
}

/** Every page of a query, following next_cursor; the pages' keys. */
const walk = (query: string, limit: number) =>
  Effect.gen(function*() {
    const pages: Array<Array<string>> = []
    let cursor: string | null = null
    do {
      const r: Response<ListBody> = yield* list(
        `?limit=${limit}${query}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
      )
      assert.strictEqual(r.status, 200)
      assert.strictEqual(r.body.limit, limit)
      pages.push(keysOf(r))
      cursor = r.body.next_cursor
      assert.isBelow(pages.length, 100, "pagination does not end")
    } while (cursor !== null)
    return pages
  })

describe("sources API", () => {
  layer(serverWith(seed), { timeout: 120_000, excludeTestServices: true })("/api/v1/sources on PostgreSQL", (it) => {
    it.effect("lists catalog sources in an envelope, ordered by key, 50 by default", () =>
      Effect.gen(function*() {
        const r = yield* list()
        assert.strictEqual(r.status, 200)
        assert.match(r.contentType ?? "", /^application\/json/)
        assert.deepStrictEqual(Object.keys(r.body).toSorted(), ["data", "limit", "next_cursor"])
        assert.strictEqual(r.body.limit, 50)
        assert.deepStrictEqual(keysOf(r), visibleKeys.slice(0, 50))
        assert.isString(r.body.next_cursor)
        // Parameters the API does not know are ignored.
        assert.deepStrictEqual((yield* list("?page=3&sort=name")).body, r.body)
      }))

    it.effect("shows every field of a source on the wire", () =>
      Effect.gen(function*() {
        const { aws } = yield* Seeded
        const r = yield* list("?filter=aws,cloudflare,azure")
        assert.strictEqual(r.status, 200)
        assert.deepStrictEqual(keysOf(r), ["aws", "azure", "cloudflare"])
        assert.deepStrictEqual(r.body.data[0], {
          id: aws,
          name: "Amazon Web Services",
          key: "aws",
          description: "Cloud computing platform",
          status: "degraded",
          logo_url: "https://logos.example/aws.svg",
          status_page_url: "https://status.example/aws",
          service_url: "https://aws.amazon.com",
          components_count: 6,
          incidents_count: 2,
          categories: ["cloud"],
          last_checked_at: "2026-01-02T03:04:05.678Z",
          check_class: "critical",
          provider_type: "aws",
          reliability: { verified: true, realtime: true, historical: true, regional: true },
          regions: []
        })
        const azure = r.body.data[1]!
        const cloudflare = r.body.data[2]!
        assert.strictEqual(azure.last_checked_at, null)
        assert.strictEqual(azure.logo_url, null)
        assert.deepStrictEqual(azure.reliability, { verified: false, realtime: false, historical: false, regional: false })
        assert.deepStrictEqual(cloudflare.categories, ["cloud", "cdn_dns"])
        assert.strictEqual(cloudflare.last_checked_at, "2026-01-02T03:04:05.678Z")
        assert.deepStrictEqual(cloudflare.regions, [{ region: "eu", status: "degraded" }, { region: "apac", status: "operational" }])
        assert.isTrue(cloudflare.reliability.regional)
        // 60 s is not sub-minute.
        const github = (yield* source("github")).body
        assert.strictEqual(github.reliability.realtime, false)
      }))

    it.effect("pages through every source with cursors, without duplicates or gaps", () =>
      Effect.gen(function*() {
        const pages = yield* walk("", 7)
        assert.deepStrictEqual(pages.flat(), visibleKeys)
        assert.strictEqual(pages.length, Math.ceil(visibleKeys.length / 7))
        assert.isTrue(pages.every((p) => p.length === 7 || p === pages.at(-1)))

        // An exact multiple of the page size ends on a full page with next_cursor null, not an empty page.
        const total = visibleKeys.length
        const exact = yield* list(`?limit=${total}`)
        assert.strictEqual(exact.body.data.length, total)
        assert.strictEqual(exact.body.next_cursor, null)
        // Every source's JSON (PostgreSQL builds it, decision 0026) is exactly what `Source` decodes and encodes
        // back: no field more or fewer, each in its wire form.
        const decoded = Schema.decodeUnknownSync(SourceListSchema)(exact.body, { onExcessProperty: "error" })
        assert.deepStrictEqual(Schema.encodeSync(SourceListSchema)(decoded), exact.body)

        // Cursors combine with the other parameters.
        const cloud = yield* walk("&category=cloud", 5)
        const allCloud = (yield* list("?category=cloud&limit=500")).body
        assert.deepStrictEqual(cloud.flat(), keysOf({ ...exact, body: allCloud }))
        assert.isAbove(cloud.length, 2)
      }))

    it.effect("filters by category", () =>
      Effect.gen(function*() {
        const payment = yield* list("?category=payment")
        assert.deepStrictEqual(keysOf(payment), ["discount-pay", "paypal", "stripe"])
        const cdn = yield* list("?category=cdn_dns")
        assert.deepStrictEqual(keysOf(cdn), ["cloudflare"])
        const none = yield* list("?category=devtools&search=payment")
        assert.deepStrictEqual(none.body, { data: [], next_cursor: null, limit: 50 })
      }))

    it.effect("filters by status, with category and search", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* keys("status=degraded"), ["aws"])
        assert.deepStrictEqual(yield* keys("status=degraded&category=cloud&search=amazon"), ["aws"])
        assert.deepStrictEqual(yield* keys("status=degraded&category=payment"), [])
        assert.notInclude(yield* keys("status=operational&limit=500"), "aws")
        const bad = yield* failure("/api/v1/sources?status=down-ish")
        assertError(bad, 400, "invalid_parameter", "status")
      }))

    it.effect("searches name, key and description, case-insensitively, with % and _ taken literally", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* search("STRIPE"), ["stripe"])
        assert.deepStrictEqual(yield* search("amazon web"), ["aws"])
        assert.deepStrictEqual(yield* search("team chat"), ["slack"])
        assert.deepStrictEqual(yield* search("discount-p"), ["discount-pay"])
        assert.deepStrictEqual(yield* search("payment"), ["discount-pay", "paypal", "stripe"])
        assert.deepStrictEqual(yield* search("payments"), ["discount-pay", "paypal"])
        // "100%" would match "1000" and "uptime_guarantee" would match "uptime-guarantee" as patterns.
        assert.deepStrictEqual(yield* search("100%"), ["discount-pay"])
        assert.deepStrictEqual(yield* search("uptime_guarantee"), ["discount-pay"])
        assert.deepStrictEqual(yield* search("%"), ["discount-pay"])
        assert.deepStrictEqual(yield* search("\\"), [])
        assert.deepStrictEqual(yield* search("no such text"), [])
        // Each field on its own: the end of a name and the start of its key are not one text.
        assert.deepStrictEqual(yield* search("servicesaws"), [])
        assert.deepStrictEqual(yield* search("services aws"), [])
        assert.deepStrictEqual(yield* search("aws cloud"), [])
      }))

    it.effect("filters by a list of keys, skipping keys it does not show", () =>
      Effect.gen(function*() {
        const r = yield* list("?filter=stripe,aws,acme-payments,old-pay,missing")
        assert.deepStrictEqual(keysOf(r), ["aws", "stripe"])
        const spaced = yield* list(`?filter=${encodeURIComponent(" slack , github,")}`)
        assert.deepStrictEqual(keysOf(spaced), ["github", "slack"])
        const paged = yield* walk(`&filter=${visibleKeys.slice(10, 25).join(",")}`, 4)
        assert.deepStrictEqual(paged.flat(), visibleKeys.slice(10, 25))
      }))

    it.effect("combines filter, search and category with AND", () =>
      Effect.gen(function*() {
        const filter = "filter=aws,azure,cloudflare,stripe,slack"
        assert.deepStrictEqual(yield* keys(filter), ["aws", "azure", "cloudflare", "slack", "stripe"])
        assert.deepStrictEqual(yield* keys(`${filter}&category=cloud`), ["aws", "azure", "cloudflare"])
        assert.deepStrictEqual(yield* keys(`${filter}&search=cloud`), ["aws", "azure", "cloudflare"])
        assert.deepStrictEqual(yield* keys(`${filter}&category=cloud&search=micro`), ["azure"])
        assert.deepStrictEqual(yield* keys(`${filter}&category=payment&search=online`), ["stripe"])
        assert.deepStrictEqual(yield* keys(`${filter}&category=payment&search=micro`), [])
        // The same search and category without the filter reach further.
        assert.deepStrictEqual(yield* keys("category=payment&search=pay"), ["discount-pay", "paypal", "stripe"])
      }))

    it.effect("accepts limits from 1 to 500", () =>
      Effect.gen(function*() {
        const one = yield* list("?limit=1")
        assert.deepStrictEqual(keysOf(one), [visibleKeys[0]])
        assert.strictEqual(one.body.limit, 1)
        const max = yield* list("?limit=500")
        assert.strictEqual(max.body.limit, 500)
        assert.deepStrictEqual(keysOf(max), visibleKeys)
        assert.strictEqual(max.body.next_cursor, null)
      }))

    it.effect("answers a bad limit with 400 naming limit", () =>
      Effect.gen(function*() {
        for (const limit of ["0", "501", "-1", "1.5", "abc", "", "1e9", "10&limit=20"]) {
          assertError(yield* failure(`/api/v1/sources?limit=${limit}`), 400, "invalid_parameter", "limit")
        }
      }))

    it.effect("answers every other bad parameter with 400 naming it", () =>
      Effect.gen(function*() {
        const bad = (query: string, field: string) =>
          failure(`/api/v1/sources?${query}`).pipe(Effect.map((r) => assertError(r, 400, "invalid_parameter", field)))
        yield* bad("category=nope", "category")
        yield* bad("category=", "category")
        yield* bad("category=Cloud", "category")
        yield* bad("category=cloud&category=payment", "category")
        yield* bad("cursor=%21%21%21", "cursor")
        yield* bad(`cursor=${Buffer.from("Not A Key").toString("base64url")}`, "cursor")
        yield* bad("cursor=", "cursor")
        yield* bad(`filter=${Array.from({ length: 501 }, (_, i) => `k${i}`).join(",")}`, "filter")
        yield* bad("filter=aws,Not_A_Key", "filter")
        yield* bad("filter=,,", "filter")
        yield* bad(`search=${"x".repeat(201)}`, "search")
        yield* bad("search=a%00b", "search")
        yield* bad("search=a%1Fb", "search")
        yield* bad("search=a%0Ab", "search")
        yield* bad("limit=0&category=nope", "category")
        // The message says what is expected.
        const r = yield* failure("/api/v1/sources?category=nope")
        assert.include(r.body.message, "cloud, payment, communication, devtools, monitoring, cdn_dns")
        const filter = yield* failure("/api/v1/sources?filter=aws,Not_A_Key")
        assert.include(filter.body.message, "source key")
      }))

    it.effect("accepts a filter of exactly 500 keys", () =>
      Effect.gen(function*() {
        const keys = [...visibleKeys, ...Array.from({ length: 500 - visibleKeys.length }, (_, i) => `missing-${i}`)]
        const r = yield* list(`?limit=500&filter=${keys.join(",")}`)
        assert.strictEqual(r.status, 200)
        assert.deepStrictEqual(keysOf(r), visibleKeys)
      }))

    it.effect("returns one source by key, and 404 for a key it does not show", () =>
      Effect.gen(function*() {
        const { aws } = yield* Seeded
        const r = yield* source("aws")
        assert.strictEqual(r.status, 200)
        assert.strictEqual(r.body.id, aws)
        assert.strictEqual(r.body.key, "aws")
        const listed = (yield* list("?filter=aws")).body.data[0]
        assert.deepStrictEqual(r.body, listed)

        const long = yield* source(longKey)
        assert.strictEqual(long.status, 200)
        assert.strictEqual(long.body.key, longKey)
        assert.strictEqual((yield* components(longKey)).status, 200)

        for (const key of ["nope", "acme-payments", "old-pay", "UPPER", "a%00b", "x".repeat(300)]) {
          const missing = yield* failure(`/api/v1/sources/${key}`)
          assertError(missing, 404, "not_found", "key")
          assert.strictEqual(missing.body.message, `no source with key ${JSON.stringify(decodeURIComponent(key))}`)
        }
      }))

    it.effect("returns a source's components as a tree ordered by position", () =>
      Effect.gen(function*() {
        const { components: id } = yield* Seeded
        const r = yield* components("aws")
        assert.strictEqual(r.status, 200)
        const leaf = (name: string, extra: Partial<Component> = {}): Component => ({
          id: id[name.toLowerCase()]!,
          name,
          description: "",
          status: "operational",
          is_group: false,
          region: null,
          children: [],
          ...extra
        })
        assert.deepStrictEqual(r.body, {
          data: [
            leaf("Console", { status: "maintenance" }),
            leaf("Compute", {
              description: "Servers \"EC2\" & λ\\\n",
              is_group: true,
              children: [leaf("Lambda"), leaf("EC2", { status: "critical", region: "us-east-1" })]
            }),
            leaf("Storage", {
              is_group: true,
              children: [leaf("S3", { status: "degraded", region: "eu-west-1", children: [leaf("Glacier")] })]
            })
          ]
        })
        // PostgreSQL builds each component's JSON, nested as text (decision 0026): exactly `ComponentList`'s.
        assert.match(r.contentType ?? "", /^application\/json/)
        const decoded = Schema.decodeUnknownSync(ComponentListSchema)(r.body, { onExcessProperty: "error" })
        assert.deepStrictEqual(Schema.encodeSync(ComponentListSchema)(decoded), r.body)
        // Neither a parent elsewhere nor a cycle loses a component or loops.
        const github = yield* components("github")
        assert.deepStrictEqual(github.body, { data: [leaf("Actions"), leaf("Pages", { children: [leaf("API")] })] })
        const none = yield* components("azure")
        assert.deepStrictEqual(none, { status: 200, contentType: none.contentType, body: { data: [] } })
        for (const key of ["nope", "acme-payments", "old-pay", "a%00b"]) {
          assertError(yield* failure(`/api/v1/sources/${key}/components`), 404, "not_found", "key")
        }
      }))

    it.effect("answers other paths under /api/v1 with the same 404 body, and HEAD like GET", () =>
      Effect.gen(function*() {
        const base = yield* BaseUrl
        const head = (path: string) => Effect.promise(() => fetch(`${base}${path}`, { method: "HEAD" }).then((r) => r.status))
        assert.strictEqual(yield* head("/api/v1/sources"), 200)
        assert.strictEqual(yield* head("/api/v1/sources/aws"), 200)
        assert.strictEqual(yield* head("/api/v1/sources/nope"), 404)
        const post = yield* Effect.promise(() => fetch(`${base}/api/v1/sources`, { method: "POST" }).then((r) => r.json()))
        assert.deepStrictEqual(post, { code: "not_found", message: "no endpoint POST /api/v1/sources" })

        const r = yield* failure("/api/v1/nothing/here?x=1")
        assert.strictEqual(r.status, 404)
        assert.deepStrictEqual(r.body, { code: "not_found", message: "no endpoint GET /api/v1/nothing/here" })
        const deeper = yield* failure("/api/v1/sources/aws/components/extra")
        assert.deepStrictEqual(deeper.body, { code: "not_found", message: "no endpoint GET /api/v1/sources/aws/components/extra" })
      }))

    it.effect("works through a typed client generated from the same definition", () =>
      Effect.gen(function*() {
        const client = yield* HttpApiClient.make(Api, { baseUrl: yield* BaseUrl })
        const page = yield* client.sources.list({ query: { filter: ["stripe", "aws"], limit: 1 } })
        assert.deepStrictEqual(page.data.map((s) => s.key), ["aws"])
        assert.strictEqual(DateTime.formatIso(page.data[0]!.last_checked_at!), "2026-01-02T03:04:05.678Z")
        const next = yield* client.sources.list({ query: { filter: ["stripe", "aws"], limit: 1, cursor: page.next_cursor! } })
        assert.deepStrictEqual(next.data.map((s) => s.key), ["stripe"])
        assert.strictEqual(next.next_cursor, null)

        const missing = yield* client.sources.get({ params: { key: "nope" } }).pipe(Effect.flip)
        assert.instanceOf(missing, NotFound)
        assert.strictEqual(missing._tag, "NotFound")
        assert.strictEqual(missing.code, "not_found")
        const invalid = yield* client.sources.list({ query: { cursor: "!!!" } }).pipe(Effect.flip)
        assert.instanceOf(invalid, InvalidParameter)
        assert.strictEqual(invalid._tag === "InvalidParameter" ? invalid.field : undefined, "cursor")
      }).pipe(Effect.provide(FetchHttpClient.layer)))

    it.effect("serves an OpenAPI document listing the sources paths and their parameters", () =>
      Effect.gen(function*() {
        const r = yield* request<OpenApiBody>("/api/v1/openapi.json")
        assert.strictEqual(r.status, 200)
        const doc = r.body
        assert.match(doc.openapi, /^3\./)
        assert.deepStrictEqual(Object.keys(doc.paths).filter((p) => p.startsWith("/api/v1/sources")).toSorted(), [
          "/api/v1/sources",
          "/api/v1/sources/{key}",
          "/api/v1/sources/{key}/analytics",
          "/api/v1/sources/{key}/components",
          "/api/v1/sources/{key}/crowd",
          "/api/v1/sources/{key}/crowd/record",
          "/api/v1/sources/{key}/history",
          "/api/v1/sources/{key}/incidents",
          "/api/v1/sources/{key}/maintenances",
          "/api/v1/sources/{key}/reports"
        ])
        const params = (path: string) =>
          doc.paths[path]!.get.parameters.map((p) => `${p.in}:${p.name}`)
        assert.deepStrictEqual(params("/api/v1/sources"), [
          "query:category",
          "query:search",
          "query:status",
          "query:filter",
          "query:cursor",
          "query:limit"
        ])
        assert.deepStrictEqual(params("/api/v1/sources/{key}"), ["path:key"])
        assert.deepStrictEqual(params("/api/v1/sources/{key}/components"), ["path:key"])
        assert.deepStrictEqual(params("/api/v1/sources/{key}/incidents"), ["path:key", "query:cursor", "query:limit"])
        assert.deepStrictEqual(params("/api/v1/sources/{key}/maintenances"), ["path:key", "query:cursor", "query:limit"])
        assert.deepStrictEqual(params("/api/v1/sources/{key}/history"), ["path:key", "query:window"])
        assert.deepStrictEqual(params("/api/v1/sources/{key}/analytics"), ["path:key", "query:from", "query:to"])
        assert.deepStrictEqual(params("/api/v1/sources/{key}/crowd"), ["path:key"])
        assert.deepStrictEqual(params("/api/v1/sources/{key}/crowd/record"), ["path:key"])
        const category = doc.paths["/api/v1/sources"]!.get.parameters[0]!
        assert.deepStrictEqual(category.schema.enum, ["cloud", "payment", "communication", "devtools", "monitoring", "cdn_dns"])
        assert.deepStrictEqual(Object.keys(doc.paths["/api/v1/sources/{key}"]!.get.responses).toSorted(), ["200", "400", "404", "413", "415", "500"])
        // Error bodies are documented as they are sent: code, message, field; no _tag.
        const errors = Object.entries(doc.components.schemas).filter(([, schema]) => schema.properties?.["code"] !== undefined)
        assert.includeMembers(errors.map(([name]) => name.replace(/Encoded$/, "")), ["InvalidParameter", "NotFound", "InternalError", "Unauthorized", "Forbidden"])
        for (const [, schema] of errors) assert.notProperty(schema.properties, "_tag")
      }))
  })

  layer(serverWith(broken), { timeout: 120_000, excludeTestServices: true })("when the database fails", (it) => {
    it.effect("answers 500 with the same error body, and still 400 for a bad parameter", () =>
      Effect.gen(function*() {
        for (const path of ["/api/v1/sources", "/api/v1/sources/aws", "/api/v1/sources/aws/components"]) {
          const r = yield* failure(path)
          assert.strictEqual(r.status, 500, path)
          assert.match(r.contentType ?? "", /^application\/json/)
          assert.deepStrictEqual(Object.keys(r.body).toSorted(), ["code", "message"])
          assert.strictEqual(r.body.code, "internal_error")
          assert.notInclude(r.body.message, "sources")
        }
        assertError(yield* failure("/api/v1/sources?limit=0"), 400, "invalid_parameter", "limit")
      }))
  })
})
