import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as http from "node:http"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import * as net from "node:net"
import { type AgentPool, type CheckOutcome, makeAgentPool, maxBodyBytes, requestFromSettings, runCheck, userAgent } from "../../services/monitors/HttpCheck.ts"
import { type MonitorCheckState, step } from "../../services/monitors/MonitorState.ts"
import { validateMonitorResult } from "../../services/monitors/Validate.ts"
import { makeTestCerts, type TestCerts } from "../support/tls.ts"

/** What a test server saw of one request. */
interface Seen {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

const big = Buffer.alloc(Math.floor(1.5 * 1024 * 1024), "a")
big.write("EARLY", 10)
big.write("NEEDLE", Math.floor(1.2 * 1024 * 1024))

let flakyFailures = 0

/** One handler for all servers: the path says what to answer. */
const handler = (seen: Array<Seen>) => (req: http.IncomingMessage, res: http.ServerResponse) => {
  const chunks: Array<Buffer> = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") })
    const url = new URL(req.url ?? "/", "http://x")
    const path = url.pathname
    if (path === "/ok") return res.end("hello, all systems operational")
    if (path.startsWith("/status/")) {
      res.statusCode = Number(path.slice(8))
      return res.end("status")
    }
    if (path === "/hang") return // never answers
    if (path.startsWith("/redirect/")) {
      const n = Number(path.slice(10))
      res.statusCode = 302
      res.setHeader("Location", n <= 1 ? "/ok" : `/redirect/${n - 1}`)
      return res.end()
    }
    if (path === "/moved") {
      res.statusCode = 301
      res.setHeader("Location", "/ok")
      return res.end()
    }
    if (path === "/see-other") {
      res.statusCode = 303
      res.setHeader("Location", "/echo")
      return res.end()
    }
    if (path === "/elsewhere") {
      res.statusCode = 307
      res.setHeader("Location", url.searchParams.get("to") ?? "/ok")
      return res.end()
    }
    if (path === "/echo") return res.end("echo")
    if (path === "/slow") {
      setTimeout(() => res.end("slow"), Number(url.searchParams.get("ms") ?? "100"))
      return
    }
    if (path === "/big") return res.end(big)
    if (path === "/flaky") {
      if (flakyFailures > 0) {
        flakyFailures--
        res.statusCode = 503
        return res.end("down")
      }
      return res.end("ok")
    }
    res.statusCode = 404
    res.end("not found")
  })
}

const listen = async (server: http.Server | https.Server): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return (server.address() as AddressInfo).port
}

let certs: TestCerts
let pool: AgentPool
const servers: Array<http.Server> = []
const rawServers: Array<{ readonly server: net.Server; readonly sockets: Set<net.Socket> }> = []
const seen: Array<Seen> = []
const seenOther: Array<Seen> = []
let base = ""
let other = ""
let secure = ""
let selfSigned = ""

beforeAll(async () => {
  certs = makeTestCerts(5)
  pool = makeAgentPool({ ca: certs.ca })
  const plain = http.createServer(handler(seen))
  const second = http.createServer(handler(seenOther))
  const tls = https.createServer({ cert: certs.cert, key: certs.key }, handler(seen))
  const self = https.createServer({ cert: certs.selfSignedCert, key: certs.selfSignedKey }, handler(seen))
  servers.push(plain, second, tls, self)
  base = `http://127.0.0.1:${await listen(plain)}`
  other = `http://127.0.0.1:${await listen(second)}`
  secure = `https://localhost:${await listen(tls)}`
  selfSigned = `https://localhost:${await listen(self)}`
})

afterAll(async () => {
  pool.close()
  for (const s of servers) {
    s.closeAllConnections()
    await new Promise((resolve) => s.close(resolve))
  }
  for (const { server, sockets } of rawServers) {
    for (const socket of sockets) socket.destroy()
    await new Promise((resolve) => server.close(resolve))
  }
  certs.remove()
})

/** A check as production builds it: validated settings, then the request. */
const check = (input: Record<string, unknown>, options: { allowPrivate?: boolean } = {}): Promise<CheckOutcome> => {
  const validated = validateMonitorResult({ name: "test", ...input })
  if (Result.isFailure(validated)) throw new Error(validated.failure.message)
  return runCheck(requestFromSettings(validated.success.settings), { agentPool: pool, allowPrivate: options.allowPrivate ?? true })
}

const lastSeen = (list: ReadonlyArray<Seen> = seen) => list[list.length - 1]!

describe("status ranges", () => {
  it("200 is up with no error", async () => {
    const o = await check({ url: `${base}/ok` })
    assert.strictEqual(o.status, "up")
    assert.strictEqual(o.http_status, 200)
    assert.strictEqual(o.error_code, "")
    assert.strictEqual(o.error, "")
    assert.strictEqual(o.bytes, "hello, all systems operational".length)
    assert.isFalse(o.truncated)
    assert.strictEqual(o.final_url, `${base}/ok`)
    assert.isUndefined(o.tls)
    assert.isTrue(Date.now() - Date.parse(o.checked_at) < 5000)
  })

  it("503 against 200-299 is down, saying what was expected", async () => {
    const o = await check({ url: `${base}/status/503` })
    assert.strictEqual(o.status, "down")
    assert.strictEqual(o.http_status, 503)
    assert.strictEqual(o.error_code, "status")
    assert.strictEqual(o.error, "expected 200-299, got 503")
  })

  it("2xx,301 accepts a 301 when redirects are not followed, and 204, but not 302", async () => {
    const moved = await check({ url: `${base}/moved`, expected_status: "2xx,301", follow_redirects: false })
    assert.strictEqual(moved.status, "up")
    assert.strictEqual(moved.http_status, 301)
    assert.strictEqual(moved.redirects, 0)
    assert.strictEqual((await check({ url: `${base}/status/204`, expected_status: "2xx,301" })).status, "up")
    const found = await check({ url: `${base}/redirect/1`, expected_status: "2xx,301", follow_redirects: false })
    assert.strictEqual(found.error, "expected 2xx,301, got 302")
  })
})

describe("keyword", () => {
  it("contains: found is up, missing is down", async () => {
    assert.strictEqual((await check({ url: `${base}/ok`, keyword: "operational" })).status, "up")
    const missing = await check({ url: `${base}/ok`, keyword: "maintenance" })
    assert.strictEqual(missing.status, "down")
    assert.strictEqual(missing.error_code, "keyword")
    assert.include(missing.error, "\"maintenance\" not found")
  })

  it("absent: missing is up, present is down", async () => {
    assert.strictEqual((await check({ url: `${base}/ok`, keyword: "error", keyword_mode: "absent" })).status, "up")
    const present = await check({ url: `${base}/ok`, keyword: "operational", keyword_mode: "absent" })
    assert.strictEqual(present.error_code, "keyword")
    assert.include(present.error, "\"operational\" found")
  })

  it("a body over 1 MiB is read up to 1 MiB: truncated, a keyword beyond is not found", async () => {
    const beyond = await check({ url: `${base}/big`, keyword: "NEEDLE" })
    assert.isTrue(beyond.truncated)
    assert.strictEqual(beyond.bytes, maxBodyBytes)
    assert.strictEqual(beyond.error_code, "keyword")
    assert.include(beyond.error, "first 1 MiB")
    const early = await check({ url: `${base}/big`, keyword: "EARLY" })
    assert.strictEqual(early.status, "up")
    assert.isTrue(early.truncated)
    const counted = await check({ url: `${base}/big` })
    assert.strictEqual(counted.status, "up")
    assert.isTrue(counted.truncated)
    assert.strictEqual(counted.bytes, maxBodyBytes)
  })
})

describe("timeouts and slowness", () => {
  it("a server that never answers times out within the timeout and a small margin", async () => {
    const o = await check({ url: `${base}/hang`, timeout: 300 })
    assert.strictEqual(o.status, "down")
    assert.strictEqual(o.error_code, "timeout")
    assert.strictEqual(o.http_status, 0)
    assert.include(o.error, "300 ms")
    assert.isAtLeast(o.phases.total_ms, 295)
    assert.isBelow(o.phases.total_ms, 700)
  })

  it("a success slower than degraded_after_ms is degraded; a fast one is up", async () => {
    const slow = await check({ url: `${base}/slow?ms=150`, degraded_after_ms: 60 })
    assert.strictEqual(slow.status, "degraded")
    assert.strictEqual(slow.error_code, "")
    assert.isAbove(slow.phases.total_ms, 140)
    assert.isAbove(slow.phases.first_byte_ms, 140)
    assert.strictEqual((await check({ url: `${base}/ok`, degraded_after_ms: 2000 })).status, "up")
  })
})

describe("redirects", () => {
  it("follows 2 hops and reports the final URL", async () => {
    const o = await check({ url: `${base}/redirect/2` })
    assert.strictEqual(o.status, "up")
    assert.strictEqual(o.http_status, 200)
    assert.strictEqual(o.redirects, 2)
    assert.strictEqual(o.final_url, `${base}/ok`)
  })

  it("not followed, the 302 is judged against the range", async () => {
    const o = await check({ url: `${base}/redirect/2`, follow_redirects: false })
    assert.strictEqual(o.status, "down")
    assert.strictEqual(o.error, "expected 200-299, got 302")
    assert.strictEqual(o.redirects, 0)
  })

  it("6 hops is too many; 5 is fine", async () => {
    const o = await check({ url: `${base}/redirect/6` })
    assert.strictEqual(o.error_code, "too_many_redirects")
    assert.strictEqual(o.redirects, 5)
    assert.strictEqual((await check({ url: `${base}/redirect/5` })).status, "up")
  })

  it("303 continues as GET without the body", async () => {
    const o = await check({ url: `${base}/see-other`, method: "POST", body: "payload", headers: { "Content-Type": "text/plain" } })
    assert.strictEqual(o.status, "up")
    const [post, get] = seen.slice(-2)
    assert.strictEqual(post!.method, "POST")
    assert.strictEqual(post!.body, "payload")
    assert.strictEqual(get!.method, "GET")
    assert.strictEqual(get!.url, "/echo")
    assert.strictEqual(get!.body, "")
    assert.isUndefined(get!.headers["content-length"])
  })

  it("credentials are not sent to another origin", async () => {
    const o = await check({
      url: `${base}/elsewhere?to=${encodeURIComponent(`${other}/echo`)}`,
      auth: { type: "bearer", token: "secret-token" },
      headers: { "X-Custom": "kept" }
    })
    assert.strictEqual(o.status, "up")
    assert.strictEqual(o.final_url, `${other}/echo`)
    assert.strictEqual(lastSeen().headers.authorization, "Bearer secret-token")
    assert.isUndefined(lastSeen(seenOther).headers.authorization)
    assert.strictEqual(lastSeen(seenOther).headers["x-custom"], "kept")
  })
})

describe("what the server receives", () => {
  it("custom headers, basic auth and the User-Agent", async () => {
    await check({ url: `${base}/echo`, headers: { "X-Custom": "yes", Accept: "application/json" }, auth: { type: "basic", username: "ops", password: "pa:ss" } })
    const s = lastSeen()
    assert.strictEqual(s.headers["x-custom"], "yes")
    assert.strictEqual(s.headers.accept, "application/json")
    assert.strictEqual(s.headers.authorization, `Basic ${Buffer.from("ops:pa:ss").toString("base64")}`)
    assert.strictEqual(s.headers["user-agent"], userAgent)
    assert.match(userAgent, /^statusgrid-monitor\/\d+\.\d+\.\d+ \(\+https:\/\/github\.com\/statusgrid\)$/)
  })

  it("bearer auth, and a User-Agent of one's own replaces ours", async () => {
    await check({ url: `${base}/echo`, auth: { type: "bearer", token: "t0ken" }, headers: { "user-agent": "mine/1" } })
    assert.strictEqual(lastSeen().headers.authorization, "Bearer t0ken")
    assert.strictEqual(lastSeen().headers["user-agent"], "mine/1")
  })

  it("a POST body with its length", async () => {
    const body = JSON.stringify({ ping: "héllo" })
    const o = await check({ url: `${base}/echo`, method: "POST", body, headers: { "Content-Type": "application/json" } })
    assert.strictEqual(o.status, "up")
    const s = lastSeen()
    assert.strictEqual(s.method, "POST")
    assert.strictEqual(s.body, body)
    assert.strictEqual(s.headers["content-length"], String(Buffer.byteLength(body)))
    assert.strictEqual(s.headers["content-type"], "application/json")
  })

  it("HEAD and other methods are sent as given", async () => {
    const o = await check({ url: `${base}/ok`, method: "HEAD" })
    assert.strictEqual(o.status, "up")
    assert.strictEqual(o.bytes, 0)
    assert.strictEqual(lastSeen().method, "HEAD")
    await check({ url: `${base}/echo`, method: "DELETE" })
    assert.strictEqual(lastSeen().method, "DELETE")
  })
})

describe("TLS", () => {
  it("reports the certificate: 5-day leaf, issuer and subject, authorized", async () => {
    const o = await check({ url: `${secure}/ok` })
    assert.strictEqual(o.status, "up", o.error)
    const tls = o.tls!
    assert.isDefined(tls)
    assert.include([4, 5], tls.days_left)
    assert.strictEqual(tls.issuer, "statusgrid test CA")
    assert.strictEqual(tls.subject, "localhost")
    assert.isTrue(tls.authorized)
    assert.strictEqual(tls.authorization_error, "")
    const daysToExpiry = (Date.parse(tls.valid_to) - Date.now()) / 86_400_000
    assert.isTrue(daysToExpiry > 4.9 && daysToExpiry <= 5, tls.valid_to)
  })

  it("phases on a new connection, zero and reused on the kept-alive one", async () => {
    const fresh = makeAgentPool({ ca: certs.ca })
    try {
      const request = requestFromSettings({ ...settingsFor(`${secure}/ok`) })
      const first = await runCheck(request, { agentPool: fresh, allowPrivate: true })
      assert.isFalse(first.reused)
      assert.isAbove(first.phases.dns_ms + first.phases.connect_ms, 0, JSON.stringify(first.phases))
      assert.isAbove(first.phases.tls_ms, 0)
      assert.isAbove(first.phases.total_ms, 0)
      assert.isAtLeast(first.phases.total_ms, first.phases.tls_ms)
      const second = await runCheck(request, { agentPool: fresh, allowPrivate: true })
      assert.isTrue(second.reused)
      assert.deepStrictEqual([second.phases.dns_ms, second.phases.connect_ms, second.phases.tls_ms], [0, 0, 0])
      assert.deepStrictEqual(second.tls, first.tls)
    } finally {
      fresh.close()
    }
  })

  it("a self-signed certificate fails with tls_verify, naming OpenSSL's reason", async () => {
    const o = await check({ url: `${selfSigned}/ok` })
    assert.strictEqual(o.status, "down")
    assert.strictEqual(o.error_code, "tls")
    assert.include(o.error, "DEPTH_ZERO_SELF_SIGNED_CERT")
  })

  it("without tls_verify it is up, reported as not authorized", async () => {
    const o = await check({ url: `${selfSigned}/ok`, tls_verify: false })
    assert.strictEqual(o.status, "up", o.error)
    assert.isFalse(o.tls!.authorized)
    assert.strictEqual(o.tls!.authorization_error, "DEPTH_ZERO_SELF_SIGNED_CERT")
    assert.strictEqual(o.tls!.subject, "localhost")
  })
})

describe("private addresses", () => {
  it("localhost is refused without allowPrivate and the server never sees the request", async () => {
    const before = seen.length
    const port = new URL(base).port
    const byName = await check({ url: `http://localhost:${port}/ok` }, { allowPrivate: false })
    assert.strictEqual(byName.status, "down")
    assert.strictEqual(byName.error_code, "private_address")
    assert.include(byName.error, "localhost resolves to 127.0.0.1")
    const literal = await check({ url: `${base}/ok` }, { allowPrivate: false })
    assert.strictEqual(literal.error_code, "private_address")
    assert.strictEqual(seen.length, before)
  })

  it("a connection refused is a connect error", async () => {
    const closed = http.createServer()
    const port = await listen(closed)
    await new Promise((resolve) => closed.close(resolve))
    const o = await check({ url: `http://127.0.0.1:${port}/` })
    assert.strictEqual(o.error_code, "connect")
    assert.include(o.error, "ECONNREFUSED")
  })
})

/** A raw TCP server: `answer(socket, n)` gets each request's head, n counting requests on that connection from 1. */
const rawServer = async (answer: (socket: net.Socket, n: number) => void) => {
  const sockets = new Set<net.Socket>()
  const server = net.createServer((socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
    let n = 0
    let buffered = ""
    socket.on("data", (d) => {
      buffered += d.toString("latin1")
      while (buffered.includes("\r\n\r\n")) {
        buffered = buffered.slice(buffered.indexOf("\r\n\r\n") + 4)
        answer(socket, ++n)
      }
    })
    socket.on("error", () => {})
  })
  rawServers.push({ server, sockets })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
}
const okResponse = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok"

describe("broken servers", () => {
  it("a kept-alive connection reset on reuse is retried once on a new connection", async () => {
    let connections = 0
    const url = await rawServer((socket, n) => {
      if (n === 1) connections++
      // The second request on a connection is answered with a reset, as by a server that dropped it while idle.
      if (n === 1) socket.write(okResponse)
      else socket.resetAndDestroy()
    })
    const first = await check({ url })
    assert.strictEqual(first.status, "up")
    const second = await check({ url })
    assert.strictEqual(second.status, "up", second.error)
    assert.isFalse(second.reused)
    assert.strictEqual(connections, 2)
  })

  it("a connection closed in the middle of the body is reset", async () => {
    const url = await rawServer((socket) => {
      socket.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
      setTimeout(() => socket.destroy(), 20)
    })
    const o = await check({ url })
    assert.strictEqual(o.status, "down")
    assert.strictEqual(o.error_code, "reset")
    assert.strictEqual(o.http_status, 200)
  })

  it("something that is not HTTP is a protocol error", async () => {
    const url = await rawServer((socket) => socket.end("SSH-2.0-OpenSSH_9.6\r\n\r\n"))
    const o = await check({ url })
    assert.strictEqual(o.error_code, "protocol")
    assert.include(o.error, "HPE_")
  })

  it("an unresolvable name is a dns error", async () => {
    const o = await check({ url: "http://statusgrid-test.invalid/" })
    assert.strictEqual(o.error_code, "dns")
    assert.include(o.error, "statusgrid-test.invalid")
  })
})

describe("thresholds with real outcomes", () => {
  it("down only after 3 consecutive failures, recovered on the first success", async () => {
    flakyFailures = 4
    const settings = { monitor: { id: "m-flaky", name: "Flaky", url: `${base}/flaky` }, alert_threshold: 3, ssl_expiry_days: [30, 14, 7, 1] }
    let state: MonitorCheckState = { state: "up", consecutive_failures: 0, last_changed_at: new Date(Date.now() - 60_000).toISOString() }
    const trail: Array<string> = []
    const events: Array<string> = []
    for (let i = 0; i < 6; i++) {
      const outcome = await check({ url: `${base}/flaky` })
      const r = step(state, outcome, settings, new Date(outcome.checked_at))
      state = r.next
      trail.push(`${outcome.http_status}:${r.next.state}/${r.next.consecutive_failures}`)
      events.push(...r.events.map((e) => `${e.type}:${e.previous_state}->${e.current_state}`))
    }
    assert.deepStrictEqual(trail, ["503:up/1", "503:up/2", "503:down/3", "503:down/4", "200:up/0", "200:up/0"])
    assert.deepStrictEqual(events, ["monitor.down:up->down", "monitor.recovered:down->up"])
  })
})

const settingsFor = (url: string) => {
  const r = validateMonitorResult({ name: "t", url })
  if (Result.isFailure(r)) throw new Error(r.failure.message)
  return r.success.settings
}

describe("more checks than connections to one origin", () => {
  it("a queued check reuses the connected socket: reused, no phases, and no listeners left behind", async () => {
    const small = makeAgentPool({ maxSockets: 1, maxFreeSockets: 1 })
    try {
      const validated = validateMonitorResult({ name: "queued", url: `${base}/slow?ms=50` })
      if (Result.isFailure(validated)) throw new Error(validated.failure.message)
      const request = requestFromSettings(validated.success.settings)
      const outcomes = await Promise.all([0, 1, 2].map(() => runCheck(request, { agentPool: small, allowPrivate: true })))
      assert.deepStrictEqual(outcomes.map((o) => o.status), ["up", "up", "up"])
      // The first check connected; the two queued behind it got the same, already connected socket.
      assert.deepStrictEqual(outcomes.map((o) => o.reused).toSorted(), [false, true, true])
      for (const o of outcomes.filter((x) => x.reused)) assert.strictEqual(o.phases.connect_ms, 0)
      const agent = small.agent("http:", true, true)
      const sockets = Object.values(agent.freeSockets).flat()
      assert.strictEqual(sockets.length, 1)
      assert.isAtMost(sockets[0]!.listenerCount("connect"), 1)
    } finally {
      small.close()
    }
  })
})
