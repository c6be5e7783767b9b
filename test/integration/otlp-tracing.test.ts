import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { waitForValue } from "../support/eventually.ts"
import { embeddedServers, freePort, type Running } from "../support/process.ts"
import { scrape, valueOf } from "../support/prometheus.ts"

/**
 * An OTLP/HTTP receiver stand-in (what an OpenTelemetry Collector's `otlphttp` receiver accepts):
 * POST /v1/traces with an ExportTraceServiceRequest, JSON or protobuf, answered 200 `{}`.
 */
interface Received {
  readonly contentType: string
  readonly body: Buffer
}

const startReceiver = () =>
  new Promise<{ url: string; received: Array<Received>; close: () => Promise<void> }>((resolve) => {
    const received: Array<Received> = []
    const server = Http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        if (req.method === "POST" && req.url === "/v1/traces") received.push({ contentType: req.headers["content-type"] ?? "", body: Buffer.concat(chunks) })
        res.writeHead(req.url === "/v1/traces" ? 200 : 404, { "content-type": "application/json" }).end("{}")
      })
    })
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        received,
        close: () => new Promise((done) => {
          server.closeAllConnections()
          server.close(() => done())
        })
      }))
  })

interface Span {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: Record<string, unknown> }>
}

/** Every span of the JSON exports so far, with the resource's service name. */
const spansOf = (received: ReadonlyArray<Received>) =>
  received.flatMap((r) => {
    const body = JSON.parse(r.body.toString("utf8")) as {
      resourceSpans: Array<{ resource: { attributes: Span["attributes"] }; scopeSpans: Array<{ spans: Array<Span> }> }>
    }
    return body.resourceSpans.flatMap((rs) => {
      const service = rs.resource.attributes.find((a) => a.key === "service.name")?.value["stringValue"]
      return rs.scopeSpans.flatMap((ss) => ss.spans.map((span) => ({ ...span, service })))
    })
  })

const start = embeddedServers()

describe("OTLP tracing (OTEL_EXPORTER_OTLP_ENDPOINT)", () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let server: Running
  beforeAll(async () => {
    receiver = await startReceiver()
    server = await start({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_BSP_SCHEDULE_DELAY: "200",
      OTEL_SERVICE_NAME: "statusgrid-under-test",
      METRICS_TOKEN: "scrape-secret",
      SIMULATOR_URL: `http://127.0.0.1:${await freePort()}`
    }, ["start", "--demo"])
  }, 180_000)
  afterAll(async () => {
    // Stopped here, not at the file's end: the demo's load would slow the next start down.
    await server?.stop()
    await receiver?.close()
  }, 60_000)

  it("a source check arrives as one trace: its root span and the upstream request under it", async () => {
    const check = await waitForValue("a check's trace", () => {
      const spans = spansOf(receiver.received)
      const root = spans.find((s) => s.name === "check.source" && !s.parentSpanId)
      const child = root && spans.find((s) => s.traceId === root.traceId && s.parentSpanId === root.spanId)
      return root && child ? { root, child, spans } : undefined
    }, 30_000)
    assert.strictEqual(check.root.service, "statusgrid-under-test")
    assert.isString(check.root.attributes.find((a) => a.key === "statusgrid.source.key")?.value["stringValue"])
    assert.strictEqual(check.child.name, "Upstream.get")
    // Each check its own trace: two checks never share one.
    const roots = check.spans.filter((s) => s.name === "check.source")
    assert.strictEqual(new Set(roots.map((s) => s.traceId)).size, roots.length)
  }, 40_000)

  it("an API request is a trace of its own: a server span named by its route; the probes and the scrape are not traced", async () => {
    assert.strictEqual((await fetch(`${server.url}/api/v1/sources?limit=1`)).status, 200)
    assert.strictEqual((await fetch(`${server.url}/healthz`)).status, 200)
    const span = await waitForValue("the request's span", () =>
      spansOf(receiver.received).find((s) => s.name === "GET" && s.attributes.some((a) => a.key === "url.path" && a.value["stringValue"] === "/api/v1/sources")), 10_000)
    assert.strictEqual(span.kind, 2, "SPAN_KIND_SERVER")
    assert.strictEqual(span.attributes.find((a) => a.key === "http.response.status_code")?.value["intValue"], 200)
    assert.isNotOk(span.parentSpanId, "a request without a traceparent starts its own trace")
    // The handler's own spans (fnWhenTracing) are made while spans are exported, under the request's.
    const list = await waitForValue("the listing's span", () =>
      spansOf(receiver.received).find((s) => s.name === "Sources.listSourcesJson" && s.traceId === span.traceId), 10_000)
    assert.strictEqual(list.parentSpanId, span.spanId)
    await new Promise((done) => setTimeout(done, 600))
    const paths = spansOf(receiver.received).flatMap((s) => s.attributes.filter((a) => a.key === "url.path").map((a) => a.value["stringValue"]))
    assert.notInclude(paths, "/healthz")
    assert.notInclude(paths, "/metrics")
  }, 20_000)

  it("METRICS_TOKEN: /metrics wants the bearer token; with it, the process's own families are there", async () => {
    const refused = await fetch(`${server.url}/metrics`)
    assert.strictEqual(refused.status, 401)
    assert.strictEqual((await fetch(`${server.url}/metrics`, { headers: { authorization: "Bearer wrong" } })).status, 401)
    const scraped = await scrape(`${server.url}/metrics`, { headers: { authorization: "Bearer scrape-secret" } })
    assert.isAbove(valueOf(scraped, "process_resident_memory_bytes"), 10_000_000)
    assert.isAbove(valueOf(scraped, "process_cpu_seconds_total"), 0)
    assert.isTrue(scraped.has("statusgrid_event_loop_delay_seconds"))
    assert.isAbove(valueOf(scraped, "statusgrid_shards"), 0, "`statusgrid start` runs every shard")
    assert.isAbove(valueOf(scraped, "statusgrid_checks_total", { kind: "source" }), 0)
  })
})

describe("OTLP over protobuf (the default protocol)", () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let server: Running
  beforeAll(async () => {
    receiver = await startReceiver()
    server = await start({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`, OTEL_BSP_SCHEDULE_DELAY: "200" })
  }, 90_000)
  afterAll(async () => {
    await receiver?.close()
  })

  it("exports application/x-protobuf to the traces endpoint: a request's span is in it", async () => {
    assert.strictEqual((await fetch(`${server.url}/api/v1/sources?limit=1`)).status, 200)
    const found = await waitForValue("a protobuf export with the request", () => receiver.received.find((r) => r.body.includes("/api/v1/sources")), 20_000)
    assert.strictEqual(found.contentType, "application/x-protobuf")
    assert.isTrue(found.body.includes("statusgrid"), "the service name is in the resource")
    assert.throws(() => JSON.parse(found.body.toString("utf8")), SyntaxError)
  }, 30_000)
})
