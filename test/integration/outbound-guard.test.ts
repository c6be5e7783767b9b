import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { detect } from "../../services/adapters/detect.ts"
import { Fetcher } from "../../services/adapters/Fetcher.ts"
import { checkUrlTarget, type GuardPolicy, type LookupAll, parseAllowedAddresses } from "../../services/platform/AddressGuard.ts"
import { Upstream } from "../../services/poller/Upstream.ts"
import { apiServer, call, newTenant } from "../support/api.ts"

/**
 * Issue 12, "one guarded path for every outbound request": organizations'
 * URLs never reach a private listener, whether they name it, redirect to it
 * or resolve to it after a DNS change; and a huge body is cut while
 * streaming. Real HTTP servers on 127.0.0.1; a stub resolver for DNS.
 */

interface Listener {
  readonly port: number
  readonly origin: string
  /** HTTP requests received. */
  requests: number
  /** TCP connections accepted. */
  connections: number
}

const listen = (handler: Http.RequestListener): Promise<Listener & { server: Http.Server }> =>
  new Promise((resolve) => {
    const server = Http.createServer(handler)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      const state = { server, port, origin: `http://127.0.0.1:${port}`, requests: 0, connections: 0 }
      server.on("request", () => state.requests++)
      server.on("connection", () => state.connections++)
      resolve(state)
    })
  })

/** What an organization must never reach: the operator's private service. */
const secret = await listen((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(`{"secret":true}`))

const chunk = Buffer.alloc(64 * 1024, 0x61)
const hugeBytes = 200 * 1024 * 1024
const huge = { sent: 0 }

/** A public-looking status page (allowed by OUTBOUND_ALLOW_ADDRESSES) that redirects, or streams a huge body. */
const page = await listen((req, res) => {
  switch (req.url) {
    case "/to-loopback":
      return res.writeHead(302, { location: `${secret.origin}/latest` }).end()
    case "/to-localhost":
      return res.writeHead(301, { location: `http://localhost:${secret.port}/latest` }).end()
    case "/to-metadata":
      return res.writeHead(307, { location: "http://169.254.169.254/latest/meta-data/iam/security-credentials/" }).end()
    case "/health":
      return res.writeHead(200, { "content-type": "application/json" }).end(`{"status":"UP"}`)
    case "/huge": {
      // Chunked, no Content-Length: only a cap applied while streaming stops it.
      res.writeHead(200, { "content-type": "application/json" })
      huge.sent = 0
      const pump = () => {
        while (huge.sent < hugeBytes && !res.destroyed) {
          huge.sent += chunk.length
          if (!res.write(chunk)) return void res.once("drain", pump)
        }
        res.end()
      }
      res.on("close", () => res.destroy())
      return pump()
    }
    default:
      return res.writeHead(404).end()
  }
})

const policy: GuardPolicy = { allowPrivate: false, allowAddresses: parseAllowedAddresses([`127.0.0.1:${page.port}`]) }

/** A name with an IPv6 and an IPv4 address, nothing listening at the IPv4 one. */
const dualStack: LookupAll = () => Promise.resolve([{ address: "::1", family: 6 }, { address: "127.0.0.2", family: 4 }])

const untouched = () => {
  assert.strictEqual(secret.requests, 0, "a request reached the private listener")
  assert.strictEqual(secret.connections, 0, "a connection reached the private listener")
}

describe("the outbound guard", () => {
  it.live("the poller's client refuses a redirect to a loopback or metadata address, final (no retry); nothing reaches the listener", () =>
    Effect.gen(function*() {
      const upstream = yield* Upstream.make({ guard: policy, retries: 2, backoffBaseMs: 1, backoffCapMs: 1, timeoutMs: 2_000 })
      const ok = yield* upstream.get(`${page.origin}/health`)
      assert.strictEqual(ok._tag, "Fresh")
      const loopback = yield* upstream.get(`${page.origin}/to-loopback`)
      assert.deepStrictEqual(loopback._tag === "Failed" && [loopback.error, loopback.attempts], [
        "refused: 127.0.0.1 is a loopback address; status pages of organizations are read only at public addresses unless MONITOR_ALLOW_PRIVATE is set",
        1
      ])
      const byName = yield* upstream.get(`${page.origin}/to-localhost`)
      assert.match(byName._tag === "Failed" ? byName.error : "", /^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address/)
      const metadata = yield* upstream.get(`${page.origin}/to-metadata`)
      assert.match(metadata._tag === "Failed" ? metadata.error : "", /^refused: 169\.254\.169\.254 is a cloud metadata address/)
      // A catalog source (the operator's) is not guarded.
      const trusted = yield* upstream.get(`${page.origin}/to-loopback`, { trusted: true })
      assert.strictEqual(trusted._tag, "Fresh")
      assert.strictEqual(secret.requests, 1)
      secret.requests = 0
      secret.connections = 0
    }).pipe(Effect.scoped))

  it.live("detection refuses the same redirects with a clear error; nothing reaches the listener", () =>
    Effect.gen(function*() {
      for (const [path, expected] of [
        ["/to-loopback", /^the page did not answer: refused: 127\.0\.0\.1 is a loopback address;/],
        ["/to-metadata", /^the page did not answer: refused: 169\.254\.169\.254 is a cloud metadata address;/]
      ] as const) {
        const error = yield* detect(`${page.origin}${path}`).pipe(Effect.flip)
        assert.strictEqual(error.refused, true)
        assert.match(error.message, expected)
      }
      untouched()
    }).pipe(Effect.provide(Fetcher.layerWith({ guard: policy }))))

  it.live("a host whose DNS answer turns private between checks is refused on connection; nothing reaches the listener", () =>
    Effect.gen(function*() {
      let answer = "93.184.216.34"
      const resolved: Array<string> = []
      const lookup: LookupAll = (host) => {
        resolved.push(host)
        return host === "status.flip.test"
          ? Promise.resolve([{ address: answer, family: 4 }])
          : Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" }))
      }
      const guard: GuardPolicy = { allowPrivate: false, lookup }
      const url = `http://status.flip.test:${secret.port}/status.json`
      // When the source was added, the name was public.
      const created = yield* checkUrlTarget(url, guard)
      assert.deepStrictEqual(created, [{ address: "93.184.216.34", family: 4 }])
      // Then it moved to the operator's network.
      answer = "127.0.0.1"
      const upstream = yield* Upstream.make({ guard, retries: 0, timeoutMs: 2_000 })
      const polled = yield* upstream.get(url)
      assert.deepStrictEqual(polled._tag === "Failed" && polled.error,
        "refused: status.flip.test resolves to 127.0.0.1, a loopback address; status pages of organizations are read only at public addresses unless MONITOR_ALLOW_PRIVATE is set")
      const fetcher = yield* Fetcher.make({ guard })
      const fetched = yield* fetcher.get(url).pipe(Effect.flip)
      assert.strictEqual(fetched.refused, true)
      assert.match(fetched.message, /^refused: status\.flip\.test resolves to 127\.0\.0\.1, a loopback address/)
      // Each connection asked the resolver: the address checked is the address connected to.
      assert.deepStrictEqual(resolved, ["status.flip.test", "status.flip.test", "status.flip.test"])
      untouched()
    }).pipe(Effect.scoped))

  it.live("an allowed host whose IPv4 address refuses is reached at its checked IPv6 address", () =>
    Effect.gen(function*() {
      const v6 = yield* Effect.promise(() =>
        new Promise<number>((resolve) => {
          const s = Http.createServer((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(`{"status":"UP"}`))
          s.listen(0, "::1", () => resolve((s.address() as AddressInfo).port))
          s.unref()
        })
      )
      const guard: GuardPolicy = { allowPrivate: false, lookup: dualStack, allowAddresses: parseAllowedAddresses(["127.0.0.2", `[::1]:${v6}`]) }
      const upstream = yield* Upstream.make({ guard, retries: 0, timeoutMs: 2_000 })
      const result = yield* upstream.get(`http://dual.example.test:${v6}/health`)
      assert.strictEqual(result._tag, "Fresh", JSON.stringify(result))
    }).pipe(Effect.scoped))

  it.live("a 200 MB streamed body is cut at the 8 MiB cap while streaming: peak RSS does not grow by its size", () =>
    Effect.gen(function*() {
      const fetcher = yield* Fetcher.make({})
      const upstream = yield* Upstream.make({ retries: 0, timeoutMs: 20_000 })
      const figures: Record<string, number> = {}
      for (const [name, get] of [
        ["fetcher", fetcher.get(`${page.origin}/huge`, { trusted: true, timeoutMs: 20_000 }).pipe(Effect.flip, Effect.map((e) => e.message))],
        ["upstream", upstream.get(`${page.origin}/huge`, { trusted: true }).pipe(Effect.map((r) => r._tag === "Failed" ? r.error : r._tag))]
      ] as const) {
        const before = process.memoryUsage().rss
        let peak = before
        const sampler = setInterval(() => {
          peak = Math.max(peak, process.memoryUsage().rss)
        }, 2)
        const message = yield* get
        clearInterval(sampler)
        peak = Math.max(peak, process.memoryUsage().rss)
        assert.strictEqual(message, "body too large")
        figures[`${name}_rss_growth_mib`] = Math.round((peak - before) / 1024 / 1024)
        figures[`${name}_sent_mib`] = Math.round(huge.sent / 1024 / 1024)
        // Cut while streaming: the server was stopped long before 200 MB, and memory never held the body.
        assert.isBelow(huge.sent, hugeBytes / 2, `${name}: the whole body was read`)
        assert.isBelow(peak - before, 64 * 1024 * 1024, `${name}: RSS grew by ${figures[`${name}_rss_growth_mib`]} MiB`)
      }
      console.log(JSON.stringify({ test: "outbound-body-cap", body_mib: 200, cap_mib: 8, ...figures }))
    }).pipe(Effect.scoped), 60_000)
})

/** The API of custom sources with private targets refused, but the test's status page allowed by address. */
layer(apiServer({ MONITOR_ALLOW_PRIVATE: "false", OUTBOUND_ALLOW_ADDRESSES: `127.0.0.1:${page.port}` }), {
  timeout: 60_000,
  excludeTestServices: true
})("custom sources by URL", (it) => {
  it.effect("a custom source whose URL redirects to a loopback or metadata address is refused with 400 naming status_page_url", () =>
    Effect.gen(function*() {
      const tenant = yield* newTenant("free")
      for (const [path, kind] of [["/to-loopback", "a loopback address"], ["/to-metadata", "a cloud metadata address"]] as const) {
        const url = `${page.origin}${path}`
        const refused = yield* call("POST", "/custom-sources", { key: tenant.keys.admin, body: { name: `Redirect ${path}`, status_page_url: url } })
        assert.strictEqual(refused.status, 400, JSON.stringify(refused.body))
        assert.strictEqual(refused.body.field, "status_page_url")
        assert.include(refused.body.message, `status_page_url ${url} is refused: `)
        assert.include(refused.body.message, `is ${kind}; status pages of organizations are read only at public addresses`)
      }
      const sql = yield* SqlClient
      const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM sources WHERE organization_id = ${tenant.id}::uuid`
      assert.strictEqual(row!.n, 0)
      // The allowed address itself is readable: the guard refuses targets, not the feature.
      const health = yield* call("POST", "/custom-sources", { key: tenant.keys.admin, body: { name: "Health", status_page_url: `${page.origin}/health` } })
      assert.strictEqual(health.status, 201, JSON.stringify(health.body))
      assert.strictEqual(health.body.provider_type, "health_check")
      untouched()
    }))
})
