import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Fiber, Layer } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Zlib from "node:zlib"
import { userAgent } from "../platform/Outbound.ts"
import { Upstream, type UpstreamOptions, type UpstreamResult } from "./Upstream.ts"

/** What a test server saw of one request. */
interface Seen {
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
}

interface TestServer {
  readonly origin: string
  readonly port: number
  readonly seen: Array<Seen>
  /** TCP connections accepted so far. */
  readonly connections: () => number
  /** Connections currently open. */
  readonly open: () => number
}

/**
 * A real HTTP server on 127.0.0.1 and a free port, closed with the test's
 * scope. `handler` gets the request's index (0-based) among all it received.
 */
const serve = (handler: (req: Http.IncomingMessage, res: Http.ServerResponse, n: number) => void) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ server: Http.Server; state: TestServer }>((resolve) => {
        const seen: Array<Seen> = []
        let accepted = 0
        let open = 0
        const server = Http.createServer((req, res) => {
          const n = seen.length
          seen.push({ path: req.url ?? "", headers: req.headers })
          handler(req, res, n)
        })
        server.on("connection", (socket) => {
          accepted++
          open++
          socket.on("close", () => open--)
        })
        server.listen(0, "127.0.0.1", () => {
          const port = (server.address() as AddressInfo).port
          resolve({
            server,
            state: { origin: `http://127.0.0.1:${port}`, port, seen, connections: () => accepted, open: () => open }
          })
        })
      })
    ),
    ({ server }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        })
      )
  ).pipe(Effect.map(({ state }) => state))

/** A port nothing listens on: bound once, then released. */
const freePort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const server = Http.createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      server.close(() => resolve(port))
    })
  })
)

/** Small delays so retries run fast; tests override what they exercise. */
// The servers of these tests are on 127.0.0.1: the address guard (tested in test/integration/outbound-guard.test.ts) is off.
const fast: UpstreamOptions = { backoffBaseMs: 5, backoffCapMs: 20, timeoutMs: 2_000, guard: { allowPrivate: true } }

const client = (options: UpstreamOptions = {}) => Upstream.make({ ...fast, ...options })

const text = (result: UpstreamResult) => {
  assert.strictEqual(result._tag, "Fresh")
  return result._tag === "Fresh" ? new TextDecoder().decode(result.fetched.body) : ""
}

/** A promise resolved from outside. */
const latch = () => {
  const state = { open: () => {}, opened: Promise.resolve() }
  state.opened = new Promise<void>((resolve) => {
    state.open = resolve
  })
  return state
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

describe("Upstream", () => {
  it.live("remembers an ETag, sends If-None-Match, and returns NotModified on a 304", () =>
    Effect.gen(function*() {
      const server = yield* serve((req, res) => {
        if (req.headers["if-none-match"] === "\"v1\"") {
          res.writeHead(304, { etag: "\"v1\"" })
          res.end()
          return
        }
        res.writeHead(200, { "content-type": "application/json", etag: "\"v1\"" })
        res.end("{\"status\":\"ok\"}")
      })
      const upstream = yield* client()
      const url = `${server.origin}/api/v2/summary.json?x=1`

      const first = yield* upstream.get(url)
      assert.strictEqual(text(first), "{\"status\":\"ok\"}")
      assert.deepStrictEqual(first._tag === "Fresh" && { ...first.fetched, body: undefined }, {
        url,
        status: 200,
        contentType: "application/json",
        body: undefined
      })
      assert.strictEqual(first.attempts, 1)

      const second = yield* upstream.get(url)
      assert.strictEqual(second._tag, "NotModified")
      assert.strictEqual(second.attempts, 1)

      assert.deepStrictEqual(server.seen.map((s) => s.path), ["/api/v2/summary.json?x=1", "/api/v2/summary.json?x=1"])
      assert.strictEqual(server.seen[0]!.headers["if-none-match"], undefined)
      assert.strictEqual(server.seen[1]!.headers["if-none-match"], "\"v1\"")
      assert.strictEqual(server.seen[0]!.headers["user-agent"], userAgent)
      const stats = yield* upstream.stats
      assert.deepStrictEqual(stats, { requests: 2, notModified: 1, retries: 0, failures: 0, inFlight: 0 })
    }))

  it.live("sends If-Modified-Since from Last-Modified", () =>
    Effect.gen(function*() {
      const lastModified = "Wed, 21 Oct 2026 07:28:00 GMT"
      const server = yield* serve((req, res) => {
        if (req.headers["if-modified-since"] === lastModified) {
          res.writeHead(304)
          res.end()
          return
        }
        res.writeHead(200, { "last-modified": lastModified })
        res.end("feed")
      })
      const upstream = yield* client()
      assert.strictEqual(text(yield* upstream.get(`${server.origin}/feed.rss`)), "feed")
      assert.strictEqual((yield* upstream.get(`${server.origin}/feed.rss`))._tag, "NotModified")
      assert.strictEqual(server.seen[1]!.headers["if-modified-since"], lastModified)
      assert.strictEqual(server.seen[1]!.headers["if-none-match"], undefined)
    }))

  it.live("sends no validators when conditional is false, and forgets them after a 2xx without any", () =>
    Effect.gen(function*() {
      const server = yield* serve((_req, res, n) => {
        // Validators on the first two answers only.
        res.writeHead(200, n < 2 ? { etag: "\"a\"", "last-modified": "Wed, 21 Oct 2026 07:28:00 GMT" } : {})
        res.end(`answer ${n}`)
      })
      const upstream = yield* client()
      const url = `${server.origin}/status`
      assert.strictEqual(text(yield* upstream.get(url)), "answer 0")
      assert.strictEqual(text(yield* upstream.get(url, { conditional: false })), "answer 1")
      assert.strictEqual(server.seen[1]!.headers["if-none-match"], undefined)
      assert.strictEqual(server.seen[1]!.headers["if-modified-since"], undefined)

      // Still remembered (conditional: false only skips sending), until a 2xx comes without validators.
      assert.strictEqual(text(yield* upstream.get(url)), "answer 2")
      assert.strictEqual(server.seen[2]!.headers["if-none-match"], "\"a\"")
      assert.strictEqual(text(yield* upstream.get(url)), "answer 3")
      assert.strictEqual(server.seen[3]!.headers["if-none-match"], undefined)
      assert.strictEqual(server.seen[3]!.headers["if-modified-since"], undefined)
    }))

  it.live("does not remember validators of a non-2xx answer", () =>
    Effect.gen(function*() {
      const server = yield* serve((_req, res) => {
        res.writeHead(404, { etag: "\"missing\"" })
        res.end("not here")
      })
      const upstream = yield* client()
      yield* upstream.get(`${server.origin}/gone`)
      yield* upstream.get(`${server.origin}/gone`)
      assert.strictEqual(server.seen[1]!.headers["if-none-match"], undefined)
    }))

  it.live("forgets the least recently answered URL beyond maxRememberedUrls", () =>
    Effect.gen(function*() {
      const server = yield* serve((req, res) => {
        res.writeHead(200, { etag: `"${req.url}"` })
        res.end("ok")
      })
      const upstream = yield* client({ maxRememberedUrls: 2 })
      for (const path of ["/1", "/2", "/3"]) yield* upstream.get(`${server.origin}${path}`)
      yield* upstream.get(`${server.origin}/3`)
      yield* upstream.get(`${server.origin}/1`)
      assert.deepStrictEqual(server.seen.slice(3).map((s) => [s.path, s.headers["if-none-match"]]), [
        ["/3", "\"/3\""],
        ["/1", undefined]
      ])
    }))

  it.live("retries 503 twice, then reports the 200 with attempts 3", () =>
    Effect.gen(function*() {
      const server = yield* serve((_req, res, n) => {
        res.writeHead(n < 2 ? 503 : 200, { "content-type": "text/plain" })
        res.end(n < 2 ? "busy" : "fine")
      })
      const upstream = yield* client({ retries: 2 })
      const result = yield* upstream.get(`${server.origin}/`)
      assert.strictEqual(text(result), "fine")
      assert.strictEqual(result._tag === "Fresh" && result.fetched.status, 200)
      assert.strictEqual(result.attempts, 3)
      assert.strictEqual(server.seen.length, 3)
      assert.strictEqual((yield* upstream.stats).retries, 2)
    }))

  it.live("reports the final 5xx with its body once retries are exhausted", () =>
    Effect.gen(function*() {
      const server = yield* serve((_req, res, n) => {
        res.writeHead(502)
        res.end(`bad gateway ${n}`)
      })
      const upstream = yield* client({ retries: 1 })
      const result = yield* upstream.get(`${server.origin}/`)
      assert.strictEqual(text(result), "bad gateway 1")
      assert.strictEqual(result._tag === "Fresh" && result.fetched.status, 502)
      assert.strictEqual(result.attempts, 2)
      assert.strictEqual(server.seen.length, 2)
    }))

  it.live("does not retry a 404", () =>
    Effect.gen(function*() {
      const server = yield* serve((_req, res) => {
        res.writeHead(404, { "content-type": "text/html" })
        res.end("<h1>Not found</h1>")
      })
      const upstream = yield* client({ retries: 2 })
      const result = yield* upstream.get(`${server.origin}/api/v2/summary.json`)
      assert.strictEqual(text(result), "<h1>Not found</h1>")
      assert.strictEqual(result._tag === "Fresh" && result.fetched.status, 404)
      assert.strictEqual(result.attempts, 1)
      assert.strictEqual(server.seen.length, 1)
      assert.strictEqual((yield* upstream.stats).retries, 0)
    }))

  it.live("retries a 429 after Retry-After: 0", () =>
    Effect.gen(function*() {
      const server = yield* serve((_req, res, n) => {
        if (n === 0) {
          res.writeHead(429, { "retry-after": "0" })
          res.end("slow down")
          return
        }
        res.end("ok")
      })
      const upstream = yield* client({ retries: 2 })
      const result = yield* upstream.get(`${server.origin}/`)
      assert.strictEqual(text(result), "ok")
      assert.strictEqual(result.attempts, 2)
    }))

  it.live("does not wait for a Retry-After beyond the call's budget", () =>
    Effect.gen(function*() {
      const server = yield* serve((_req, res) => {
        res.writeHead(429, { "retry-after": "3600" })
        res.end("come back in an hour")
      })
      const upstream = yield* client({ retries: 2 })
      const result = yield* upstream.get(`${server.origin}/`)
      assert.strictEqual(result._tag === "Fresh" && result.fetched.status, 429)
      assert.strictEqual(text(result), "come back in an hour")
      assert.strictEqual(result.attempts, 1)
      assert.strictEqual(server.seen.length, 1)
    }))

  it.live("fails with ECONNREFUSED after its retries when nothing listens", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      const upstream = yield* client({ retries: 2 })
      const result = yield* upstream.get(`http://127.0.0.1:${port}/`)
      assert.deepStrictEqual(result._tag === "Failed" && [result.error, result.attempts], ["ECONNREFUSED", 3])
      const stats = yield* upstream.stats
      assert.deepStrictEqual(stats, { requests: 1, notModified: 0, retries: 2, failures: 1, inFlight: 0 })
    }))

  it.live("times out a server that never answers", () =>
    Effect.gen(function*() {
      const server = yield* serve(() => {})
      const upstream = yield* client({ retries: 1 })
      const result = yield* upstream.get(`${server.origin}/`, { timeoutMs: 200 })
      assert.strictEqual(result._tag, "Failed")
      assert.strictEqual(result._tag === "Failed" && result.error, "timeout after 200 ms")
      assert.strictEqual(result.attempts, 2)
      assert.strictEqual(server.seen.length, 2)
      assert.isAtLeast(result.latencyMs, 190)
    }))

  it.live("the timeout covers the whole body, however steadily it trickles", () =>
    Effect.gen(function*() {
      const server = yield* serve((_req, res) => {
        res.writeHead(200, { "content-type": "application/json" })
        // A byte every 20 ms, never ending: no gap is long enough for an idle timeout.
        const drip = setInterval(() => res.write(" "), 20)
        res.on("close", () => clearInterval(drip))
      })
      const upstream = yield* client({ retries: 0, timeoutMs: 200 })
      const result = yield* upstream.get(`${server.origin}/`)
      assert.deepStrictEqual(result._tag === "Failed" && [result.error, result.attempts], ["timeout after 200 ms", 1])
    }))

  it.live("keeps at most perHostConcurrency requests in flight to one hostname, across ports", () =>
    Effect.gen(function*() {
      let current = 0
      let peak = 0
      const slow = (_req: Http.IncomingMessage, res: Http.ServerResponse) => {
        current++
        peak = Math.max(peak, current)
        setTimeout(() => {
          current--
          res.end("done")
        }, 30)
      }
      // Two origins, one hostname: the limit is per hostname, not per connection pool.
      const a = yield* serve(slow)
      const b = yield* serve(slow)
      const upstream = yield* client({ perHostConcurrency: 2 })
      const urls = Array.from({ length: 10 }, (_, i) => `${i % 2 === 0 ? a.origin : b.origin}/s/${i}`)
      const results = yield* Effect.all(urls.map((url) => upstream.get(url)), { concurrency: "unbounded" })
      assert.deepStrictEqual(results.map(text), Array.from({ length: 10 }, () => "done"))
      assert.strictEqual(a.seen.length + b.seen.length, 10)
      assert.strictEqual(peak, 2)
    }))

  it.live("decodes gzip, deflate and br bodies and advertises them", () =>
    Effect.gen(function*() {
      const document = JSON.stringify({ page: { name: "Example" }, components: Array.from({ length: 50 }, (_, i) => i) })
      // Path -> [Content-Encoding, body]. Some servers send raw deflate under "deflate".
      const encoded: Record<string, readonly [string, Buffer]> = {
        "/gzip": ["gzip", Zlib.gzipSync(document)],
        "/deflate": ["deflate", Zlib.deflateSync(document)],
        "/raw-deflate": ["deflate", Zlib.deflateRawSync(document)],
        "/br": ["br", Zlib.brotliCompressSync(document)]
      }
      const server = yield* serve((req, res) => {
        const [coding, body] = encoded[req.url ?? ""]!
        res.writeHead(200, { "content-type": "application/json", "content-encoding": coding })
        res.end(body)
      })
      const upstream = yield* client()
      for (const path of Object.keys(encoded)) {
        assert.strictEqual(text(yield* upstream.get(`${server.origin}${path}`)), document, path)
      }
      assert.strictEqual(server.seen[0]!.headers["accept-encoding"], "gzip, deflate, br")
    }))

  it.live("fails a body over the cap, declared, streamed or decompressed, without retrying", () =>
    Effect.gen(function*() {
      const big = "x".repeat(4096)
      const server = yield* serve((req, res) => {
        if (req.url === "/declared") {
          res.writeHead(200, { "content-length": String(big.length) })
          res.end(big)
        } else if (req.url === "/streamed") {
          res.writeHead(200) // chunked, no length
          res.write(big.slice(0, 1000))
          setTimeout(() => res.end(big.slice(1000)), 10)
        } else {
          res.writeHead(200, { "content-encoding": "gzip" })
          res.end(Zlib.gzipSync(big)) // ~40 bytes on the wire
        }
      })
      const upstream = yield* client({ maxBodyBytes: 1024, retries: 2 })
      for (const path of ["/declared", "/streamed", "/bomb"]) {
        const result = yield* upstream.get(`${server.origin}${path}`)
        assert.deepStrictEqual(result._tag === "Failed" && [result.error, result.attempts], ["body too large", 1], path)
      }
      assert.strictEqual(server.seen.length, 3)
      // Under the cap is fine.
      const small = yield* client({ maxBodyBytes: 4096 })
      assert.strictEqual(text(yield* small.get(`${server.origin}/declared`)), big)
    }))

  it.live("follows redirects and reports the requested URL", () =>
    Effect.gen(function*() {
      const server = yield* serve((req, res) => {
        if (req.url === "/old") {
          res.writeHead(301, { location: "/new" })
          res.end()
          return
        }
        res.end("moved here")
      })
      const upstream = yield* client()
      const result = yield* upstream.get(`${server.origin}/old`)
      assert.strictEqual(text(result), "moved here")
      assert.strictEqual(result._tag === "Fresh" && result.fetched.url, `${server.origin}/old`)
      assert.deepStrictEqual(server.seen.map((s) => s.path), ["/old", "/new"])
    }))

  it.live("reuses one keep-alive connection and closes it with the scope", () =>
    Effect.gen(function*() {
      const server = yield* serve((_req, res) => res.end("ok"))
      yield* Effect.scoped(Effect.gen(function*() {
        const upstream = yield* client()
        for (let i = 0; i < 3; i++) {
          assert.strictEqual(text(yield* upstream.get(`${server.origin}/${i}`)), "ok")
          // undici marks a connection free again a tick after its response ends; a request sent
          // sooner opens a second one. Polls are seconds apart, so let that tick pass.
          yield* Effect.promise(() => sleep(5))
        }
        assert.strictEqual(server.connections(), 1)
        assert.strictEqual(server.open(), 1)
      }))
      // The client's scope is closed: its pool closes the idle connection.
      for (let i = 0; i < 100 && server.open() > 0; i++) yield* Effect.promise(() => sleep(10))
      assert.strictEqual(server.open(), 0)
    }))

  it.live("counts a call in flight until it finishes", () =>
    Effect.gen(function*() {
      const gate = latch()
      const received = latch()
      const server = yield* serve((_req, res) => {
        received.open()
        void gate.opened.then(() => res.end("late"))
      })
      const upstream = yield* client()
      const fiber = yield* upstream.get(`${server.origin}/`).pipe(Effect.forkChild)
      yield* Effect.promise(() => received.opened)
      assert.strictEqual((yield* upstream.stats).inFlight, 1)
      gate.open()
      assert.strictEqual(text(yield* Fiber.join(fiber)), "late")
      assert.deepStrictEqual(yield* upstream.stats, { requests: 1, notModified: 0, retries: 0, failures: 0, inFlight: 0 })
    }))

  it.live("an interrupted call aborts its request: the server sees the connection close, nothing stays in flight", () =>
    Effect.gen(function*() {
      const received = latch()
      const closed = latch()
      const server = yield* serve((req) => {
        received.open()
        req.socket.on("close", () => closed.open())
      })
      const upstream = yield* client({ timeoutMs: 30_000 })
      const fiber = yield* upstream.get(`${server.origin}/held`).pipe(Effect.forkChild)
      yield* Effect.promise(() => received.opened)
      yield* Fiber.interrupt(fiber)
      yield* Effect.promise(() => closed.opened)
      assert.strictEqual((yield* upstream.stats).inFlight, 0)
    }))

  it.live("an interrupted call makes no further attempt: a backoff under way ends with it", () =>
    Effect.gen(function*() {
      const answered = latch()
      const server = yield* serve((_req, res) => {
        res.writeHead(503)
        res.end("busy")
        answered.open()
      })
      const upstream = yield* client({ backoffBaseMs: 10_000, backoffCapMs: 10_000 })
      const fiber = yield* upstream.get(`${server.origin}/busy`).pipe(Effect.forkChild)
      yield* Effect.promise(() => answered.opened)
      yield* Effect.sleep("50 millis")
      yield* Fiber.interrupt(fiber)
      // The backoff's promise settles at once: nothing stays in flight, and no second request is made.
      yield* Effect.promise(() => sleep(50))
      assert.strictEqual((yield* upstream.stats).inFlight, 0)
      assert.strictEqual(server.seen.length, 1)
    }))

  it.live("follows at most maxRedirects redirects; past them the redirect itself is the answer", () =>
    Effect.gen(function*() {
      const server = yield* serve((req, res) => {
        const n = Number(req.url?.slice(1) ?? 0)
        res.writeHead(302, { location: `/${n + 1}` })
        res.end(`hop ${n}`)
      })
      const upstream = yield* client({ maxRedirects: 2 })
      const result = yield* upstream.get(`${server.origin}/0`)
      assert.deepStrictEqual(result._tag === "Fresh" && [result.fetched.status, new TextDecoder().decode(result.fetched.body)], [302, "hop 2"])
      assert.deepStrictEqual(server.seen.map((s) => s.path), ["/0", "/1", "/2"])
    }))

  it.live("fails an invalid or non-HTTP URL without a request", () =>
    Effect.gen(function*() {
      const upstream = yield* client()
      const invalid = yield* upstream.get("not a url")
      assert.deepStrictEqual(invalid._tag === "Failed" && [invalid.error, invalid.attempts], ["invalid URL", 0])
      const ftp = yield* upstream.get("ftp://example.com/status")
      assert.deepStrictEqual(ftp._tag === "Failed" && [ftp.error, ftp.attempts], ["unsupported protocol ftp:", 0])
    }))

  it.live("the layer reads POLL_TIMEOUT_MS and POLL_RETRIES", () =>
    Effect.gen(function*() {
      const server = yield* serve(() => {})
      const config = ConfigProvider.layer(ConfigProvider.fromUnknown({ POLL_TIMEOUT_MS: "150", POLL_RETRIES: "0", MONITOR_ALLOW_PRIVATE: "true" }))
      const result = yield* Upstream.use((upstream) => upstream.get(`${server.origin}/`)).pipe(
        Effect.provide(Upstream.layer.pipe(Layer.provide(config)))
      )
      assert.deepStrictEqual(result._tag === "Failed" && [result.error, result.attempts], ["timeout after 150 ms", 1])
      assert.strictEqual(server.seen.length, 1)
    }))
})
