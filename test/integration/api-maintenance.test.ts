import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { Role } from "../../services/domain/Organization.ts"
import { apiServer, assertUnauthorized, auditOf, call, expectForRole, newTenant, type Tenant } from "../support/api.ts"

const roles: ReadonlyArray<Role> = ["admin", "member", "viewer"]
const markup = "<img src=x onerror=alert(1)>'; DELETE FROM maintenance_windows;-- \\ %"
const hour = 3_600_000
const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString()

const ids = (r: { body: { data: Array<{ id: string }> } }) => r.body.data.map((w) => w.id)

const windowsOf = (orgId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const [row] = yield* sql<{ windows: number; audit: number; digest: string | null }>`
      SELECT (SELECT count(*)::int FROM maintenance_windows WHERE organization_id = ${orgId}::uuid) AS windows,
        (SELECT count(*)::int FROM audit_log WHERE organization_id = ${orgId}::uuid) AS audit,
        (SELECT md5(string_agg(concat_ws('|', id, title, description, stack_id, starts_at, ends_at), ',' ORDER BY id))
           FROM maintenance_windows WHERE organization_id = ${orgId}::uuid) AS digest`
    return row!
  })

const createWindow = (tenant: Tenant, body: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const r = yield* call("POST", "/maintenance-windows", {
      key: tenant.keys.admin,
      body: { title: "Database upgrade", starts_at: at(hour), ends_at: at(2 * hour), ...body }
    })
    assert.strictEqual(r.status, 201, JSON.stringify(r.body))
    return r.body as { id: string; starts_at: string; ends_at: string }
  })

const createStack = (tenant: Tenant, name: string) =>
  Effect.gen(function*() {
    const r = yield* call("POST", "/stacks", { key: tenant.keys.admin, body: { name } })
    assert.strictEqual(r.status, 201)
    return r.body.id as string
  })

describe("maintenance windows API", () => {
  layer(apiServer(), { timeout: 60_000, excludeTestServices: true })("on PostgreSQL", (it) => {
    it.effect("every endpoint: 401 without a key or with an unknown key, and nothing changes", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const win = yield* createWindow(tenant)
        const before = yield* windowsOf(tenant.id)
        const requests: Array<[string, string, unknown?]> = [
          ["GET", "/maintenance-windows"],
          ["POST", "/maintenance-windows", { title: "x", starts_at: at(hour), ends_at: at(2 * hour) }],
          ["GET", `/maintenance-windows/${win.id}`],
          ["PATCH", `/maintenance-windows/${win.id}`, { title: "y" }],
          ["DELETE", `/maintenance-windows/${win.id}`]
        ]
        yield* assertUnauthorized(requests)
        assert.deepStrictEqual(yield* windowsOf(tenant.id), before)
      }))

    it.effect("role matrix: all roles view; admins and members create and change; only admins delete", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        for (const role of roles) {
          const key = tenant.keys[role]
          const win = yield* createWindow(tenant)
          const expect = expectForRole(role)
          const before = yield* windowsOf(tenant.id)
          expect(yield* call("GET", "/maintenance-windows", { key }), 200, "view", "list")
          expect(yield* call("GET", `/maintenance-windows/${win.id}`, { key }), 200, "view", "get")
          expect(
            yield* call("POST", "/maintenance-windows", { key, body: { title: `By ${role}`, starts_at: at(hour), ends_at: at(3 * hour) } }),
            201,
            "write",
            "create"
          )
          expect(yield* call("PATCH", `/maintenance-windows/${win.id}`, { key, body: { title: `Changed by ${role}` } }), 200, "write", "update")
          if (role === "viewer") assert.deepStrictEqual(yield* windowsOf(tenant.id), before, "a viewer changed nothing")
          const removed = yield* call("DELETE", `/maintenance-windows/${win.id}`, { key })
          expect(removed, 204, "delete", "delete")
          if (role === "admin") assert.strictEqual(removed.body, null)
          const still = yield* call("GET", `/maintenance-windows/${win.id}`, { key })
          assert.strictEqual(still.status, role === "admin" ? 404 : 200, role)
        }
      }))

    it.effect("create, get and patch: times normalised to UTC, the stack optional, `active` for the present", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const stackId = yield* createStack(tenant, "Checkout")
        const created = yield* call("POST", "/maintenance-windows", {
          key: tenant.keys.member,
          body: {
            title: "  Switch upgrade ",
            description: "Rack 4",
            stack_id: stackId,
            starts_at: "2031-03-01T05:30:00+05:30",
            ends_at: "2031-03-01T02:00:00.5Z"
          }
        })
        assert.strictEqual(created.status, 201, JSON.stringify(created.body))
        const { id, created_at, ...rest } = created.body
        assert.isString(created_at)
        assert.deepStrictEqual(rest, {
          title: "Switch upgrade",
          description: "Rack 4",
          stack_id: stackId,
          starts_at: "2031-03-01T00:00:00.000Z",
          ends_at: "2031-03-01T02:00:00.500Z",
          active: false
        })
        const got = yield* call("GET", `/maintenance-windows/${id}`, { key: tenant.keys.viewer })
        assert.deepStrictEqual(got.body, created.body)

        const whole = yield* call("PATCH", `/maintenance-windows/${id}`, {
          key: tenant.keys.member,
          body: { stack_id: null, starts_at: at(-hour) }
        })
        assert.strictEqual(whole.status, 200)
        assert.deepStrictEqual([whole.body.stack_id, whole.body.active, whole.body.title], [null, true, "Switch upgrade"])
        // Without a stack: the whole organization.
        const orgWide = yield* createWindow(tenant, { title: "Everything" })
        assert.isNull((orgWide as unknown as { stack_id: string | null }).stack_id)
      }))

    it.effect("ends_at must be after starts_at, on create and on patch; unknown stacks are 404; nothing changes", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const win = yield* createWindow(tenant)
        const before = yield* windowsOf(tenant.id)
        const key = tenant.keys.admin
        for (const [starts, ends] of [[at(2 * hour), at(hour)], [at(hour), at(hour)]] as const) {
          const r = yield* call("POST", "/maintenance-windows", { key, body: { title: "Backwards", starts_at: starts, ends_at: ends } })
          assert.deepStrictEqual(r.body, { code: "invalid_parameter", message: "ends_at must be after starts_at", field: "ends_at" })
          assert.strictEqual(r.status, 400)
        }
        const patchEnds = yield* call("PATCH", `/maintenance-windows/${win.id}`, { key, body: { ends_at: at(-hour), title: "Changed" } })
        assert.deepStrictEqual([patchEnds.status, patchEnds.body.field], [400, "ends_at"])
        const patchStarts = yield* call("PATCH", `/maintenance-windows/${win.id}`, { key, body: { starts_at: at(5 * hour) } })
        assert.deepStrictEqual([patchStarts.status, patchStarts.body.field], [400, "ends_at"])
        const unknown = "00000000-0000-4000-8000-000000000000"
        const noStack = yield* call("POST", "/maintenance-windows", { key, body: { title: "x", stack_id: unknown, starts_at: at(hour), ends_at: at(2 * hour) } })
        assert.deepStrictEqual([noStack.status, noStack.body.code, noStack.body.field], [404, "not_found", "stack_id"])
        const patchStack = yield* call("PATCH", `/maintenance-windows/${win.id}`, { key, body: { stack_id: unknown } })
        assert.deepStrictEqual([patchStack.status, patchStack.body.field], [404, "stack_id"])
        assert.deepStrictEqual(yield* windowsOf(tenant.id), before)
      }))

    it.effect("?active=true lists the windows covering now; false the others; anything else is 400", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const past = yield* createWindow(tenant, { title: "Past", starts_at: at(-3 * hour), ends_at: at(-2 * hour) })
        const now = yield* createWindow(tenant, { title: "Now", starts_at: at(-hour), ends_at: at(hour) })
        const future = yield* createWindow(tenant, { title: "Future", starts_at: at(2 * hour), ends_at: at(3 * hour) })
        const key = tenant.keys.viewer
        const all = yield* call("GET", "/maintenance-windows", { key })
        assert.deepStrictEqual(ids(all), [past.id, now.id, future.id])
        assert.deepStrictEqual(all.body.data.map((w: { active: boolean }) => w.active), [false, true, false])
        assert.deepStrictEqual(ids(yield* call("GET", "/maintenance-windows?active=true", { key })), [now.id])
        assert.deepStrictEqual(ids(yield* call("GET", "/maintenance-windows?active=false", { key })), [past.id, future.id])
        const paged = yield* call("GET", "/maintenance-windows?active=false&limit=1", { key })
        assert.deepStrictEqual(ids(paged), [past.id])
        const rest = yield* call("GET", `/maintenance-windows?active=false&limit=1&cursor=${paged.body.next_cursor}`, { key })
        assert.deepStrictEqual([ids(rest), rest.body.next_cursor], [[future.id], null])
        const bad = yield* call("GET", "/maintenance-windows?active=yes", { key })
        assert.deepStrictEqual([bad.status, bad.body.field], [400, "active"])
      }))

    it.effect("tenant isolation: another organization's windows and stacks are 404; lists show only one's own", () =>
      Effect.gen(function*() {
        const a = yield* newTenant("pro")
        const b = yield* newTenant("pro")
        const bStack = yield* createStack(b, "B secret stack")
        const bWindow = yield* createWindow(b, { title: "B secret window", stack_id: bStack })
        const aWindow = yield* createWindow(a, { title: "A window" })
        const aBefore = yield* windowsOf(a.id)
        const bBefore = yield* windowsOf(b.id)
        for (const [method, path, body] of [
          ["GET", `/maintenance-windows/${bWindow.id}`],
          ["PATCH", `/maintenance-windows/${bWindow.id}`, { title: "taken over" }],
          ["DELETE", `/maintenance-windows/${bWindow.id}`]
        ] as Array<[string, string, unknown?]>) {
          const r = yield* call(method, path, { key: a.keys.admin, body })
          assert.deepStrictEqual([r.status, r.body.code], [404, "not_found"], `${method} ${path}`)
          assert.notInclude(JSON.stringify(r.body), "B secret")
        }
        const onB = yield* call("POST", "/maintenance-windows", {
          key: a.keys.admin,
          body: { title: "x", stack_id: bStack, starts_at: at(hour), ends_at: at(2 * hour) }
        })
        assert.deepStrictEqual([onB.status, onB.body.field], [404, "stack_id"])
        const moveToB = yield* call("PATCH", `/maintenance-windows/${aWindow.id}`, { key: a.keys.admin, body: { stack_id: bStack } })
        assert.deepStrictEqual([moveToB.status, moveToB.body.field], [404, "stack_id"])
        assert.deepStrictEqual(yield* windowsOf(a.id), aBefore)
        assert.deepStrictEqual(yield* windowsOf(b.id), bBefore)
        for (const query of ["", "?active=false", "?active=true"]) {
          const listed = yield* call("GET", `/maintenance-windows${query}`, { key: a.keys.admin })
          const text = JSON.stringify(listed.body)
          for (const secret of [bWindow.id, bStack, "B secret"]) assert.notInclude(text, secret, query)
        }
        const own = yield* call("GET", `/maintenance-windows/${bWindow.id}`, { key: b.keys.viewer })
        assert.deepStrictEqual([own.status, own.body.title], [200, "B secret window"])
      }))

    it.effect("bad input: wrong types, missing and unknown fields, bad dates and ids answer 400 naming the field and change nothing", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const key = tenant.keys.admin
        const win = yield* createWindow(tenant)
        const before = yield* windowsOf(tenant.id)
        const valid = { title: "ok", starts_at: at(hour), ends_at: at(2 * hour) }
        const creates: Array<[unknown, string]> = [
          [{ starts_at: valid.starts_at, ends_at: valid.ends_at }, "title"],
          [{ ...valid, title: 5 }, "title"],
          [{ ...valid, title: " " }, "title"],
          [{ ...valid, title: "t".repeat(201) }, "title"],
          [{ ...valid, title: "nul\u0000" }, "title"],
          [{ ...valid, description: false }, "description"],
          [{ ...valid, description: "d".repeat(2001) }, "description"],
          [{ title: "x", ends_at: valid.ends_at }, "starts_at"],
          [{ title: "x", starts_at: valid.starts_at }, "ends_at"],
          [{ ...valid, starts_at: "tomorrow" }, "starts_at"],
          [{ ...valid, starts_at: 1767225600000 }, "starts_at"],
          [{ ...valid, starts_at: "2031-02-31T00:00:00Z" }, "starts_at"],
          [{ ...valid, starts_at: "2031-01-01T25:00:00Z" }, "starts_at"],
          [{ ...valid, starts_at: "2031-01-01T10:00:00" }, "starts_at"],
          [{ ...valid, ends_at: "2031-01-01" }, "ends_at"],
          [{ ...valid, stack_id: "not-a-uuid" }, "stack_id"],
          [{ ...valid, stack_id: 3 }, "stack_id"],
          [{ ...valid, organization_id: tenant.id }, "organization_id"],
          [{ ...valid, active: true }, "active"]
        ]
        for (const [body, field] of creates) {
          const r = yield* call("POST", "/maintenance-windows", { key, body })
          assert.strictEqual(r.status, 400, JSON.stringify(body))
          assert.deepStrictEqual([r.body.code, r.body.field], ["invalid_parameter", field], JSON.stringify(body))
        }
        const dated = yield* call("POST", "/maintenance-windows", { key, body: { ...valid, starts_at: "2031-02-31T00:00:00Z" } })
        assert.strictEqual(dated.body.message, "starts_at is invalid: must be an ISO 8601 date-time with a time zone, e.g. 2026-01-02T03:04:05Z")
        const updates: Array<[unknown, string]> = [
          [{ title: "" }, "title"],
          [{ starts_at: "soon" }, "starts_at"],
          [{ ends_at: null }, "ends_at"],
          [{ id: win.id }, "id"]
        ]
        for (const [body, field] of updates) {
          const r = yield* call("PATCH", `/maintenance-windows/${win.id}`, { key, body })
          assert.deepStrictEqual([r.status, r.body.field], [400, field], JSON.stringify(body))
        }
        for (const [method, path] of [
          ["GET", "/maintenance-windows/nope"],
          ["PATCH", "/maintenance-windows/1%20OR%201=1"],
          ["DELETE", "/maintenance-windows/%3Cscript%3E"]
        ] as const) {
          const r = yield* call(method, path, { key, body: method === "PATCH" ? { title: "x" } : undefined })
          assert.deepStrictEqual([r.status, r.body.field], [400, "id"], `${method} ${path}`)
        }
        const malformed = yield* call("POST", "/maintenance-windows", { key, rawBody: "[1," })
        assert.strictEqual(malformed.status, 400)
        assert.deepStrictEqual(yield* windowsOf(tenant.id), before)
      }))

    it.effect("SQL and HTML metacharacters are stored and returned verbatim", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const created = yield* createWindow(tenant, { title: markup, description: markup })
        const got = yield* call("GET", `/maintenance-windows/${created.id}`, { key: tenant.keys.viewer })
        assert.deepStrictEqual([got.body.title, got.body.description], [markup, markup])
        const sql = yield* SqlClient
        const [row] = yield* sql<{ title: string }>`SELECT title FROM maintenance_windows WHERE id = ${created.id}::uuid`
        assert.strictEqual(row!.title, markup)
        assert.strictEqual((yield* windowsOf(tenant.id)).windows, 1)
      }))

    it.effect("audit: one entry per change with before and after; refused and empty changes leave none", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const stackId = yield* createStack(tenant, "Audited")
        const starts = "2032-01-01T00:00:00.000Z"
        const ends = "2032-01-01T04:00:00.000Z"
        const win = yield* createWindow(tenant, { title: "Audited window", starts_at: starts, ends_at: ends, stack_id: stackId })
        const key = tenant.keys.member
        const changed = yield* call("PATCH", `/maintenance-windows/${win.id}`, { key, body: { title: "Renamed", stack_id: null } })
        assert.strictEqual(changed.status, 200)
        const same = yield* call("PATCH", `/maintenance-windows/${win.id}`, { key, body: { title: "Renamed", ends_at: "2032-01-01T05:00:00+01:00" } })
        assert.strictEqual(same.status, 200)
        yield* call("PATCH", `/maintenance-windows/${win.id}`, { key, body: { ends_at: starts } })
        yield* call("DELETE", `/maintenance-windows/${win.id}`, { key })
        assert.strictEqual((yield* call("DELETE", `/maintenance-windows/${win.id}`, { key: tenant.keys.admin })).status, 204)
        assert.strictEqual((yield* call("DELETE", `/maintenance-windows/${win.id}`, { key: tenant.keys.admin })).status, 404)

        const entries = yield* auditOf(tenant.id, "maintenance_window")
        const first = { id: win.id, title: "Audited window", description: "", stack_id: stackId, starts_at: starts, ends_at: ends }
        const second = { ...first, title: "Renamed", stack_id: null }
        assert.deepStrictEqual(entries.map((e) => ({ ...e })), [
          { action: "maintenance_window.created", entity_type: "maintenance_window", entity_id: win.id, before: null, after: first },
          { action: "maintenance_window.updated", entity_type: "maintenance_window", entity_id: win.id, before: first, after: second },
          { action: "maintenance_window.deleted", entity_type: "maintenance_window", entity_id: win.id, before: second, after: null }
        ])
      }))
  })
})
