import { Effect, Layer } from "effect"
import { HttpRouter } from "effect/http"
import { SqlClient } from "effect/sql/SqlClient"
import { createRequire } from "node:module"
import { directServerLayer } from "../services/api/DirectRequests.ts"
import { ApiRoutes, listenBacklog, routerConfig } from "../services/api/ApiHttp.ts"
import { TrustedProxiesLive } from "../services/api/TrustedProxies.ts"
import { TracingLive } from "../services/platform/Tracing.ts"
import { Publisher } from "../services/platform/Publisher.ts"
import * as Catalog from "../services/catalog/Catalog.ts"
import { ApiKeys } from "../services/orgs/ApiKeys.ts"
import { SecretBox } from "../services/platform/SecretBox.ts"
import { Organizations } from "../services/orgs/Organizations.ts"
import * as Migrations from "../services/platform/Migrations.ts"
import type { HttpTarget } from "./httpProcesses.ts"

export interface ApiBenchOptions {
  /** seconds of each mix */
  readonly durationS: number
  readonly connections: number
  /** API_CACHE_MS of the run (printed with the figures) */
  readonly cacheMs: number
}

interface AutocannonResult {
  readonly requests: { readonly average: number; readonly total: number }
  readonly latency: { readonly p50: number; readonly p99: number; readonly max: number }
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
}

type Request = { method: "GET" | "POST" | "DELETE"; path: string; body?: string; headers?: Record<string, string> }

const autocannon = createRequire(import.meta.url)("autocannon") as (options: {
  url: string
  connections: number
  duration: number
  workers?: number
  requests: ReadonlyArray<Request>
}) => Promise<AutocannonResult>

/** A deterministic sequence in [0, 1) (the same mix on every run). */
const sequence = (seed: number) => {
  let x = seed >>> 0
  return () => {
    x = (Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0
    x ^= x + Math.imul(x ^ (x >>> 7), 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296
  }
}

/** `GET /sources`' cursor for the page after `key` (base64url of the key, services/api/Sources.ts). */
const cursorAfter = (key: string) => Buffer.from(key).toString("base64url")

/**
 * The read mix of the sources API, as k6's `bench/k6/read-mix.js` runs it: list pages at three sizes
 * from anywhere in the catalog (cursors), a category from anywhere, searches for the start of a name
 * (3 to 6 letters, as a user types "Gran" for Granite Metrics; a synthetic key's common `sim-` prefix
 * is nothing a user would type), filters of five keys, one source and one source's components, over
 * the whole catalog: `count` requests, nearly all distinct, so a 1-second micro-cache seldom answers.
 */
export const readMix = (sources: ReadonlyArray<{ readonly key: string; readonly name: string }>, count = 6_000): Array<Request> => {
  const keys = sources.map((s) => s.key)
  const requests: Array<Request> = []
  const categories = ["cloud", "payment", "communication", "devtools", "monitoring", "cdn_dns"]
  const random = sequence(18)
  const anyKey = () => keys[Math.floor(random() * keys.length)]!
  for (let i = 0; i < count; i++) {
    const source = sources[Math.floor(random() * sources.length)]!
    const key = source.key
    switch (i % 6) {
      case 0: requests.push({ method: "GET", path: `/api/v1/sources?limit=${[20, 50, 100][i % 3]}&cursor=${cursorAfter(anyKey())}` }); break
      case 1: requests.push({ method: "GET", path: `/api/v1/sources?category=${categories[i % categories.length]}&cursor=${cursorAfter(anyKey())}` }); break
      case 2: requests.push({ method: "GET", path: `/api/v1/sources?search=${encodeURIComponent(source.name.slice(0, 3 + (i % 4)))}` }); break
      case 3: requests.push({ method: "GET", path: `/api/v1/sources?filter=${Array.from({ length: 5 }, anyKey).join(",")}` }); break
      case 4: requests.push({ method: "GET", path: `/api/v1/sources/${key}` }); break
      default: requests.push({ method: "GET", path: `/api/v1/sources/${key}/components` })
    }
  }
  return requests
}

const summary = (r: AutocannonResult, seconds: number) => ({
  req_per_s: Math.round(r.requests.average * 10) / 10,
  requests: r.requests.total,
  duration_s: seconds,
  latency_ms: { p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max },
  non_2xx: r.non2xx,
  errors: r.errors + r.timeouts
})

/**
 * `statusgrid bench api`: the API server in this process on the configured stores (embedded by
 * default) with the default catalog; autocannon drives the read mix, then a write mix (an
 * organization on the Pro plan creating and deleting maintenance windows with an Admin key).
 */
export const runApiBench = Effect.fn("bench.api")(function*(options: ApiBenchOptions, target: HttpTarget) {
  yield* Migrations.migratePostgres()
  yield* Catalog.seedIfEmpty()
  // The read mix runs over the real pages and the demo's synthetic sources, 5,243 in all (nothing polls them here).
  yield* Catalog.enableSynthetic(Catalog.syntheticEntries(Catalog.demoSyntheticCount, "http://127.0.0.1:4100"))
  const sql = yield* SqlClient
  // Seeding rewrote the catalog's rows: reclaim them and refresh the planner's figures, as autovacuum
  // would on a server left to itself (this machine's PostgreSQL runs with autovacuum off; without this,
  // the tables bloat run after run and the statistics drift, and searches fall back to reading every row).
  yield* sql`VACUUM ANALYZE sources, source_categories, components`
  const sources = yield* sql<{ key: string; name: string }>`SELECT key, name FROM sources WHERE organization_id IS NULL ORDER BY key`
  const { id } = yield* Organizations.use((o) => o.create({ name: "Bench", slug: `bench-${Date.now().toString(36)}`, plan: "pro" }))
  const adminKey = yield* ApiKeys.use((k) => k.issue(id, "bench", "admin"))
  const url = target.url
  const cpuBefore = target.cpuSeconds()

  const mix = readMix(sources)
  const read = yield* Effect.promise(() =>
    // The load comes from a worker thread, as it would from another machine, not from the server's event loop.
    autocannon({ url, connections: options.connections, duration: options.durationS, workers: 1, requests: mix })
  )
  const auth = { authorization: `Bearer ${adminKey}`, "content-type": "application/json" }
  const window = JSON.stringify({
    title: "Bench maintenance",
    description: "written by statusgrid bench api",
    starts_at: "2030-01-01T00:00:00Z",
    ends_at: "2030-01-01T02:00:00Z"
  })
  const writes: Array<Request> = [
    { method: "POST", path: "/api/v1/maintenance-windows", body: window, headers: auth },
    { method: "GET", path: "/api/v1/maintenance-windows?limit=10", headers: auth }
  ]
  const readCpuS = target.cpuSeconds() - cpuBefore
  const write = yield* Effect.promise(() =>
    autocannon({ url, connections: Math.max(1, Math.floor(options.connections / 4)), duration: options.durationS, workers: 1, requests: writes })
  )
  return {
    bench: "api",
    sources: sources.length,
    connections: options.connections,
    cache_ms: options.cacheMs,
    distinct_read_urls: new Set(mix.map((r) => r.path)).size,
    servers: target.servers,
    read_mix: { ...summary(read, options.durationS), server_cpu_s: Math.round(readCpuS * 10) / 10 },
    write_mix: summary(write, options.durationS)
  }
})

/** What the benchmark itself needs of the services: an organization and its API key. */
export const apiBenchSeeding = Layer.mergeAll(Organizations.layer, ApiKeys.layer.pipe(Layer.provide(SecretBox.layer)))

/**
 * The API alone on 127.0.0.1 (no pollers: the benchmark measures the API's own throughput), with the
 * client's address behind `TRUSTED_PROXIES` as `statusgrid http` takes it (none unless set: `--via-proxy`).
 */
export const apiBenchServer = HttpRouter.serve(Layer.mergeAll(ApiRoutes, TrustedProxiesLive), { disableListenLog: true, disableLogger: true, routerConfig }).pipe(
  Layer.provideMerge(directServerLayer({ port: 0, host: "127.0.0.1", backlog: listenBacklog })),
  // The API publishes manual custom-source changes through the process's Publisher.
  Layer.provide(Publisher.layer),
  // Traced as a serving process is (services/cli/serve.ts): spans only when OTLP is configured.
  Layer.provide(TracingLive)
)
