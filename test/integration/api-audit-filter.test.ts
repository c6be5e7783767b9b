import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { apiServer, call, newTenant } from "../support/api.ts"

type Entry = { readonly action: string; readonly entity_type: string; readonly actor: { readonly kind: string; readonly id: string | null } }

/** `GET /audit-log` narrowed as the portal's audit page narrows it (Organizations.auditLog's filter). */
describe("the audit log's filter", () => {
  layer(apiServer(), { timeout: 120_000, excludeTestServices: true })("on PostgreSQL", (it) => {
    it.effect("by record type, actor and time; malformed values are 400s naming the parameter", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("pro")
        const created = yield* call("POST", "/api-keys", { key: tenant.keys.admin, body: { name: "ci", role: "viewer" } })
        assert.strictEqual(created.status, 201)
        const invited = yield* call("POST", "/invitations", { key: tenant.keys.admin, body: { email: "a@example.com", role: "member" } })
        assert.strictEqual(invited.status, 201)
        const log = (query: string) =>
          call("GET", `/audit-log?${query}`, { key: tenant.keys.admin }).pipe(Effect.map((r) => ({ status: r.status, body: r.body })))

        const all = yield* log("")
        assert.deepStrictEqual((all.body.data as Array<Entry>).map((e) => e.action), ["api_key.created", "invitation.created"])
        const keysOnly = yield* log("entity_type=api_key")
        assert.deepStrictEqual((keysOnly.body.data as Array<Entry>).map((e) => e.action), ["api_key.created"])
        const actor = (all.body.data as Array<Entry>)[0]!.actor.id!
        assert.strictEqual(((yield* log(`actor=${actor}`)).body.data as Array<Entry>).length, 2)
        assert.strictEqual(((yield* log("actor=someone-else")).body.data as Array<Entry>).length, 0)
        assert.strictEqual(((yield* log("until=2001-01-01")).body.data as Array<Entry>).length, 0)
        assert.strictEqual(((yield* log("since=2001-01-01T00:00:00Z&entity_type=invitation")).body.data as Array<Entry>).length, 1)

        for (const bad of ["since=yesterday", "until=2026-13-45", "since=2026-01-01T25:00Z"]) {
          const answer = yield* log(bad)
          assert.strictEqual(answer.status, 400, bad)
          assert.include(JSON.stringify(answer.body), bad.split("=")[0]!, bad)
        }
        // Only an Admin reads the log, filtered or not.
        assert.strictEqual((yield* call("GET", "/audit-log?entity_type=member", { key: tenant.keys.member })).status, 403)
      }))
  })
})
