import * as Fs from "node:fs"
import * as SqlFiles from "../../services/platform/SqlFiles.ts"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Role } from "../../services/domain/Organization.ts"
import { CategoryId, CheckClass } from "../../services/domain/Source.ts"
import { ComponentStatus, IncidentImpact, IncidentStatus, MonitorState, SourceStatus } from "../../services/domain/Status.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { expectViolation } from "../support/sqlErrors.ts"
import { freshDatabase, withTempDataDir } from "../support/stores.ts"

const server = Layer.unwrap(Effect.map(freshDatabase, (url) => Postgres.layerServer(url, { maxConnections: 4 })))
const embedded = withTempDataDir(Postgres.layerEmbedded)

const count = (table: string, where = "true") =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const rows = yield* sql.unsafe<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`)
    return rows[0]!.n
  })

/** An organization with one admin, a custom source with a component, a monitor and a stack holding both. */
const fixture = Effect.fn("fixture")(function*(slug: string) {
  const sql = yield* SqlClient
  const [org] = yield* sql<{ id: string }>`INSERT INTO organizations (slug, name) VALUES (${slug}, ${slug}) RETURNING id`
  const [user] = yield* sql<{ id: string }>`
    INSERT INTO users (email, name) VALUES (${`${slug}@example.com`}, 'Ada') RETURNING id`
  yield* sql`INSERT INTO memberships (organization_id, user_id, role) VALUES (${org!.id}, ${user!.id}, 'admin')`
  yield* sql`INSERT INTO api_keys (organization_id, name, role, prefix, key_hash)
    VALUES (${org!.id}, 'ci', 'member', 'sg_abcd', ${`hash-${slug}`})`
  const [source] = yield* sql<{ id: string }>`
    INSERT INTO sources (organization_id, key, name, kind, status_page_url)
    VALUES (${org!.id}, ${`${slug}-status`}, 'Our status', 'url', 'https://status.example.com') RETURNING id`
  const [component] = yield* sql<{ id: string }>`
    INSERT INTO components (source_id, external_id, name) VALUES (${source!.id}, 'api', 'API') RETURNING id`
  const [monitor] = yield* sql<{ id: string }>`
    INSERT INTO monitors (organization_id, name, url) VALUES (${org!.id}, 'Home', 'https://example.com') RETURNING id`
  const [stack] = yield* sql<{ id: string }>`
    INSERT INTO stacks (organization_id, name, slug, created_by) VALUES (${org!.id}, 'Prod', 'prod', ${user!.id})
    RETURNING id`
  yield* sql`INSERT INTO stack_items (stack_id, kind, component_id) VALUES (${stack!.id}, 'component', ${component!.id})`
  yield* sql`INSERT INTO stack_items (stack_id, kind, monitor_id) VALUES (${stack!.id}, 'monitor', ${monitor!.id})`
  return { org: org!.id, user: user!.id, source: source!.id, component: component!.id, stack: stack!.id }
})

const schemaSuite = (name: string, stores: Layer.Layer<SqlClient, unknown>) =>
  layer(stores, { timeout: 120_000, excludeTestServices: true })(name, (it) => {
    it.effect("applies every migration once, and a second run applies none", () =>
      Effect.gen(function*() {
        const first = yield* Migrations.migratePostgres()
        const files = Fs.readdirSync(SqlFiles.migrationsDir("postgres")).filter((f) => f.endsWith(".sql"))
        assert.deepStrictEqual(first.map((m) => m.id), files.map((f) => Number(f.slice(0, 4))).toSorted((a, b) => a - b))
        const second = yield* Migrations.migratePostgres()
        assert.deepStrictEqual(second, [])
      }))

    it.effect("stores and reads back a row (round trip through the layer)", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const [row] = yield* sql<{ slug: string; plan_id: string; name: string }>`
          INSERT INTO organizations (slug, name) VALUES ('round-trip', 'Round ''trip'' Ünïcode')
          RETURNING slug, plan_id, name`
        assert.deepStrictEqual(row, { slug: "round-trip", plan_id: "free", name: "Round 'trip' Ünïcode" })
      }))

    it.effect("seeds the spec's plan limits", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const plans = yield* sql<{ id: string; max_stacks: number | null; max_rules: number | null }>`
          SELECT id, max_stacks, max_rules FROM plans ORDER BY id`
        assert.deepStrictEqual(plans, [
          { id: "enterprise", max_stacks: null, max_rules: null },
          { id: "free", max_stacks: 1, max_rules: 3 },
          { id: "pro", max_stacks: null, max_rules: 25 }
        ])
      }))

    it.effect("accepts every value of the domain's enumerations", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const { org, source, component } = yield* fixture("enums")
        for (const status of SourceStatus.literals) yield* sql`UPDATE sources SET status = ${status} WHERE id = ${source}`
        for (const status of ComponentStatus.literals) {
          yield* sql`UPDATE components SET status = ${status} WHERE id = ${component}`
        }
        for (const cls of CheckClass.literals) yield* sql`UPDATE sources SET check_class = ${cls} WHERE id = ${source}`
        for (const state of MonitorState.literals) {
          yield* sql`UPDATE monitors SET state = ${state} WHERE organization_id = ${org}`
        }
        for (const role of Role.literals) yield* sql`UPDATE memberships SET role = ${role} WHERE organization_id = ${org}`
        for (const status of IncidentStatus.literals) {
          for (const impact of IncidentImpact.literals) {
            yield* sql`INSERT INTO incidents (source_id, external_id, title, status, impact, started_at, updated_at)
              VALUES (${source}, ${`${status}-${impact}`}, 't', ${status}, ${impact}, now(), now())`
          }
        }
        const categories = yield* sql<{ id: string }>`SELECT id FROM categories ORDER BY position`
        assert.deepStrictEqual(categories.map((c) => c.id), [...CategoryId.literals])
      }))

    it.effect("rejects a duplicate source key", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        yield* sql`INSERT INTO sources (key, name, kind, status_page_url) VALUES ('dup', 'A', 'catalog', 'https://a.example')`
        const v = yield* expectViolation(
          sql`INSERT INTO sources (key, name, kind, status_page_url) VALUES ('dup', 'B', 'catalog', 'https://b.example')`
        )
        assert.strictEqual(v.code, "23505")
        assert.strictEqual(v.constraint, "sources_key_key")
      }))

    it.effect("rejects values outside an enumeration", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const { org, user, component } = yield* fixture("bad-enums")
        const refused = [
          yield* expectViolation(sql`INSERT INTO sources (key, name, kind, status, status_page_url)
            VALUES ('bad-status', 'X', 'catalog', 'broken', 'https://x.example')`),
          // "down" is a source status, not a component status.
          yield* expectViolation(sql`UPDATE components SET status = 'down' WHERE id = ${component}`),
          yield* expectViolation(sql`UPDATE memberships SET role = 'owner' WHERE user_id = ${user}`),
          yield* expectViolation(sql`INSERT INTO notification_rules (organization_id, name, triggers)
            VALUES (${org}, 'r', '{component.exploded}')`),
          yield* expectViolation(sql`INSERT INTO sources (key, name, kind, check_class, status_page_url)
            VALUES ('bad-class', 'X', 'catalog', 'urgent', 'https://x.example')`)
        ]
        assert.deepStrictEqual(refused.map((v) => v.code), ["23514", "23514", "23514", "23514", "23514"])
      }))

    it.effect("keeps records coherent: keys, kinds and stack items", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const { org, stack, component } = yield* fixture("coherent")
        const refused = [
          // A catalog source belongs to no organization; a custom one to exactly one.
          yield* expectViolation(sql`INSERT INTO sources (organization_id, key, name, kind, status_page_url)
            VALUES (${org}, 'cat-with-org', 'X', 'catalog', 'https://x.example')`),
          yield* expectViolation(sql`INSERT INTO sources (key, name, kind) VALUES ('manual-no-org', 'X', 'manual')`),
          // Keys are lower-case slugs.
          yield* expectViolation(sql`INSERT INTO sources (key, name, kind, status_page_url)
            VALUES ('Not A Key', 'X', 'catalog', 'https://x.example')`),
          // A stack item names exactly what its kind says.
          yield* expectViolation(sql`INSERT INTO stack_items (stack_id, kind, monitor_id, component_id)
            VALUES (${stack}, 'monitor', NULL, ${component})`),
          // A monitor's timeout cannot exceed its interval.
          yield* expectViolation(sql`INSERT INTO monitors (organization_id, name, url, interval_s, timeout_ms)
            VALUES (${org}, 'slow', 'https://example.com', 10, 20000)`),
          // An unknown organization.
          yield* expectViolation(sql`INSERT INTO stacks (organization_id, name, slug)
            VALUES ('00000000-0000-0000-0000-000000000000', 'x', 'x')`)
        ]
        assert.deepStrictEqual(refused.map((v) => v.code), ["23514", "23514", "23514", "23514", "23514", "23503"])
        const dupItem = yield* expectViolation(
          sql`INSERT INTO stack_items (stack_id, kind, component_id) VALUES (${stack}, 'component', ${component})`
        )
        assert.strictEqual(dupItem.code, "23505")
      }))

    it.effect("deleting an organization removes what it owns and keeps its users", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const { org, user, source } = yield* fixture("cascade-org")
        const other = yield* fixture("survivor")
        yield* sql`DELETE FROM organizations WHERE id = ${org}`
        assert.strictEqual(yield* count("memberships", `organization_id = '${org}'`), 0)
        assert.strictEqual(yield* count("api_keys", `organization_id = '${org}'`), 0)
        assert.strictEqual(yield* count("sources", `id = '${source}'`), 0)
        assert.strictEqual(yield* count("components", `source_id = '${source}'`), 0)
        assert.strictEqual(yield* count("monitors", `organization_id = '${org}'`), 0)
        assert.strictEqual(yield* count("stacks", `organization_id = '${org}'`), 0)
        assert.strictEqual(yield* count("users", `id = '${user}'`), 1)
        // The other organization is untouched.
        assert.strictEqual(yield* count("stack_items", `stack_id = '${other.stack}'`), 2)
      }))

    it.effect("deleting a source removes its components, incidents and the stack items showing them", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const { source, component, stack } = yield* fixture("cascade-source")
        yield* sql`INSERT INTO incidents (source_id, external_id, title, status, started_at, updated_at)
          VALUES (${source}, 'inc-1', 'Down', 'investigating', now(), now())`
        yield* sql`INSERT INTO crowd_reports (source_id, component_id, reporter_hash, network_hash, symptom, window_start)
          VALUES (${source}, ${component}, 'r1', 'n1', 'down', date_trunc('hour', now()))`
        yield* sql`DELETE FROM sources WHERE id = ${source}`
        assert.strictEqual(yield* count("components", `id = '${component}'`), 0)
        assert.strictEqual(yield* count("incidents", `source_id = '${source}'`), 0)
        assert.strictEqual(yield* count("crowd_reports", `source_id = '${source}'`), 0)
        // The monitor item stays; the component item went with the component.
        assert.strictEqual(yield* count("stack_items", `stack_id = '${stack}'`), 1)
      }))

    it.effect("deleting a user keeps what they created, without an author", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const { user, stack } = yield* fixture("cascade-user")
        yield* sql`DELETE FROM users WHERE id = ${user}`
        const [row] = yield* sql<{ created_by: string | null }>`SELECT created_by FROM stacks WHERE id = ${stack}`
        assert.deepStrictEqual(row, { created_by: null })
      }))
  })

describe("PostgreSQL schema", () => {
  schemaSuite("on a PostgreSQL server (DATABASE_URL)", server)
  schemaSuite("on embedded PGlite", embedded)
})
