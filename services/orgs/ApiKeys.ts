import { Clock, Context, Effect, Layer, Schema } from "effect"
import type { ApiKey } from "../domain/api/Organization.ts"
import { SqlClient } from "effect/sql/SqlClient"
import { createHash, randomBytes } from "node:crypto"
import { type Forbidden, type InvalidParameter, NotFound } from "../domain/api/Errors.ts"
import { PlanId, Role } from "../domain/Organization.ts"
import type { Principal } from "../domain/Principal.ts"
import { rowsOf } from "../platform/Rows.ts"
import { SecretBox } from "../platform/SecretBox.ts"
import { requirePermission } from "./Access.ts"
import { recordAudit } from "./Audit.ts"
import { cursorAt, listPage, type PageRequest } from "./Paging.ts"
import type { Page } from "../domain/api/Paging.ts"
import { NullOr } from "../domain/NullOr.ts"

/**
 * How `api_keys.key_hash` was made (migration 0027): `hmac-sha256`, HMAC-SHA-256 under a key derived
 * from the secrets key named by `hash_key_id` (every key made or used since); `sha256`, the plain
 * SHA-256 of keys made before, re-hashed at their next use.
 */
export const ApiKeyHashScheme = Schema.Literals(["sha256", "hmac-sha256"])
export type ApiKeyHashScheme = typeof ApiKeyHashScheme.Type

/** The rows of the queries below, decoded by Schemas compiled once (services/platform/Rows.ts). */
const resolvedKeyRows = rowsOf("api_keys", Schema.Struct({
  id: Schema.String,
  role: Role,
  organization_id: Schema.String,
  slug: Schema.String,
  plan_id: PlanId,
  stale: Schema.Boolean,
  key_hash: Schema.String,
  hash_scheme: ApiKeyHashScheme,
  hash_key_id: NullOr(Schema.String)
}))


/** `sg_` then 32 random bytes, base64url: 256 bits, recognisable in logs and secret scanners. */
const newKey = () => `sg_${randomBytes(32).toString("base64url")}`

/** The plain SHA-256 (hex) keys were stored as before migration 0027: still found, once, for those rows. */
export const legacyKeyHash = (key: string) => createHash("sha256").update(key).digest("hex")

/**
 * What a presented key may be stored as: its keyed hash under the current secrets key (what new and
 * re-hashed keys are stored as, and the cache's key), under `SECRETS_KEY_PREVIOUS` when set (keys
 * hashed before a rotation), and its legacy SHA-256.
 */
export const keyHashesOf = (box: SecretBox["Service"], key: string) => {
  const [current, ...previous] = box.keyedHashes("api key", key)
  return { current: current!, previous, legacy: legacyKeyHash(key) }
}

const KeyRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  role: Role,
  prefix: Schema.String,
  created_at: Schema.Date,
  last_used_at: NullOr(Schema.Date),
  revoked_at: NullOr(Schema.Date),
  cursor_at: Schema.String
})
type KeyRow = typeof KeyRow.Type
const decodeKeys = rowsOf("api_keys", KeyRow)
const decodeKeysWithHash = rowsOf("api_keys", Schema.Struct({ ...KeyRow.fields, key_hash: Schema.String }))

const toApiKey = (row: KeyRow): ApiKey => ({
  id: row.id,
  name: row.name,
  role: row.role,
  prefix: row.prefix,
  created_at: new Date(row.created_at).toISOString(),
  last_used_at: row.last_used_at === null ? null : new Date(row.last_used_at).toISOString(),
  revoked_at: row.revoked_at === null ? null : new Date(row.revoked_at).toISOString()
})

/**
 * How long a resolved key is trusted without asking PostgreSQL again: a key revoked through another
 * process is refused here within this time (one read per key and second at most); revoked through
 * this process, at once.
 */
const cacheMs = 1_000

/**
 * Organization API keys: shown once when created, stored as a keyed hash
 * (HMAC-SHA-256 under a key derived from the installation's secrets key, see
 * `keyHashesOf`; a 256-bit random key needs no slow hash, but a database dump
 * alone must not be able to test a guessed key), revocable. `authenticate`
 * turns a presented key into the caller's Principal: it finds keys hashed
 * under the current secrets key, under `SECRETS_KEY_PREVIOUS` (a rotation),
 * or as the plain SHA-256 of before migration 0027, and stores the latter two
 * again under the current key. `statusgrid secrets rotate` cannot re-hash keys
 * (it never sees them): a key not used between a rotation and the removal of
 * `SECRETS_KEY_PREVIOUS` stops working (decision 0018).
 */
export class ApiKeys extends Context.Service<ApiKeys, {
  authenticate(key: string, ip: string | null): Effect.Effect<Principal | undefined>
  create(principal: Principal, input: { readonly name: string; readonly role: Role }): Effect.Effect<ApiKey & { readonly key: string }, Forbidden>
  list(principal: Principal, page: PageRequest): Effect.Effect<Page<ApiKey>, Forbidden | InvalidParameter>
  revoke(principal: Principal, id: string): Effect.Effect<ApiKey, Forbidden | NotFound>
  /** A key for an organization without a caller: the first admin key (CLI `statusgrid org create`), tests. */
  issue(organizationId: string, name: string, role: Role): Effect.Effect<string>
}>()("statusgrid/orgs/ApiKeys") {
  /**
   * Needs the process's `SecretBox` (services/platform/SecretBox.ts): every process that creates or
   * checks keys (the servers, `statusgrid org create`) must share the secrets keys, as for sealed values.
   */
  static readonly layer = Layer.effect(
    ApiKeys,
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const box = yield* SecretBox
      // Keyed by the key's hash under the current secrets key.
      const cache = new Map<string, { readonly principal: Omit<Principal, "ip">; readonly until: number }>()

      const insertKey = Effect.fn("ApiKeys.insertKey")(function*(organizationId: string, name: string, role: Role, createdBy: string | null) {
        const key = newKey()
        const { current } = keyHashesOf(box, key)
        const [row] = yield* sql`
            INSERT INTO api_keys AS t (organization_id, name, role, prefix, key_hash, hash_scheme, hash_key_id, created_by)
            VALUES (${organizationId}::uuid, ${name}, ${role}, ${key.slice(0, 10)}, ${current.hash}, 'hmac-sha256', ${current.keyId},
              ${createdBy}::uuid)
            RETURNING t.id, t.name, t.role, t.prefix, t.created_at, t.last_used_at, t.revoked_at, ${sql.literal(cursorAt)}`.pipe(Effect.flatMap(decodeKeys))
        return { key, row: row! }
      })

      const authenticate = Effect.fn("ApiKeys.authenticate")(function*(key: string, ip: string | null) {
        const hashes = keyHashesOf(box, key)
        const cached = cache.get(hashes.current.hash)
        if (cached !== undefined && cached.until > (yield* Clock.currentTimeMillis)) return { ...cached.principal, ip }
        const keyed = [hashes.current.hash, ...hashes.previous.map((h) => h.hash)]
        const [row] = yield* sql`
            SELECT k.id, k.role, k.organization_id, o.slug, o.plan_id, k.key_hash, k.hash_scheme, k.hash_key_id,
              k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute' AS stale
            FROM api_keys k JOIN organizations o ON o.id = k.organization_id
            WHERE k.revoked_at IS NULL
              AND ((k.hash_scheme = 'hmac-sha256' AND k.key_hash = ANY(${keyed}::text[]))
                OR (k.hash_scheme = 'sha256' AND k.key_hash = ${hashes.legacy}))`.pipe(Effect.flatMap(resolvedKeyRows), Effect.orDie)
        if (row === undefined) {
          cache.delete(hashes.current.hash)
          return undefined
        }
        if (row.key_hash !== hashes.current.hash) {
          // Found by its legacy SHA-256 or under the previous secrets key: stored again under the current
          // one (once: a process that finds the row changed meanwhile changes nothing).
          yield* sql`
            UPDATE api_keys SET key_hash = ${hashes.current.hash}, hash_scheme = 'hmac-sha256', hash_key_id = ${hashes.current.keyId},
              last_used_at = now()
            WHERE id = ${row.id}::uuid AND key_hash = ${row.key_hash}`.pipe(Effect.orDie)
          yield* Effect.logInfo("API key hash upgraded to the current secrets key").pipe(Effect.annotateLogs({
            api_key: row.id,
            from: row.hash_scheme === "sha256" ? "sha256" : `hmac-sha256 under key ${row.hash_key_id ?? "?"}`,
            to: `hmac-sha256 under key ${hashes.current.keyId}`
          }))
        } else if (row.stale) {
          // Last use is kept to the minute: one write per key per minute, not per request.
          yield* sql`UPDATE api_keys SET last_used_at = now() WHERE id = ${row.id}::uuid`.pipe(Effect.orDie)
        }
        const principal = {
          organization_id: row.organization_id,
          organization_slug: row.slug,
          plan: row.plan_id,
          role: row.role,
          actor: { kind: "api_key" as const, id: row.id }
        }
        cache.set(hashes.current.hash, { principal, until: (yield* Clock.currentTimeMillis) + cacheMs })
        if (cache.size > 10_000) cache.delete(cache.keys().next().value!)
        return { ...principal, ip }
      })

      const create = Effect.fn("ApiKeys.create")(function*(principal: Principal, input: { readonly name: string; readonly role: Role }) {
        yield* requirePermission(principal, "members.manage")
        return yield* sql.withTransaction(Effect.gen(function*() {
          const { key, row } = yield* insertKey(
            principal.organization_id,
            input.name,
            input.role,
            principal.actor.kind === "user" ? principal.actor.id : null
          )
          const apiKey = toApiKey(row)
          yield* recordAudit(principal, { action: "api_key.created", entity_type: "api_key", entity_id: row.id, after: apiKey })
          return { ...apiKey, key }
        })).pipe(Effect.orDie)
      })

      const list = Effect.fn("ApiKeys.list")(function*(principal: Principal, page: PageRequest) {
        yield* requirePermission(principal, "members.manage")
        return yield* listPage({
          page,
          select: (where, limit) =>
            sql`
              SELECT t.id, t.name, t.role, t.prefix, t.created_at, t.last_used_at, t.revoked_at, ${sql.literal(cursorAt)}
              FROM api_keys t WHERE t.organization_id = ${principal.organization_id}::uuid AND ${where}
              ORDER BY t.created_at, t.id LIMIT ${limit}`.pipe(Effect.flatMap(decodeKeys)),
          map: toApiKey
        })
      })

      const revoke = Effect.fn("ApiKeys.revoke")(function*(principal: Principal, id: string) {
        yield* requirePermission(principal, "members.manage")
        const revoked = yield* sql.withTransaction(Effect.gen(function*() {
          const [before] = yield* sql`
            SELECT t.id, t.name, t.role, t.prefix, t.created_at, t.last_used_at, t.revoked_at, t.key_hash, ${sql.literal(cursorAt)}
            FROM api_keys t WHERE t.id = ${id}::uuid AND t.organization_id = ${principal.organization_id}::uuid FOR UPDATE`.pipe(Effect.flatMap(decodeKeysWithHash))
          if (before === undefined) return undefined
          const [after] = yield* sql`
            UPDATE api_keys AS t SET revoked_at = coalesce(t.revoked_at, now()) WHERE t.id = ${id}::uuid
            RETURNING t.id, t.name, t.role, t.prefix, t.created_at, t.last_used_at, t.revoked_at, ${sql.literal(cursorAt)}`.pipe(Effect.flatMap(decodeKeys))
          yield* recordAudit(principal, {
            action: "api_key.revoked",
            entity_type: "api_key",
            entity_id: id,
            before: toApiKey(before),
            after: toApiKey(after!)
          })
          // A key used through this process is stored (and cached) under its current keyed hash.
          cache.delete(before.key_hash)
          return toApiKey(after!)
        })).pipe(Effect.orDie)
        if (revoked === undefined) return yield* new NotFound({ field: "id", message: `no API key ${id} in this organization` })
        return revoked
      })

      const issue = (organizationId: string, name: string, role: Role) =>
        insertKey(organizationId, name, role, null).pipe(Effect.map(({ key }) => key), Effect.orDie)

      // The audit log and paging run on this layer's connection (and so inside its transactions).
      const onSql = <A, E>(effect: Effect.Effect<A, E, SqlClient>) => Effect.provideService(effect, SqlClient, sql)
      return ApiKeys.of({
        authenticate,
        create: (principal, input) => onSql(create(principal, input)),
        list: (principal, page) => onSql(list(principal, page)),
        revoke: (principal, id) => onSql(revoke(principal, id)),
        issue
      })
    })
  )
}
