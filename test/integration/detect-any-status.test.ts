import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { detect } from "../../services/adapters/detect.ts"
import { Fetcher } from "../../services/adapters/Fetcher.ts"
import { apiServer, call, newTenant } from "../support/api.ts"
import { childEnv, runCli } from "../support/process.ts"

/**
 * Decision 0004: probes validate shapes, never status codes. A health
 * endpoint answering 503 with a JSON body that says it fails is detected
 * while it fails — exactly when it matters — and reads as down (issue 12).
 * The bare-URL source through the poller: test/integration/outbound-poller.test.ts.
 */

const failing = `{"status":"fail","checks":{"database:connections":[{"status":"fail","output":"connection refused"}]}}`

const server = await new Promise<{ origin: string }>((resolve) => {
  const s = Http.createServer((req, res) => {
    if (req.url === "/health") return res.writeHead(503, { "content-type": "application/health+json" }).end(failing)
    res.writeHead(404, { "content-type": "text/html" }).end("<html><body>Not found</body></html>")
  })
  s.listen(0, "127.0.0.1", () => resolve({ origin: `http://127.0.0.1:${(s.address() as AddressInfo).port}` }))
})
const healthUrl = `${server.origin}/health`

describe("detection by shape whatever the HTTP status", () => {
  it.live("a 503 health endpoint with a failing body is a health check; a 404 page is a wrong URL, said so", () =>
    Effect.gen(function*() {
      const found = yield* detect(healthUrl)
      assert.deepStrictEqual(found, { provider: "health_check", by: "fallback", url: healthUrl })
      const missing = yield* detect(`${server.origin}/nothing`).pipe(Effect.flip)
      assert.strictEqual(missing.message, "the page answered 404 and nothing there is a status document")
    }).pipe(Effect.provide(Fetcher.layerOperator)))

  it("statusgrid probe <url> detects it and prints it as down", async () => {
    const result = await runCli(["probe", healthUrl], childEnv({}))
    assert.strictEqual(result.code, 0, result.stdout + result.stderr)
    const printed = JSON.parse(result.stdout) as { provider: string; snapshot: { status: string; description: string } }
    assert.strictEqual(printed.provider, "health_check")
    assert.strictEqual(printed.snapshot.status, "down")
    assert.include(printed.snapshot.description, "HTTP 503")
  }, 60_000)
})

layer(apiServer(), { timeout: 60_000, excludeTestServices: true })("custom sources", (it) => {
  it.effect("a custom source added by the URL of a failing health endpoint is created as a health check", () =>
    Effect.gen(function*() {
      const tenant = yield* newTenant("free")
      const created = yield* call("POST", "/custom-sources", { key: tenant.keys.admin, body: { name: "Our API", status_page_url: healthUrl } })
      assert.strictEqual(created.status, 201, JSON.stringify(created.body))
      assert.deepInclude(created.body, { provider_type: "health_check", kind: "url", status_page_url: healthUrl })
    }))
})
