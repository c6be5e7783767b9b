import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { Snapshot } from "../../services/domain/Snapshot.ts"
import { TvLinks } from "../../services/orgs/TvLinks.ts"
import { LiveTargets } from "../../services/orgs/LiveTargets.ts"
import { Stacks } from "../../services/orgs/Stacks.ts"
import { Publisher } from "../../services/platform/Publisher.ts"
import { ApiBase, apiServer, assertUnauthorized, auditOf, call, expectForRole, newTenant, operatorSetsPlan, type Tenant } from "../support/api.ts"
import { catalogSource } from "../support/orgRecords.ts"

const tag = () => Math.random().toString(36).slice(2, 10)

const createStack = (tenant: Tenant, body: Record<string, unknown> = { name: `Stack ${tag()}` }) =>
  Effect.gen(function*() {
    const r = yield* call("POST", "/stacks", { key: tenant.keys.admin, body })
    assert.strictEqual(r.status, 201, JSON.stringify(r.body))
    return r.body as { id: string; slug: string }
  })

const addSource = (tenant: Tenant, stackId: string, key: string) =>
  Effect.gen(function*() {
    const r = yield* call("POST", `/stacks/${stackId}/items`, { key: tenant.keys.admin, body: { kind: "source", source_key: key } })
    assert.strictEqual(r.status, 201, JSON.stringify(r.body))
  })

const snapshot = (status: Snapshot["status"]): Snapshot => ({
  provider: "test",
  status,
  reported_status: null,
  description: "",
  components: [],
  incidents: [],
  maintenances: [],
  regions: [],
  warnings: []
})

/** A source change published as the poller publishes it. */
const flip = (key: string, status: Snapshot["status"]) =>
  Publisher.use((p) => p.changed(key, snapshot("operational"), snapshot(status), [], new Date()))

/** An event stream read by a real HTTP client: `until` reads until the text holds `needle` (or the stream ends). */
const openStream = (path: string) =>
  Effect.gen(function*() {
    const base = yield* ApiBase
    return yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const controller = new AbortController()
        const response = await fetch(`${base}/api/v1${path}`, { signal: controller.signal })
        const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
        let text = ""
        const until = async (needle: string): Promise<string> => {
          while (!text.includes(needle)) {
            const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }))
            if (chunk.done) break
            text += chunk.value
          }
          return text
        }
        return { status: response.status, until, close: () => controller.abort() }
      }),
      (stream) => Effect.sync(() => stream.close())
    )
  })

describe("TV links API", () => {
  layer(apiServer({ LIVE_REFRESH_MS: "200" }), { timeout: 60_000, excludeTestServices: true })("on PostgreSQL", (it) => {
    it.effect("every endpoint: 401 without a key or with an unknown key", () =>
      assertUnauthorized([
        ["GET", "/tv-links"],
        ["POST", "/tv-links", { name: "Lobby", stack_ids: [] }],
        ["DELETE", "/tv-links/00000000-0000-4000-8000-000000000000"]
      ]))

    it.effect("a Pro-plan feature: the Free plan gets 402 naming tv_dashboard, and nothing is stored", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("free")
        const stack = yield* createStack(tenant)
        const r = yield* call("POST", "/tv-links", { key: tenant.keys.admin, body: { name: "Lobby", stack_ids: [stack.id] } })
        assert.strictEqual(r.status, 402)
        assert.strictEqual(r.body.code, "plan_limit")
        assert.strictEqual(r.body.field, "tv_dashboard")
        const sql = yield* SqlClient
        const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM tv_links WHERE organization_id = ${tenant.id}::uuid`
        assert.strictEqual(row!.n, 0)
      }))

    it.effect("bad input is a 400 naming the field; a stack of another organization is 404 on stack_ids", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const other = yield* newTenant("pro")
        const stack = yield* createStack(tenant)
        const foreign = yield* createStack(other)
        const cases: Array<[Record<string, unknown>, string]> = [
          [{ name: "", stack_ids: [stack.id] }, "name"],
          [{ name: "Lobby", stack_ids: [] }, "stack_ids"],
          [{ name: "Lobby", stack_ids: ["not-a-uuid"] }, "stack_ids.0"],
          [{ name: "Lobby", stack_ids: [stack.id], rotation_s: 1 }, "rotation_s"],
          [{ name: "Lobby", stack_ids: [stack.id], rotation_s: 2.5 }, "rotation_s"],
          [{ name: "Lobby", stack_ids: [stack.id], token: "mine" }, "token"]
        ]
        for (const [body, field] of cases) {
          const r = yield* call("POST", "/tv-links", { key: tenant.keys.admin, body })
          assert.strictEqual(r.status, 400, JSON.stringify(body))
          assert.strictEqual(r.body.field, field, JSON.stringify(r.body))
        }
        const r = yield* call("POST", "/tv-links", { key: tenant.keys.admin, body: { name: "Lobby", stack_ids: [stack.id, foreign.id] } })
        assert.strictEqual(r.status, 404)
        assert.strictEqual(r.body.field, "stack_ids")
        const bad = yield* call("DELETE", "/tv-links/not-a-uuid", { key: tenant.keys.admin })
        assert.strictEqual(bad.status, 400)
        assert.strictEqual(bad.body.field, "id")
      }))

    it.effect("Admin and Member create and revoke, every role lists; audited without the token", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const a = yield* createStack(tenant)
        const b = yield* createStack(tenant)
        const tokens: Array<string> = []
        for (const role of ["admin", "member", "viewer"] as const) {
          const expect = expectForRole(role)
          const created = yield* call("POST", "/tv-links", { key: tenant.keys[role], body: { name: `Wall ${role}`, stack_ids: [b.id, a.id], rotation_s: 7 } })
          expect(created, 201, "write", "create")
          const list = yield* call("GET", "/tv-links", { key: tenant.keys[role] })
          expect(list, 200, "view", "list")
          if (created.status !== 201) continue
          assert.match(created.body.token, /^tv_[A-Za-z0-9_-]{32}$/)
          tokens.push(created.body.token)
          assert.strictEqual(created.body.url, `/tv/${created.body.token}`)
          assert.deepStrictEqual(created.body.stack_ids, [b.id, a.id])
          assert.strictEqual(created.body.rotation_s, 7)
          assert.include(list.body.data.map((l: { id: string }) => l.id), created.body.id)
          const revoked = yield* call("DELETE", `/tv-links/${created.body.id}`, { key: tenant.keys[role] })
          assert.strictEqual(revoked.status, 204)
          const after = yield* call("GET", "/tv-links", { key: tenant.keys[role] })
          assert.notInclude(after.body.data.map((l: { id: string }) => l.id), created.body.id)
          const twice = yield* call("DELETE", `/tv-links/${created.body.id}`, { key: tenant.keys[role] })
          assert.strictEqual(twice.status, 404)
        }
        const audit = yield* auditOf(tenant.id, "tv_link")
        assert.deepStrictEqual(audit.map((e) => e.action), ["tv_link.created", "tv_link.revoked", "tv_link.created", "tv_link.revoked"])
        for (const token of tokens) assert.notInclude(JSON.stringify(audit), token)
        assert.deepStrictEqual(audit[0]!.after!["stack_ids"], [b.id, a.id])
      }))

    it.effect("a link's screen: its stacks in order with items and health; 404 (undefined) once revoked or on the Free plan", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const source = yield* catalogSource(2, "degraded")
        const a = yield* createStack(tenant, { name: "Alpha" })
        const b = yield* createStack(tenant, { name: "Beta" })
        yield* addSource(tenant, b.id, source.key)
        const created = yield* call("POST", "/tv-links", { key: tenant.keys.admin, body: { name: "Lobby", stack_ids: [b.id, a.id] } })
        const token = created.body.token as string
        const links = yield* TvLinks
        const screen = yield* links.screen(token)
        assert.isDefined(screen)
        assert.strictEqual(screen!.name, "Lobby")
        assert.strictEqual(screen!.rotation_s, 20)
        assert.deepStrictEqual(screen!.stacks.map((s) => s.name), ["Beta", "Alpha"])
        assert.strictEqual(screen!.stacks[0]!.health.status, "degraded")
        assert.strictEqual(screen!.stacks[0]!.items[0]!.source!.key, source.key)

        yield* operatorSetsPlan(tenant.slug, "free")
        assert.isUndefined(yield* links.screen(token))
        yield* operatorSetsPlan(tenant.slug, "pro")
        assert.isDefined(yield* links.screen(token))
        yield* call("DELETE", `/tv-links/${created.body.id}`, { key: tenant.keys.admin })
        assert.isUndefined(yield* links.screen(token))
        assert.isUndefined(yield* links.screen("tv_" + "a".repeat(32)))
      }).pipe(Effect.provide(TvLinks.layer.pipe(Layer.provide(Layer.mergeAll(Stacks.layer, LiveTargets.layer))))))

    it.effect("the TV stream: the deltas of the link's stacks only, and 404 after revocation", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const shown = yield* catalogSource(1)
        const elsewhere = yield* catalogSource(1)
        const a = yield* createStack(tenant)
        const other = yield* createStack(tenant)
        yield* addSource(tenant, a.id, shown.key)
        yield* addSource(tenant, other.id, elsewhere.key)
        const created = yield* call("POST", "/tv-links", { key: tenant.keys.admin, body: { name: "Lobby", stack_ids: [a.id], rotation_s: 2 } })
        const token = created.body.token as string
        const stream = yield* openStream(`/tv/${token}/stream`)
        assert.strictEqual(stream.status, 200)
        const hello = yield* Effect.promise(() => stream.until("event: hello"))
        assert.include(hello, `"stream":"tv"`)
        yield* flip(elsewhere.key, "down")
        yield* flip(shown.key, "degraded")
        const text = yield* Effect.promise(() => stream.until(`"key":"${shown.key}"`))
        assert.include(text, `"key":"${shown.key}"`)
        assert.notInclude(text, elsewhere.key)
        assert.notInclude(text, tenant.id)

        yield* call("DELETE", `/tv-links/${created.body.id}`, { key: tenant.keys.admin })
        // The open stream ends at its next check (LIVE_REFRESH_MS); a new one is refused.
        const rest = yield* Effect.promise(() => stream.until("never-sent"))
        assert.notInclude(rest, "never-sent")
        const again = yield* call("GET", `/tv/${token}/stream`)
        assert.strictEqual(again.status, 404)
        assert.strictEqual(again.body.field, "token")
        const malformed = yield* call("GET", "/tv/not-a-token/stream")
        assert.strictEqual(malformed.status, 404)
      }))
  })
})
