import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { ApiKeys } from "../../services/orgs/ApiKeys.ts"
import { Organizations } from "../../services/orgs/Organizations.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { SecretBox } from "../../services/platform/SecretBox.ts"
import { freshDatabase } from "../support/stores.ts"

/**
 * Two processes' ApiKeys (two instances, each with its own cache, on one PostgreSQL): a key revoked
 * through one is refused by the other within a second.
 */
describe("API key revocation across processes", () => {
  it.live("a key revoked by one process is refused by another within 1 s, and by the revoking one at once", () =>
    Effect.scoped(Effect.gen(function*() {
      const url = yield* freshDatabase
      const sql = Postgres.layerServer(url, { maxConnections: 2 })
      yield* Migrations.migratePostgres().pipe(Effect.provide(sql))
      // Both processes share the installation's secrets key (API keys are keyed hashes under it).
      const box = Layer.succeed(SecretBox, SecretBox.fromKey(randomBytes(32)))
      const instance = () => Layer.build(Layer.mergeAll(ApiKeys.layer, Organizations.layer).pipe(Layer.provide(Layer.merge(sql, box)), Layer.fresh))
      const a = yield* instance()
      const b = yield* instance()
      const keysA = Context.get(a, ApiKeys)
      const keysB = Context.get(b, ApiKeys)
      const { id: orgId } = yield* Context.get(a, Organizations).create({ name: "Revocations", slug: "revocations", plan: "free" })
      const admin = yield* keysA.issue(orgId, "admin", "admin")
      const doomed = yield* keysA.issue(orgId, "doomed", "viewer")
      const adminPrincipal = (yield* keysA.authenticate(admin, null))!
      // Both processes have the key in their caches.
      assert.isDefined(yield* keysA.authenticate(doomed, null))
      assert.isDefined(yield* keysB.authenticate(doomed, null))
      const doomedId = (yield* keysA.authenticate(doomed, null))!.actor.id
      yield* keysA.revoke(adminPrincipal, doomedId)
      const revokedAt = Date.now()
      assert.isUndefined(yield* keysA.authenticate(doomed, null), "the revoking process refuses it at once")
      // The other process trusted it from before the revocation; a second after the revocation it asks
      // PostgreSQL again and refuses it (with a longer cache, it would still accept it here).
      yield* Effect.sleep(Math.max(0, revokedAt + 1_000 - Date.now()))
      assert.isUndefined(yield* keysB.authenticate(doomed, null), "refused by the other process a second after the revocation")
      // The other keys go on.
      assert.isDefined(yield* keysB.authenticate(admin, null))
    })), 60_000)
})
