import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { boardHealth, boardItems } from "../../services/domain/BoardItem.ts"
import type { Role } from "../../services/domain/Organization.ts"
import type { Principal } from "../../services/domain/Principal.ts"
import { StackBoard } from "../../services/orgs/StackBoard.ts"
import { toLiveBoard } from "../../portal/app/live/board.ts"
import { apiServer, assertUnauthorized, auditOf, type AuditRow, call, expectForRole, newTenant, type Tenant } from "../support/api.ts"
import { catalogSource as catalogRecord } from "../support/orgRecords.ts"

const roles: ReadonlyArray<Role> = ["admin", "member", "viewer"]
const markup = "<script>alert('x')</script>\"; DROP TABLE stacks;-- %s {{x}} & ü"
const tokenPattern = /^[A-Za-z0-9_-]{32}$/

const tag = () => Math.random().toString(36).slice(2, 10)

/** A catalog source, degraded, with `components` operational components (test/support/orgRecords.ts). */
const catalogSource = (components: number) => catalogRecord(components, "degraded")

/** An organization's own (manual) custom source with one component. */
const customSource = (orgId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const key = `own-${tag()}`
    const [source] = yield* sql<{ id: string }>`
      INSERT INTO sources (organization_id, key, name, kind, status) VALUES (${orgId}::uuid, ${key}, ${`Own ${key}`}, 'manual', 'down')
      RETURNING id`
    const [component] = yield* sql<{ id: string }>`
      INSERT INTO components (source_id, external_id, name, status) VALUES (${source!.id}::uuid, 'main', ${`Own component ${key}`}, 'critical')
      RETURNING id`
    return { key, id: source!.id, component: component!.id }
  })

const monitor = (orgId: string, name = `Monitor ${tag()}`) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const [row] = yield* sql<{ id: string }>`
      INSERT INTO monitors (organization_id, name, url, state) VALUES (${orgId}::uuid, ${name}, 'https://example.com/health', 'up')
      RETURNING id`
    return row!.id
  })

const counts = (orgId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const [row] = yield* sql<{ stacks: number; items: number; audit: number }>`
      SELECT (SELECT count(*)::int FROM stacks WHERE organization_id = ${orgId}::uuid) AS stacks,
        (SELECT count(*)::int FROM stack_items i JOIN stacks s ON s.id = i.stack_id WHERE s.organization_id = ${orgId}::uuid) AS items,
        (SELECT count(*)::int FROM audit_log WHERE organization_id = ${orgId}::uuid) AS audit`
    return row!
  })

const createStack = (tenant: Tenant, body: Record<string, unknown> = { name: `Stack ${tag()}` }) =>
  Effect.gen(function*() {
    const r = yield* call("POST", "/stacks", { key: tenant.keys.admin, body })
    assert.strictEqual(r.status, 201, JSON.stringify(r.body))
    return r.body as { id: string; slug: string; share_token: string | null }
  })

const addItem = (tenant: Tenant, stackId: string, body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const r = yield* call("POST", `/stacks/${stackId}/items`, { key: tenant.keys.admin, body })
    assert.strictEqual(r.status, 201, JSON.stringify(r.body))
    return r.body as { id: string }
  })

/** The item ids of a move's answer, in order. */
const order = (r: { body: { data: ReadonlyArray<{ id: string }> } }) => r.body.data.map((i) => i.id)

describe("stacks API", () => {
  layer(apiServer(), { timeout: 60_000, excludeTestServices: true })("on PostgreSQL", (it) => {
    it.effect("every endpoint: 401 without a key or with an unknown key", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const stack = yield* createStack(tenant)
        const source = yield* catalogSource(1)
        const item = yield* addItem(tenant, stack.id, { kind: "source", source_key: source.key })
        const before = yield* counts(tenant.id)
        const requests: Array<[string, string, unknown?]> = [
          ["GET", "/stacks"],
          ["POST", "/stacks", { name: "x" }],
          ["GET", `/stacks/${stack.id}`],
          ["PATCH", `/stacks/${stack.id}`, { name: "y" }],
          ["DELETE", `/stacks/${stack.id}`],
          ["POST", `/stacks/${stack.id}/items`, { kind: "component", component_id: source.components[0] }],
          ["DELETE", `/stacks/${stack.id}/items/${item.id}`],
          ["POST", `/stacks/${stack.id}/items/${item.id}/move`, { direction: "up" }]
        ]
        yield* assertUnauthorized(requests)
        assert.deepStrictEqual(yield* counts(tenant.id), before)
      }))

    it.effect("role matrix: all roles view; admins and members create, change and add/remove items; only admins delete", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const source = yield* catalogSource(2)
        for (const role of roles) {
          const key = tenant.keys[role]
          const stack = yield* createStack(tenant)
          const item = yield* addItem(tenant, stack.id, { kind: "component", component_id: source.components[0] })
          const expect = expectForRole(role)
          const before = yield* counts(tenant.id)
          expect(yield* call("GET", "/stacks", { key }), 200, "view", "list")
          expect(yield* call("GET", `/stacks/${stack.id}`, { key }), 200, "view", "get")
          expect(yield* call("POST", "/stacks", { key, body: { name: `By ${role}` } }), 201, "write", "create")
          expect(yield* call("PATCH", `/stacks/${stack.id}`, { key, body: { team: role } }), 200, "write", "update")
          expect(
            yield* call("POST", `/stacks/${stack.id}/items`, { key, body: { kind: "component", component_id: source.components[1] } }),
            201,
            "write",
            "addItem"
          )
          expect(yield* call("DELETE", `/stacks/${stack.id}/items/${item.id}`, { key }), 204, "write", "removeItem")
          if (role === "viewer") assert.deepStrictEqual(yield* counts(tenant.id), before, "a viewer changed nothing")
          const removed = yield* call("DELETE", `/stacks/${stack.id}`, { key })
          expect(removed, 204, "delete", "delete")
          if (role === "admin") assert.strictEqual(removed.body, null)
          const still = yield* call("GET", `/stacks/${stack.id}`, { key })
          assert.strictEqual(still.status, role === "admin" ? 404 : 200, role)
        }
      }))

    it.effect("create: slug from the name, suffixed on a clash; explicit slugs; 409 on a taken one", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const first = yield* call("POST", "/stacks", {
          key: tenant.keys.member,
          body: { name: "  Payments & Billing  ", description: "Money", team: "Finance", visibility: "private" }
        })
        assert.strictEqual(first.status, 201)
        const { id, created_at, updated_at, ...rest } = first.body
        assert.match(id, /^[0-9a-f-]{36}$/)
        assert.strictEqual(created_at, updated_at)
        assert.deepStrictEqual(rest, {
          name: "Payments & Billing",
          slug: "payments-and-billing",
          description: "Money",
          team: "Finance",
          visibility: "private",
          share_token: null,
          share_url: null,
          health: {
            status: "operational",
            label: "All Systems Operational",
            counts: { operational: 0, degraded: 0, outage: 0, maintenance: 0, unknown: 0 }
          },
          items: []
        })
        const second = yield* createStack(tenant, { name: "Payments & billing" })
        assert.strictEqual(second.slug, "payments-and-billing-2")
        const third = yield* createStack(tenant, { name: "Payments and Billing" })
        assert.strictEqual(third.slug, "payments-and-billing-3")
        const fallback = yield* createStack(tenant, { name: "日本" })
        assert.strictEqual(fallback.slug, "stack")
        const explicit = yield* createStack(tenant, { name: "Anything", slug: "my-own" })
        assert.strictEqual(explicit.slug, "my-own")

        const before = yield* counts(tenant.id)
        const taken = yield* call("POST", "/stacks", { key: tenant.keys.admin, body: { name: "Other", slug: "payments-and-billing-2" } })
        assert.strictEqual(taken.status, 409)
        assert.deepStrictEqual([taken.body.code, taken.body.field], ["conflict", "slug"])
        const patchTaken = yield* call("PATCH", `/stacks/${explicit.id}`, { key: tenant.keys.admin, body: { slug: "payments-and-billing" } })
        assert.strictEqual(patchTaken.status, 409)
        assert.strictEqual(patchTaken.body.field, "slug")
        assert.deepStrictEqual(yield* counts(tenant.id), before)

        // Another organization may use the same slug.
        const other = yield* newTenant("pro")
        assert.strictEqual((yield* createStack(other, { name: "Payments & Billing" })).slug, "payments-and-billing")
        // Renaming keeps the slug; a new slug can be given.
        const renamed = yield* call("PATCH", `/stacks/${explicit.id}`, { key: tenant.keys.admin, body: { name: "Renamed" } })
        assert.deepStrictEqual([renamed.status, renamed.body.name, renamed.body.slug], [200, "Renamed", "my-own"])
        const reslugged = yield* call("PATCH", `/stacks/${explicit.id}`, { key: tenant.keys.admin, body: { slug: "renamed" } })
        assert.deepStrictEqual([reslugged.status, reslugged.body.slug], [200, "renamed"])
      }))

    it.effect("visibility: a public stack has an unguessable share token and URL; private removes it; public again gives a new one", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const a = yield* createStack(tenant, { name: "Public one", visibility: "public" })
        const b = yield* createStack(tenant, { name: "Public two", visibility: "public" })
        assert.match(a.share_token!, tokenPattern)
        assert.notStrictEqual(a.share_token, b.share_token)
        const got = yield* call("GET", `/stacks/${a.id}`, { key: tenant.keys.viewer })
        assert.strictEqual(got.body.share_url, `/share/${a.share_token}`)
        assert.strictEqual(got.body.visibility, "public")
        // Staying public keeps the link.
        const kept = yield* call("PATCH", `/stacks/${a.id}`, { key: tenant.keys.member, body: { visibility: "public", team: "Ops" } })
        assert.strictEqual(kept.body.share_token, a.share_token)
        const hidden = yield* call("PATCH", `/stacks/${a.id}`, { key: tenant.keys.member, body: { visibility: "private" } })
        assert.strictEqual(hidden.status, 200)
        assert.deepStrictEqual([hidden.body.visibility, hidden.body.share_token, hidden.body.share_url], ["private", null, null])
        const sql = yield* SqlClient
        const [stored] = yield* sql<{ share_token: string | null }>`SELECT share_token FROM stacks WHERE id = ${a.id}::uuid`
        assert.isNull(stored!.share_token)
        const again = yield* call("PATCH", `/stacks/${a.id}`, { key: tenant.keys.member, body: { visibility: "public" } })
        assert.match(again.body.share_token, tokenPattern)
        assert.notStrictEqual(again.body.share_token, a.share_token)
        assert.strictEqual(again.body.share_url, `/share/${again.body.share_token}`)
        // The token is a credential for the public page: never in the audit log.
        const log = JSON.stringify(yield* auditOf(tenant.id))
        for (const token of [a.share_token!, b.share_token!, again.body.share_token as string]) assert.notInclude(log, token)
      }))

    it.effect("items: catalog components, whole sources, the org's custom sources and monitors, with current status; 409 twice; remove", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const catalog = yield* catalogSource(2)
        const own = yield* customSource(tenant.id)
        const monitorId = yield* monitor(tenant.id, "API health")
        const stack = yield* createStack(tenant)
        const bodies = [
          { kind: "component", component_id: catalog.components[1] },
          { kind: "source", source_key: catalog.key },
          { kind: "component", component_id: own.component },
          { kind: "source", source_key: own.key },
          { kind: "monitor", monitor_id: monitorId }
        ]
        const added: Array<{ id: string; position: number }> = []
        for (const body of bodies) {
          const r = yield* call("POST", `/stacks/${stack.id}/items`, { key: tenant.keys.member, body })
          assert.strictEqual(r.status, 201, JSON.stringify(r.body))
          added.push(r.body)
        }
        assert.deepStrictEqual(added.map((i) => i.position), [0, 1, 2, 3, 4])
        const sql = yield* SqlClient
        yield* sql`UPDATE components SET status = 'degraded' WHERE id = ${catalog.components[1]!}::uuid`
        const got = yield* call("GET", `/stacks/${stack.id}`, { key: tenant.keys.viewer })
        assert.strictEqual(got.status, 200)
        const items: Array<unknown> = (got.body.items as Array<Record<string, unknown>>).map(({ id, added_at, ...rest }) => {
          assert.isString(added_at)
          return { id, ...rest }
        })
        assert.deepStrictEqual(items, [
          {
            id: added[0]!.id,
            kind: "component",
            position: 0,
            component: { id: catalog.components[1], name: `Component 1 of ${catalog.key}`, status: "degraded", source_key: catalog.key }
          },
          { id: added[1]!.id, kind: "source", position: 1, source: { key: catalog.key, name: `Catalog ${catalog.key}`, status: "degraded" } },
          {
            id: added[2]!.id,
            kind: "component",
            position: 2,
            component: { id: own.component, name: `Own component ${own.key}`, status: "critical", source_key: own.key }
          },
          { id: added[3]!.id, kind: "source", position: 3, source: { key: own.key, name: `Own ${own.key}`, status: "down" } },
          { id: added[4]!.id, kind: "monitor", position: 4, monitor: { id: monitorId, name: "API health", state: "up" } }
        ])
        const listed = yield* call("GET", "/stacks", { key: tenant.keys.viewer })
        assert.strictEqual(listed.body.data[0].items_count, 5)
        assert.notProperty(listed.body.data[0], "items")

        const before = yield* counts(tenant.id)
        for (const [body, field] of [[bodies[0], "component_id"], [bodies[3], "source_key"], [bodies[4], "monitor_id"]] as const) {
          const again = yield* call("POST", `/stacks/${stack.id}/items`, { key: tenant.keys.member, body })
          assert.strictEqual(again.status, 409, JSON.stringify(body))
          assert.deepStrictEqual([again.body.code, again.body.field], ["conflict", field])
        }
        assert.deepStrictEqual(yield* counts(tenant.id), before)

        const removed = yield* call("DELETE", `/stacks/${stack.id}/items/${added[1]!.id}`, { key: tenant.keys.member })
        assert.strictEqual(removed.status, 204)
        const gone = yield* call("DELETE", `/stacks/${stack.id}/items/${added[1]!.id}`, { key: tenant.keys.member })
        assert.deepStrictEqual([gone.status, gone.body.field], [404, "item_id"])
        const after = yield* call("GET", `/stacks/${stack.id}`, { key: tenant.keys.viewer })
        assert.deepStrictEqual(after.body.items.map((i: { id: string }) => i.id), [added[0]!.id, added[2]!.id, added[3]!.id, added[4]!.id])
        // The next one goes last.
        const next = yield* addItem(tenant, stack.id, { kind: "component", component_id: catalog.components[0] })
        assert.strictEqual((next as unknown as { position: number }).position, 5)
        // An unknown component, source or monitor is 404 naming the field; so is a disabled catalog
        // source (a synthetic one outside a demo) and its components.
        const hidden = yield* catalogSource(1)
        yield* SqlClient.use((sql) => sql`UPDATE sources SET synthetic = true, enabled = false WHERE id = ${hidden.id}::uuid`)
        for (const [body, field] of [
          [{ kind: "component", component_id: "00000000-0000-4000-8000-000000000000" }, "component_id"],
          [{ kind: "source", source_key: "no-such-source" }, "source_key"],
          [{ kind: "component", component_id: hidden.components[0] }, "component_id"],
          [{ kind: "source", source_key: hidden.key }, "source_key"],
          [{ kind: "monitor", monitor_id: "00000000-0000-4000-8000-000000000000" }, "monitor_id"]
        ] as const) {
          const r = yield* call("POST", `/stacks/${stack.id}/items`, { key: tenant.keys.member, body })
          assert.deepStrictEqual([r.status, r.body.code, r.body.field], [404, "not_found", field])
        }
      }))

    it.effect("health: the banner follows the current statuses of the items, on one stack and in the list", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const sql = yield* SqlClient
        const catalog = yield* catalogSource(3)
        const monitorId = yield* monitor(tenant.id)
        const stack = yield* createStack(tenant)
        const created = yield* call("GET", `/stacks/${stack.id}`, { key: tenant.keys.viewer })
        assert.deepStrictEqual(created.body.health, {
          status: "operational",
          label: "All Systems Operational",
          counts: { operational: 0, degraded: 0, outage: 0, maintenance: 0, unknown: 0 }
        })
        for (const id of catalog.components) yield* addItem(tenant, stack.id, { kind: "component", component_id: id })
        yield* addItem(tenant, stack.id, { kind: "monitor", monitor_id: monitorId })
        const health = () =>
          Effect.gen(function*() {
            const one = yield* call("GET", `/stacks/${stack.id}`, { key: tenant.keys.viewer })
            const listed = yield* call("GET", "/stacks", { key: tenant.keys.viewer })
            assert.deepStrictEqual(listed.body.data[0].health, one.body.health)
            return one.body.health as { status: string; label: string; counts: Record<string, number> }
          })
        assert.strictEqual((yield* health()).status, "operational")
        yield* sql`UPDATE components SET status = 'maintenance' WHERE id = ${catalog.components[0]!}::uuid`
        assert.deepStrictEqual([(yield* health()).status, (yield* health()).label], ["maintenance", "Under Maintenance"])
        yield* sql`UPDATE monitors SET state = 'degraded' WHERE id = ${monitorId}::uuid`
        assert.strictEqual((yield* health()).status, "degraded")
        yield* sql`UPDATE components SET status = 'critical' WHERE id = ${catalog.components[1]!}::uuid`
        assert.deepStrictEqual((yield* health()).counts, { operational: 1, degraded: 1, outage: 1, maintenance: 1, unknown: 0 })
        assert.strictEqual((yield* health()).status, "partial_outage")
        yield* sql`UPDATE components SET status = 'critical' WHERE id = ${catalog.components[2]!}::uuid`
        assert.deepStrictEqual([(yield* health()).status, (yield* health()).label], ["major_outage", "Major Outage"])
        // A paused monitor is unknown: counted apart, it moves nothing.
        yield* sql`UPDATE monitors SET state = 'paused' WHERE id = ${monitorId}::uuid`
        const paused = yield* health()
        assert.deepStrictEqual([paused.status, paused.counts.unknown, paused.counts.outage], ["major_outage", 1, 2])
      }))

    it.effect("health: the portal's board (server and page) counts each item as the API does, a component also picked from a source added whole included", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const sql = yield* SqlClient
        const whole = yield* catalogSource(3)
        const picked = yield* catalogSource(2)
        const monitorId = yield* monitor(tenant.id)
        const stack = yield* createStack(tenant)
        yield* addItem(tenant, stack.id, { kind: "source", source_key: whole.key })
        yield* addItem(tenant, stack.id, { kind: "component", component_id: whole.components[1]! })
        yield* addItem(tenant, stack.id, { kind: "component", component_id: picked.components[0]! })
        yield* addItem(tenant, stack.id, { kind: "monitor", monitor_id: monitorId })
        yield* sql`UPDATE components SET status = 'critical' WHERE id = ${whole.components[1]!}::uuid`
        yield* sql`UPDATE sources SET status = 'operational' WHERE id = ${whole.id}::uuid`
        const api = (yield* call("GET", `/stacks/${stack.id}`, { key: tenant.keys.viewer })).body.health
        const principal: Principal = {
          organization_id: tenant.id, organization_slug: tenant.slug, plan: "pro", role: "viewer",
          actor: { kind: "api_key", id: "test" }, ip: null
        }
        const board = yield* StackBoard.use((b) => b.stack(principal, stack.slug)).pipe(Effect.provide(StackBoard.layer))
        const served = board.stacks[0]!
        // The whole source, the component picked from it (critical), the other source's component, the monitor.
        assert.deepStrictEqual(api.counts, { operational: 3, degraded: 0, outage: 1, maintenance: 0, unknown: 0 })
        assert.deepStrictEqual(served.health, api)
        // The page's copy: no item list and no component ids, the items derived from the sources with the same banner.
        const page = toLiveBoard(board).stacks[0]!
        assert.notProperty(page, "items")
        assert.isTrue(page.sources.every((s) => s.components.every((c) => !("id" in c))))
        assert.deepStrictEqual(boardHealth(boardItems(page)), api)
        assert.sameDeepMembers(boardItems(page), [...served.items])
        const wholeOnPage = page.sources.find((s) => s.key === whole.key)!
        assert.deepStrictEqual(wholeOnPage.components.map((c) => [c.external_id, c.picked ?? false]), [["c0", false], ["c1", true], ["c2", false]])
      }))

    it.effect("tenant isolation: another organization's stacks, items, custom sources and monitors are 404; lists show only one's own", () =>
      Effect.gen(function*() {
        const a = yield* newTenant("pro")
        const b = yield* newTenant("pro")
        const catalog = yield* catalogSource(1)
        const bSource = yield* customSource(b.id)
        const bMonitor = yield* monitor(b.id, "B secret monitor")
        const bStack = yield* createStack(b, { name: "B secret stack", visibility: "public" })
        const bItem = yield* addItem(b, bStack.id, { kind: "monitor", monitor_id: bMonitor })
        const aStack = yield* createStack(a, { name: "A stack" })
        const aBefore = yield* counts(a.id)
        const bBefore = yield* counts(b.id)

        const requests: Array<[string, string, unknown?]> = [
          ["GET", `/stacks/${bStack.id}`],
          ["PATCH", `/stacks/${bStack.id}`, { name: "taken over" }],
          ["DELETE", `/stacks/${bStack.id}`],
          ["POST", `/stacks/${bStack.id}/items`, { kind: "component", component_id: catalog.components[0] }],
          ["DELETE", `/stacks/${bStack.id}/items/${bItem.id}`],
          ["DELETE", `/stacks/${aStack.id}/items/${bItem.id}`]
        ]
        for (const [method, path, body] of requests) {
          const r = yield* call(method, path, { key: a.keys.admin, body })
          assert.strictEqual(r.status, 404, `${method} ${path}`)
          assert.strictEqual(r.body.code, "not_found")
          assert.notInclude(JSON.stringify(r.body), "B secret")
        }
        for (const [body, field] of [
          [{ kind: "source", source_key: bSource.key }, "source_key"],
          [{ kind: "component", component_id: bSource.component }, "component_id"],
          [{ kind: "monitor", monitor_id: bMonitor }, "monitor_id"]
        ] as const) {
          const r = yield* call("POST", `/stacks/${aStack.id}/items`, { key: a.keys.admin, body })
          assert.deepStrictEqual([r.status, r.body.field], [404, field], JSON.stringify(body))
        }
        assert.deepStrictEqual(yield* counts(a.id), aBefore)
        assert.deepStrictEqual(yield* counts(b.id), bBefore)
        const listed = yield* call("GET", "/stacks", { key: a.keys.admin })
        assert.deepStrictEqual(listed.body.data.map((s: { id: string }) => s.id), [aStack.id])
        const text = JSON.stringify(listed.body)
        for (const secret of [bStack.id, "B secret", bStack.share_token!]) assert.notInclude(text, secret)
        const audit = yield* call("GET", "/audit-log", { key: a.keys.admin })
        assert.notInclude(JSON.stringify(audit.body), bStack.id)
        // The owner still sees it whole.
        const own = yield* call("GET", `/stacks/${bStack.id}`, { key: b.keys.viewer })
        assert.deepStrictEqual([own.status, own.body.items.length], [200, 1])
      }))

    it.effect("bad input: wrong types, missing and unknown fields, bad ids and slugs answer 400 naming the field and change nothing", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const key = tenant.keys.admin
        const stack = yield* createStack(tenant, { name: "Target" })
        const before = yield* counts(tenant.id)
        const creates: Array<[unknown, string]> = [
          [{}, "name"],
          [{ name: 42 }, "name"],
          [{ name: "   " }, "name"],
          [{ name: "x".repeat(201) }, "name"],
          [{ name: "x", visibility: "secret" }, "visibility"],
          [{ name: "x", description: ["a"] }, "description"],
          [{ name: "x", description: "d".repeat(2001) }, "description"],
          [{ name: "x", team: 7 }, "team"],
          [{ name: "x", slug: "Not A Slug" }, "slug"],
          [{ name: "x", slug: "-x" }, "slug"],
          [{ name: "x", slug: "x".repeat(101) }, "slug"],
          [{ name: "x", owner: "me" }, "owner"],
          [{ name: "nul\u0000byte" }, "name"],
          [{ name: "x", share_token: "mine" }, "share_token"]
        ]
        for (const [body, field] of creates) {
          const r = yield* call("POST", "/stacks", { key, body })
          assert.strictEqual(r.status, 400, JSON.stringify(body))
          assert.deepStrictEqual([r.body.code, r.body.field], ["invalid_parameter", field], JSON.stringify(body))
        }
        const updates: Array<[unknown, string]> = [
          [{ name: "" }, "name"],
          [{ visibility: null }, "visibility"],
          [{ slug: "UPPER" }, "slug"],
          [{ id: "00000000-0000-4000-8000-000000000000" }, "id"]
        ]
        for (const [body, field] of updates) {
          const r = yield* call("PATCH", `/stacks/${stack.id}`, { key, body })
          assert.deepStrictEqual([r.status, r.body.field], [400, field], JSON.stringify(body))
        }
        const items: Array<[unknown, string]> = [
          [{ kind: "widget", component_id: "00000000-0000-4000-8000-000000000000" }, "kind"],
          [{ kind: "component" }, "component_id"],
          [{ kind: "component", component_id: "nope" }, "component_id"],
          [{ kind: "source", source_key: "Not A Key" }, "source_key"],
          [{ kind: "monitor", monitor_id: 12 }, "monitor_id"],
          [{ kind: "monitor", monitor_id: "00000000-0000-4000-8000-000000000000", position: 3 }, "position"],
          [{ kind: "monitor", monitor_id: "00000000-0000-4000-8000-000000000000", source_key: "aws" }, "source_key"],
          [{ component_id: "00000000-0000-4000-8000-000000000000" }, "kind"],
          [{ kind: "source" }, "source_key"]
        ]
        for (const [body, field] of items) {
          const r = yield* call("POST", `/stacks/${stack.id}/items`, { key, body })
          assert.deepStrictEqual([r.status, r.body.field], [400, field], JSON.stringify(body))
        }
        for (const [method, path, field] of [
          ["GET", "/stacks/not-a-uuid", "id"],
          ["PATCH", "/stacks/1%27%20OR%201=1", "id"],
          ["DELETE", "/stacks/..%2F..%2Fetc", "id"],
          ["POST", "/stacks/xyz/items", "id"],
          ["DELETE", `/stacks/${stack.id}/items/42`, "item_id"]
        ] as const) {
          const body = method === "PATCH" ? { name: "x" } : method === "POST" ? { kind: "source", source_key: "x" } : undefined
          const r = yield* call(method, path, { key, body })
          assert.deepStrictEqual([r.status, r.body.field], [400, field], `${method} ${path}`)
        }
        const misplaced = yield* call("POST", `/stacks/${stack.id}/items`, { key, body: { kind: "source", source_key: "aws", monitor_id: "00000000-0000-4000-8000-000000000000" } })
        assert.deepStrictEqual(misplaced.body, {
          code: "invalid_parameter",
          message: "monitor_id is invalid: not used when kind is source",
          field: "monitor_id"
        })
        const malformed = yield* call("POST", "/stacks", { key, rawBody: "{\"name\": " })
        assert.strictEqual(malformed.status, 400)
        const cursor = yield* call("GET", "/stacks?cursor=garbage", { key })
        assert.deepStrictEqual([cursor.status, cursor.body.field], [400, "cursor"])
        const huge = yield* call("POST", "/stacks", { key, body: { name: "x", description: "d".repeat(1024 * 1024) } })
        assert.strictEqual(huge.status, 413)
        assert.deepStrictEqual(yield* counts(tenant.id), before)
      }))

    it.effect("SQL and HTML metacharacters are stored and returned verbatim", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const created = yield* call("POST", "/stacks", { key: tenant.keys.member, body: { name: markup, description: markup, team: markup } })
        assert.strictEqual(created.status, 201)
        assert.deepStrictEqual([created.body.name, created.body.description, created.body.team], [markup, markup, markup])
        assert.strictEqual(created.body.slug, "script-alert-x-script-drop-table-stacks-s-x-and-u")
        const sql = yield* SqlClient
        const [row] = yield* sql<{ name: string; team: string }>`SELECT name, team FROM stacks WHERE id = ${created.body.id}::uuid`
        assert.deepStrictEqual(row, { name: markup, team: markup })
        const got = yield* call("GET", `/stacks/${created.body.id}`, { key: tenant.keys.viewer })
        assert.strictEqual(got.body.description, markup)
        const search = yield* call("POST", `/stacks/${created.body.id}/items`, { key: tenant.keys.member, body: { kind: "source", source_key: "x' OR '1'='1" } })
        assert.deepStrictEqual([search.status, search.body.field], [400, "source_key"])
        assert.strictEqual((yield* counts(tenant.id)).stacks, 1)
      }))

    it.effect("Free plan: the second stack and the eleventh component are refused with 402 and nothing is half-created; Pro accepts them", () =>
      Effect.gen(function*() {
        const catalog = yield* catalogSource(11)
        const free = yield* newTenant("free")
        const stack = yield* createStack(free, { name: "Only one" })
        for (const id of catalog.components.slice(0, 10)) yield* addItem(free, stack.id, { kind: "component", component_id: id })
        const before = yield* counts(free.id)
        assert.deepStrictEqual([before.stacks, before.items], [1, 10])

        const second = yield* call("POST", "/stacks", { key: free.keys.admin, body: { name: "Second" } })
        assert.strictEqual(second.status, 402)
        assert.deepStrictEqual([second.body.code, second.body.field], ["plan_limit", "max_stacks"])
        assert.include(second.body.message, "Free plan allows 1 ")
        const eleventh = yield* call("POST", `/stacks/${stack.id}/items`, {
          key: free.keys.member,
          body: { kind: "component", component_id: catalog.components[10] }
        })
        assert.strictEqual(eleventh.status, 402)
        assert.deepStrictEqual([eleventh.body.code, eleventh.body.field], ["plan_limit", "max_components"])
        // A whole source or a monitor is a component too.
        const asSource = yield* call("POST", `/stacks/${stack.id}/items`, { key: free.keys.member, body: { kind: "source", source_key: catalog.key } })
        assert.deepStrictEqual([asSource.status, asSource.body.field], [402, "max_components"])
        assert.deepStrictEqual(yield* counts(free.id), before)
        const sql = yield* SqlClient
        const [slugs] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM stacks WHERE organization_id = ${free.id}::uuid AND name = 'Second'`
        assert.strictEqual(slugs!.n, 0)
        // Removing one frees a place.
        const [first] = (yield* call("GET", `/stacks/${stack.id}`, { key: free.keys.viewer })).body.items
        assert.strictEqual((yield* call("DELETE", `/stacks/${stack.id}/items/${first.id}`, { key: free.keys.member })).status, 204)
        yield* addItem(free, stack.id, { kind: "component", component_id: catalog.components[10] })

        const pro = yield* newTenant("pro")
        const p1 = yield* createStack(pro, { name: "One" })
        yield* createStack(pro, { name: "Two" })
        for (const id of catalog.components) yield* addItem(pro, p1.id, { kind: "component", component_id: id })
        assert.deepStrictEqual(yield* counts(pro.id), { stacks: 2, items: 11, audit: 13 })
      }))

    it.effect("Free plan: a whole source counts as its components, so it cannot bypass the 10-component limit", () =>
      Effect.gen(function*() {
        const big = yield* catalogSource(11)
        const four = yield* catalogSource(4)
        const six = yield* catalogSource(6)
        const empty = yield* catalogSource(0)
        const free = yield* newTenant("free")
        const stack = yield* createStack(free, { name: "Only one" })
        const before = yield* counts(free.id)

        // Eleven components as one item: refused, nothing written.
        const whole = yield* call("POST", `/stacks/${stack.id}/items`, { key: free.keys.member, body: { kind: "source", source_key: big.key } })
        assert.deepStrictEqual([whole.status, whole.body.code, whole.body.field], [402, "plan_limit", "max_components"], JSON.stringify(whole.body))
        assert.include(whole.body.message, "Free plan allows 10 components in stacks")
        assert.deepStrictEqual(yield* counts(free.id), before)

        // Four as a source, then six one by one: ten, the limit; usage says so.
        yield* addItem(free, stack.id, { kind: "source", source_key: four.key })
        const org = yield* call("GET", "/organization", { key: free.keys.viewer })
        assert.deepStrictEqual(org.body.limits.max_components, { limit: 10, used: 4 })
        for (const id of six.components) yield* addItem(free, stack.id, { kind: "component", component_id: id })
        assert.deepStrictEqual((yield* call("GET", "/organization", { key: free.keys.viewer })).body.limits.max_components, { limit: 10, used: 10 })
        // A source without components still takes one place.
        const none = yield* call("POST", `/stacks/${stack.id}/items`, { key: free.keys.member, body: { kind: "source", source_key: empty.key } })
        assert.deepStrictEqual([none.status, none.body.field], [402, "max_components"])

        // Removing the four-component source frees four places.
        const items = (yield* call("GET", `/stacks/${stack.id}`, { key: free.keys.viewer })).body.items as Array<{ id: string; kind: string }>
        const sourceItem = items.find((i) => i.kind === "source")!
        assert.strictEqual((yield* call("DELETE", `/stacks/${stack.id}/items/${sourceItem.id}`, { key: free.keys.member })).status, 204)
        yield* addItem(free, stack.id, { kind: "source", source_key: empty.key })
        assert.deepStrictEqual((yield* call("GET", "/organization", { key: free.keys.viewer })).body.limits.max_components, { limit: 10, used: 7 })

        // Pro has no such limit.
        const pro = yield* newTenant("pro")
        const proStack = yield* createStack(pro, { name: "Big" })
        yield* addItem(pro, proStack.id, { kind: "source", source_key: big.key })
      }))

    it.effect("audit: one entry per change, with action, entity id, before and after", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const catalog = yield* catalogSource(1)
        const stack = yield* createStack(tenant, { name: "Audited", team: "Core" })
        const sql = yield* SqlClient
        const [win] = yield* sql<{ id: string }>`
          INSERT INTO maintenance_windows (organization_id, title, stack_id, starts_at, ends_at)
          VALUES (${tenant.id}::uuid, 'Upgrade', ${stack.id}::uuid, now(), now() + interval '1 hour') RETURNING id`
        yield* call("PATCH", `/stacks/${stack.id}`, { key: tenant.keys.member, body: { name: "Audited 2", visibility: "public" } })
        // A patch that changes nothing is not a change.
        const same = yield* call("PATCH", `/stacks/${stack.id}`, { key: tenant.keys.member, body: { name: "Audited 2" } })
        assert.strictEqual(same.status, 200)
        const item = yield* addItem(tenant, stack.id, { kind: "component", component_id: catalog.components[0] })
        yield* call("DELETE", `/stacks/${stack.id}/items/${item.id}`, { key: tenant.keys.member })
        const source = yield* addItem(tenant, stack.id, { kind: "source", source_key: catalog.key })
        // Refused requests leave no entry.
        yield* call("POST", `/stacks/${stack.id}/items`, { key: tenant.keys.member, body: { kind: "source", source_key: catalog.key } })
        yield* call("DELETE", `/stacks/${stack.id}`, { key: tenant.keys.member })
        assert.strictEqual((yield* call("DELETE", `/stacks/${stack.id}`, { key: tenant.keys.admin })).status, 204)

        const entries = yield* auditOf(tenant.id)
        assert.deepStrictEqual(entries.map((e) => [e.action, e.entity_type, e.entity_id]), [
          ["stack.created", "stack", stack.id],
          ["stack.updated", "stack", stack.id],
          ["stack.item_added", "stack_item", item.id],
          ["stack.item_removed", "stack_item", item.id],
          ["stack.item_added", "stack_item", source.id],
          ["stack.deleted", "stack", stack.id]
        ])
        const settings = { id: stack.id, name: "Audited", slug: "audited", description: "", team: "Core", visibility: "private" }
        const [created, updated, added, removed, , deleted] = entries as unknown as [AuditRow, AuditRow, AuditRow, AuditRow, AuditRow, AuditRow]
        assert.deepStrictEqual([created.before, created.after], [null, settings])
        assert.deepStrictEqual([updated.before, updated.after], [settings, { ...settings, name: "Audited 2", visibility: "public" }])
        const itemRecord = { stack_id: stack.id, kind: "component", position: 0, component_id: catalog.components[0] }
        assert.deepStrictEqual([added.before, added.after], [null, itemRecord])
        assert.deepStrictEqual([removed.before, removed.after], [itemRecord, null])
        assert.deepStrictEqual(deleted.before, {
          ...settings,
          name: "Audited 2",
          visibility: "public",
          items: [{ stack_id: stack.id, kind: "source", position: 0, source_key: catalog.key }],
          maintenance_window_ids: [win!.id]
        })
        assert.isNull(deleted.after)
        // Its items and maintenance windows went with it.
        const [left] = yield* sql<{ n: number }>`
          SELECT (SELECT count(*) FROM stack_items WHERE stack_id = ${stack.id}::uuid) + (SELECT count(*) FROM maintenance_windows WHERE id = ${win!.id}::uuid) AS n`
        assert.strictEqual(Number(left!.n), 0)
        // The API shows the same entries to admins.
        const log = yield* call("GET", "/audit-log", { key: tenant.keys.admin })
        assert.deepStrictEqual(log.body.data.map((e: { action: string }) => e.action), entries.map((e) => e.action))
      }))

    it.effect("concurrent creates on the Free plan: exactly one stack is created, the others get 402", () =>
      Effect.gen(function*() {
        const free = yield* newTenant("free")
        const replies = yield* Effect.forEach(
          ["A", "B", "C", "D"],
          (name) => call("POST", "/stacks", { key: free.keys.member, body: { name: `Race ${name}` } }),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(replies.map((r) => r.status).toSorted(), [201, 402, 402, 402])
        const after = yield* counts(free.id)
        assert.deepStrictEqual([after.stacks, after.audit], [1, 1])
      }))

    it.effect("the OpenAPI document describes the stack endpoints, 201 on create and 204 on delete", () =>
      Effect.gen(function*() {
        const doc = (yield* call("GET", "/openapi.json")).body
        const paths = doc.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>
        assert.deepStrictEqual(Object.keys(paths["/api/v1/stacks"]!).toSorted(), ["get", "post"])
        assert.deepStrictEqual(Object.keys(paths["/api/v1/stacks/{id}"]!).toSorted(), ["delete", "get", "patch"])
        assert.property(paths["/api/v1/stacks"]!["post"]!.responses, "201")
        assert.property(paths["/api/v1/stacks"]!["post"]!.responses, "402")
        assert.property(paths["/api/v1/stacks/{id}"]!["delete"]!.responses, "204")
        assert.property(paths["/api/v1/stacks/{id}/items"]!["post"]!.responses, "409")
        assert.property(paths["/api/v1/stacks/{id}/items/{item_id}"]!["delete"]!.responses, "204")
      }))

    it.effect("lists page by (created_at, id) with next_cursor", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const ids: Array<string> = []
        for (let i = 0; i < 3; i++) ids.push((yield* createStack(tenant, { name: `Paged ${i}` })).id)
        const first = yield* call("GET", "/stacks?limit=2", { key: tenant.keys.viewer })
        assert.deepStrictEqual([first.body.limit, first.body.data.map((s: { id: string }) => s.id)], [2, ids.slice(0, 2)])
        assert.isString(first.body.next_cursor)
        const second = yield* call("GET", `/stacks?limit=2&cursor=${first.body.next_cursor}`, { key: tenant.keys.viewer })
        assert.deepStrictEqual(second.body.data.map((s: { id: string }) => s.id), ids.slice(2))
        assert.isNull(second.body.next_cursor)
      }))

    it.effect("move: an item goes one place up or down (ends stay), audited; viewers 403, bad input 400, unknown item 404", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const source = yield* catalogSource(3)
        const stack = yield* createStack(tenant)
        const items: Array<{ id: string }> = []
        for (const component_id of source.components) items.push(yield* addItem(tenant, stack.id, { kind: "component", component_id }))
        const [a, b, c] = items.map((i) => i.id)
        const moved = yield* call("POST", `/stacks/${stack.id}/items/${c}/move`, { key: tenant.keys.member, body: { direction: "up" } })
        assert.strictEqual(moved.status, 200, JSON.stringify(moved.body))
        assert.deepStrictEqual(order(moved), [a, c, b])
        assert.deepStrictEqual(moved.body.data.map((i: { position: number }) => i.position), [0, 1, 2])
        const atTop = yield* call("POST", `/stacks/${stack.id}/items/${a}/move`, { key: tenant.keys.admin, body: { direction: "up" } })
        assert.deepStrictEqual(order(atTop), [a, c, b])
        const down = yield* call("POST", `/stacks/${stack.id}/items/${a}/move`, { key: tenant.keys.admin, body: { direction: "down" } })
        assert.deepStrictEqual(order(down), [c, a, b])
        const got = yield* call("GET", `/stacks/${stack.id}`, { key: tenant.keys.viewer })
        assert.deepStrictEqual(got.body.items.map((i: { id: string }) => i.id), [c, a, b])

        const before = yield* counts(tenant.id)
        const viewer = yield* call("POST", `/stacks/${stack.id}/items/${b}/move`, { key: tenant.keys.viewer, body: { direction: "up" } })
        assert.strictEqual(viewer.status, 403)
        const sideways = yield* call("POST", `/stacks/${stack.id}/items/${b}/move`, { key: tenant.keys.admin, body: { direction: "sideways" } })
        assert.strictEqual(sideways.status, 400)
        const badId = yield* call("POST", `/stacks/${stack.id}/items/nope/move`, { key: tenant.keys.admin, body: { direction: "up" } })
        assert.strictEqual(badId.status, 400)
        const unknown = yield* call("POST", `/stacks/${stack.id}/items/${stack.id}/move`, { key: tenant.keys.admin, body: { direction: "up" } })
        assert.strictEqual(unknown.status, 404)
        assert.deepStrictEqual(yield* counts(tenant.id), before)

        const moves = (yield* auditOf(tenant.id, "stack_item")).filter((e: AuditRow) => e.action === "stack.item_moved")
        // Moves at an end change nothing and are not logged.
        assert.deepStrictEqual(moves.map((e) => [e.entity_id, e.before?.["position"], e.after?.["position"]]), [[c, 2, 1], [a, 0, 1]])
      }))
  })
})
