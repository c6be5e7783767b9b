import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { createHash, createHmac, randomBytes } from "node:crypto"
import { ApiKeys } from "../../services/orgs/ApiKeys.ts"
import { hashKeyOf, keyIdOf, SecretBox } from "../../services/platform/SecretBox.ts"
import { apiServer, call, newTenant } from "../support/api.ts"

/**
 * API keys stored as keyed hashes (issue #19, migration 0027, decision 0018): what PostgreSQL holds for
 * a key, keys stored before (plain SHA-256) and keys hashed under the secrets key before a rotation.
 */

const k1 = randomBytes(32)
const k2 = randomBytes(32)
const sha256 = (key: string) => createHash("sha256").update(key).digest("hex")
/** The stored hash of `key` under the secrets key `secrets`, from the secrets key alone. */
const keyed = (secrets: Uint8Array, key: string) => createHmac("sha256", hashKeyOf(secrets, "api key")).update(key).digest("hex")
const idOf = (secrets: Uint8Array) => keyIdOf(secrets).toString("hex")
const newKey = () => `sg_${randomBytes(32).toString("base64url")}`

interface StoredKey {
  readonly key_hash: string
  readonly hash_scheme: string
  readonly hash_key_id: string | null
}

const stored = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const [row] = yield* sql<StoredKey>`SELECT key_hash, hash_scheme, hash_key_id FROM api_keys WHERE id = ${id}::uuid`
    return row!
  })

/** A key as statusgrid stored them before migration 0027 (its SHA-256, the scheme's default); its id. */
const insertLegacy = (organizationId: string, key: string, role = "admin") =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const [row] = yield* sql<{ id: string }>`
      INSERT INTO api_keys (organization_id, name, role, prefix, key_hash)
      VALUES (${organizationId}::uuid, 'from before', ${role}, ${key.slice(0, 10)}, ${sha256(key)}) RETURNING id`
    return row!.id
  })

/** Another process's ApiKeys (its own cache) on the same database, with these secrets keys. */
const processWith = (current: Uint8Array, previous?: Uint8Array) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const context = yield* Layer.build(ApiKeys.layer.pipe(
      Layer.provide(Layer.merge(Layer.succeed(SqlClient, sql), Layer.succeed(SecretBox, SecretBox.fromKey(current, previous)))),
      Layer.fresh
    ))
    return Context.get(context, ApiKeys)
  })

describe("API keys stored as keyed hashes", () => {
  layer(apiServer({ SECRETS_KEY: k1.toString("base64") }), { timeout: 60_000, excludeTestServices: true })("on PostgreSQL", (it) => {
    it.effect("a new key works, and PostgreSQL holds HMAC(HKDF(SECRETS_KEY), key): not the key, not its SHA-256", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("free")
        const created = yield* call("POST", "/api-keys", { key: tenant.keys.admin, body: { name: "CI", role: "viewer" } })
        assert.strictEqual(created.status, 201, JSON.stringify(created.body))
        const key = created.body.key as string
        const works = yield* call("GET", "/organization", { key })
        assert.strictEqual(works.status, 200)
        assert.strictEqual(works.body.id, tenant.id)

        const row = yield* stored(created.body.id)
        assert.deepStrictEqual(row, { key_hash: keyed(k1, key), hash_scheme: "hmac-sha256", hash_key_id: idOf(k1) })
        // A dump alone: the key's SHA-256 (or the key) matches no row, so a guess cannot be tested offline.
        assert.notStrictEqual(row.key_hash, sha256(key))
        assert.notStrictEqual(row.key_hash, key)
        const sql = yield* SqlClient
        const bySha = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM api_keys WHERE key_hash = ${sha256(key)} OR key_hash = ${key}`
        assert.strictEqual(bySha[0]!.n, 0)
        // The keys `newTenant` issued are stored the same way.
        const schemes = yield* sql<{ hash_scheme: string; n: number }>`
          SELECT hash_scheme, count(*)::int AS n FROM api_keys WHERE organization_id = ${tenant.id}::uuid GROUP BY hash_scheme`
        assert.deepStrictEqual(schemes, [{ hash_scheme: "hmac-sha256", n: 4 }])
        // A wrong key with the right prefix is still refused.
        assert.strictEqual((yield* call("GET", "/organization", { key: `${key.slice(0, 10)}${"A".repeat(key.length - 10)}` })).status, 401)
      }))

    it.effect("a key stored before (plain SHA-256) authenticates, and is stored again as a keyed hash on that use", () =>
      Effect.scoped(Effect.gen(function*() {
        const tenant = yield* newTenant("free")
        const key = newKey()
        const id = yield* insertLegacy(tenant.id, key, "member")
        assert.deepStrictEqual(yield* stored(id), { key_hash: sha256(key), hash_scheme: "sha256", hash_key_id: null })

        const first = yield* call("GET", "/organization", { key })
        assert.strictEqual(first.status, 200, JSON.stringify(first.body))
        assert.strictEqual(first.body.id, tenant.id)
        assert.deepStrictEqual(yield* stored(id), { key_hash: keyed(k1, key), hash_scheme: "hmac-sha256", hash_key_id: idOf(k1) })

        // Found by its keyed hash from now on: another process (no cache) takes it, its role kept.
        const other = yield* processWith(k1)
        const principal = yield* other.authenticate(key, null)
        assert.strictEqual(principal?.actor.id, id)
        assert.strictEqual(principal?.role, "member")
        assert.strictEqual((yield* call("GET", "/organization", { key })).status, 200)

        // A legacy row's SHA-256 finds nothing once the row is keyed: a key whose hash leaked before is not
        // accepted by its hash (the hash is no key), and a revoked legacy key is refused without an upgrade.
        const revokedKey = newKey()
        const revokedId = yield* insertLegacy(tenant.id, revokedKey)
        const sql = yield* SqlClient
        yield* sql`UPDATE api_keys SET revoked_at = now() WHERE id = ${revokedId}::uuid`
        assert.strictEqual((yield* call("GET", "/organization", { key: revokedKey })).status, 401)
        assert.strictEqual((yield* stored(revokedId)).hash_scheme, "sha256")
        assert.strictEqual((yield* call("GET", "/organization", { key: sha256(key) })).status, 401)
      })))

    it.effect("a rotated secrets key: keys hashed under SECRETS_KEY_PREVIOUS still work and move to the new key on use; without it, an unused one stops", () =>
      Effect.scoped(Effect.gen(function*() {
        const tenant = yield* newTenant("free")
        const before = yield* processWith(k1)
        const used = yield* before.issue(tenant.id, "used during the rotation", "viewer")
        const unused = yield* before.issue(tenant.id, "not used during the rotation", "viewer")
        const legacy = newKey()
        const legacyId = yield* insertLegacy(tenant.id, legacy)
        const sql = yield* SqlClient
        const idOfKey = (name: string) =>
          sql<{ id: string }>`SELECT id FROM api_keys WHERE organization_id = ${tenant.id}::uuid AND name = ${name}`.pipe(Effect.map((r) => r[0]!.id))
        const usedId = yield* idOfKey("used during the rotation")
        const unusedId = yield* idOfKey("not used during the rotation")
        assert.deepStrictEqual(yield* stored(usedId), { key_hash: keyed(k1, used), hash_scheme: "hmac-sha256", hash_key_id: idOf(k1) })

        // Restarted with SECRETS_KEY=K2, SECRETS_KEY_PREVIOUS=K1.
        const rotating = yield* processWith(k2, k1)
        assert.strictEqual((yield* rotating.authenticate(used, null))?.actor.id, usedId)
        assert.deepStrictEqual(yield* stored(usedId), { key_hash: keyed(k2, used), hash_scheme: "hmac-sha256", hash_key_id: idOf(k2) })
        // A legacy key goes straight to the new key.
        assert.strictEqual((yield* rotating.authenticate(legacy, null))?.actor.id, legacyId)
        assert.deepStrictEqual(yield* stored(legacyId), { key_hash: keyed(k2, legacy), hash_scheme: "hmac-sha256", hash_key_id: idOf(k2) })
        // Keys made now are under K2.
        const fresh = yield* rotating.issue(tenant.id, "made during the rotation", "viewer")
        const freshId = yield* idOfKey("made during the rotation")
        assert.strictEqual((yield* stored(freshId)).hash_key_id, idOf(k2))
        // What is still under K1, to count before dropping SECRETS_KEY_PREVIOUS: the unused key.
        const left = yield* sql<{ id: string }>`
          SELECT id FROM api_keys WHERE organization_id = ${tenant.id}::uuid AND hash_key_id = ${idOf(k1)} AND revoked_at IS NULL
            AND name LIKE '%the rotation'`
        assert.deepStrictEqual(left.map((r) => r.id), [unusedId])

        // SECRETS_KEY_PREVIOUS dropped: what moved works; the key not used meanwhile cannot be found (nothing could
        // re-hash it: its plain value was never stored), as a sealed value under a dropped key cannot be opened.
        const after = yield* processWith(k2)
        assert.strictEqual((yield* after.authenticate(used, null))?.actor.id, usedId)
        assert.strictEqual((yield* after.authenticate(legacy, null))?.actor.id, legacyId)
        assert.strictEqual((yield* after.authenticate(fresh, null))?.actor.id, freshId)
        assert.isUndefined(yield* after.authenticate(unused, null))
        // The old process (K1 alone) no longer finds the moved keys; the unused one, still under K1, it does.
        const stale = yield* processWith(k1)
        assert.isUndefined(yield* stale.authenticate(used, null))
        assert.strictEqual((yield* stale.authenticate(unused, null))?.actor.id, unusedId)
      })))
  })
})
