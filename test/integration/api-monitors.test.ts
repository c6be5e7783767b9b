import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { ShardReloads } from "../../services/domain/ShardReloads.ts"
import { apiServer, auditOf, type AuditRow, call, newTenant, type Tenant } from "../support/api.ts"

/** What the API told the poller: ShardReloads as a runner with the poller provides it, recording the calls. */
const reloaded: Array<string> = []
const recordedReloads = Layer.succeed(
  ShardReloads,
  ShardReloads.of({
    sources: () => Effect.void,
    monitors: (ids) => Effect.sync(() => void reloaded.push(...ids))
  })
)

/** A loopback URL: the test server allows private targets (MONITOR_ALLOW_PRIVATE=true); nothing is checked. */
const target = "http://127.0.0.1:9/health"

const countMonitors = (orgId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM monitors WHERE organization_id = ${orgId}::uuid`
    return row!.n
  })

const createMonitor = (tenant: Tenant, body: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const r = yield* call("POST", "/monitors", { key: tenant.keys.admin, body: { name: "API health", url: target, ...body } })
    assert.strictEqual(r.status, 201, JSON.stringify(r.body))
    return r.body as { id: string } & Record<string, unknown>
  })

describe("monitors API", () => {
  layer(apiServer().pipe(Layer.provide(recordedReloads)), { timeout: 60_000, excludeTestServices: true })("private targets allowed", (it) => {
    it.effect("create answers 201 with every setting defaulted, the state, and no warnings; get and list show the same record", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const created = yield* call("POST", "/monitors", { key: tenant.keys.member, body: { name: "API health", url: target } })
        assert.strictEqual(created.status, 201)
        const { id, created_at, updated_at, ...rest } = created.body
        assert.match(id, /^[0-9a-f-]{36}$/)
        assert.match(created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
        assert.strictEqual(updated_at, created_at)
        assert.deepStrictEqual(rest, {
          organization_id: tenant.id,
          name: "API health",
          url: target,
          check_type: "http",
          interval: 60,
          alert_threshold: 3,
          timeout: 10_000,
          expected_status: "200-299",
          method: "GET",
          headers: {},
          auth: { type: "none" },
          body: null,
          keyword: null,
          keyword_mode: "contains",
          degraded_after_ms: null,
          ssl_expiry_days: [30, 14, 7, 1],
          follow_redirects: true,
          tls_verify: true,
          paused: false,
          state: "pending",
          consecutive_failures: 0,
          last_checked_at: null,
          last_changed_at: null,
          last_error: null,
          last_response_ms: null,
          last_http_status: null,
          tls_valid_to: null,
          tls_issuer: null,
          warnings: []
        })
        const { warnings: _warnings, ...record } = created.body
        const got = yield* call("GET", `/monitors/${id}`, { key: tenant.keys.viewer })
        assert.strictEqual(got.status, 200)
        assert.deepStrictEqual(got.body, record)
        const listed = yield* call("GET", "/monitors", { key: tenant.keys.viewer })
        assert.deepStrictEqual(listed.body, { data: [record], next_cursor: null, limit: 50 })
      }))

    it.effect("settings outside the recommendations are saved with warnings naming them; check_interval is the interval", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const r = yield* call("POST", "/monitors", {
          key: tenant.keys.admin,
          body: { name: "Eager", url: target, check_interval: 15, alert_threshold: 1, timeout: 5000 }
        })
        assert.strictEqual(r.status, 201)
        assert.strictEqual(r.body.interval, 15)
        assert.deepStrictEqual(r.body.warnings, [
          {
            field: "check_interval",
            message: "checks under 30 s load the endpoint and rarely detect outages sooner; 60-300 s is recommended"
          },
          { field: "alert_threshold", message: "a single failure alerts: expect false alarms; 3-5 is recommended" }
        ])
      }))

    it.effect("the last check's figures are part of the record", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const { id } = yield* createMonitor(tenant, { url: "https://127.0.0.1:9/" })
        const sql = yield* SqlClient
        // What a shard leaves after a check (MonitorStore.saveChecks).
        yield* sql`UPDATE monitors SET state = 'down', consecutive_failures = 3, last_checked_at = '2026-03-01T10:00:00Z',
          last_changed_at = '2026-03-01T09:58:00Z', last_error = 'HTTP 503', last_response_ms = 84, last_http_status = 503,
          tls_valid_to = '2026-06-01T00:00:00Z', tls_issuer = 'CN=Test CA' WHERE id = ${id}::uuid`
        const got = yield* call("GET", `/monitors/${id}`, { key: tenant.keys.viewer })
        assert.strictEqual(got.status, 200)
        assert.deepInclude(got.body, {
          state: "down",
          consecutive_failures: 3,
          last_checked_at: "2026-03-01T10:00:00.000Z",
          last_changed_at: "2026-03-01T09:58:00.000Z",
          last_error: "HTTP 503",
          last_response_ms: 84,
          last_http_status: 503,
          tls_valid_to: "2026-06-01T00:00:00.000Z",
          tls_issuer: "CN=Test CA",
          check_type: "https"
        })
      }))

    it.effect("credentials are stored encrypted and never returned, only their kind; the audit log holds none", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const token = "s3cr3t-token-value"
        const created = yield* createMonitor(tenant, { auth: { type: "bearer", token } })
        assert.deepStrictEqual(created["auth"], { type: "bearer" })
        const sql = yield* SqlClient
        const [row] = yield* sql<{ auth_type: string; auth_secret: Uint8Array }>`
          SELECT auth_type, auth_secret FROM monitors WHERE id = ${created.id}::uuid`
        assert.strictEqual(row!.auth_type, "bearer")
        assert.notInclude(Buffer.from(row!.auth_secret).toString("latin1"), token)
        const everything = [
          yield* call("GET", `/monitors/${created.id}`, { key: tenant.keys.admin }),
          yield* call("GET", "/monitors", { key: tenant.keys.admin }),
          yield* call("PATCH", `/monitors/${created.id}`, { key: tenant.keys.admin, body: { name: "Renamed" } }),
          yield* call("GET", "/audit-log", { key: tenant.keys.admin })
        ]
        for (const r of everything) {
          assert.strictEqual(r.status, 200)
          assert.notInclude(JSON.stringify(r.body), token)
        }
        assert.notInclude(JSON.stringify(yield* auditOf(tenant.id)), token)
      }))

    it.effect("PATCH changes only what it names and validates the merged settings; auth replaces or (null) removes the credentials", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const created = yield* createMonitor(tenant, {
          interval: 120,
          timeout: 5000,
          keyword: "ok",
          auth: { type: "basic", username: "probe", password: "pw" },
          headers: { "X-Probe": "1" }
        })
        const sql = yield* SqlClient
        const secretOf = Effect.map(
          sql<{ auth_type: string; auth_secret: Uint8Array | null }>`SELECT auth_type, auth_secret FROM monitors WHERE id = ${created.id}::uuid`,
          (rows) => ({ type: rows[0]!.auth_type, secret: rows[0]!.auth_secret === null ? null : Buffer.from(rows[0]!.auth_secret).toString("hex") })
        )
        const stored = yield* secretOf
        const patch = (body: unknown, key = tenant.keys.member) => call("PATCH", `/monitors/${created.id}`, { key, body })

        const renamed = yield* patch({ name: "Checkout API", expected_status: "200,204" })
        assert.strictEqual(renamed.status, 200)
        assert.deepInclude(renamed.body, {
          name: "Checkout API",
          expected_status: "200,204",
          interval: 120,
          timeout: 5000,
          keyword: "ok",
          headers: { "X-Probe": "1" },
          auth: { type: "basic" },
          warnings: []
        })
        assert.notStrictEqual(renamed.body.updated_at, created["updated_at"])
        // Credentials not named in the patch are kept as they were.
        assert.deepStrictEqual(yield* secretOf, stored)

        // Out of range, and then over the stored interval (120 s): the merged settings are validated.
        const tooSlow = yield* patch({ timeout: 130_000 })
        assert.strictEqual(tooSlow.status, 400)
        assert.deepStrictEqual(tooSlow.body, {
          code: "invalid_parameter",
          field: "timeout",
          message: "invalid monitor: timeout must be from 100 to 120000 milliseconds"
        })
        const overInterval = yield* patch({ interval: 60, timeout: 61_000 })
        assert.strictEqual(overInterval.status, 400)
        assert.strictEqual(overInterval.body.field, "timeout")
        assert.strictEqual(
          overInterval.body.message,
          "invalid monitor: timeout must not exceed the interval (61000 ms > 60 s); a check would still run when the next starts"
        )
        // ...which a patch raising both accepts; the alias spelling replaces the stored interval.
        const both = yield* patch({ check_interval: 300, timeout: 120_000 })
        assert.strictEqual(both.status, 200)
        assert.deepInclude(both.body, { interval: 300, timeout: 120_000 })
        // Stored credentials conflict with an Authorization header, every problem in the message.
        const conflict = yield* patch({ headers: { Authorization: "Bearer x" }, method: "HEAD" })
        assert.strictEqual(conflict.status, 400)
        assert.strictEqual(conflict.body.field, "keyword")
        assert.strictEqual(
          conflict.body.message,
          "invalid monitor: keyword cannot be checked with method HEAD (the response has no body); headers.Authorization conflicts with auth; give one of them"
        )
        // A new URL takes its own scheme as check type.
        const https = yield* patch({ url: "https://127.0.0.1:9/status" })
        assert.strictEqual(https.status, 200)
        assert.deepInclude(https.body, { url: "https://127.0.0.1:9/status", check_type: "https" })

        const replaced = yield* patch({ auth: { type: "bearer", token: "new-token" } })
        assert.strictEqual(replaced.status, 200)
        assert.deepStrictEqual(replaced.body.auth, { type: "bearer" })
        const afterReplace = yield* secretOf
        assert.strictEqual(afterReplace.type, "bearer")
        assert.notStrictEqual(afterReplace.secret, stored.secret)

        const removed = yield* patch({ auth: null, keyword: null, headers: { Authorization: "Bearer inline" } })
        assert.strictEqual(removed.status, 200)
        assert.deepInclude(removed.body, { auth: { type: "none" }, keyword: null, headers: { Authorization: "Bearer inline" } })
        assert.deepStrictEqual(yield* secretOf, { type: "none", secret: null })
      }))

    it.effect("pause and resume: paused, then pending with the failure count reset; pausing twice changes nothing the second time", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const { id } = yield* createMonitor(tenant)
        const sql = yield* SqlClient
        yield* sql`UPDATE monitors SET state = 'down', consecutive_failures = 4 WHERE id = ${id}::uuid`
        const paused = yield* call("POST", `/monitors/${id}/pause`, { key: tenant.keys.member })
        assert.strictEqual(paused.status, 200)
        assert.deepInclude(paused.body, { state: "paused", paused: true, consecutive_failures: 0 })
        assert.isString(paused.body.last_changed_at)
        const again = yield* call("POST", `/monitors/${id}/pause`, { key: tenant.keys.member })
        assert.strictEqual(again.status, 200)
        assert.deepStrictEqual(again.body, paused.body)
        const resumed = yield* call("POST", `/monitors/${id}/resume`, { key: tenant.keys.member })
        assert.strictEqual(resumed.status, 200)
        assert.deepInclude(resumed.body, { state: "pending", paused: false, consecutive_failures: 0 })
        const actions = (yield* auditOf(tenant.id)).map((e) => e.action)
        assert.deepStrictEqual(actions, ["monitor.created", "monitor.paused", "monitor.resumed"])
      }))

    it.effect("check now runs one check with the stored credentials and answers its phases; the state and the check log are untouched", () =>
      Effect.gen(function*() {
        const seen: Array<string> = []
        const server = yield* Effect.acquireRelease(
          Effect.promise(() =>
            new Promise<Http.Server>((resolve) => {
              const s = Http.createServer((req, res) => {
                seen.push(req.headers.authorization ?? "")
                res.writeHead(req.headers.authorization === "Bearer tok-123" ? 200 : 401)
                res.end("ok")
              })
              s.listen(0, "127.0.0.1", () => resolve(s))
            })
          ),
          (s) => Effect.promise(() => new Promise<void>((resolve) => s.close(() => resolve())))
        )
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/health`
        const tenant = yield* newTenant("pro")
        const { id } = yield* createMonitor(tenant, { url, auth: { type: "bearer", token: "tok-123" } })
        const r = yield* call("POST", `/monitors/${id}/check`, { key: tenant.keys.member })
        assert.strictEqual(r.status, 200, JSON.stringify(r.body))
        assert.strictEqual(r.body.status, "up")
        assert.strictEqual(r.body.http_status, 200)
        assert.strictEqual(r.body.tls, null)
        assert.deepStrictEqual(Object.keys(r.body.phases).toSorted(), ["connect_ms", "dns_ms", "first_byte_ms", "tls_ms", "total_ms"])
        assert.isAbove(r.body.phases.total_ms, 0)
        assert.deepStrictEqual(seen, ["Bearer tok-123"])
        const after = yield* call("GET", `/monitors/${id}`, { key: tenant.keys.viewer })
        assert.strictEqual(after.body.state, "pending")
        assert.strictEqual(after.body.last_checked_at, null)
        // The check log (ClickHouse, tested in api-history.test.ts) is refused a bad limit before it is read.
        const bad = yield* call("GET", `/monitors/${id}/checks?limit=abc`, { key: tenant.keys.viewer })
        assert.strictEqual(bad.status, 400)
      }).pipe(Effect.scoped))

    it.effect("every endpoint for each role: view for all, create/update/pause/resume for Admin and Member, delete for Admin only", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const may = { admin: { write: true, delete: true }, member: { write: true, delete: false }, viewer: { write: false, delete: false } }
        for (const role of ["admin", "member", "viewer"] as const) {
          const key = tenant.keys[role]
          const { id } = yield* createMonitor(tenant, { name: `for ${role}` })
          const before = yield* countMonitors(tenant.id)
          const statuses = {
            list: (yield* call("GET", "/monitors", { key })).status,
            get: (yield* call("GET", `/monitors/${id}`, { key })).status,
            create: (yield* call("POST", "/monitors", { key, body: { name: `by ${role}`, url: target } })).status,
            update: (yield* call("PATCH", `/monitors/${id}`, { key, body: { name: `renamed by ${role}` } })).status,
            pause: (yield* call("POST", `/monitors/${id}/pause`, { key })).status,
            resume: (yield* call("POST", `/monitors/${id}/resume`, { key })).status,
            check: (yield* call("POST", `/monitors/${id}/check`, { key })).status,
            delete: (yield* call("DELETE", `/monitors/${id}`, { key })).status
          }
          const write = may[role].write
          assert.deepStrictEqual(statuses, {
            list: 200,
            get: 200,
            create: write ? 201 : 403,
            update: write ? 200 : 403,
            pause: write ? 200 : 403,
            resume: write ? 200 : 403,
            check: write ? 200 : 403,
            delete: may[role].delete ? 204 : 403
          }, role)
          // Admin: one created, one deleted; Member: one created; Viewer: nothing.
          assert.strictEqual(yield* countMonitors(tenant.id), before + (role === "member" ? 1 : 0), role)
        }
        const viewerCreate = yield* call("POST", "/monitors", { key: tenant.keys.viewer, body: { name: "x", url: target } })
        assert.deepStrictEqual(viewerCreate.body, {
          code: "forbidden",
          message: "the viewer role cannot create or change stacks, monitors, custom sources and maintenance windows"
        })
        const { id } = yield* createMonitor(tenant)
        const memberDelete = yield* call("DELETE", `/monitors/${id}`, { key: tenant.keys.member })
        assert.deepStrictEqual(memberDelete.body, { code: "forbidden", message: "the member role cannot delete stacks, monitors and custom sources" })
      }))

    it.effect("no key: 401 on every endpoint", () =>
      Effect.gen(function*() {
        const id = "00000000-0000-4000-8000-000000000000"
        const requests: Array<[string, string, unknown?]> = [
          ["GET", "/monitors"],
          ["POST", "/monitors", { name: "x", url: target }],
          ["GET", `/monitors/${id}`],
          ["PATCH", `/monitors/${id}`, { name: "x" }],
          ["POST", `/monitors/${id}/pause`],
          ["POST", `/monitors/${id}/resume`],
          ["POST", `/monitors/${id}/check`],
          ["GET", `/monitors/${id}/checks`],
          ["DELETE", `/monitors/${id}`]
        ]
        for (const [method, path, body] of requests) {
          const r = yield* call(method, path, body === undefined ? {} : { body })
          assert.strictEqual(r.status, 401, `${method} ${path}`)
          assert.strictEqual(r.body.code, "unauthorized")
          const bad = yield* call(method, path, { key: "sg_unknown", ...(body === undefined ? {} : { body }) })
          assert.strictEqual(bad.status, 401, `${method} ${path}`)
        }
      }))

    it.effect("another organization's monitor is 404 everywhere, unchanged, and absent from lists", () =>
      Effect.gen(function*() {
        const a = yield* newTenant("pro")
        const b = yield* newTenant("pro")
        yield* createMonitor(a, { name: "A's monitor" })
        const theirs = yield* createMonitor(b, { name: "B secret monitor" })
        const id = theirs.id
        const attempts = [
          yield* call("GET", `/monitors/${id}`, { key: a.keys.admin }),
          yield* call("PATCH", `/monitors/${id}`, { key: a.keys.admin, body: { name: "hijacked" } }),
          yield* call("POST", `/monitors/${id}/pause`, { key: a.keys.admin }),
          yield* call("POST", `/monitors/${id}/resume`, { key: a.keys.admin }),
          yield* call("DELETE", `/monitors/${id}`, { key: a.keys.admin })
        ]
        for (const r of attempts) {
          assert.strictEqual(r.status, 404)
          assert.deepStrictEqual(r.body, { code: "not_found", field: "id", message: `no monitor ${id} in this organization` })
        }
        const list = yield* call("GET", "/monitors", { key: a.keys.admin })
        assert.deepStrictEqual(list.body.data.map((m: { name: string }) => m.name), ["A's monitor"])
        assert.notInclude(JSON.stringify(list.body), id)
        assert.notInclude(JSON.stringify(list.body), "B secret monitor")
        const still = yield* call("GET", `/monitors/${id}`, { key: b.keys.viewer })
        assert.deepInclude(still.body, { name: "B secret monitor", state: "pending" })
        // Nothing of A's attempts reached B's audit log.
        assert.deepStrictEqual((yield* auditOf(b.id)).map((e) => e.action), ["monitor.created"])
      }))

    it.effect("bad input answers 400 naming the field and creates or changes nothing; metacharacters are stored verbatim", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const key = tenant.keys.admin
        const existing = yield* createMonitor(tenant, { name: "Original" })
        const cases: Array<[unknown, string]> = [
          [{ url: target }, "name"],
          [{ name: "x" }, "url"],
          [{ name: 42, url: target }, "name"],
          [{ name: "x", url: target, interval: "60" }, "interval"],
          [{ name: "x", url: target, interval: 5 }, "interval"],
          [{ name: "x", url: target, alert_threshold: 2.5 }, "alert_threshold"],
          [{ name: "x", url: target, method: "TRACE" }, "method"],
          [{ name: "x", url: target, headers: { "Bad Header": "1" } }, "headers.Bad Header"],
          [{ name: "x", url: target, auth: { type: "basic", username: "a:b", password: "p" } }, "auth.username"],
          [{ name: "x", url: target, frequency: 60 }, "frequency"],
          [{ name: "x", url: "not a url" }, "url"],
          [{ name: "x", url: "ftp://127.0.0.1/file" }, "url"],
          [{ name: "x", url: "http://user:pass@127.0.0.1/" }, "url"],
          [{ name: "x", url: target, check_type: "https" }, "check_type"],
          [{ name: "x", url: target, expected_status: "700" }, "expected_status"],
          [{ name: "x", url: target, interval: 60, check_interval: 120 }, "check_interval"],
          [{ name: "   ", url: target }, "name"],
          [{ name: "a\u0000b", url: target }, "name"],
          [{ name: "x", url: target, keyword: "\u0000" }, "keyword"],
          [{ name: "x", url: target, method: "POST", body: "a\u0000" }, "body"]
        ]
        for (const [body, field] of cases) {
          const r = yield* call("POST", "/monitors", { key, body })
          assert.strictEqual(r.status, 400, JSON.stringify(body))
          assert.strictEqual(r.body.code, "invalid_parameter", JSON.stringify(body))
          assert.strictEqual(r.body.field, field, JSON.stringify(r.body))
        }
        const patches: Array<[unknown, string]> = [
          [{ interval: "often" }, "interval"],
          [{ url: "javascript:alert(1)" }, "url"],
          [{ paused: true }, "paused"],
          [{ id: existing.id }, "id"],
          [{ name: "" }, "name"],
          [{ auth: { type: "bearer", token: "has space" } }, "auth.token"],
          [{ name: "nul\u0000" }, "name"]
        ]
        for (const [body, field] of patches) {
          const r = yield* call("PATCH", `/monitors/${existing.id}`, { key, body })
          assert.strictEqual(r.status, 400, JSON.stringify(body))
          assert.strictEqual(r.body.field, field, JSON.stringify(r.body))
        }
        assert.strictEqual((yield* call("POST", "/monitors", { key, rawBody: "{\"name\": " })).status, 400)
        const badId = yield* call("GET", "/monitors/1;DROP TABLE monitors", { key })
        assert.strictEqual(badId.status, 400)
        assert.strictEqual(badId.body.field, "id")
        assert.strictEqual((yield* call("PATCH", "/monitors/not-a-uuid", { key, body: { name: "x" } })).body.field, "id")

        assert.strictEqual(yield* countMonitors(tenant.id), 1)
        const unchanged = yield* call("GET", `/monitors/${existing.id}`, { key })
        assert.strictEqual(unchanged.body.name, "Original")
        assert.strictEqual(unchanged.body.updated_at, existing["updated_at"])
        assert.deepStrictEqual((yield* auditOf(tenant.id)).map((e) => e.action), ["monitor.created"])

        const markup = "<script>alert(1)</script>'; DROP TABLE monitors;--"
        const stored = yield* createMonitor(tenant, { name: markup, keyword: "<b>\"ok\" & 'fine'</b>", headers: { "X-Q": "a'b\"c<d>" } })
        assert.deepInclude(stored, { name: markup, keyword: "<b>\"ok\" & 'fine'</b>", headers: { "X-Q": "a'b\"c<d>" } })
        const got = yield* call("GET", `/monitors/${stored.id}`, { key })
        assert.strictEqual(got.body.name, markup)
        assert.strictEqual(yield* countMonitors(tenant.id), 2)
      }))

    it.effect("Free allows one monitor: the second is 402 naming max_monitors with nothing created; Pro accepts it", () =>
      Effect.gen(function*() {
        const free = yield* newTenant("free")
        yield* createMonitor(free, { name: "The one" })
        const refused = yield* call("POST", "/monitors", { key: free.keys.admin, body: { name: "Second", url: target } })
        assert.strictEqual(refused.status, 402)
        assert.deepStrictEqual(refused.body, {
          code: "plan_limit",
          field: "max_monitors",
          message: "the Free plan allows 1 website monitors; this organization has 1"
        })
        assert.strictEqual(yield* countMonitors(free.id), 1)
        assert.deepStrictEqual((yield* auditOf(free.id)).map((e) => e.action), ["monitor.created"])

        const pro = yield* newTenant("pro")
        yield* createMonitor(pro, { name: "The one" })
        const second = yield* call("POST", "/monitors", { key: pro.keys.admin, body: { name: "Second", url: target } })
        assert.strictEqual(second.status, 201)
        assert.strictEqual(yield* countMonitors(pro.id), 2)
      }))

    it.effect("each change leaves one audit entry with its action, the monitor's id, before and after; each tells the poller", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        reloaded.length = 0
        const { id } = yield* createMonitor(tenant, { name: "Audited" })
        yield* call("PATCH", `/monitors/${id}`, { key: tenant.keys.admin, body: { name: "Audited again", interval: 300 } })
        yield* call("POST", `/monitors/${id}/pause`, { key: tenant.keys.admin })
        yield* call("POST", `/monitors/${id}/resume`, { key: tenant.keys.admin })
        const deleted = yield* call("DELETE", `/monitors/${id}`, { key: tenant.keys.admin })
        assert.strictEqual(deleted.status, 204)
        assert.strictEqual(deleted.body, null)
        assert.strictEqual((yield* call("GET", `/monitors/${id}`, { key: tenant.keys.admin })).status, 404)

        const entries = yield* auditOf(tenant.id)
        assert.deepStrictEqual(entries.map((e) => [e.action, e.entity_type, e.entity_id]), [
          ["monitor.created", "monitor", id],
          ["monitor.updated", "monitor", id],
          ["monitor.paused", "monitor", id],
          ["monitor.resumed", "monitor", id],
          ["monitor.deleted", "monitor", id]
        ])
        const [created, updated, paused, resumed, removed] = entries as [AuditRow, AuditRow, AuditRow, AuditRow, AuditRow]
        assert.isNull(created.before)
        assert.deepInclude(created.after!, { name: "Audited", interval: 60, state: "pending" })
        assert.deepInclude(updated.before!, { name: "Audited", interval: 60 })
        assert.deepInclude(updated.after!, { name: "Audited again", interval: 300 })
        assert.deepInclude(paused.before!, { state: "pending", paused: false })
        assert.deepInclude(paused.after!, { state: "paused", paused: true })
        assert.deepInclude(resumed.after!, { state: "pending", paused: false })
        assert.deepInclude(removed.before!, { name: "Audited again" })
        assert.isNull(removed.after)
        // Through the API as well, for Admins.
        const log = yield* call("GET", "/audit-log", { key: tenant.keys.admin })
        assert.deepStrictEqual(log.body.data.map((e: { action: string }) => e.action), entries.map((e) => e.action))

        assert.deepStrictEqual(reloaded, [id, id, id, id, id])
      }))
  })

  layer(apiServer({ MONITOR_ALLOW_PRIVATE: "false" }), { timeout: 60_000, excludeTestServices: true })("private targets refused (MONITOR_ALLOW_PRIVATE=false)", (it) => {
    it.effect("a private URL is refused with 400 naming url, on create and when a patch moves a monitor there", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        for (const url of ["http://127.0.0.1:8080/", "http://10.1.2.3/", "http://169.254.169.254/latest/meta-data", "http://[::1]/"]) {
          const r = yield* call("POST", "/monitors", { key: tenant.keys.admin, body: { name: "Internal", url } })
          assert.strictEqual(r.status, 400, url)
          assert.strictEqual(r.body.field, "url", url)
          assert.match(r.body.message, /^invalid monitor: url .* address; monitors may only check public addresses$/, url)
        }
        assert.strictEqual(yield* countMonitors(tenant.id), 0)
        // A public address literal needs no DNS and is accepted (nothing is contacted at creation).
        const { id } = yield* createMonitor(tenant, { url: "http://1.1.1.1/health" })
        const moved = yield* call("PATCH", `/monitors/${id}`, { key: tenant.keys.admin, body: { url: "http://192.168.1.1/admin" } })
        assert.strictEqual(moved.status, 400)
        assert.deepStrictEqual(moved.body, {
          code: "invalid_parameter",
          field: "url",
          message: "invalid monitor: url 192.168.1.1 is a private address; monitors may only check public addresses"
        })
        const kept = yield* call("GET", `/monitors/${id}`, { key: tenant.keys.admin })
        assert.strictEqual(kept.body.url, "http://1.1.1.1/health")
        // Without the poller in this process (no ShardReloads), changes still succeed.
        assert.strictEqual((yield* call("PATCH", `/monitors/${id}`, { key: tenant.keys.admin, body: { name: "Public" } })).status, 200)
      }))
  })
})
