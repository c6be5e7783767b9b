import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Https from "node:https"
import type { AddressInfo } from "node:net"
import * as Path from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { childEnv, runCli } from "../support/process.ts"
import { makeTestCerts, type TestCerts } from "../support/tls.ts"

/** A request as the local target saw it. */
interface Seen {
  readonly method: string
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
}

/** `/ok` answers 200 "all systems go", `/fail` 503, `/moved` redirects to `/ok`. */
const handler = (seen: Array<Seen>) => (req: Http.IncomingMessage, res: Http.ServerResponse) => {
  seen.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers })
  if (req.url === "/fail") return res.writeHead(503, { "content-type": "text/plain" }).end("maintenance")
  if (req.url === "/moved") return res.writeHead(302, { location: "/ok" }).end()
  res.writeHead(200, { "content-type": "text/plain" }).end("all systems go")
}

const listen = (server: Http.Server | Https.Server): Promise<number> =>
  new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)))

interface Printed {
  readonly url: string
  readonly status: string
  readonly http_status: number
  readonly error_code: string
  readonly error: string
  readonly phases: Record<string, number>
  readonly reused: boolean
  readonly redirects: number
  readonly final_url: string
  readonly bytes: number
  readonly truncated: boolean
  readonly tls?: { readonly subject: string; readonly authorized: boolean; readonly authorization_error: string; readonly days_left: number }
  readonly warnings: ReadonlyArray<{ readonly field: string; readonly message: string }>
}

const probe = async (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const result = await runCli(["probe", ...args], childEnv(env))
  let printed: Printed | undefined
  try {
    printed = JSON.parse(result.stdout) as Printed
  } catch {
    printed = undefined
  }
  return { ...result, printed }
}

/** `statusgrid probe --monitor` as a user runs it, against local HTTP and HTTPS targets. */
describe("statusgrid probe --monitor", () => {
  const seen: Array<Seen> = []
  const http = Http.createServer(handler(seen))
  let https: Https.Server | undefined
  let certs: TestCerts | undefined
  let base = ""
  let secureBase = ""

  beforeAll(async () => {
    certs = makeTestCerts(20)
    https = Https.createServer({ cert: certs.cert, key: certs.key }, handler(seen))
    base = `http://127.0.0.1:${await listen(http)}`
    secureBase = `https://localhost:${await listen(https)}`
  }, 30_000)
  afterAll(() => {
    http.closeAllConnections()
    http.close()
    https?.closeAllConnections()
    https?.close()
    certs?.remove()
  })

  it("up: exit 0 and the outcome with its phases; headers and credentials reach the target", async () => {
    const r = await probe([
      "--monitor", `${base}/ok`, "--allow-private", "--header", "X-Probe: from the cli", "--bearer", "s3cret-token"
    ])
    assert.strictEqual(r.code, 0, r.stdout + r.stderr)
    const out = r.printed!
    assert.strictEqual(out.status, "up")
    assert.strictEqual(out.http_status, 200)
    assert.strictEqual(out.error_code, "")
    assert.strictEqual(out.url, `${base}/ok`)
    assert.strictEqual(out.final_url, `${base}/ok`)
    assert.strictEqual(out.bytes, "all systems go".length)
    assert.strictEqual(out.reused, false)
    assert.isAbove(out.phases["connect_ms"]!, 0)
    assert.isAbove(out.phases["total_ms"]!, 0)
    assert.isAtLeast(out.phases["total_ms"]!, out.phases["first_byte_ms"]!)
    assert.strictEqual(out.phases["dns_ms"], 0, "an IP literal needs no lookup")
    assert.notProperty(out, "tls")
    assert.deepStrictEqual(out.warnings, [])
    const request = seen.findLast((s) => s.path === "/ok")!
    assert.strictEqual(request.headers["x-probe"], "from the cli")
    assert.strictEqual(request.headers["authorization"], "Bearer s3cret-token")
    assert.match(String(request.headers["user-agent"]), /^statusgrid-monitor\//)
  }, 30_000)

  it("down: a 503 exits 1 and the error names the expected range", async () => {
    const r = await probe(["--monitor", `${base}/fail`, "--allow-private"])
    assert.strictEqual(r.code, 1, r.stdout + r.stderr)
    assert.strictEqual(r.printed!.status, "down")
    assert.strictEqual(r.printed!.http_status, 503)
    assert.strictEqual(r.printed!.error_code, "status")
    assert.strictEqual(r.printed!.error, "expected 200-299, got 503")

    // The accepted range is the monitor's: 503 can be expected, and a 200 then fails.
    const expected = await probe(["--monitor", `${base}/fail`, "--allow-private", "--expect", "503"])
    assert.strictEqual(expected.code, 0, expected.stdout + expected.stderr)
    const narrowed = await probe(["--monitor", `${base}/ok`, "--allow-private", "--expect", "204,3xx"])
    assert.strictEqual(narrowed.code, 1)
    assert.strictEqual(narrowed.printed!.error, "expected 204,3xx, got 200")
  }, 30_000)

  it("keyword: contained, missing, and --keyword-absent", async () => {
    const found = await probe(["--monitor", `${base}/ok`, "--allow-private", "--keyword", "systems go"])
    assert.strictEqual(found.code, 0, found.stdout + found.stderr)
    assert.strictEqual(found.printed!.status, "up")

    const missing = await probe(["--monitor", `${base}/ok`, "--allow-private", "--keyword", "Systems go"])
    assert.strictEqual(missing.code, 1)
    assert.strictEqual(missing.printed!.error_code, "keyword")
    assert.strictEqual(missing.printed!.error, "keyword \"Systems go\" not found in the body")

    const absent = await probe(["--monitor", `${base}/ok`, "--allow-private", "--keyword", "outage", "--keyword-absent"])
    assert.strictEqual(absent.code, 0, absent.stdout + absent.stderr)
    const present = await probe(["--monitor", `${base}/ok`, "--allow-private", "--keyword", "systems", "--keyword-absent"])
    assert.strictEqual(present.code, 1)
    assert.strictEqual(present.printed!.error, "keyword \"systems\" found in the body")
  }, 30_000)

  it("redirects are followed unless --no-follow-redirects", async () => {
    const followed = await probe(["--monitor", `${base}/moved`, "--allow-private"])
    assert.strictEqual(followed.code, 0, followed.stdout + followed.stderr)
    assert.strictEqual(followed.printed!.redirects, 1)
    assert.strictEqual(followed.printed!.final_url, `${base}/ok`)
    const kept = await probe(["--monitor", `${base}/moved`, "--allow-private", "--no-follow-redirects"])
    assert.strictEqual(kept.code, 1)
    assert.strictEqual(kept.printed!.http_status, 302)
    assert.strictEqual(kept.printed!.redirects, 0)
  }, 30_000)

  it("a private address is refused without --allow-private, naming the address, and nothing is sent", async () => {
    const before = seen.length
    const r = await probe(["--monitor", `${base}/ok`])
    assert.strictEqual(r.code, 2, r.stdout + r.stderr)
    assert.strictEqual(r.stdout, "")
    assert.include(r.stderr, "127.0.0.1 is a loopback address")
    assert.include(r.stderr, "--allow-private")
    assert.strictEqual(seen.length, before)

    // A name is refused for the address it resolves to.
    const named = await probe(["--monitor", secureBase])
    assert.strictEqual(named.code, 2)
    assert.match(named.stderr, /localhost resolves to (127\.0\.0\.1|::1), a loopback address/)
    assert.strictEqual(seen.length, before)
  }, 30_000)

  it("invalid settings exit 2 naming each field and its flag; nothing is sent", async () => {
    const before = seen.length
    const r = await probe(["--monitor", `${base}/ok`, "--allow-private", "--expect", "6xx", "--header", "no colon", "--timeout", "50"])
    assert.strictEqual(r.code, 2, r.stdout + r.stderr)
    assert.strictEqual(r.stdout, "")
    assert.include(r.stderr, "invalid monitor settings")
    assert.include(r.stderr, "expected_status (--expect): \"6xx\" is not a status class (1xx to 5xx)")
    assert.include(r.stderr, "headers (--header): \"no colon\" is not \"Name: value\"")
    assert.include(r.stderr, "timeout (--timeout): must be from 100 to 120000 milliseconds")
    assert.strictEqual(seen.length, before)

    const stray = await probe(["--keyword", "x", `${base}/ok`])
    assert.strictEqual(stray.code, 2)
    assert.include(stray.stderr, "--keyword applies only with --monitor")
  }, 30_000)

  it("https: a private CA from MONITOR_CA_FILE is trusted; without it the check fails as tls; --insecure reports it", async () => {
    const caFile = Path.join(certs!.dir, "probe-ca.pem")
    Fs.writeFileSync(caFile, certs!.ca)
    const trusted = await probe(["--monitor", `${secureBase}/ok`, "--allow-private"], { MONITOR_CA_FILE: caFile })
    assert.strictEqual(trusted.code, 0, trusted.stdout + trusted.stderr)
    assert.strictEqual(trusted.printed!.tls?.subject, "localhost")
    assert.strictEqual(trusted.printed!.tls?.authorized, true)
    assert.oneOf(trusted.printed!.tls?.days_left, [19, 20])
    assert.isAbove(trusted.printed!.phases["tls_ms"]!, 0)

    const untrusted = await probe(["--monitor", `${secureBase}/ok`, "--allow-private"])
    assert.strictEqual(untrusted.code, 1)
    assert.strictEqual(untrusted.printed!.error_code, "tls")

    const insecure = await probe(["--monitor", `${secureBase}/ok`, "--allow-private", "--insecure"])
    assert.strictEqual(insecure.code, 0, insecure.stdout + insecure.stderr)
    assert.strictEqual(insecure.printed!.tls?.authorized, false)
    assert.notStrictEqual(insecure.printed!.tls?.authorization_error, "")

    const unreadable = await probe(["--monitor", `${secureBase}/ok`, "--allow-private"], { MONITOR_CA_FILE: "/nonexistent/ca.pem" })
    assert.strictEqual(unreadable.code, 2)
    assert.include(unreadable.stderr, "cannot read MONITOR_CA_FILE /nonexistent/ca.pem")
  }, 60_000)
})
