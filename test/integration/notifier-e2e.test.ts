import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { createHmac } from "node:crypto"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { call, newTenant } from "../support/api.ts"
import { eventually } from "../support/eventually.ts"
import { addCatalogSource, api, engine, notifier, Sim, simulatedStatuspage, simulator } from "../support/engine.ts"

class Hook extends Context.Service<Hook, { url: string; received: Array<{ headers: Http.IncomingHttpHeaders; body: string }> }>()("test/notifier-e2e/Hook") {}

const hook = Layer.effect(Hook, Effect.acquireRelease(
  Effect.callback<{ url: string; received: Array<{ headers: Http.IncomingHttpHeaders; body: string }>; server: Http.Server }>((resume) => {
    const received: Array<{ headers: Http.IncomingHttpHeaders; body: string }> = []
    const server = Http.createServer((req, res) => {
      let body = ""
      req.on("data", (c: Buffer) => (body += c.toString("utf8")))
      req.on("end", () => {
        received.push({ headers: req.headers, body })
        res.writeHead(200).end()
      })
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, server })))
  }),
  ({ server }) => Effect.callback<void>((resume) => {
    server.closeAllConnections()
    server.close(() => resume(Effect.void))
  })
))


/** Everything of one process: stores (PostgreSQL server, chDB, in-process bus), poller, notifier, API. */
const TestLayer = engine({ name: "notifier-e2e", config: { NOTIFIER_POLL_MS: "50", NOTIFIER_ALLOW_PRIVATE: "true" } }, Layer.mergeAll(notifier, api, simulator, hook))


describe("notifier end to end", () => {
  layer(TestLayer, { timeout: 90_000, excludeTestServices: true })("simulator → poller → event stream → rules → outbox → webhook", (it) => {
    it.effect("an upstream flip reaches a webhook receiver once, signed, with previous and current status", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const receiver = yield* Hook
        const { page, target, componentId } = yield* simulatedStatuspage("notify-flip", "Notify Flip", 3)

        const tenant = yield* newTenant("pro")
        const key = tenant.keys.admin
        const stack = yield* call("POST", "/stacks", { key, body: { name: "Checkout" } })
        assert.strictEqual(stack.status, 201)
        assert.strictEqual((yield* call("POST", `/stacks/${stack.body.id}/items`, { key, body: { kind: "component", component_id: componentId } })).status, 201)
        const channel = yield* call("POST", "/channels", { key, body: { type: "webhook", name: "Ops", settings: { url: receiver.url } } })
        assert.strictEqual(channel.status, 201)
        const body = { name: "Critical components", triggers: ["component.critical"], channel_ids: [channel.body.id] }
        assert.strictEqual((yield* call("POST", "/rules", { key, body })).status, 201)
        // A second rule to the same channel: one delivery, not two.
        assert.strictEqual((yield* call("POST", "/rules", { key, body: { ...body, name: "Also critical" } })).status, 201)

        sim.state.openIncident(page.key, { title: "Checkout down", impact: "critical", components: [target.id], component_status: "critical" })
        const delivered = yield* eventually(15_000, Effect.sync(() => (receiver.received.length > 0 ? receiver.received : undefined)))
        yield* Effect.sleep("1500 millis")
        assert.strictEqual(delivered.length, 1)
        const [only] = delivered
        const sent = JSON.parse(only!.body)
        assert.strictEqual(sent.event, "component.status_changed")
        assert.deepStrictEqual(sent.stack, { id: stack.body.id, name: "Checkout", slug: stack.body.slug })
        assert.deepStrictEqual(
          [sent.component.id, sent.component.name, sent.component.previous_status, sent.component.current_status],
          [componentId, target.name, "operational", "critical"]
        )
        assert.isString(sent.incident.id)
        assert.strictEqual(only!.headers["x-service-signature"], createHmac("sha256", channel.body.signing_secret).update(only!.body).digest("hex"))
        const center = yield* call("GET", "/deliveries", { key: tenant.keys.viewer })
        assert.deepStrictEqual(center.body.data.map((d: { status: string }) => d.status), ["delivered"])
      }))

    it.effect("a health check without sub-checks alerts through a rule when its status changes", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const sql = yield* SqlClient
        const receiver = yield* Hook
        const before = receiver.received.length
        const page = sim.state.add({ key: "notify-health", name: "Notify Health", provider: "health_check", components: 0, groups: 0 })
        yield* addCatalogSource("notify-health", "health_check", page.baseUrl, "Notify Health")
        // Polled once (its first snapshot is what the source already is).
        yield* eventually(10_000, sql<{ at: Date | null }>`SELECT checked_at AS at FROM sources LEFT JOIN source_checks ON source_id = id WHERE key = 'notify-health'`.pipe(
          Effect.map((rows) => rows[0]?.at ?? undefined)))
        const [components] = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM components c JOIN sources s ON s.id = c.source_id WHERE s.key = 'notify-health'`
        assert.strictEqual(components!.n, 0)

        const tenant = yield* newTenant("pro")
        const key = tenant.keys.admin
        const stack = yield* call("POST", "/stacks", { key, body: { name: "Health" } })
        assert.strictEqual((yield* call("POST", `/stacks/${stack.body.id}/items`, { key, body: { kind: "source", source_key: "notify-health" } })).status, 201)
        const channel = yield* call("POST", "/channels", { key, body: { type: "webhook", name: "Health hook", settings: { url: receiver.url } } })
        assert.strictEqual(channel.status, 201)
        const rule = { name: "Down", triggers: ["component.critical", "component.recovered"], cooldown_s: 0, channel_ids: [channel.body.id] }
        assert.strictEqual((yield* call("POST", "/rules", { key, body: rule })).status, 201)

        const incident = sim.state.openIncident(page.key, { title: "Health failing", impact: "critical" })
        const down = yield* eventually(15_000, Effect.sync(() => (receiver.received.length > before ? receiver.received.slice(before) : undefined)))
        const first = JSON.parse(down[0]!.body)
        assert.strictEqual(first.event, "source.status_changed")
        assert.deepStrictEqual(
          [first.component.id, first.component.name, first.component.previous_status, first.component.current_status],
          ["notify-health", "Notify Health", "operational", "down"]
        )
        assert.deepStrictEqual(first.stack, { id: stack.body.id, name: "Health", slug: stack.body.slug })
        sim.state.resolveIncident(page.key, incident.id, {})
        const both = yield* eventually(15_000, Effect.sync(() => (receiver.received.length > before + 1 ? receiver.received.slice(before) : undefined)))
        yield* Effect.sleep("1500 millis")
        assert.strictEqual(receiver.received.length - before, 2)
        assert.strictEqual(JSON.parse(both[1]!.body).component.current_status, "operational")
      }))
  })
})
