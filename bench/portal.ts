import { NodeHttpServer } from "@effect/platform-node"
import { Clock, Effect, Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { SqlClient } from "effect/sql/SqlClient"
import { createServer } from "node:http"
import { createRequire } from "node:module"
import { gzipSync } from "node:zlib"
import { ApiRoutes, routerConfig } from "../services/api/ApiHttp.ts"
import { withLiveStreams } from "../services/api/Http.ts"
import { PortalRoutesLive } from "../services/api/Portal.ts"
import * as Catalog from "../services/catalog/Catalog.ts"
import { sessionCookieName } from "../services/identity/SessionCookie.ts"
import { Sessions } from "../services/identity/Sessions.ts"
import { Users } from "../services/identity/Users.ts"
import { Organizations } from "../services/orgs/Organizations.ts"
import { ClickHouse } from "../services/platform/ClickHouse.ts"
import * as Migrations from "../services/platform/Migrations.ts"
import { Publisher } from "../services/platform/Publisher.ts"
import { SecretBox } from "../services/platform/SecretBox.ts"
import { percentile, round } from "./figures.ts"

/**
 * `statusgrid bench portal`: the server-rendered pages people open most, on
 * this process's server (the API and the portal on one port, as `statusgrid
 * start` serves them), driven by autocannon from a worker thread, then
 * Lighthouse and the first-load JavaScript in Debian's Chromium.
 *
 * The world: the whole catalog (5,243 sources), and an organization whose
 * dashboard has 10 stacks × 50 components (25 sources of 20 components, a
 * tenth of them not operational), one source with 30 days of checks in
 * ClickHouse for its page's uptime figure and history strip.
 */

export interface PortalBenchWorld {
  readonly cookie: string
  readonly org: string
  readonly source: string
  /** A website monitor with a day of checks (its page: chart and check log). */
  readonly monitor: string
}

export interface RenderOptions {
  readonly durationS: number
  readonly connections: number
}

interface AutocannonResult {
  readonly requests: { readonly average: number; readonly total: number }
  readonly latency: { readonly p50: number; readonly p99: number; readonly max: number }
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
}

const autocannon = createRequire(import.meta.url)("autocannon") as (options: {
  url: string
  connections: number
  duration: number
  workers?: number
  headers?: Record<string, string>
}) => Promise<AutocannonResult>

const stacks = 10
const componentsPerStack = 50
const componentsPerSource = 20
const notOperational = ["degraded", "critical", "maintenance"] as const

/** The bench's organization, its stacks and sources, and a signed-in Admin's session cookie. */
export const seedPortalWorld = Effect.fn("bench.portal.seed")(function*() {
  yield* Migrations.migratePostgres()
  yield* Migrations.migrateClickHouse()
  yield* Catalog.seedIfEmpty()
  yield* Catalog.enableSynthetic(Catalog.syntheticEntries(Catalog.demoSyntheticCount, "http://127.0.0.1:4100"))
  const sql = yield* SqlClient
  const tag = Date.now().toString(36)
  const users = yield* Users
  const user = yield* users.signUp(`bench-${tag}@example.com`, "a bench password of some length", "Bench Admin").pipe(Effect.orDie)
  const org = yield* users.createOrganization(user.id, { name: "Bench portal", slug: `bench-${tag}` }).pipe(Effect.orDie)
  yield* sql`UPDATE organizations SET plan_id = 'enterprise' WHERE id = ${org.id}::uuid`
  const { token } = yield* Sessions.use((s) => s.create(user.id, org.id))

  const sourceCount = (stacks * componentsPerStack) / componentsPerSource
  const componentIds: Array<string> = []
  let firstKey = ""
  for (let s = 0; s < sourceCount; s++) {
    const key = `bench-portal-${tag}-${s}`
    if (s === 0) firstKey = key
    const [source] = yield* sql<{ id: string }>`
      INSERT INTO sources (key, name, kind, status, status_page_url)
      VALUES (${key}, ${`Bench provider ${s + 1}`}, 'catalog', 'operational', 'https://status.example.com') RETURNING id`
    for (let c = 0; c < componentsPerSource; c++) {
      const i = s * componentsPerSource + c
      const status = i % 10 === 3 ? notOperational[i % 3]! : "operational"
      const [component] = yield* sql<{ id: string }>`
        INSERT INTO components (source_id, external_id, name, status, position, last_changed_at)
        VALUES (${source!.id}::uuid, ${`component-${c}`}, ${`Component ${c + 1} of provider ${s + 1}`}, ${status}, ${c}, now() - ${i} * interval '1 minute')
        RETURNING id`
      componentIds.push(component!.id)
    }
  }
  for (let k = 0; k < stacks; k++) {
    const [stack] = yield* sql<{ id: string }>`
      INSERT INTO stacks (organization_id, name, slug) VALUES (${org.id}::uuid, ${`Stack ${k + 1}`}, ${`stack-${k + 1}`}) RETURNING id`
    for (let p = 0; p < componentsPerStack; p++) {
      yield* sql`INSERT INTO stack_items (stack_id, kind, component_id, position)
        VALUES (${stack!.id}::uuid, 'component', ${componentIds[k * componentsPerStack + p]!}::uuid, ${p})`
    }
  }

  // 30 days of checks (one an hour) for the source page's strip and uptime, as the ResultWriter inserts them.
  const now = yield* Clock.currentTimeMillis
  const rows: Array<Record<string, unknown>> = []
  for (let c = 0; c < componentsPerSource; c++) {
    for (let h = 0; h < 30 * 24; h++) {
      rows.push({
        checked_at: new Date(now - (30 * 24 - h) * 3_600_000).toISOString(),
        subject_kind: "source",
        subject_id: firstKey,
        component_id: `component-${c}`,
        status: (c + h) % 97 === 0 ? "down" : (c + h) % 41 === 0 ? "degraded" : "operational",
        latency_ms: 100,
        http_status: 200,
        bytes: 0,
        error: "",
        region: "",
        shard: 0
      })
    }
  }
  // A website monitor checked every minute for a day, as MonitorCheck writes its results.
  const [monitor] = yield* sql<{ id: string }>`
    INSERT INTO monitors (organization_id, name, url, state, last_checked_at, last_changed_at)
    VALUES (${org.id}::uuid, 'Checkout API', 'https://checkout.example.com/health', 'up', now(), now() - interval '3 hours') RETURNING id`
  for (let m = 0; m < 24 * 60; m++) {
    const latency = 80 + ((m * 37) % 120)
    rows.push({
      checked_at: new Date(now - (24 * 60 - m) * 60_000).toISOString(),
      subject_kind: "monitor",
      subject_id: monitor!.id,
      component_id: "",
      status: m % 211 === 0 ? "down" : "up",
      latency_ms: latency,
      http_status: m % 211 === 0 ? 503 : 200,
      bytes: 512,
      error: m % 211 === 0 ? "HTTP 503" : "",
      region: "",
      shard: 0,
      dns_ms: 2,
      connect_ms: 10,
      tls_ms: 20,
      first_byte_ms: latency - 35,
      tls_days_left: 60
    })
  }
  yield* ClickHouse.use((ch) => ch.insert("check_results", rows))
  return { cookie: `${sessionCookieName}=${token}`, org: org.slug, source: firstKey, monitor: monitor!.id } satisfies PortalBenchWorld
})

/** What seeding needs beyond the stores: the identity services that sign the bench's Admin up. */
export const portalBenchSeedServices = Layer.mergeAll(Users.layer, Sessions.layer).pipe(
  Layer.provide(Organizations.layer),
  Layer.provide(SecretBox.layer)
)

/** The pages measured, as a signed-in person opens them. */
export const benchPages = (world: PortalBenchWorld) => ({
  dashboard: `/dashboard/${world.org}`,
  catalog: "/catalog",
  source: `/sources/${world.source}`
})

/** The pages Lighthouse scores: the everyday two and the management pages the issues name. */
export const lighthousePages = (world: PortalBenchWorld) => ({
  dashboard: `/dashboard/${world.org}`,
  source: `/sources/${world.source}`,
  monitor: `/settings/${world.org}/monitors/${world.monitor}`,
  rule_editor: `/settings/${world.org}/rules/new`
})

/** The address of this process's server. */
const serverUrl = Effect.gen(function*() {
  const { address } = yield* HttpServer.HttpServer
  return address._tag === "UnixPathAddress" ? "" : `http://127.0.0.1:${address.port}`
})

/** Requests/s and latency of each page at `connections` concurrent, one page after another. */
export const measureRenders = Effect.fn("bench.portal.render")(function*(world: PortalBenchWorld, options: RenderOptions) {
  const url = yield* serverUrl
  const figures: Record<string, unknown> = {}
  for (const [name, path] of Object.entries(benchPages(world))) {
    const check = yield* Effect.promise(() => fetch(url + path, { headers: { cookie: world.cookie } }))
    const body = yield* Effect.promise(() => check.text())
    if (check.status !== 200) return yield* Effect.die(new Error(`${path} answered ${check.status}: ${body.slice(0, 200)}`))
    // One request at a time: what a person waits for the HTML when the server is not loaded.
    const alone: Array<number> = []
    for (let i = 0; i < 20; i++) {
      const started = performance.now()
      const response = yield* Effect.promise(() => fetch(url + path, { headers: { cookie: world.cookie } }))
      yield* Effect.promise(() => response.text())
      alone.push(performance.now() - started)
    }
    alone.sort((a, b) => a - b)
    const r = yield* Effect.promise(() =>
      // From a worker thread, as from another machine, not from the server's event loop.
      autocannon({ url: url + path, connections: options.connections, duration: options.durationS, workers: 1, headers: { cookie: world.cookie } })
    )
    figures[name] = {
      alone_ms: { p50: round(percentile(alone, 50), 1), p99: round(percentile(alone, 99), 1) },
      req_per_s: round(r.requests.average, 1),
      requests: r.requests.total,
      latency_ms: { p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max },
      html_kb: round(Buffer.byteLength(body) / 1024, 1),
      non_2xx: r.non2xx,
      errors: r.errors + r.timeouts
    }
  }
  return figures
})

interface LighthouseScores {
  readonly performance: number
  readonly accessibility: number
  readonly lcp_ms: number
  readonly tbt_ms: number
  readonly cls: number
}

/**
 * Lighthouse (its default: a mobile page on simulated slow 4G and a 4× slower
 * CPU) and the desktop preset, on each page, in Debian's Chromium.
 */
export const measureLighthouse = Effect.fn("bench.portal.lighthouse")(function*(world: PortalBenchWorld, chromePath: string) {
  const url = yield* serverUrl
  const { default: lighthouse } = yield* Effect.promise(() => import("lighthouse"))
  const { launch } = yield* Effect.promise(() => import("chrome-launcher"))
  const desktop = yield* Effect.promise(() => import("lighthouse/core/config/desktop-config.js"))
  const pages = lighthousePages(world)
  const out: Record<string, Record<string, LighthouseScores>> = {}
  for (const name of ["dashboard", "source", "monitor", "rule_editor"] as const) {
    out[name] = {}
    for (const [form, config] of [["mobile", undefined], ["desktop", desktop.default]] as const) {
      const chrome = yield* Effect.promise(() => launch({ chromePath, chromeFlags: ["--headless=new", "--no-sandbox", "--disable-gpu"] }))
      const result = yield* Effect.promise(() =>
        lighthouse(url + pages[name], {
          port: chrome.port,
          output: "json",
          logLevel: "error",
          onlyCategories: ["performance", "accessibility"],
          extraHeaders: { cookie: world.cookie }
        }, config)
      ).pipe(Effect.ensuring(Effect.promise(async () => chrome.kill())))
      const lhr = result!.lhr
      const numeric = (id: string) => round(lhr.audits[id]?.numericValue ?? 0, id === "cumulative-layout-shift" ? 3 : 0)
      out[name][form] = {
        performance: Math.round((lhr.categories["performance"]?.score ?? 0) * 100),
        accessibility: Math.round((lhr.categories["accessibility"]?.score ?? 0) * 100),
        lcp_ms: numeric("largest-contentful-paint"),
        tbt_ms: numeric("total-blocking-time"),
        cls: numeric("cumulative-layout-shift")
      }
    }
  }
  return out
})

/**
 * The JavaScript a first visit to the dashboard loads (every script response
 * in Chromium until the network is idle), raw and gzip-compressed here (level
 * 6, what a reverse proxy would send; the server itself does not compress).
 */
export const measureFirstLoadJs = Effect.fn("bench.portal.js")(function*(world: PortalBenchWorld, chromePath: string) {
  const url = yield* serverUrl
  const { chromium } = yield* Effect.promise(() => import("playwright-core"))
  return yield* Effect.acquireUseRelease(
    Effect.promise(() => chromium.launch({ executablePath: chromePath, headless: true, args: ["--no-sandbox"] })),
    (browser) =>
      Effect.promise(async () => {
        const context = await browser.newContext()
        const [name, value] = world.cookie.split("=") as [string, string]
        await context.addCookies([{ name, value, url }])
        const page = await context.newPage()
        const scripts: Array<Promise<{ url: string; raw: number; gzip: number }>> = []
        page.on("response", (response) => {
          if (response.request().resourceType() !== "script") return
          scripts.push(response.body().then((body) => ({ url: response.url(), raw: body.length, gzip: gzipSync(body).length })))
        })
        await page.goto(url + benchPages(world).dashboard, { waitUntil: "networkidle" })
        const files = await Promise.all(scripts)
        const raw = files.reduce((n, f) => n + f.raw, 0)
        const gzip = files.reduce((n, f) => n + f.gzip, 0)
        const largest = files.toSorted((a, b) => b.gzip - a.gzip).slice(0, 3)
          .map((f) => ({ file: new URL(f.url).pathname, gzip_kb: round(f.gzip / 1024, 1) }))
        return { files: files.length, raw_kb: round(raw / 1024, 1), gzip_kb: round(gzip / 1024, 1), largest }
      }),
    (browser) => Effect.promise(() => browser.close())
  )
})

/** Milliseconds of one render of each page, sequential, for a cold-start figure (the first request after start). */
export const firstRenders = Effect.fn("bench.portal.first")(function*(world: PortalBenchWorld) {
  const url = yield* serverUrl
  const out: Record<string, number> = {}
  for (const [name, path] of Object.entries(benchPages(world))) {
    const started = performance.now()
    const response = yield* Effect.promise(() => fetch(url + path, { headers: { cookie: world.cookie } }))
    yield* Effect.promise(() => response.text())
    out[name] = round(performance.now() - started, 1)
  }
  return out
})

/** The API and the portal on 127.0.0.1 (port 0), with the process's one LiveHub, as services/api/Http.ts serves them; no pollers. */
export const portalBenchServer = withLiveStreams(
  HttpRouter.serve(Layer.mergeAll(ApiRoutes, PortalRoutesLive), { disableListenLog: true, disableLogger: true, routerConfig })
).pipe(
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
  Layer.provideMerge(Publisher.layer)
)
