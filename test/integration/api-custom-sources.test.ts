import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { ShardReloads } from "../../services/domain/ShardReloads.ts"
import * as Simulator from "../../services/simulator/Server.ts"
import { apiServer, auditOf, type AuditRow, call, newTenant, type Tenant } from "../support/api.ts"

class Sim extends Context.Service<Sim, Simulator.Simulator>()("test/api-custom-sources/Sim") {}
const simLayer = Layer.effect(Sim, Simulator.make({ port: 0, host: "127.0.0.1", sources: 0 }))

/** Nothing listens there: detection gets no answer. */
const deadUrl = "http://127.0.0.1:1/status"

const countSources = (orgId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM sources WHERE organization_id = ${orgId}::uuid`
    return row!.n
  })

const createManual = (tenant: Tenant, body: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const r = yield* call("POST", "/custom-sources", {
      key: tenant.keys.admin,
      body: { name: "Internal VPN", type: "manual", ...body }
    })
    assert.strictEqual(r.status, 201, JSON.stringify(r.body))
    return r.body as { id: string; key: string } & Record<string, unknown>
  })

describe("custom sources API", () => {
  layer(Layer.mergeAll(apiServer(), simLayer), { timeout: 60_000, excludeTestServices: true })("with the simulator", (it) => {
    it.effect("URL mode detects the provider, polls it as a high-traffic source, and keys it by organization and name", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const page = sim.state.add({ key: "acme-status", name: "Acme", provider: "statuspage_io", components: 3 })
        const tenant = yield* newTenant("free")
        const created = yield* call("POST", "/custom-sources", {
          key: tenant.keys.member,
          body: { name: "Acme Status", status_page_url: page.baseUrl }
        })
        assert.strictEqual(created.status, 201)
        const { id, ...rest } = created.body
        assert.match(id, /^[0-9a-f-]{36}$/)
        assert.deepStrictEqual(rest, {
          name: "Acme Status",
          key: `${tenant.slug}-acme-status`,
          description: "",
          status: "operational",
          logo_url: null,
          status_page_url: page.baseUrl,
          service_url: null,
          components_count: 0,
          incidents_count: 0,
          categories: [],
          last_checked_at: null,
          check_class: "high",
          provider_type: "statuspage_io",
          reliability: { verified: false, realtime: false, historical: false, regional: false },
          regions: [],
          kind: "url",
          last_changed_at: null
        })
        const sql = yield* SqlClient
        const [row] = yield* sql<{ organization_id: string; poll_interval_s: number; poll_url: string | null; enabled: boolean }>`
          SELECT organization_id, poll_interval_s, poll_url, enabled FROM sources WHERE id = ${id}::uuid`
        assert.deepStrictEqual(row, { organization_id: tenant.id, poll_interval_s: 60, poll_url: null, enabled: true })

        const got = yield* call("GET", `/custom-sources/${created.body.key}`, { key: tenant.keys.viewer })
        assert.deepStrictEqual(got.body, created.body)
        const listed = yield* call("GET", "/custom-sources", { key: tenant.keys.viewer })
        assert.deepStrictEqual(listed.body, { data: [created.body], next_cursor: null, limit: 50 })
      }))

    it.effect("a feed found by detection is stored as the polling URL", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const feed = sim.state.add({ key: "feed-only", name: "Feed only", provider: "rss", components: 0, groups: 0 })
        const tenant = yield* newTenant("free")
        const created = yield* call("POST", "/custom-sources", { key: tenant.keys.admin, body: { name: "Feed", status_page_url: feed.baseUrl } })
        assert.strictEqual(created.status, 201, JSON.stringify(created.body))
        assert.strictEqual(created.body.provider_type, "rss")
        const sql = yield* SqlClient
        const [row] = yield* sql<{ poll_url: string | null }>`SELECT poll_url FROM sources WHERE id = ${created.body.id}::uuid`
        assert.isString(row!.poll_url)
        assert.notStrictEqual(row!.poll_url, feed.baseUrl)
        assert.isTrue(row!.poll_url!.startsWith(feed.baseUrl), row!.poll_url!)
      }))

    it.effect("a given provider type is stored without detection; an unknown one is 400; an undetectable page is 422; nothing is created", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("free")
        const key = tenant.keys.admin
        const unknown = yield* call("POST", "/custom-sources", { key, body: { name: "X", status_page_url: deadUrl, status_page_type: "statuspage" } })
        assert.strictEqual(unknown.status, 400)
        assert.strictEqual(unknown.body.field, "status_page_type")
        assert.match(unknown.body.message, /^status_page_type must be one of .*statuspage_io.*instatus/)
        const undetectable = yield* call("POST", "/custom-sources", { key, body: { name: "X", status_page_url: deadUrl } })
        assert.strictEqual(undetectable.status, 422)
        assert.deepStrictEqual(undetectable.body, {
          code: "unprocessable",
          field: "status_page_url",
          message: `the provider of ${deadUrl} could not be detected (the page did not answer: ECONNREFUSED); give status_page_type`
        })
        assert.strictEqual(yield* countSources(tenant.id), 0)
        assert.deepStrictEqual(yield* auditOf(tenant.id), [])
        // The page does not answer, so this can only have come from the request.
        const given = yield* call("POST", "/custom-sources", { key, body: { name: "Down page", status_page_url: deadUrl, status_page_type: "instatus" } })
        assert.strictEqual(given.status, 201)
        assert.deepInclude(given.body, { provider_type: "instatus", kind: "url", status_page_url: deadUrl, check_class: "high" })
      }))

    it.effect("manual mode: the status users set, last_changed_at moving only when it changes; a URL source takes no status", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("free")
        const manual = yield* createManual(tenant, { status: "degraded", description: "Our office VPN" })
        assert.deepInclude(manual, {
          key: `${tenant.slug}-internal-vpn`,
          kind: "manual",
          status: "degraded",
          description: "Our office VPN",
          provider_type: null,
          status_page_url: null
        })
        assert.isString(manual["last_changed_at"])
        const sameStatus = yield* call("PATCH", `/custom-sources/${manual.key}`, { key: tenant.keys.member, body: { status: "degraded", name: "VPN" } })
        assert.strictEqual(sameStatus.status, 200)
        assert.deepInclude(sameStatus.body, { name: "VPN", status: "degraded", last_changed_at: manual["last_changed_at"], key: manual.key })
        const down = yield* call("PATCH", `/custom-sources/${manual.key}`, { key: tenant.keys.member, body: { status: "down" } })
        assert.strictEqual(down.status, 200)
        assert.deepInclude(down.body, { name: "VPN", status: "down", description: "Our office VPN" })
        assert.isAbove(Date.parse(down.body.last_changed_at), Date.parse(manual["last_changed_at"] as string))
        const defaulted = yield* createManual(tenant, { name: "Badge readers" })
        assert.strictEqual(defaulted["status"], "operational")

        const url = yield* call("POST", "/custom-sources", {
          key: tenant.keys.admin,
          body: { name: "Vendor", status_page_url: deadUrl, status_page_type: "statuspage_io" }
        })
        const refused = yield* call("PATCH", `/custom-sources/${url.body.key}`, { key: tenant.keys.admin, body: { status: "down" } })
        assert.strictEqual(refused.status, 400)
        assert.deepStrictEqual(refused.body, {
          code: "invalid_parameter",
          field: "status",
          message: "status is set only on manual sources; this source's status is read from its status page"
        })
        assert.strictEqual((yield* call("GET", `/custom-sources/${url.body.key}`, { key: tenant.keys.admin })).body.status, "operational")
      }))

    it.effect("fields of the other mode are refused naming them; a missing URL names status_page_url", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("free")
        const cases: Array<[Record<string, unknown>, string]> = [
          [{ name: "X", type: "manual", status_page_url: deadUrl }, "status_page_url"],
          [{ name: "X", type: "manual", status_page_type: "instatus" }, "status_page_type"],
          [{ name: "X", status_page_url: deadUrl, status_page_type: "instatus", status: "down" }, "status"],
          [{ name: "X" }, "status_page_url"],
          [{ name: "X", type: "url" }, "status_page_url"]
        ]
        for (const [body, field] of cases) {
          const r = yield* call("POST", "/custom-sources", { key: tenant.keys.admin, body })
          assert.strictEqual(r.status, 400, JSON.stringify(body))
          assert.strictEqual(r.body.field, field, JSON.stringify(r.body))
        }
        assert.strictEqual(yield* countSources(tenant.id), 0)
      }))

    it.effect("the same name twice gets a suffixed key", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("free")
        const first = yield* createManual(tenant, { name: "Payments" })
        const second = yield* createManual(tenant, { name: "payments!" })
        const third = yield* createManual(tenant, { name: "PAYMENTS" })
        assert.deepStrictEqual([first.key, second.key, third.key], [
          `${tenant.slug}-payments`,
          `${tenant.slug}-payments-2`,
          `${tenant.slug}-payments-3`
        ])
      }))

    it.effect("custom sources never appear in the public sources API", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        yield* sql`INSERT INTO sources (key, name, kind, status_page_url) VALUES ('catalog-visible', 'Catalog Visible', 'catalog', 'https://status.example.com')`
        const tenant = yield* newTenant("free")
        const mine = yield* createManual(tenant, { name: "Private thing" })
        const url = yield* call("POST", "/custom-sources", {
          key: tenant.keys.admin,
          body: { name: "Private page", status_page_url: deadUrl, status_page_type: "statuspage_io" }
        })
        const all = yield* call("GET", "/sources?limit=500")
        assert.strictEqual(all.status, 200)
        assert.include(all.body.data.map((s: { key: string }) => s.key), "catalog-visible")
        assert.notInclude(JSON.stringify(all.body), "Private")
        for (const key of [mine.key, url.body.key as string]) {
          assert.strictEqual((yield* call("GET", `/sources/${key}`)).status, 404)
          assert.strictEqual((yield* call("GET", `/sources/${key}/components`)).status, 404)
          assert.deepStrictEqual((yield* call("GET", `/sources?filter=${key}`)).body.data, [])
        }
        assert.deepStrictEqual((yield* call("GET", "/sources?search=Private")).body.data, [])
        // With an organization's key too: the public API shows the catalog only.
        assert.deepStrictEqual((yield* call("GET", `/sources?filter=${mine.key}`, { key: tenant.keys.admin })).body.data, [])
      }))

    it.effect("every endpoint for each role: view for all, create/update for Admin and Member, delete for Admin only; no key is 401", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const may = { admin: { write: true, delete: true }, member: { write: true, delete: false }, viewer: { write: false, delete: false } }
        for (const role of ["admin", "member", "viewer"] as const) {
          const key = tenant.keys[role]
          const source = yield* createManual(tenant, { name: `for ${role}` })
          const before = yield* countSources(tenant.id)
          const statuses = {
            list: (yield* call("GET", "/custom-sources", { key })).status,
            get: (yield* call("GET", `/custom-sources/${source.key}`, { key })).status,
            create: (yield* call("POST", "/custom-sources", { key, body: { name: `by ${role}`, type: "manual" } })).status,
            update: (yield* call("PATCH", `/custom-sources/${source.key}`, { key, body: { status: "down" } })).status,
            delete: (yield* call("DELETE", `/custom-sources/${source.key}`, { key })).status
          }
          assert.deepStrictEqual(statuses, {
            list: 200,
            get: 200,
            create: may[role].write ? 201 : 403,
            update: may[role].write ? 200 : 403,
            delete: may[role].delete ? 204 : 403
          }, role)
          assert.strictEqual(yield* countSources(tenant.id), before + (role === "member" ? 1 : 0), role)
        }
        const denied = yield* call("POST", "/custom-sources", { key: tenant.keys.viewer, body: { name: "x", type: "manual" } })
        assert.deepStrictEqual(denied.body, {
          code: "forbidden",
          message: "the viewer role cannot create or change stacks, monitors, custom sources and maintenance windows"
        })

        const some = yield* createManual(tenant, { name: "401 target" })
        const requests: Array<[string, string, unknown?]> = [
          ["GET", "/custom-sources"],
          ["POST", "/custom-sources", { name: "x", type: "manual" }],
          ["GET", `/custom-sources/${some.key}`],
          ["PATCH", `/custom-sources/${some.key}`, { name: "x" }],
          ["DELETE", `/custom-sources/${some.key}`]
        ]
        for (const [method, path, body] of requests) {
          const none = yield* call(method, path, body === undefined ? {} : { body })
          assert.strictEqual(none.status, 401, `${method} ${path}`)
          assert.strictEqual(none.body.code, "unauthorized")
          assert.strictEqual((yield* call(method, path, { key: "sg_unknown", ...(body === undefined ? {} : { body }) })).status, 401)
        }
        assert.strictEqual((yield* call("GET", `/custom-sources/${some.key}`, { key: tenant.keys.viewer })).body.name, "401 target")
      }))

    it.effect("another organization's source is 404 everywhere, unchanged, and absent from lists", () =>
      Effect.gen(function*() {
        const a = yield* newTenant("pro")
        const b = yield* newTenant("pro")
        yield* createManual(a, { name: "A's source" })
        const theirs = yield* createManual(b, { name: "B secret source", status: "maintenance" })
        const attempts = [
          yield* call("GET", `/custom-sources/${theirs.key}`, { key: a.keys.admin }),
          yield* call("PATCH", `/custom-sources/${theirs.key}`, { key: a.keys.admin, body: { status: "down" } }),
          yield* call("DELETE", `/custom-sources/${theirs.key}`, { key: a.keys.admin })
        ]
        for (const r of attempts) {
          assert.strictEqual(r.status, 404)
          assert.deepStrictEqual(r.body, { code: "not_found", field: "key", message: `no custom source ${theirs.key} in this organization` })
        }
        // A catalog source is not the organization's either.
        const sql = yield* SqlClient
        yield* sql`INSERT INTO sources (key, name, kind, status_page_url) VALUES ('catalog-only', 'Catalog only', 'catalog', 'https://status.example.org')`
        assert.strictEqual((yield* call("PATCH", "/custom-sources/catalog-only", { key: a.keys.admin, body: { name: "mine" } })).status, 404)
        assert.strictEqual((yield* call("DELETE", "/custom-sources/catalog-only", { key: a.keys.admin })).status, 404)

        const list = yield* call("GET", "/custom-sources", { key: a.keys.admin })
        assert.deepStrictEqual(list.body.data.map((s: { name: string }) => s.name), ["A's source"])
        assert.notInclude(JSON.stringify(list.body), theirs.key)
        assert.notInclude(JSON.stringify(list.body), "B secret source")
        const still = yield* call("GET", `/custom-sources/${theirs.key}`, { key: b.keys.viewer })
        assert.deepInclude(still.body, { name: "B secret source", status: "maintenance" })
        assert.deepStrictEqual((yield* auditOf(b.id)).map((e) => e.action), ["custom_source.created"])
      }))

    it.effect("bad input answers 400 naming the field and changes nothing; metacharacters are stored verbatim", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const key = tenant.keys.admin
        const existing = yield* createManual(tenant, { name: "Original" })
        const cases: Array<[unknown, string]> = [
          [{ type: "manual" }, "name"],
          [{ name: 7, type: "manual" }, "name"],
          [{ name: "  ", type: "manual" }, "name"],
          [{ name: "x".repeat(201), type: "manual" }, "name"],
          [{ name: "a\u0000b", type: "manual" }, "name"],
          [{ name: "x", type: "manual", status: "broken" }, "status"],
          [{ name: "x", type: "automatic" }, "type"],
          [{ name: "x", type: "manual", owner: "me" }, "owner"],
          [{ name: "x", status_page_url: "not a url" }, "status_page_url"],
          [{ name: "x", status_page_url: "ftp://status.example.com/" }, "status_page_url"],
          [{ name: "x", status_page_url: "https://user:pw@status.example.com/" }, "status_page_url"],
          [{ name: "x", status_page_url: 42 }, "status_page_url"],
          [{ name: "x", status_page_url: deadUrl, status_page_type: 3 }, "status_page_type"]
        ]
        for (const [body, field] of cases) {
          const r = yield* call("POST", "/custom-sources", { key, body })
          assert.strictEqual(r.status, 400, JSON.stringify(body))
          assert.strictEqual(r.body.code, "invalid_parameter", JSON.stringify(body))
          assert.strictEqual(r.body.field, field, JSON.stringify(r.body))
        }
        const patches: Array<[unknown, string]> = [
          [{ name: "" }, "name"],
          [{ description: "d".repeat(2001) }, "description"],
          [{ description: "a\u0000" }, "description"],
          [{ status: "on fire" }, "status"],
          [{ key: "renamed" }, "key"],
          [{ status_page_url: deadUrl }, "status_page_url"]
        ]
        for (const [body, field] of patches) {
          const r = yield* call("PATCH", `/custom-sources/${existing.key}`, { key, body })
          assert.strictEqual(r.status, 400, JSON.stringify(body))
          assert.strictEqual(r.body.field, field, JSON.stringify(r.body))
        }
        assert.strictEqual((yield* call("POST", "/custom-sources", { key, rawBody: "[1," })).status, 400)
        // A path that is no source key names nothing.
        for (const path of ["/custom-sources/Not_A_Key", "/custom-sources/a%00b", `/custom-sources/${"a".repeat(200)}`]) {
          const r = yield* call("GET", path, { key })
          assert.strictEqual(r.status, 404, path)
          assert.strictEqual(r.body.code, "not_found")
          assert.strictEqual((yield* call("DELETE", path, { key })).status, 404)
        }
        assert.strictEqual(yield* countSources(tenant.id), 1)
        assert.deepInclude((yield* call("GET", `/custom-sources/${existing.key}`, { key })).body, { name: "Original", status: "operational" })
        assert.deepStrictEqual((yield* auditOf(tenant.id)).map((e) => e.action), ["custom_source.created"])

        const markup = "<img src=x onerror=alert(1)>'; DROP TABLE sources;--"
        const stored = yield* createManual(tenant, { name: markup, description: "\"quoted\" & <b>bold</b> \\ 100% _x_" })
        assert.deepInclude(stored, { name: markup, description: "\"quoted\" & <b>bold</b> \\ 100% _x_" })
        assert.strictEqual(stored.key, `${tenant.slug}-img-src-x-onerror-alert-1-drop-table-sources`)
        assert.strictEqual((yield* call("GET", `/custom-sources/${stored.key}`, { key })).body.name, markup)
        assert.strictEqual(yield* countSources(tenant.id), 2)
      }))

    it.effect("ten custom sources per organization: the eleventh is 402 naming max_custom_sources on Free and Pro; a raised limit accepts it", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        for (const plan of ["free", "pro"] as const) {
          const tenant = yield* newTenant(plan)
          for (let i = 1; i <= 10; i++) yield* createManual(tenant, { name: `Source ${i}` })
          const eleventh = yield* call("POST", "/custom-sources", { key: tenant.keys.admin, body: { name: "Eleventh", type: "manual" } })
          assert.strictEqual(eleventh.status, 402, plan)
          assert.deepStrictEqual(eleventh.body, {
            code: "plan_limit",
            field: "max_custom_sources",
            message: `the ${plan === "free" ? "Free" : "Pro"} plan allows 10 custom sources; this organization has 10`
          })
          // Refused before detection: a URL source is refused the same way, and nothing is fetched or created.
          const url = yield* call("POST", "/custom-sources", { key: tenant.keys.admin, body: { name: "Eleventh", status_page_url: deadUrl } })
          assert.strictEqual(url.status, 402)
          assert.strictEqual(yield* countSources(tenant.id), 10)
          assert.strictEqual((yield* auditOf(tenant.id)).length, 10)
        }
        // Enterprise may request more: the organization's own limit.
        const raised = yield* newTenant("enterprise")
        yield* sql`UPDATE organizations SET custom_sources_limit = 11 WHERE id = ${raised.id}::uuid`
        for (let i = 1; i <= 11; i++) yield* createManual(raised, { name: `Source ${i}` })
        assert.strictEqual(yield* countSources(raised.id), 11)
      }))

    it.effect("each change leaves one audit entry with its action, the source's id, before and after", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("free")
        const source = yield* createManual(tenant, { name: "Audited", status: "operational" })
        yield* call("PATCH", `/custom-sources/${source.key}`, { key: tenant.keys.admin, body: { status: "down", description: "outage" } })
        const deleted = yield* call("DELETE", `/custom-sources/${source.key}`, { key: tenant.keys.admin })
        assert.strictEqual(deleted.status, 204)
        assert.strictEqual(deleted.body, null)
        assert.strictEqual((yield* call("GET", `/custom-sources/${source.key}`, { key: tenant.keys.admin })).status, 404)
        assert.strictEqual(yield* countSources(tenant.id), 0)

        const entries = yield* auditOf(tenant.id)
        assert.deepStrictEqual(entries.map((e) => [e.action, e.entity_type, e.entity_id]), [
          ["custom_source.created", "custom_source", source.id],
          ["custom_source.updated", "custom_source", source.id],
          ["custom_source.deleted", "custom_source", source.id]
        ])
        const [created, updated, removed] = entries as [AuditRow, AuditRow, AuditRow]
        assert.isNull(created.before)
        // (`key` is among the field names Audit.ts redacts, as API keys are; the entity id names the source.)
        assert.deepInclude(created.after!, { id: source.id, name: "Audited", kind: "manual", status: "operational" })
        assert.deepInclude(updated.before!, { status: "operational", description: "" })
        assert.deepInclude(updated.after!, { status: "down", description: "outage" })
        assert.deepInclude(removed.before!, { id: source.id, status: "down" })
        assert.isNull(removed.after)
        const log = yield* call("GET", "/audit-log", { key: tenant.keys.admin })
        assert.deepStrictEqual(log.body.data.map((e: { action: string }) => e.action), entries.map((e) => e.action))
      }))
  })

  const reloaded: Array<string> = []
  const recordedReloads = Layer.succeed(
    ShardReloads,
    ShardReloads.of({ sources: (keys) => Effect.sync(() => void reloaded.push(...keys)), monitors: () => Effect.void })
  )
  layer(
    Layer.mergeAll(apiServer({ MONITOR_ALLOW_PRIVATE: "false" }), simLayer).pipe(Layer.provide(recordedReloads)),
    { timeout: 60_000, excludeTestServices: true }
  )("private addresses refused (MONITOR_ALLOW_PRIVATE=false), with the poller told of changes", (it) => {
    it.effect("a status page on a private address is refused with 400 naming status_page_url, given type or not", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const page = sim.state.add({ key: "inside", name: "Inside", provider: "statuspage_io", components: 1 })
        const tenant = yield* newTenant("pro")
        for (const body of [
          { name: "Inside", status_page_url: page.baseUrl },
          { name: "Inside", status_page_url: page.baseUrl, status_page_type: "statuspage_io" },
          { name: "Metadata", status_page_url: "http://169.254.169.254/latest/meta-data" }
        ]) {
          const r = yield* call("POST", "/custom-sources", { key: tenant.keys.admin, body })
          assert.strictEqual(r.status, 400, JSON.stringify(body))
          assert.strictEqual(r.body.field, "status_page_url")
          assert.match(r.body.message, /^status_page_url (127\.0\.0\.1|169\.254\.169\.254) is a .* address; custom sources may only read public addresses$/)
        }
        assert.strictEqual(yield* countSources(tenant.id), 0)
        // Detection never ran: the simulator saw no request for the page.
        assert.strictEqual(sim.stats.requests, 0)
      }))

    it.effect("creating, updating and deleting a source tells its shard", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("free")
        reloaded.length = 0
        const source = yield* createManual(tenant, { name: "Reloaded" })
        yield* call("PATCH", `/custom-sources/${source.key}`, { key: tenant.keys.admin, body: { status: "down" } })
        yield* call("DELETE", `/custom-sources/${source.key}`, { key: tenant.keys.admin })
        assert.deepStrictEqual(reloaded, [source.key, source.key, source.key])
      }))
  })
})
