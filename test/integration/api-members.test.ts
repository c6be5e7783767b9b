import { assert, describe, layer } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { createHash } from "node:crypto"
import type { PlanId, Role } from "../../services/domain/Organization.ts"
import { Users } from "../../services/identity/Users.ts"
import { ApiKeys } from "../../services/orgs/ApiKeys.ts"
import { Members } from "../../services/orgs/Members.ts"
import { SecretBox } from "../../services/platform/SecretBox.ts"
import { apiServer, call, newTenant, operatorSetsPlan, type Tenant } from "../support/api.ts"
import { withConfig } from "../support/stores.ts"

const roles: ReadonlyArray<Role> = ["admin", "member", "viewer"]
const tag = () => Math.random().toString(36).slice(2, 10)
const password = "a perfectly fine password"

interface UserTenant extends Tenant {
  /** The user who created the organization: its first admin. */
  readonly admin: { readonly id: string; readonly email: string }
}

/** An organization created by a user (its admin member), on `plan`, with an API key per role. */
const userTenant = (plan: PlanId) =>
  Effect.gen(function*() {
    const users = yield* Users
    const admin = yield* users.signUp(`admin-${tag()}@example.com`, password, "Ada Admin")
    const slug = `m-${tag()}`
    const org = yield* users.createOrganization(admin.id, { name: `Org ${slug}`, slug })
    const sql = yield* SqlClient
    if (plan !== "free") yield* sql`UPDATE organizations SET plan_id = ${plan} WHERE id = ${org.id}::uuid`
    const keys = yield* ApiKeys
    const issued = {
      admin: yield* keys.issue(org.id, "admin key", "admin"),
      member: yield* keys.issue(org.id, "member key", "member"),
      viewer: yield* keys.issue(org.id, "viewer key", "viewer")
    }
    return { id: org.id, slug, keys: issued, admin: { id: admin.id, email: admin.email } } satisfies UserTenant
  })

const tokenOf = (acceptUrl: string) => acceptUrl.replace(/^\/invite\//, "")

/** A new user who joins `tenant` with `role` the ordinary way: invited by the admin key, accepting with the link. */
const addMember = (tenant: Tenant, role: Role, name = "Mo Member") =>
  Effect.gen(function*() {
    const user = yield* Users.use((u) => u.signUp(`user-${tag()}@example.com`, password, name))
    const invited = yield* call("POST", "/invitations", { key: tenant.keys.admin, body: { email: user.email, role } })
    assert.strictEqual(invited.status, 201, JSON.stringify(invited.body))
    yield* Members.use((m) => m.acceptInvitation(user.id, tokenOf(invited.body.accept_url)))
    return { id: user.id, email: user.email, invitation: invited.body.id as string }
  })

const counts = (orgId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const [row] = yield* sql<{ members: number; admins: number; invitations: number; open: number; audit: number }>`
      SELECT (SELECT count(*)::int FROM memberships WHERE organization_id = ${orgId}::uuid) AS members,
        (SELECT count(*)::int FROM memberships WHERE organization_id = ${orgId}::uuid AND role = 'admin') AS admins,
        (SELECT count(*)::int FROM invitations WHERE organization_id = ${orgId}::uuid) AS invitations,
        (SELECT count(*)::int FROM invitations WHERE organization_id = ${orgId}::uuid
           AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now()) AS open,
        (SELECT count(*)::int FROM audit_log WHERE organization_id = ${orgId}::uuid) AS audit`
    return row!
  })

type Entry = {
  action: string
  entity_type: string
  entity_id: string
  actor: { kind: string; id: string | null }
  before: Record<string, unknown> | null
  after: Record<string, unknown> | null
}

const auditOf = (tenant: Tenant) =>
  Effect.gen(function*() {
    const log = yield* call("GET", "/audit-log?limit=200", { key: tenant.keys.admin })
    assert.strictEqual(log.status, 200)
    return log.body.data as Array<Entry>
  })

/** The one audit entry with this action and entity (fails if there are none or several). */
const theEntry = (entries: ReadonlyArray<Entry>, action: string, entityId: string) => {
  const found = entries.filter((e) => e.action === action && e.entity_id === entityId)
  assert.strictEqual(found.length, 1, `${action} ${entityId}: ${JSON.stringify(entries.map((e) => [e.action, e.entity_id]))}`)
  return found[0]!
}

const backdate = (invitationId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    yield* sql`
      UPDATE invitations SET created_at = now() - interval '8 days', expires_at = now() - interval '1 day'
      WHERE id = ${invitationId}::uuid`
  })

// The same secrets key as the API's (apiServer's DATA_DIR), so mails sealed by either open alike.
const secrets = SecretBox.layer.pipe(Layer.provide(withConfig({ DATA_DIR: "/tmp/statusgrid-api-test" })))
const server = Layer.mergeAll(Users.layer, Members.layer.pipe(Layer.provide(secrets))).pipe(Layer.provideMerge(apiServer()))

describe("members API: members, roles, invitations", () => {
  layer(server, { timeout: 120_000, excludeTestServices: true })("on PostgreSQL", (it) => {
    it.effect("no key: 401 on every endpoint", () =>
      Effect.gen(function*() {
        const id = "00000000-0000-4000-8000-000000000000"
        const endpoints: Array<[string, string, unknown]> = [
          ["GET", "/members", undefined],
          ["PATCH", `/members/${id}`, { role: "viewer" }],
          ["DELETE", `/members/${id}`, undefined],
          ["GET", "/invitations", undefined],
          ["POST", "/invitations", { email: "x@example.com", role: "viewer" }],
          ["DELETE", `/invitations/${id}`, undefined]
        ]
        for (const [method, path, body] of endpoints) {
          for (const key of [undefined, "sg_not-a-key"]) {
            const r = yield* call(method, path, { key, body })
            assert.strictEqual(r.status, 401, `${method} ${path} ${key}`)
            assert.strictEqual(r.body.code, "unauthorized")
          }
        }
      }))

    it.effect("role matrix: every role lists; only admins change roles, remove, invite and revoke (403 and nothing changed otherwise)", () =>
      Effect.gen(function*() {
        const tenant = yield* userTenant("pro")
        const target = yield* addMember(tenant, "member")
        const invited = yield* call("POST", "/invitations", { key: tenant.keys.admin, body: { email: `open-${tag()}@example.com`, role: "viewer" } })
        assert.strictEqual(invited.status, 201)

        for (const role of roles) {
          const key = tenant.keys[role]
          const members = yield* call("GET", "/members", { key })
          assert.strictEqual(members.status, 200, role)
          assert.strictEqual(members.body.data.length, 2, role)
          const invitations = yield* call("GET", "/invitations", { key })
          assert.strictEqual(invitations.status, 200, role)
          assert.strictEqual(invitations.body.data.length, 1, role)
        }

        for (const role of ["member", "viewer"] as const) {
          const key = tenant.keys[role]
          const before = yield* counts(tenant.id)
          const denied = [
            yield* call("PATCH", `/members/${target.id}`, { key, body: { role: "admin" } }),
            yield* call("DELETE", `/members/${target.id}`, { key }),
            yield* call("POST", "/invitations", { key, body: { email: `no-${tag()}@example.com`, role: "viewer" } }),
            yield* call("DELETE", `/invitations/${invited.body.id}`, { key })
          ]
          for (const r of denied) {
            assert.strictEqual(r.status, 403, `${role}: ${JSON.stringify(r.body)}`)
            assert.strictEqual(r.body.code, "forbidden")
            assert.strictEqual(r.body.message, `the ${role} role cannot manage members, invitations and API keys`)
          }
          assert.deepStrictEqual(yield* counts(tenant.id), before, role)
          const sql = yield* SqlClient
          const [still] = yield* sql<{ role: string }>`SELECT role FROM memberships WHERE user_id = ${target.id}::uuid`
          assert.strictEqual(still!.role, "member")
        }

        const key = tenant.keys.admin
        const patched = yield* call("PATCH", `/members/${target.id}`, { key, body: { role: "viewer" } })
        assert.strictEqual(patched.status, 200)
        assert.strictEqual(patched.body.role, "viewer")
        const revoked = yield* call("DELETE", `/invitations/${invited.body.id}`, { key })
        assert.strictEqual(revoked.status, 204)
        assert.strictEqual(revoked.body, null)
        const removed = yield* call("DELETE", `/members/${target.id}`, { key })
        assert.strictEqual(removed.status, 204)
        assert.strictEqual(removed.body, null)
        const again = yield* call("POST", "/invitations", { key, body: { email: `yes-${tag()}@example.com`, role: "member" } })
        assert.strictEqual(again.status, 201)
      }))

    it.effect("GET /members: user_id, email, name, role, joined_at, oldest first, paged by cursor", () =>
      Effect.gen(function*() {
        const tenant = yield* userTenant("pro")
        const second = yield* addMember(tenant, "viewer", "Vi Viewer")
        const third = yield* addMember(tenant, "member", "Mo Member")
        const all = yield* call("GET", "/members", { key: tenant.keys.viewer })
        assert.strictEqual(all.status, 200)
        assert.strictEqual(all.body.next_cursor, null)
        assert.strictEqual(all.body.limit, 50)
        const data = all.body.data as Array<Record<string, unknown>>
        assert.deepStrictEqual(data.map((m) => [m["user_id"], m["email"], m["name"], m["role"]]), [
          [tenant.admin.id, tenant.admin.email, "Ada Admin", "admin"],
          [second.id, second.email, "Vi Viewer", "viewer"],
          [third.id, third.email, "Mo Member", "member"]
        ])
        for (const m of data) {
          assert.deepStrictEqual(Object.keys(m).toSorted(), ["email", "joined_at", "name", "role", "user_id"])
          assert.match(m["joined_at"] as string, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
        }
        const ids: Array<string> = []
        let cursor: string | null = null
        do {
          const page: { status: number; body: { data: Array<{ user_id: string }>; next_cursor: string | null } } = yield* call(
            "GET",
            `/members?limit=2${cursor === null ? "" : `&cursor=${cursor}`}`,
            { key: tenant.keys.member }
          )
          assert.strictEqual(page.status, 200)
          assert.isAtMost(page.body.data.length, 2)
          ids.push(...page.body.data.map((m) => m.user_id))
          cursor = page.body.next_cursor
        } while (cursor !== null)
        assert.deepStrictEqual(ids, [tenant.admin.id, second.id, third.id])
        const bad = yield* call("GET", "/members?cursor=bm9wZQ", { key: tenant.keys.member })
        assert.strictEqual(bad.status, 400)
        assert.strictEqual(bad.body.field, "cursor")
      }))

    it.effect("role changes: one audit entry with before and after; the same role again changes nothing", () =>
      Effect.gen(function*() {
        const tenant = yield* userTenant("pro")
        const target = yield* addMember(tenant, "viewer")
        const before = yield* counts(tenant.id)
        const r = yield* call("PATCH", `/members/${target.id}`, { key: tenant.keys.admin, body: { role: "admin" } })
        assert.strictEqual(r.status, 200)
        assert.deepStrictEqual({ ...r.body, joined_at: "" }, { user_id: target.id, email: target.email, name: "Mo Member", role: "admin", joined_at: "" })
        const same = yield* call("PATCH", `/members/${target.id}`, { key: tenant.keys.admin, body: { role: "admin" } })
        assert.strictEqual(same.status, 200)
        assert.strictEqual(same.body.role, "admin")
        const after = yield* counts(tenant.id)
        assert.strictEqual(after.audit, before.audit + 1)
        assert.strictEqual(after.admins, 2)
        const entry = theEntry(yield* auditOf(tenant), "member.role_changed", target.id)
        assert.strictEqual(entry.entity_type, "member")
        assert.strictEqual(entry.actor.kind, "api_key")
        assert.strictEqual(entry.before!["role"], "viewer")
        assert.strictEqual(entry.after!["role"], "admin")
        assert.strictEqual(entry.after!["email"], target.email)
      }))

    it.effect("the last admin can be neither demoted nor removed (409 naming role); with two admins one can go", () =>
      Effect.gen(function*() {
        const tenant = yield* userTenant("pro")
        const key = tenant.keys.admin
        const before = yield* counts(tenant.id)
        for (const role of ["member", "viewer"] as const) {
          const demote = yield* call("PATCH", `/members/${tenant.admin.id}`, { key, body: { role } })
          assert.strictEqual(demote.status, 409)
          assert.strictEqual(demote.body.code, "conflict")
          assert.strictEqual(demote.body.field, "role")
          assert.include(demote.body.message, "only admin")
        }
        const remove = yield* call("DELETE", `/members/${tenant.admin.id}`, { key })
        assert.strictEqual(remove.status, 409)
        assert.strictEqual(remove.body.field, "role")
        assert.deepStrictEqual(yield* counts(tenant.id), before)

        const second = yield* addMember(tenant, "admin")
        const demoted = yield* call("PATCH", `/members/${tenant.admin.id}`, { key, body: { role: "member" } })
        assert.strictEqual(demoted.status, 200)
        assert.strictEqual(demoted.body.role, "member")
        const lastOne = yield* call("DELETE", `/members/${second.id}`, { key })
        assert.strictEqual(lastOne.status, 409)
        assert.strictEqual(lastOne.body.field, "role")
        // Removing a non-admin is fine, and leaves one entry.
        const auditBefore = (yield* counts(tenant.id)).audit
        const removed = yield* call("DELETE", `/members/${tenant.admin.id}`, { key })
        assert.strictEqual(removed.status, 204)
        const after = yield* counts(tenant.id)
        assert.deepStrictEqual([after.members, after.admins, after.audit], [1, 1, auditBefore + 1])
        const entry = theEntry(yield* auditOf(tenant), "member.removed", tenant.admin.id)
        assert.strictEqual(entry.before!["email"], tenant.admin.email)
        assert.strictEqual(entry.before!["role"], "member")
        assert.isNull(entry.after)
        // Gone: 404 now.
        const gone = yield* call("PATCH", `/members/${tenant.admin.id}`, { key, body: { role: "admin" } })
        assert.strictEqual(gone.status, 404)
        assert.strictEqual(gone.body.field, "user_id")
      }))

    it.effect("two admins demoting each other at the same time: one succeeds, the other gets 409, one admin stays", () =>
      Effect.gen(function*() {
        const tenant = yield* userTenant("pro")
        const second = yield* addMember(tenant, "admin")
        const both = [tenant.admin.id, second.id]
        // A race is won or lost by timing: run it several times.
        for (let round = 0; round < 8; round++) {
          const [a, b] = yield* Effect.all(
            both.map((id) => call("PATCH", `/members/${id}`, { key: tenant.keys.admin, body: { role: "viewer" } })),
            { concurrency: 2 }
          )
          assert.deepStrictEqual([a!.status, b!.status].toSorted(), [200, 409], `round ${round}`)
          assert.strictEqual((yield* counts(tenant.id)).admins, 1, `round ${round}`)
          const demoted = both[a!.status === 200 ? 0 : 1]!
          assert.strictEqual((yield* call("PATCH", `/members/${demoted}`, { key: tenant.keys.admin, body: { role: "admin" } })).status, 200)
        }
      }))

    it.effect("invitations: 201 with accept_url once, token stored as SHA-256, 7 days, listed; one audit entry without the token", () =>
      Effect.gen(function*() {
        const tenant = yield* userTenant("pro")
        const before = yield* counts(tenant.id)
        const email = `New.Person-${tag()}@Example.COM`
        const r = yield* call("POST", "/invitations", { key: tenant.keys.admin, body: { email: `  ${email} `, role: "member" } })
        assert.strictEqual(r.status, 201)
        assert.deepStrictEqual(Object.keys(r.body).toSorted(), ["accept_url", "created_at", "email", "expires_at", "id", "invited_by", "role"])
        assert.strictEqual(r.body.email, email.toLowerCase())
        assert.strictEqual(r.body.role, "member")
        assert.isNull(r.body.invited_by, "an API key invited, not a user")
        assert.match(r.body.accept_url, /^\/invite\/[A-Za-z0-9_-]{43}$/)
        const token = tokenOf(r.body.accept_url)
        const ttl = Date.parse(r.body.expires_at) - Date.parse(r.body.created_at)
        assert.approximately(ttl, 7 * 24 * 3600 * 1000, 1000)

        const sql = yield* SqlClient
        const [stored] = yield* sql<{ token_hash: string; email: string }>`SELECT token_hash, email FROM invitations WHERE id = ${r.body.id}::uuid`
        assert.strictEqual(stored!.token_hash, createHash("sha256").update(token).digest("hex"))
        assert.strictEqual(stored!.email, email.toLowerCase())

        const listed = yield* call("GET", "/invitations", { key: tenant.keys.viewer })
        assert.strictEqual(listed.status, 200)
        assert.deepStrictEqual(listed.body.data, [{
          id: r.body.id,
          email: email.toLowerCase(),
          role: "member",
          invited_by: null,
          expires_at: r.body.expires_at,
          created_at: r.body.created_at
        }])
        assert.notInclude(JSON.stringify(listed.body), token)

        const after = yield* counts(tenant.id)
        assert.deepStrictEqual([after.invitations, after.audit], [before.invitations + 1, before.audit + 1])
        const log = yield* auditOf(tenant)
        const entry = theEntry(log, "invitation.created", r.body.id)
        assert.strictEqual(entry.entity_type, "invitation")
        assert.strictEqual(entry.after!["email"], email.toLowerCase())
        assert.notInclude(JSON.stringify(log), token)
        assert.notInclude(JSON.stringify(log), stored!.token_hash)
      }))

    it.effect("invitations: an open one for the address (any case) or an existing member is 409 naming email; an expired one does not block", () =>
      Effect.gen(function*() {
        const tenant = yield* userTenant("pro")
        const key = tenant.keys.admin
        const email = `twice-${tag()}@example.com`
        const first = yield* call("POST", "/invitations", { key, body: { email, role: "viewer" } })
        assert.strictEqual(first.status, 201)
        const before = yield* counts(tenant.id)
        const duplicate = yield* call("POST", "/invitations", { key, body: { email: email.toUpperCase(), role: "admin" } })
        assert.strictEqual(duplicate.status, 409)
        assert.strictEqual(duplicate.body.code, "conflict")
        assert.strictEqual(duplicate.body.field, "email")
        const member = yield* call("POST", "/invitations", { key, body: { email: tenant.admin.email.toUpperCase(), role: "viewer" } })
        assert.strictEqual(member.status, 409)
        assert.strictEqual(member.body.field, "email")
        assert.include(member.body.message, "already a member")
        assert.deepStrictEqual(yield* counts(tenant.id), before)

        // Once expired it is no longer open: not listed, and the address can be invited again.
        yield* backdate(first.body.id)
        const listed = yield* call("GET", "/invitations", { key })
        assert.deepStrictEqual(listed.body.data, [])
        const again = yield* call("POST", "/invitations", { key, body: { email, role: "member" } })
        assert.strictEqual(again.status, 201)
        assert.notStrictEqual(again.body.id, first.body.id)
        const relisted = yield* call("GET", "/invitations", { key })
        assert.deepStrictEqual(relisted.body.data.map((i: { id: string }) => i.id), [again.body.id])
      }))

    it.effect("revoking: 204, gone from the list, its link refused; revoking again changes nothing; an accepted one is 409", () =>
      Effect.gen(function*() {
        const tenant = yield* userTenant("pro")
        const key = tenant.keys.admin
        const invited = yield* call("POST", "/invitations", { key, body: { email: `rev-${tag()}@example.com`, role: "member" } })
        const before = yield* counts(tenant.id)
        const revoked = yield* call("DELETE", `/invitations/${invited.body.id}`, { key })
        assert.strictEqual(revoked.status, 204)
        const after = yield* counts(tenant.id)
        assert.deepStrictEqual([after.open, after.audit], [before.open - 1, before.audit + 1])
        assert.deepStrictEqual((yield* call("GET", "/invitations", { key })).body.data, [])
        const entry = theEntry(yield* auditOf(tenant), "invitation.revoked", invited.body.id)
        assert.isNull(entry.before!["revoked_at"])
        assert.isString(entry.after!["revoked_at"])

        const twice = yield* call("DELETE", `/invitations/${invited.body.id}`, { key })
        assert.strictEqual(twice.status, 204)
        assert.deepStrictEqual(yield* counts(tenant.id), after)

        const user = yield* Users.use((u) => u.signUp(`late-${tag()}@example.com`, password, "Late"))
        const refused = yield* Effect.exit(Members.use((m) => m.acceptInvitation(user.id, tokenOf(invited.body.accept_url))))
        assert.isTrue(Exit.isFailure(refused))
        assert.include(JSON.stringify(refused), "revoked")

        const joined = yield* addMember(tenant, "viewer")
        const accepted = yield* call("DELETE", `/invitations/${joined.invitation}`, { key })
        assert.strictEqual(accepted.status, 409)
        assert.strictEqual(accepted.body.field, "id")
        const unknown = yield* call("DELETE", "/invitations/00000000-0000-4000-8000-000000000000", { key })
        assert.strictEqual(unknown.status, 404)
        assert.strictEqual(unknown.body.field, "id")
      }))

    it.effect("accepting: the invited role, one member.joined entry by the user; wrong token 404; used, expired or already a member 409", () =>
      Effect.gen(function*() {
        const tenant = yield* userTenant("pro")
        const key = tenant.keys.admin
        const members = yield* Members
        const user = yield* Users.use((u) => u.signUp(`join-${tag()}@example.com`, password, "Jo Joiner"))
        const invited = yield* call("POST", "/invitations", { key, body: { email: `other-address-${tag()}@example.com`, role: "viewer" } })
        const token = tokenOf(invited.body.accept_url)

        const wrong = yield* Effect.flip(members.acceptInvitation(user.id, `${token.slice(0, -1)}x`))
        assert.strictEqual(wrong._tag, "NotFound")
        assert.strictEqual(wrong.field, "token")

        const before = yield* counts(tenant.id)
        const joined = yield* members.acceptInvitation(user.id, token, "192.0.2.7")
        assert.strictEqual(joined.organization_id, tenant.id)
        assert.strictEqual(joined.organization_slug, tenant.slug)
        assert.deepStrictEqual({ ...joined.member, joined_at: "" }, { user_id: user.id, email: user.email, name: "Jo Joiner", role: "viewer", joined_at: "" })
        const after = yield* counts(tenant.id)
        assert.deepStrictEqual(
          [after.members, after.open, after.invitations, after.audit],
          [before.members + 1, before.open - 1, before.invitations, before.audit + 1]
        )
        const sql = yield* SqlClient
        const [audit] = yield* sql<{ action: string; actor_user_id: string; actor_api_key_id: string | null; ip: string; after: Record<string, unknown> }>`
          SELECT action, actor_user_id, actor_api_key_id, host(ip) AS ip, after FROM audit_log
          WHERE organization_id = ${tenant.id}::uuid AND action = 'member.joined' AND entity_id = ${user.id}`
        assert.strictEqual(audit!.actor_user_id, user.id)
        assert.isNull(audit!.actor_api_key_id)
        assert.strictEqual(audit!.ip, "192.0.2.7")
        assert.strictEqual(audit!.after["role"], "viewer")
        assert.strictEqual(audit!.after["invitation_id"], invited.body.id)
        const listed = yield* call("GET", "/members", { key })
        assert.include(listed.body.data.map((m: { user_id: string }) => m.user_id), user.id)

        const reused = yield* Effect.flip(members.acceptInvitation(user.id, token))
        assert.strictEqual(reused._tag, "Conflict")
        assert.strictEqual((reused as { field?: string }).field, "token")
        assert.include(reused.message, "already accepted")

        // A second invitation for someone already a member: 409, and the invitation stays open.
        const second = yield* call("POST", "/invitations", { key, body: { email: `second-${tag()}@example.com`, role: "admin" } })
        const already = yield* Effect.flip(members.acceptInvitation(user.id, tokenOf(second.body.accept_url)))
        assert.strictEqual(already._tag, "Conflict")
        assert.include(already.message, "already a member")

        const expiring = yield* call("POST", "/invitations", { key, body: { email: `exp-${tag()}@example.com`, role: "member" } })
        yield* backdate(expiring.body.id)
        const stranger = yield* Users.use((u) => u.signUp(`stranger-${tag()}@example.com`, password, "S"))
        const atCount = yield* counts(tenant.id)
        const expired = yield* Effect.flip(members.acceptInvitation(stranger.id, tokenOf(expiring.body.accept_url)))
        assert.strictEqual(expired._tag, "Conflict")
        assert.strictEqual((expired as { field?: string }).field, "token")
        assert.include(expired.message, "expired")
        assert.deepStrictEqual(yield* counts(tenant.id), atCount)
      }))

    it.effect("max_users on Free: a user's organization cannot invite a second person (402, nothing written); on Pro it can", () =>
      Effect.gen(function*() {
        const tenant = yield* userTenant("free")
        const before = yield* counts(tenant.id)
        const refused = yield* call("POST", "/invitations", { key: tenant.keys.admin, body: { email: `second-${tag()}@example.com`, role: "member" } })
        assert.strictEqual(refused.status, 402)
        assert.strictEqual(refused.body.code, "plan_limit")
        assert.strictEqual(refused.body.field, "max_users")
        assert.strictEqual(refused.body.message, "the Free plan allows 1 users (members and open invitations); this organization has 1")
        assert.deepStrictEqual(yield* counts(tenant.id), before)

        yield* operatorSetsPlan(tenant.slug, "pro")
        const accepted = yield* call("POST", "/invitations", { key: tenant.keys.admin, body: { email: `second-${tag()}@example.com`, role: "member" } })
        assert.strictEqual(accepted.status, 201)
        const org = yield* call("GET", "/organization", { key: tenant.keys.admin })
        assert.deepStrictEqual(org.body.limits.max_users, { limit: null, used: 2 })

        // Back on Free with 2 counted: the open invitation can no longer be accepted.
        yield* operatorSetsPlan(tenant.slug, "free")
        const user = yield* Users.use((u) => u.signUp(`late-${tag()}@example.com`, password, "Late"))
        const atCount = yield* counts(tenant.id)
        const over = yield* Effect.flip(Members.use((m) => m.acceptInvitation(user.id, tokenOf(accepted.body.accept_url))))
        assert.strictEqual(over._tag, "PlanLimitReached")
        assert.deepStrictEqual(yield* counts(tenant.id), atCount)
      }))

    it.effect("max_users on Free counts open invitations: without members the first invitation passes and the second is 402", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("free")
        const first = yield* call("POST", "/invitations", { key: tenant.keys.admin, body: { email: `one-${tag()}@example.com`, role: "admin" } })
        assert.strictEqual(first.status, 201)
        const second = yield* call("POST", "/invitations", { key: tenant.keys.admin, body: { email: `two-${tag()}@example.com`, role: "viewer" } })
        assert.strictEqual(second.status, 402)
        assert.strictEqual(second.body.field, "max_users")
        // Revoking frees the place.
        assert.strictEqual((yield* call("DELETE", `/invitations/${first.body.id}`, { key: tenant.keys.admin })).status, 204)
        const third = yield* call("POST", "/invitations", { key: tenant.keys.admin, body: { email: `two-${tag()}@example.com`, role: "viewer" } })
        assert.strictEqual(third.status, 201)
      }))

    it.effect("tenant isolation: another organization's members and invitations are 404 and never listed", () =>
      Effect.gen(function*() {
        const a = yield* userTenant("pro")
        const b = yield* userTenant("pro")
        const bMember = yield* addMember(b, "member", "Bea Only-In-B")
        const bInvite = yield* call("POST", "/invitations", { key: b.keys.admin, body: { email: `b-only-${tag()}@example.com`, role: "viewer" } })
        const before = yield* counts(b.id)

        for (const userId of [b.admin.id, bMember.id]) {
          const patch = yield* call("PATCH", `/members/${userId}`, { key: a.keys.admin, body: { role: "viewer" } })
          assert.strictEqual(patch.status, 404)
          assert.strictEqual(patch.body.code, "not_found")
          assert.strictEqual(patch.body.field, "user_id")
          const remove = yield* call("DELETE", `/members/${userId}`, { key: a.keys.admin })
          assert.strictEqual(remove.status, 404)
        }
        const revoke = yield* call("DELETE", `/invitations/${bInvite.body.id}`, { key: a.keys.admin })
        assert.strictEqual(revoke.status, 404)
        assert.strictEqual(revoke.body.field, "id")
        assert.deepStrictEqual(yield* counts(b.id), before)

        const lists = JSON.stringify([
          (yield* call("GET", "/members", { key: a.keys.viewer })).body,
          (yield* call("GET", "/invitations", { key: a.keys.viewer })).body,
          (yield* call("GET", "/audit-log", { key: a.keys.admin })).body
        ])
        for (const secret of [b.admin.id, b.admin.email, bMember.id, bMember.email, "Bea Only-In-B", bInvite.body.id, bInvite.body.email]) {
          assert.notInclude(lists, secret)
        }
        // B still sees its own.
        const bList = yield* call("GET", "/members", { key: b.keys.viewer })
        assert.deepStrictEqual(bList.body.data.map((m: { user_id: string }) => m.user_id), [b.admin.id, bMember.id])
      }))

    it.effect("bad input: wrong types, missing and unknown fields, bad e-mail addresses and ids are 400 naming the field, and change nothing", () =>
      Effect.gen(function*() {
        const tenant = yield* userTenant("pro")
        const target = yield* addMember(tenant, "member")
        const key = tenant.keys.admin
        const before = yield* counts(tenant.id)
        const cases: Array<[string, string, unknown, string]> = [
          ["PATCH", `/members/${target.id}`, { role: "owner" }, "role"],
          ["PATCH", `/members/${target.id}`, { role: 1 }, "role"],
          ["PATCH", `/members/${target.id}`, {}, "role"],
          ["PATCH", `/members/${target.id}`, { role: "admin", email: "x@example.com" }, "email"],
          ["PATCH", "/members/not-a-uuid", { role: "admin" }, "user_id"],
          ["DELETE", "/members/1' OR '1'='1", undefined, "user_id"],
          ["POST", "/invitations", { email: "not-an-address", role: "member" }, "email"],
          ["POST", "/invitations", { email: "two@@example.com", role: "member" }, "email"],
          ["POST", "/invitations", { email: "spaces in@example.com", role: "member" }, "email"],
          ["POST", "/invitations", { email: `${"a".repeat(320)}@example.com`, role: "member" }, "email"],
          ["POST", "/invitations", { email: 42, role: "member" }, "email"],
          ["POST", "/invitations", { email: null, role: "member" }, "email"],
          ["POST", "/invitations", { role: "member" }, "email"],
          ["POST", "/invitations", { email: "ok@example.com" }, "role"],
          ["POST", "/invitations", { email: "ok@example.com", role: "Admin" }, "role"],
          ["POST", "/invitations", { email: "ok@example.com", role: "member", expires_at: "2099-01-01" }, "expires_at"],
          ["DELETE", "/invitations/%3Cscript%3E", undefined, "id"]
        ]
        for (const [method, path, body, field] of cases) {
          const r = yield* call(method, path, { key, body })
          assert.strictEqual(r.status, 400, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`)
          assert.strictEqual(r.body.code, "invalid_parameter")
          assert.strictEqual(r.body.field, field, `${method} ${path} ${JSON.stringify(body)}`)
        }
        const malformed = yield* call("POST", "/invitations", { key, rawBody: "{\"email\": \"x@example.com\", " })
        assert.strictEqual(malformed.status, 400)
        const tooLarge = yield* call("POST", "/invitations", { key, body: { email: `${"x".repeat(600 * 1024)}@example.com`, role: "member" } })
        assert.strictEqual(tooLarge.status, 413)
        assert.deepStrictEqual(yield* counts(tenant.id), before)

        // SQL and HTML metacharacters in an address the pattern allows: stored and returned verbatim.
        const odd = `o'hara<b>"x"</b>;--${tag()}@example.com`
        const created = yield* call("POST", "/invitations", { key, body: { email: odd, role: "viewer" } })
        assert.strictEqual(created.status, 201)
        assert.strictEqual(created.body.email, odd)
        const listed = yield* call("GET", "/invitations", { key })
        assert.deepStrictEqual(listed.body.data.map((i: { email: string }) => i.email), [odd])
        const sql = yield* SqlClient
        const [stored] = yield* sql<{ email: string }>`SELECT email FROM invitations WHERE id = ${created.body.id}::uuid`
        assert.strictEqual(stored!.email, odd)
        const after = yield* counts(tenant.id)
        assert.deepStrictEqual([after.members, after.invitations], [before.members, before.invitations + 1])
      }))

    it.effect("the OpenAPI document describes the members endpoints and their errors", () =>
      Effect.gen(function*() {
        const doc = yield* call("GET", "/openapi.json")
        assert.strictEqual(doc.status, 200)
        const paths = doc.body.paths
        assert.hasAllKeys(paths["/api/v1/members"], ["get"])
        assert.hasAllKeys(paths["/api/v1/members/{user_id}"], ["patch", "delete"])
        assert.hasAllKeys(paths["/api/v1/invitations"], ["get", "post"])
        assert.hasAllKeys(paths["/api/v1/invitations/{id}"], ["delete"])
        assert.includeMembers(Object.keys(paths["/api/v1/invitations"].post.responses), ["201", "400", "401", "402", "403", "409"])
        assert.includeMembers(Object.keys(paths["/api/v1/members/{user_id}"].delete.responses), ["204", "404", "409"])
      }))
  })
})
