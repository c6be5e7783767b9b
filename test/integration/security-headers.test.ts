import { assert, beforeAll, describe, it } from "vitest"
import { embeddedServers, type Running } from "../support/process.ts"

const start = embeddedServers()

/** The headers every answer carries (services/api/SecurityHeaders.ts). */
const expectSecurityHeaders = (label: string, response: Response) => {
  const h = response.headers
  assert.strictEqual(h.get("x-content-type-options"), "nosniff", label)
  assert.strictEqual(h.get("referrer-policy"), "same-origin", label)
  assert.strictEqual(h.get("x-frame-options"), "DENY", label)
  assert.include(h.get("content-security-policy") ?? "", "frame-ancestors 'none'", label)
  assert.isNotNull(h.get("cache-control"), label)
  assert.isNull(h.get("strict-transport-security"), `${label}: no HSTS over http`)
}

describe("security headers on every answer", () => {
  let server: Running
  beforeAll(async () => {
    server = await start()
  }, 90_000)

  it("API answers (JSON, errors, the OpenAPI document, the event stream): no scripts, no framing, not stored", async () => {
    const requests: ReadonlyArray<readonly [string, string, RequestInit?]> = [
      ["a public list", "/api/v1/sources?limit=2"],
      ["the OpenAPI document", "/api/v1/openapi.json"],
      ["an unknown API path (404)", "/api/v1/no-such-thing"],
      ["bad input (400)", "/api/v1/sources?limit=0"],
      ["no API key (401)", "/api/v1/organization"],
      ["a report without a body (4xx)", "/api/v1/sources/no-such-source/reports", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }],
      ["the event stream without a key (401)", "/api/v1/organizations/none/stream"],
      ["health", "/healthz"],
      ["readiness", "/readyz"]
    ]
    for (const [label, path, init] of requests) {
      const response = await fetch(`${server.url}${path}`, init)
      await response.arrayBuffer()
      expectSecurityHeaders(`${label} ${path} → ${response.status}`, response)
      assert.strictEqual(response.headers.get("content-security-policy"), "default-src 'none'; frame-ancestors 'none'", label)
      assert.strictEqual(response.headers.get("cache-control"), "no-store", `${label}: API answers may carry keys, tokens and secrets`)
      assert.isBelow(response.status, 500, label)
    }
  })

  it("portal pages: a CSP whose nonce is the one on every inline script, a fresh nonce per page; files keep their own caching", async () => {
    const nonces = new Set<string>()
    for (const path of ["/", "/catalog", "/signin", "/no-such-page", "/share/not-a-token"]) {
      const response = await fetch(`${server.url}${path}`)
      const html = await response.text()
      expectSecurityHeaders(`${path} → ${response.status}`, response)
      assert.include(response.headers.get("content-type") ?? "", "text/html", path)
      const csp = response.headers.get("content-security-policy") ?? ""
      const nonce = /script-src 'self' 'nonce-([A-Za-z0-9+/=]+)'/u.exec(csp)?.[1]
      assert.isDefined(nonce, `${path}: ${csp}`)
      assert.notMatch(csp, /script-src[^;]*unsafe-inline/u, path)
      // Every <script> of the page carries the nonce (hydration data, the module loader).
      const scripts = [...html.matchAll(/<script\b([^>]*)>/gu)].map((m) => m[1]!)
      assert.isAbove(scripts.length, 0, path)
      for (const attributes of scripts) assert.include(attributes, `nonce="${nonce}"`, `${path}: <script${attributes}>`)
      nonces.add(nonce!)
    }
    assert.strictEqual(nonces.size, 5, "a new nonce for each page")

    // A nonce sent by the client is replaced by the server's.
    const forged = await fetch(`${server.url}/catalog`, { headers: { "x-statusgrid-nonce": "forged" } })
    assert.notInclude(await forged.text(), "forged")

    const html = await (await fetch(`${server.url}/catalog`)).text()
    const asset = /\/assets\/[A-Za-z0-9_.-]+\.js/u.exec(html)![0]
    const files: ReadonlyArray<readonly [string, string]> = [
      [asset, "public, max-age=31536000, immutable"],
      ["/favicon.svg", "public, max-age=86400"],
      ["/manifest.webmanifest", "public, max-age=3600"],
      ["/sw.js", "no-cache"]
    ]
    for (const [path, cacheControl] of files) {
      const response = await fetch(`${server.url}${path}`)
      await response.arrayBuffer()
      assert.strictEqual(response.status, 200, path)
      expectSecurityHeaders(path, response)
      assert.strictEqual(response.headers.get("cache-control"), cacheControl, path)
    }
    // The service worker runs under its script's policy: this origin's icons, nothing else.
    assert.strictEqual((await fetch(`${server.url}/sw.js`)).headers.get("content-security-policy"), "default-src 'self'; frame-ancestors 'none'")

    // Redirects and paths no route takes carry them too.
    const redirect = await fetch(`${server.url}/favicon.ico`, { redirect: "manual" })
    expectSecurityHeaders("/favicon.ico redirect", redirect)
    const shortLink = await fetch(`${server.url}/a/nonexistent`, { redirect: "manual" })
    await shortLink.arrayBuffer()
    expectSecurityHeaders(`/a/nonexistent → ${shortLink.status}`, shortLink)
    const other = await fetch(`${server.url}/catalog`, { method: "DELETE" })
    await other.arrayBuffer()
    expectSecurityHeaders(`DELETE /catalog → ${other.status}`, other)
    assert.strictEqual(other.status, 405)
    assert.strictEqual(other.headers.get("allow"), "GET, HEAD, POST")
    const options = await fetch(`${server.url}/api/v1/sources`, { method: "OPTIONS" })
    await options.arrayBuffer()
    expectSecurityHeaders(`OPTIONS /api/v1/sources → ${options.status}`, options)
  })

  it("HSTS when the installation's PUBLIC_URL is https", async () => {
    const https = await start({ PUBLIC_URL: "https://status.example.com" })
    for (const path of ["/healthz", "/catalog", "/api/v1/sources?limit=1"]) {
      const response = await fetch(`${https.url}${path}`)
      await response.arrayBuffer()
      assert.strictEqual(response.headers.get("strict-transport-security"), "max-age=15552000", path)
    }
  }, 90_000)
})
