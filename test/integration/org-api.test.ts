import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { apiServer, call, newTenant, operatorSetsPlan } from "../support/api.ts"

describe("organization API: keys, roles, plan, audit log", () => {
  layer(apiServer(), { timeout: 60_000, excludeTestServices: true })("on PostgreSQL", (it) => {
    it.effect("no key or an unknown key: 401 with the error body", () =>
      Effect.gen(function*() {
        const none = yield* call("GET", "/organization")
        assert.strictEqual(none.status, 401)
        assert.deepStrictEqual(none.body, { code: "unauthorized", message: "an API key is required: Authorization: Bearer <key>" })
        const unknown = yield* call("GET", "/organization", { key: "sg_not-a-real-key" })
        assert.strictEqual(unknown.status, 401)
        assert.strictEqual(unknown.body.code, "unauthorized")
      }))

    it.effect("every role reads its own organization with plan limits and usage", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("free")
        for (const role of ["admin", "member", "viewer"] as const) {
          const r = yield* call("GET", "/organization", { key: tenant.keys[role] })
          assert.strictEqual(r.status, 200, role)
          assert.strictEqual(r.body.id, tenant.id)
          assert.strictEqual(r.body.plan, "free")
          assert.deepStrictEqual(r.body.limits.max_stacks, { limit: 1, used: 0 })
          assert.deepStrictEqual(r.body.channel_types, ["email"])
        }
      }))

    it.effect("API keys: admins create (shown once), list and revoke; members and viewers get 403; a revoked key stops at once", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const created = yield* call("POST", "/api-keys", { key: tenant.keys.admin, body: { name: "CI deploys", role: "member" } })
        assert.strictEqual(created.status, 201)
        assert.match(created.body.key, /^sg_[A-Za-z0-9_-]{43}$/)
        assert.strictEqual(created.body.prefix, created.body.key.slice(0, 10))
        const listed = yield* call("GET", "/api-keys", { key: tenant.keys.admin })
        assert.strictEqual(listed.status, 200)
        assert.strictEqual(listed.body.data.length, 4)
        assert.notInclude(JSON.stringify(listed.body), created.body.key)
        // The stored hash is not the key either.
        const sql = yield* SqlClient
        const stored = yield* sql<{ key_hash: string }>`SELECT key_hash FROM api_keys WHERE id = ${created.body.id}::uuid`
        assert.notStrictEqual(stored[0]!.key_hash, created.body.key)

        for (const role of ["member", "viewer"] as const) {
          const key = tenant.keys[role]
          assert.strictEqual((yield* call("GET", "/api-keys", { key })).status, 403, role)
          const denied = yield* call("POST", "/api-keys", { key, body: { name: "x", role: "admin" } })
          assert.strictEqual(denied.status, 403, role)
          assert.strictEqual(denied.body.code, "forbidden")
          assert.strictEqual((yield* call("DELETE", `/api-keys/${created.body.id}`, { key })).status, 403, role)
        }

        const works = yield* call("GET", "/organization", { key: created.body.key })
        assert.strictEqual(works.status, 200)
        const revoked = yield* call("DELETE", `/api-keys/${created.body.id}`, { key: tenant.keys.admin })
        assert.strictEqual(revoked.status, 200)
        assert.isString(revoked.body.revoked_at)
        assert.strictEqual((yield* call("GET", "/organization", { key: created.body.key })).status, 401)
      }))

    it.effect("another organization's key id is 404, and nothing of it shows in lists", () =>
      Effect.gen(function*() {
        const a = yield* newTenant("pro")
        const b = yield* newTenant("pro")
        const bKey = yield* call("POST", "/api-keys", { key: b.keys.admin, body: { name: "B only", role: "viewer" } })
        const cross = yield* call("DELETE", `/api-keys/${bKey.body.id}`, { key: a.keys.admin })
        assert.strictEqual(cross.status, 404)
        assert.strictEqual(cross.body.code, "not_found")
        const aList = yield* call("GET", "/api-keys", { key: a.keys.admin })
        assert.notInclude(JSON.stringify(aList.body), bKey.body.id)
        assert.notInclude(JSON.stringify(aList.body), "B only")
        const aAudit = yield* call("GET", "/audit-log", { key: a.keys.admin })
        assert.notInclude(JSON.stringify(aAudit.body), bKey.body.id)
        // Still works for its owner.
        assert.strictEqual((yield* call("GET", "/organization", { key: bKey.body.key })).status, 200)
      }))

    it.effect("plan changes belong to the operator: no role can change the plan through the API; the operator's change is audited as the operator; the audit log is Admin-only", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("free")
        for (const role of ["admin", "member", "viewer"] as const) {
          const refused = yield* call("PUT", "/organization/plan", { key: tenant.keys[role], body: { plan: "enterprise" } })
          assert.strictEqual(refused.status, 404, role)
          assert.strictEqual(refused.body.code, "not_found")
          const patched = yield* call("PATCH", "/organization", { key: tenant.keys[role], body: { plan: "enterprise" } })
          assert.strictEqual(patched.status, 404, role)
        }
        assert.strictEqual((yield* call("GET", "/organization", { key: tenant.keys.admin })).body.plan, "free")
        const openapi = yield* call("GET", "/openapi.json")
        const operations = Object.entries(openapi.body.paths as Record<string, Record<string, unknown>>)
          .flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method} ${path}`))
        assert.notInclude(operations.join("\n"), "/organization/plan")
        assert.deepStrictEqual(operations.filter((o) => o.endsWith(" /api/v1/organization")), ["get /api/v1/organization"])

        const changed = yield* operatorSetsPlan(tenant.slug, "pro")
        assert.strictEqual(changed.plan, "pro")
        assert.strictEqual(changed.limits.max_stacks.limit, null)
        assert.strictEqual((yield* call("GET", "/organization", { key: tenant.keys.viewer })).body.plan, "pro")
        const created = yield* call("POST", "/api-keys", { key: tenant.keys.admin, body: { name: "audit me", role: "viewer" } })
        yield* call("DELETE", `/api-keys/${created.body.id}`, { key: tenant.keys.admin })

        assert.strictEqual((yield* call("GET", "/audit-log", { key: tenant.keys.member })).status, 403)
        const log = yield* call("GET", "/audit-log", { key: tenant.keys.admin })
        assert.strictEqual(log.status, 200)
        type Entry = { action: string; entity_id: string; before: Record<string, unknown>; after: Record<string, unknown>; actor: { kind: string; id: string | null }; ip: string | null }
        const entries = log.body.data as Array<Entry>
        assert.deepStrictEqual(entries.map((e) => e.action), ["organization.plan_changed", "api_key.created", "api_key.revoked"])
        const [plan, create, revoke] = entries as [Entry, Entry, Entry]
        assert.deepStrictEqual([plan.before, plan.after], [{ plan: "free" }, { plan: "pro" }])
        assert.deepStrictEqual([plan.actor, plan.entity_id, plan.ip], [{ kind: "operator", id: "test-operator@localhost" }, tenant.id, null])
        assert.strictEqual(create.entity_id, created.body.id)
        assert.strictEqual(create.actor.kind, "api_key")
        assert.strictEqual(create.ip, "127.0.0.1")
        assert.isNull(revoke.before["revoked_at"])
        assert.isString(revoke.after["revoked_at"])
        // The key itself never reaches the audit log.
        assert.notInclude(JSON.stringify(entries), created.body.key)
      }))

    it.effect("bad bodies: wrong type, missing and unknown fields, malformed JSON and bad ids answer 400 naming the field, and change nothing", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const key = tenant.keys.admin
        const cases: Array<[unknown, string]> = [
          [{ name: "x", role: "owner" }, "role"],
          [{ name: 42, role: "admin" }, "name"],
          [{ role: "admin" }, "name"],
          [{ name: "x", role: "admin", scopes: ["all"] }, "scopes"],
          [{ name: "   ", role: "admin" }, "name"]
        ]
        for (const [body, field] of cases) {
          const r = yield* call("POST", "/api-keys", { key, body })
          assert.strictEqual(r.status, 400, JSON.stringify(body))
          assert.strictEqual(r.body.code, "invalid_parameter")
          assert.strictEqual(r.body.field, field, JSON.stringify(body))
        }
        const malformed = yield* call("POST", "/api-keys", { key, rawBody: "{\"name\": " })
        assert.strictEqual(malformed.status, 400)
        const badId = yield* call("DELETE", "/api-keys/not-a-uuid", { key })
        assert.strictEqual(badId.status, 400)
        assert.strictEqual(badId.body.field, "id")
        const markup = yield* call("POST", "/api-keys", { key, body: { name: "<script>alert(1)</script>'; DROP TABLE api_keys;--", role: "viewer" } })
        assert.strictEqual(markup.status, 201)
        assert.strictEqual(markup.body.name, "<script>alert(1)</script>'; DROP TABLE api_keys;--")
        const listed = yield* call("GET", "/api-keys", { key })
        assert.strictEqual(listed.body.data.length, 4)
      }))

    it.effect("a body over the size limit is refused with 413", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const r = yield* call("POST", "/api-keys", { key: tenant.keys.admin, body: { name: "x".repeat(2 * 1024 * 1024), role: "viewer" } })
        assert.strictEqual(r.status, 413)
        assert.strictEqual(r.body.code, "payload_too_large")
      }))
  })

  layer(apiServer({ API_RATE_LIMIT_PER_MINUTE: "5" }), { timeout: 60_000, excludeTestServices: true })("with a rate limit of 5 a minute", (it) => {
    it.effect("the sixth request of a key is 429 with Retry-After; another key is not affected", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        for (let i = 0; i < 5; i++) assert.strictEqual((yield* call("GET", "/organization", { key: tenant.keys.viewer })).status, 200)
        const limited = yield* call("GET", "/organization", { key: tenant.keys.viewer })
        assert.strictEqual(limited.status, 429)
        assert.strictEqual(limited.body.code, "rate_limited")
        const retryAfter = Number(limited.headers.get("retry-after"))
        assert.isAtLeast(retryAfter, 1)
        assert.isAtMost(retryAfter, 61)
        assert.strictEqual((yield* call("GET", "/organization", { key: tenant.keys.admin })).status, 200)
      }))
  })
})
