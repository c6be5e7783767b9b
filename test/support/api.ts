import { assert } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { SqlClient } from "effect/sql/SqlClient"
import { directServerLayer } from "../../services/api/DirectRequests.ts"
import { ApiRoutes, routerConfig } from "../../services/api/ApiHttp.ts"
import { RequestMetricsLive } from "../../services/api/RequestMetrics.ts"
import { SecurityHeadersLive } from "../../services/api/SecurityHeaders.ts"
import type { PlanId, Role } from "../../services/domain/Organization.ts"
import { ApiKeys } from "../../services/orgs/ApiKeys.ts"
import { Organizations } from "../../services/orgs/Organizations.ts"
import type { Bus } from "../../services/platform/Bus.ts"
import * as MemoryBus from "../../services/platform/Bus/Memory.ts"
import { ClickHouse } from "../../services/platform/ClickHouse.ts"
import { LiveHub } from "../../services/platform/LiveHub.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { Publisher } from "../../services/platform/Publisher.ts"
import { SecretBox } from "../../services/platform/SecretBox.ts"
import { TracingLive } from "../../services/platform/Tracing.ts"
import { freshDatabase, tempDir, withConfig } from "./stores.ts"

/** Where the API under test listens. */
export class ApiBase extends Context.Service<ApiBase, string>()("test/support/ApiBase") {}

/** `ApiBase` from the test's HTTP server (listening on 127.0.0.1). */
export const apiBaseLayer = Layer.effect(ApiBase, Effect.gen(function*() {
  const { address } = yield* HttpServer.HttpServer
  return address._tag === "UnixPathAddress" ? "" : `http://127.0.0.1:${address.port}`
}))

/**
 * The process's Publisher (manual custom sources publish through it), with a hand-over directory of
 * its own: the directory is locked to one instance, and test files run side by side.
 */
export const apiPublisher = Layer.unwrap(
  Effect.map(tempDir("handover"), (dir) => Publisher.layer.pipe(Layer.provide(withConfig({ PUBLISH_SPILL_DIR: dir }))))
)

/**
 * ClickHouse for the history endpoints: chDB in a directory of the test's own, not migrated (a test that
 * reads history runs `Migrations.migrateClickHouse()`; opening chDB costs little, its migrations more).
 */
export const apiClickHouse = Layer.unwrap(Effect.map(tempDir("api-chdb"), (dir) => ClickHouse.layerEmbedded(dir, "statusgrid")))

/**
 * The whole `/api/v1` on 127.0.0.1 over a fresh, migrated PostgreSQL
 * database and the in-process bus, with the organization services for
 * setting up tenants. `config` overrides configuration (e.g. rate limits).
 * Served as the process serves it (services/api/Http.ts): its security
 * headers and request metrics, tracing only when OTLP is configured, and
 * crowd reports answered before the router (decision 0032).
 */
export const apiServer = (config: Record<string, string> = {}, bus: Layer.Layer<Bus, unknown> = MemoryBus.layer) => {
  const base = apiBaseLayer
  const migrated = Layer.effectDiscard(Migrations.migratePostgres())
  return Layer.mergeAll(
    HttpRouter.serve(Layer.mergeAll(ApiRoutes, RequestMetricsLive, SecurityHeadersLive), { disableListenLog: true, disableLogger: true, routerConfig }),
    base,
    Organizations.layer,
    ApiKeys.layer.pipe(Layer.provide(SecretBox.layer))
  ).pipe(
    Layer.provideMerge(directServerLayer({ port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(migrated),
    Layer.provideMerge(Layer.unwrap(Effect.map(freshDatabase, (url) => Postgres.layerServer(url, { maxConnections: 8 })))),
    // The process's one LiveHub, built before the server so that the routes use this instance.
    Layer.provideMerge(LiveHub.layer),
    Layer.provideMerge(apiPublisher.pipe(Layer.provideMerge(bus))),
    Layer.provideMerge(apiClickHouse),
    // Traced as a serving process is (services/cli/serve.ts): spans only when OTLP is configured.
    Layer.provide(TracingLive),
    Layer.provide(withConfig({ DATA_DIR: "/tmp/statusgrid-api-test", MONITOR_ALLOW_PRIVATE: "true", ...config }))
  )
}

// Response bodies are read field by field in the tests, which assert each value they use.
// oxlint-disable-next-line typescript/no-explicit-any
export interface Reply<A = any> {
  readonly status: number
  readonly body: A
  readonly headers: Headers
}

export interface CallOptions {
  readonly key?: string | undefined
  readonly body?: unknown
  /** Sent as is (a malformed or oversized body). */
  readonly rawBody?: string
  readonly headers?: Record<string, string>
}

/** One request to the API under test; the body parsed as JSON when it is JSON. */
export const call = (method: string, path: string, options: CallOptions = {}) =>
  Effect.gen(function*() {
    const base = yield* ApiBase
    return yield* Effect.promise(async (): Promise<Reply> => {
      const headers: Record<string, string> = { ...options.headers }
      if (options.key !== undefined) headers["authorization"] = `Bearer ${options.key}`
      const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body))
      if (body !== undefined) headers["content-type"] ??= "application/json"
      const response = await fetch(`${base}/api/v1${path}`, { method, headers, ...(body === undefined ? {} : { body }) })
      const text = await response.text()
      let parsed: unknown = text
      try {
        parsed = text === "" ? null : JSON.parse(text)
      } catch {
        // not JSON: keep the text
      }
      return { status: response.status, body: parsed, headers: response.headers }
    })
  })

/** Each request, without a key and with an unknown one, is answered 401 `unauthorized`. */
export const assertUnauthorized = (requests: ReadonlyArray<readonly [method: string, path: string, body?: unknown]>) =>
  Effect.gen(function*() {
    for (const [method, path, body] of requests) {
      for (const key of [undefined, "sg_unknown"]) {
        const r = yield* call(method, path, { key, body })
        assert.strictEqual(r.status, 401, `${method} ${path} ${key}`)
        assert.strictEqual(r.body.code, "unauthorized")
      }
    }
  })

/** The spec's role table for an organization's records: every role views; Admins and Members write; only Admins delete. */
export const roleMay = (role: Role, permission: "view" | "write" | "delete") =>
  permission === "view" || (permission === "write" ? role !== "viewer" : role === "admin")

/** Checks answers to `role`: `ok` where the role table allows the permission, 403 `forbidden` otherwise. */
export const expectForRole = (role: Role) =>
  (r: { status: number; body: { code?: string } }, ok: number, permission: "view" | "write" | "delete", what: string) => {
    if (roleMay(role, permission)) {
      assert.strictEqual(r.status, ok, `${role} ${what}: ${JSON.stringify(r.body)}`)
    } else {
      assert.strictEqual(r.status, 403, `${role} ${what}`)
      assert.strictEqual(r.body.code, "forbidden")
    }
  }

export interface Tenant {
  readonly id: string
  readonly slug: string
  /** One API key per role. */
  readonly keys: Readonly<Record<Role, string>>
}

/** A new organization on `plan` with an API key for each role. */
export const newTenant = (plan: PlanId = "free") =>
  Effect.gen(function*() {
    const slug = `t-${Math.random().toString(36).slice(2, 10)}`
    const { id } = yield* Organizations.use((o) => o.create({ name: `Tenant ${slug}`, slug, plan }))
    const keys = yield* ApiKeys
    const admin = yield* keys.issue(id, "admin key", "admin")
    const member = yield* keys.issue(id, "member key", "member")
    const viewer = yield* keys.issue(id, "viewer key", "viewer")
    return { id, slug, keys: { admin, member, viewer } } satisfies Tenant
  })

/** The installation's operator moves the organization `slug` to `plan` (what `statusgrid org plan` does). */
export const operatorSetsPlan = (slug: string, plan: PlanId) =>
  Organizations.use((o) => o.setPlanAsOperator(slug, plan, "test-operator@localhost"))

export interface AuditRow {
  readonly action: string
  readonly entity_type: string
  readonly entity_id: string
  readonly before: Record<string, unknown> | null
  readonly after: Record<string, unknown> | null
}

/** An organization's audit log as stored, oldest first; only one entity type when given. */
export const auditOf = (orgId: string, entityType?: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    return yield* sql<AuditRow>`
      SELECT action, entity_type, entity_id, before, after FROM audit_log
      WHERE organization_id = ${orgId}::uuid AND (${entityType ?? null}::text IS NULL OR entity_type = ${entityType ?? null})
      ORDER BY created_at, id`
  })
