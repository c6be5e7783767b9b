import { assert, describe, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { ShardReloads } from "../../services/domain/ShardReloads.ts"
import { engine } from "../support/engine.ts"

/**
 * The poller on the outbound module (issue 12): organizations' sources are
 * guarded on every connection, catalog sources are not, and a bare URL is
 * detected by shape whatever its HTTP status. Real PostgreSQL, chDB
 * and HTTP servers; private targets refused except the test's status page
 * (OUTBOUND_ALLOW_ADDRESSES).
 */

interface Listener {
  readonly port: number
  readonly origin: string
  requests: number
  connections: number
}

const listen = (handler: Http.RequestListener): Promise<Listener> =>
  new Promise((resolve) => {
    const server = Http.createServer(handler)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      const state = { port, origin: `http://127.0.0.1:${port}`, requests: 0, connections: 0 }
      server.on("request", () => state.requests++)
      server.on("connection", () => state.connections++)
      resolve(state)
    })
  })

const secret = await listen((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(`{"status":"UP"}`))

const failing = `{"status":"fail","checks":{"database":[{"status":"fail","output":"connection refused"}]}}`
const flip = { redirect: false }

const page = await listen((req, res) => {
  switch (req.url) {
    case "/health-503":
      return res.writeHead(503, { "content-type": "application/health+json" }).end(failing)
    case "/to-loopback":
      return res.writeHead(302, { location: `${secret.origin}/status` }).end()
    case "/later":
      // Healthy when the source is added; later it sends the poller to the operator's network.
      return flip.redirect
        ? res.writeHead(302, { location: `${secret.origin}/status` }).end()
        : res.writeHead(200, { "content-type": "application/json" }).end(`{"status":"UP"}`)
    default:
      return res.writeHead(404).end()
  }
})

// The in-process bus: this test shares no Redis keys with the others.
const TestLayer = engine({
  name: "outbound",
  config: {
    POLLER_SHARDS: "1",
    POLL_RETRIES: "0",
    MONITOR_ALLOW_PRIVATE: "false",
    OUTBOUND_ALLOW_ADDRESSES: `127.0.0.1:${page.port}`
  }
}, Layer.empty)

/** Polls `query` every 100 ms until it returns a row, for at most `ms`. */
const eventually = <A>(ms: number, query: Effect.Effect<ReadonlyArray<A>, unknown, SqlClient>) =>
  Effect.gen(function*() {
    const started = Date.now()
    for (;;) {
      const [row] = yield* query
      if (row !== undefined) return row
      if (Date.now() - started > ms) return yield* Effect.die(new Error(`not within ${ms} ms`))
      yield* Effect.sleep(Duration.millis(100))
    }
  })

const organization = Effect.gen(function*() {
  const sql = yield* SqlClient
  const [org] = yield* sql<{ id: string }>`
    INSERT INTO organizations (slug, name) VALUES ('outbound-acme', 'Acme')
    ON CONFLICT (slug) DO UPDATE SET name = EXCLUDED.name RETURNING id`
  return org!.id
})

interface Row {
  readonly provider_type: string | null
  readonly status: string
  readonly last_error: string | null
}

describe("the poller's outbound requests", () => {
  layer(TestLayer, { timeout: 90_000, excludeTestServices: true })("one shard", (it) => {
    it.effect("a health endpoint answering 503 with a failing JSON body, added with a bare URL, is detected by shape and reads as down", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const org = yield* organization
        const url = `${page.origin}/health-503`
        yield* sql`INSERT INTO sources (key, name, kind, status_page_url, check_class, poll_interval_s)
          VALUES ('bare-health-503', 'Failing health', 'catalog', ${url}, 'critical', 30)`
        yield* sql`INSERT INTO sources (organization_id, key, name, kind, status_page_url, check_class, poll_interval_s)
          VALUES (${org}::uuid, 'outbound-acme-health-503', 'Failing health', 'url', ${url}, 'high', 60)`
        yield* ShardReloads.use((reloads) => reloads.sources(["bare-health-503", "outbound-acme-health-503"]))
        for (const key of ["bare-health-503", "outbound-acme-health-503"]) {
          const row = yield* eventually(20_000, sql<Row>`
            SELECT provider_type, status, error AS last_error FROM sources LEFT JOIN source_checks ON source_id = id WHERE key = ${key} AND status <> 'operational'`)
          assert.deepStrictEqual(row, { provider_type: "health_check", status: "down", last_error: null }, key)
        }
      }))

    it.effect("an organization's bare-URL source redirecting to a loopback address is refused at detection; nothing reaches the listener", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const org = yield* organization
        yield* sql`INSERT INTO sources (organization_id, key, name, kind, status_page_url, check_class, poll_interval_s)
          VALUES (${org}::uuid, 'outbound-acme-redirect', 'Redirect', 'url', ${`${page.origin}/to-loopback`}, 'high', 60)`
        yield* ShardReloads.use((reloads) => reloads.sources(["outbound-acme-redirect"]))
        const row = yield* eventually(20_000, sql<Row>`
          SELECT provider_type, status, error AS last_error FROM sources LEFT JOIN source_checks ON source_id = id WHERE key = 'outbound-acme-redirect' AND error IS NOT NULL`)
        assert.strictEqual(row.provider_type, null)
        assert.strictEqual(row.last_error,
          "detection failed: the page did not answer: refused: 127.0.0.1 is a loopback address; " +
            "status pages of organizations are read only at public addresses unless MONITOR_ALLOW_PRIVATE is set")
        assert.deepStrictEqual([secret.requests, secret.connections], [0, 0])
      }))

    it.effect("an organization's source that passed its creation check and later redirects to a loopback address is refused on every check", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const org = yield* organization
        yield* sql`INSERT INTO sources (organization_id, key, name, kind, provider_type, status_page_url, check_class, poll_interval_s)
          VALUES (${org}::uuid, 'outbound-acme-later', 'Later', 'url', 'health_check', ${`${page.origin}/later`}, 'high', 60)`
        yield* ShardReloads.use((reloads) => reloads.sources(["outbound-acme-later"]))
        yield* eventually(20_000, sql<Row>`
          SELECT provider_type, status, error AS last_error FROM sources LEFT JOIN source_checks ON source_id = id
          WHERE key = 'outbound-acme-later' AND checked_at IS NOT NULL AND error IS NULL`)
        flip.redirect = true
        const row = yield* eventually(20_000, sql<Row>`
          SELECT provider_type, status, error AS last_error FROM sources LEFT JOIN source_checks ON source_id = id WHERE key = 'outbound-acme-later' AND error IS NOT NULL`)
        assert.strictEqual(row.last_error,
          "refused: 127.0.0.1 is a loopback address; status pages of organizations are read only at public addresses unless MONITOR_ALLOW_PRIVATE is set")
        assert.deepStrictEqual([secret.requests, secret.connections], [0, 0])
      }))
  })
})
