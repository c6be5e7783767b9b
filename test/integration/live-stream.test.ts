import { assert, describe, layer } from "@effect/vitest"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { createServer } from "node:http"
import { ApiRoutes, routerConfig } from "../../services/api/ApiHttp.ts"
import { withLiveStreams } from "../../services/api/Http.ts"
import { SqlClient } from "effect/sql/SqlClient"
import type { Snapshot } from "../../services/domain/Snapshot.ts"
import { sessionCookieName } from "../../services/identity/SessionCookie.ts"
import { Sessions } from "../../services/identity/Sessions.ts"
import { Bus } from "../../services/platform/Bus.ts"
import * as MemoryBus from "../../services/platform/Bus/Memory.ts"
import * as RedisBus from "../../services/platform/Bus/Redis.ts"
import { LiveHub } from "../../services/platform/LiveHub.ts"
import { Publisher } from "../../services/platform/Publisher.ts"
import { RedisKeys } from "../../services/platform/RedisKeys.ts"
import { ApiBase, apiServer, call, newTenant, type Tenant } from "../support/api.ts"
import { testRedisUrl } from "../support/stores.ts"

const tag = () => Math.random().toString(36).slice(2, 10)

interface SseEvent {
  readonly event: string
  readonly id: string | undefined
  readonly data: string
}

/** An open event stream read by a real HTTP client; `next` waits for the next event (comments skipped). */
interface OpenStream {
  readonly status: number
  readonly contentType: string | null
  readonly retry: number | undefined
  next(): Promise<SseEvent | undefined>
  close(): void
}

const openStream = (path: string, headers: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const base = yield* ApiBase
    return yield* Effect.acquireRelease(
      Effect.promise(async (): Promise<OpenStream & { readonly body: unknown }> => {
        const controller = new AbortController()
        const response = await fetch(`${base}/api/v1${path}`, { headers, signal: controller.signal })
        if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
          const text = await response.text()
          return {
            status: response.status,
            contentType: response.headers.get("content-type"),
            retry: undefined,
            body: JSON.parse(text),
            next: async () => undefined,
            close: () => controller.abort()
          }
        }
        const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
        let buffer = ""
        let retry: number | undefined
        const next = async (): Promise<SseEvent | undefined> => {
          for (;;) {
            const end = buffer.indexOf("\n\n")
            if (end !== -1) {
              const block = buffer.slice(0, end)
              buffer = buffer.slice(end + 2)
              let event = "message"
              let id: string | undefined
              const data: Array<string> = []
              for (const line of block.split("\n")) {
                if (line.startsWith(":")) continue
                const [field, ...rest] = line.split(":")
                const value = rest.join(":").replace(/^ /, "")
                if (field === "event") event = value
                else if (field === "id") id = value
                else if (field === "data") data.push(value)
                else if (field === "retry") retry = Number(value)
              }
              if (data.length === 0) continue
              return { event, id, data: data.join("\n") }
            }
            const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }))
            if (chunk.done) return undefined
            buffer += chunk.value
          }
        }
        return {
          status: response.status,
          contentType: response.headers.get("content-type"),
          get retry() {
            return retry
          },
          body: null,
          next,
          close: () => controller.abort()
        }
      }),
      (stream) => Effect.sync(() => stream.close())
    )
  })

const next = (stream: OpenStream) => Effect.promise(() => stream.next())

const snapshot = (status: Snapshot["status"], components: ReadonlyArray<readonly [string, "operational" | "degraded" | "critical" | "maintenance"]>): Snapshot => ({
  provider: "test",
  status,
  reported_status: null,
  description: "",
  components: components.map(([id, s], position) => ({
    id,
    name: `Component ${id}`,
    description: "",
    status: s,
    parent_id: null,
    is_group: false,
    position,
    region: null
  })),
  incidents: [],
  maintenances: [],
  regions: [],
  warnings: []
})

/** A catalog source with components c0..c{n-1}, all operational. */
const catalogSource = (components: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const key = `live-${tag()}`
    const [source] = yield* sql<{ id: string }>`
      INSERT INTO sources (key, name, kind, status, status_page_url) VALUES (${key}, ${`Live ${key}`}, 'catalog', 'operational', 'https://status.example.com')
      RETURNING id`
    const ids: Array<string> = []
    for (let i = 0; i < components; i++) {
      const [c] = yield* sql<{ id: string }>`
        INSERT INTO components (source_id, external_id, name, status, position)
        VALUES (${source!.id}::uuid, ${`c${i}`}, ${`Component ${i}`}, 'operational', ${i}) RETURNING id`
      ids.push(c!.id)
    }
    return { key, components: ids }
  })

const createStack = (tenant: Tenant, body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const r = yield* call("POST", "/stacks", { key: tenant.keys.admin, body })
    assert.strictEqual(r.status, 201, JSON.stringify(r.body))
    return r.body as { id: string; slug: string; share_token: string | null }
  })

const addItem = (tenant: Tenant, stackId: string, body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const r = yield* call("POST", `/stacks/${stackId}/items`, { key: tenant.keys.admin, body })
    assert.strictEqual(r.status, 201, JSON.stringify(r.body))
  })

/** A source change published as the poller publishes it. */
const flip = (key: string, status: Snapshot["status"], components: ReadonlyArray<readonly [string, "operational" | "degraded" | "critical" | "maintenance"]> = []) =>
  Publisher.use((p) => p.changed(key, snapshot("operational", components.map(([id]) => [id, "operational"] as const)), snapshot(status, components), [], new Date()))

const suite = (name: string, bus: Layer.Layer<Bus, unknown>) =>
  layer(Layer.provideMerge(Sessions.layer, apiServer({}, bus)), { timeout: 60_000, excludeTestServices: true })(name, (it) => {
    it.effect("an API key's stream: hello, then the deltas of the stack's sources and components, not of others", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const inStack = yield* catalogSource(1)
        const partly = yield* catalogSource(2)
        const outside = yield* catalogSource(1)
        const stack = yield* createStack(tenant, { name: `Live ${tag()}` })
        yield* addItem(tenant, stack.id, { kind: "source", source_key: inStack.key })
        yield* addItem(tenant, stack.id, { kind: "component", component_id: partly.components[1] })
        const stream = yield* openStream(`/organizations/${tenant.slug}/stream?stack=${stack.slug}`, {
          authorization: `Bearer ${tenant.keys.viewer}`
        })
        assert.strictEqual(stream.status, 200)
        assert.match(stream.contentType ?? "", /^text\/event-stream/)
        const hello = yield* next(stream)
        assert.strictEqual(hello?.event, "hello")
        const helloData = JSON.parse(hello!.data)
        assert.isFalse(Number.isNaN(Date.parse(helloData.server_time)))
        assert.deepStrictEqual([helloData.stream, helloData.organization, helloData.stack], ["stack", tenant.slug, stack.slug])
        assert.isNumber(stream.retry)

        // Not in the stack: a whole other source, and a component of a partly shown source that is not shown.
        yield* flip(outside.key, "down", [["c0", "critical"]])
        yield* flip(partly.key, "degraded", [["c0", "degraded"], ["c1", "operational"]])
        yield* flip(inStack.key, "down", [["c0", "critical"]])
        const first = yield* next(stream)
        assert.strictEqual(first?.event, "delta")
        assert.match(first!.id ?? "", /^\d+$/)
        const delta = JSON.parse(first!.data)
        assert.deepStrictEqual(
          { kind: delta.kind, key: delta.key, status: delta.status, previous_status: delta.previous_status, components: delta.components },
          { kind: "source", key: inStack.key, status: "down", previous_status: "operational", components: [{ id: "c0", status: "critical" }] }
        )
        assert.isFalse(Number.isNaN(Date.parse(delta.at)))
        // The shown component of the partly shown source changes: it arrives.
        yield* flip(partly.key, "degraded", [["c0", "operational"], ["c1", "critical"]])
        const second = JSON.parse((yield* next(stream))!.data)
        assert.deepStrictEqual([second.key, second.components.map((c: { id: string }) => c.id)], [partly.key, ["c1"]])
      }))

    it.effect("the organization's stream covers all its stacks; a monitor's delta arrives without organization data", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const sql = yield* SqlClient
        const a = yield* catalogSource(1)
        const [monitor] = yield* sql<{ id: string }>`
          INSERT INTO monitors (organization_id, name, url, state) VALUES (${tenant.id}::uuid, 'API', 'https://example.com/health', 'up') RETURNING id`
        const one = yield* createStack(tenant, { name: `One ${tag()}` })
        const two = yield* createStack(tenant, { name: `Two ${tag()}` })
        yield* addItem(tenant, one.id, { kind: "source", source_key: a.key })
        yield* addItem(tenant, two.id, { kind: "monitor", monitor_id: monitor!.id })
        const stream = yield* openStream(`/organizations/${tenant.id}/stream`, { authorization: `Bearer ${tenant.keys.admin}` })
        assert.strictEqual((yield* next(stream))?.event, "hello")
        const bus = yield* Bus
        yield* bus.publish(RedisKeys.deltas, JSON.stringify({
          kind: "monitor",
          id: monitor!.id,
          organization_id: tenant.id,
          state: "down",
          previous_state: "up",
          events: ["e1"],
          at: new Date().toISOString()
        }))
        const got = JSON.parse((yield* next(stream))!.data)
        assert.deepStrictEqual({ ...got, at: undefined }, { kind: "monitor", id: monitor!.id, status: "down", previous_status: "up", at: undefined })
        yield* flip(a.key, "degraded", [["c0", "degraded"]])
        assert.strictEqual(JSON.parse((yield* next(stream))!.data).key, a.key)
      }))

    it.effect("a malformed delta is skipped and counted; the next one arrives", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const a = yield* catalogSource(1)
        const stack = yield* createStack(tenant, { name: `M ${tag()}` })
        yield* addItem(tenant, stack.id, { kind: "source", source_key: a.key })
        const stream = yield* openStream(`/organizations/${tenant.slug}/stream`, { authorization: `Bearer ${tenant.keys.viewer}` })
        assert.strictEqual((yield* next(stream))?.event, "hello")
        const hub = yield* LiveHub
        const before = yield* hub.stats
        // The server's hub: the open stream is one of its subscribers.
        assert.isAtLeast(before.subscribers, 1)
        const bus = yield* Bus
        yield* bus.publish(RedisKeys.deltas, "{not json")
        yield* bus.publish(RedisKeys.deltas, JSON.stringify({ kind: "source", key: a.key, status: "exploded" }))
        yield* flip(a.key, "down", [["c0", "critical"]])
        const got = yield* next(stream)
        assert.deepStrictEqual([got?.event, JSON.parse(got!.data).status], ["delta", "down"])
        const after = yield* hub.stats
        assert.strictEqual(after.malformed - before.malformed, 2)
      }))

    it.effect("a portal session of a member opens the stream; others get 401 or 404 as JSON", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const other = yield* newTenant("pro")
        const sql = yield* SqlClient
        const [user] = yield* sql<{ id: string }>`INSERT INTO users (email) VALUES (${`${tag()}@example.com`}) RETURNING id`
        yield* sql`INSERT INTO memberships (organization_id, user_id, role) VALUES (${tenant.id}::uuid, ${user!.id}::uuid, 'viewer')`
        const { token } = yield* Sessions.use((s) => s.create(user!.id, tenant.id))
        const cookie = `theme=dark; ${sessionCookieName}=${token}`
        const ok = yield* openStream(`/organizations/${tenant.slug}/stream`, { cookie })
        assert.strictEqual(ok.status, 200)
        assert.strictEqual((yield* next(ok))?.event, "hello")

        const refused = [
          [`/organizations/${tenant.slug}/stream`, {}, 401, undefined],
          [`/organizations/${tenant.slug}/stream`, { authorization: "Bearer nope" }, 401, undefined],
          [`/organizations/${tenant.slug}/stream`, { cookie: `${sessionCookieName}=${"x".repeat(43)}` }, 401, undefined],
          [`/organizations/${other.slug}/stream`, { cookie }, 404, "org"],
          [`/organizations/${other.slug}/stream`, { authorization: `Bearer ${tenant.keys.admin}` }, 404, "org"],
          [`/organizations/no-such-org/stream`, { authorization: `Bearer ${tenant.keys.admin}` }, 404, "org"],
          [`/organizations/${tenant.slug}/stream?stack=no-such-stack`, { cookie }, 404, "stack"],
          [`/organizations/${tenant.slug}/stream?stack=Bad%20Slug`, { cookie }, 400, "stack"],
          [`/share/${"a".repeat(32)}/stream`, {}, 404, "token"],
          [`/share/short/stream`, {}, 404, "token"]
        ] as const
        for (const [path, headers, status, field] of refused) {
          const r = yield* openStream(path, headers)
          assert.strictEqual(r.status, status, path)
          assert.match(r.contentType ?? "", /^application\/json/, path)
          const body = r.body as { code: string; message: string; field?: string }
          assert.isString(body.message)
          assert.strictEqual(body.field, field, path)
        }
      }))

    it.effect("a share token's stream shows the stack's deltas and is 404 once the token is revoked", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const a = yield* catalogSource(1)
        const b = yield* catalogSource(1)
        const stack = yield* createStack(tenant, { name: `Public ${tag()}`, visibility: "public" })
        yield* addItem(tenant, stack.id, { kind: "source", source_key: a.key })
        const token = stack.share_token!
        const stream = yield* openStream(`/share/${token}/stream`)
        assert.strictEqual(stream.status, 200)
        const hello = JSON.parse((yield* next(stream))!.data)
        assert.deepStrictEqual(Object.keys(hello).toSorted(), ["server_time", "stream"])
        yield* flip(b.key, "down", [["c0", "critical"]])
        yield* flip(a.key, "maintenance", [["c0", "maintenance"]])
        assert.strictEqual(JSON.parse((yield* next(stream))!.data).key, a.key)

        const revoked = yield* call("PATCH", `/stacks/${stack.id}`, { key: tenant.keys.admin, body: { visibility: "private" } })
        assert.strictEqual(revoked.status, 200)
        const again = yield* openStream(`/share/${token}/stream`)
        assert.strictEqual(again.status, 404)
        assert.strictEqual((again.body as { field: string }).field, "token")
      }))
  })

describe("live event streams at shutdown", () => {
  layer(apiServer(), { timeout: 60_000, excludeTestServices: true })("a server of its own", (it) => {
    it.effect("closing the server ends its open streams instead of waiting for them (a hang would outlive the test)", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const a = yield* catalogSource(1)
        const stack = yield* createStack(tenant, { name: `S ${tag()}` })
        yield* addItem(tenant, stack.id, { kind: "source", source_key: a.key })
        // The process's composition (services/api/Http.ts), with a graceful timeout longer than the test's.
        const server = withLiveStreams(HttpRouter.serve(ApiRoutes, { disableListenLog: true, disableLogger: true, routerConfig })).pipe(
          Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1", gracefulShutdownTimeout: "10 minutes" }))
        )
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(server, scope)
        const address = Context.get(context, HttpServer.HttpServer).address
        const port = address._tag === "UnixPathAddress" ? 0 : address.port
        const stream = yield* openStream(`/organizations/${tenant.slug}/stream`, { authorization: `Bearer ${tenant.keys.viewer}` }).pipe(
          Effect.provideService(ApiBase, `http://127.0.0.1:${port}`)
        )
        assert.strictEqual((yield* next(stream))?.event, "hello")
        yield* Scope.close(scope, Exit.void)
        // The stream ended from the server's side: the reader sees its end, no further event.
        assert.isUndefined(yield* next(stream))
      }).pipe(Effect.scoped))
  })
})

describe("live event streams", () => {
  suite("on the in-process bus", MemoryBus.layer)
  suite("on Redis", RedisBus.layer(testRedisUrl))
})
