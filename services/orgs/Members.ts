import { Config, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { createHash, randomBytes } from "node:crypto"
import { Conflict, type Forbidden, type InvalidParameter, NotFound, type PlanLimitReached } from "../domain/api/Errors.ts"
import { type Invitation, type InvitationCreated, InvitationView, type Member } from "../domain/api/Members.ts"
import { PlanId, Role } from "../domain/Organization.ts"
import type { Principal } from "../domain/Principal.ts"
import { rowsOf } from "../platform/Rows.ts"
import { SecretBox, secretBinding } from "../platform/SecretBox.ts"
import { requirePermission } from "./Access.ts"
import { invitationMail } from "./InvitationMail.ts"
import { recordAudit } from "./Audit.ts"
import { ensureWithinLimit } from "./Limits.ts"
import { cursorAt, listPage, type PageRequest } from "./Paging.ts"
import type { Page } from "../domain/api/Paging.ts"
import { NullOr } from "../domain/NullOr.ts"

/** The rows of the queries below, decoded by Schemas compiled once (services/platform/Rows.ts). */
const membershipsNRows = rowsOf("memberships", Schema.Struct({ n: Schema.Number }))
const invitationsExpiredRows = rowsOf("invitations", Schema.Struct({ expired: Schema.Boolean }))
const organizationsNameRows = rowsOf("organizations", Schema.Struct({ name: Schema.String }))
const invitationsOrganizationIdRows = rowsOf("invitations", Schema.Struct({ organization_id: Schema.String }))
const organizationsSlugPlanIdRows = rowsOf("organizations", Schema.Struct({
  slug: Schema.String,
  plan_id: PlanId
}))
const usersEmailNameRows = rowsOf("users", Schema.Struct({
  email: Schema.String,
  name: Schema.String
}))
const invitationViewRows = rowsOf("invitations", Schema.Struct({
  ...InvitationView.fields,
  expires_at: Schema.Date
}))
const membershipsCreatedAtRows = rowsOf("memberships", Schema.Struct({ created_at: Schema.Date }))

/** 32 random bytes, base64url: the secret of the invitation link, sent once and stored only as its SHA-256. */
const newToken = () => randomBytes(32).toString("base64url")
export const hashInvitationToken = (token: string) => createHash("sha256").update(token).digest("hex")

const MemberRow = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  name: Schema.String,
  role: Role,
  created_at: Schema.Date,
  cursor_at: Schema.String
})
type MemberRow = typeof MemberRow.Type
const decodeMembers = rowsOf("memberships", MemberRow)

const toMember = (row: MemberRow): Member => ({
  user_id: row.id,
  email: row.email,
  name: row.name,
  role: row.role,
  joined_at: new Date(row.created_at).toISOString()
})

const InvitationRow = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  role: Role,
  invited_by: Schema.NullOr(Schema.String),
  expires_at: Schema.Date,
  created_at: Schema.Date,
  accepted_at: NullOr(Schema.Date),
  revoked_at: NullOr(Schema.Date),
  expired: Schema.Boolean,
  cursor_at: Schema.String
})
type InvitationRow = typeof InvitationRow.Type
const decodeInvitations = rowsOf("invitations", InvitationRow)

const toInvitation = (row: InvitationRow): Invitation => ({
  id: row.id,
  email: row.email,
  role: row.role,
  invited_by: row.invited_by,
  expires_at: new Date(row.expires_at).toISOString(),
  created_at: new Date(row.created_at).toISOString()
})

/** What accepting an invitation gives: the organization joined and the membership. */
export interface Joined {
  readonly organization_id: string
  readonly organization_slug: string
  readonly member: Member
}

/**
 * Members, invitations and roles of an organization. Every change locks the
 * organization's row first (as `ensureWithinLimit` does), so concurrent
 * changes of one organization's members run one after the other: two admins
 * cannot demote each other into an organization without an admin, and two
 * invitations cannot both take the last free place.
 */
export class Members extends Context.Service<Members, {
  list(principal: Principal, page: PageRequest): Effect.Effect<Page<Member>, Forbidden | InvalidParameter>
  /** Changes a member's role; demoting the last admin is a 409 naming `role`. */
  update(principal: Principal, userId: string, input: { readonly role: Role }): Effect.Effect<Member, Forbidden | NotFound | Conflict>
  /** Removes a member; removing the last admin is a 409 naming `role`. */
  remove(principal: Principal, userId: string): Effect.Effect<void, Forbidden | NotFound | Conflict>
  /** Open invitations: not accepted, not revoked, not expired. */
  listInvitations(principal: Principal, page: PageRequest): Effect.Effect<Page<Invitation>, Forbidden | InvalidParameter>
  invite(
    principal: Principal,
    input: { readonly email: string; readonly role: Role }
  ): Effect.Effect<InvitationCreated, Forbidden | Conflict | PlanLimitReached>
  revokeInvitation(principal: Principal, id: string): Effect.Effect<void, Forbidden | NotFound | Conflict>
  /**
   * A signed-in user accepts an invitation with the token of its link: they
   * become a member with the invited role. Unknown token: 404; expired,
   * revoked or already accepted: 409 naming `token`; already a member: 409.
   */
  acceptInvitation(userId: string, token: string, ip?: string | null): Effect.Effect<Joined, NotFound | Conflict | PlanLimitReached>
  /** The invitation of a link, for its page (anyone holding the token may see it): unknown token 404. */
  invitationByToken(token: string): Effect.Effect<InvitationView, NotFound>
}>()("statusgrid/orgs/Members") {
  static readonly layer = Layer.effect(
    Members,
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const box = yield* SecretBox
      const publicUrl = yield* Config.String("PUBLIC_URL").pipe(Config.withDefault("http://localhost:8080"), Effect.orDie)
      const ttlHours = yield* Config.Int("INVITATION_TTL_HOURS").pipe(Config.withDefault(168), Effect.orDie)
      if (ttlHours < 1) return yield* Effect.die(new Error("INVITATION_TTL_HOURS must be at least 1"))

      const lockOrganization = (organizationId: string) =>
        sql`SELECT id FROM organizations WHERE id = ${organizationId}::uuid FOR UPDATE`

      const memberRow = (organizationId: string, userId: string) =>
        sql`
          SELECT m.user_id AS id, u.email, u.name, m.role, m.created_at, '' AS cursor_at
          FROM memberships m JOIN users u ON u.id = m.user_id
          WHERE m.organization_id = ${organizationId}::uuid AND m.user_id = ${userId}::uuid`.pipe(Effect.flatMap(decodeMembers), Effect.map((rows) => rows[0]))

      /** Fails with 409 when `userId` is the organization's only admin (call with the organization locked). */
      const keepAnAdmin = Effect.fn("Members.keepAnAdmin")(function*(organizationId: string, member: MemberRow, what: string) {
        if (member.role !== "admin") return
        const [row] = yield* sql`
            SELECT count(*)::int AS n FROM memberships WHERE organization_id = ${organizationId}::uuid AND role = 'admin'`.pipe(Effect.flatMap(membershipsNRows))
        if (Number(row?.n ?? 0) <= 1) {
          return yield* new Conflict({
            field: "role",
            message: `${member.email} is the organization's only admin and cannot be ${what}; make another member admin first`
          })
        }
      })

      const list = Effect.fn("Members.list")(function*(principal: Principal, page: PageRequest) {
        yield* requirePermission(principal, "view")
        return yield* listPage({
          page,
          select: (where, limit) =>
            sql`
              SELECT t.id, t.email, t.name, t.role, t.created_at, ${sql.literal(cursorAt)}
              FROM (SELECT m.user_id AS id, m.organization_id, u.email, u.name, m.role, m.created_at
                    FROM memberships m JOIN users u ON u.id = m.user_id) t
              WHERE t.organization_id = ${principal.organization_id}::uuid AND ${where}
              ORDER BY t.created_at, t.id LIMIT ${limit}`.pipe(Effect.flatMap(decodeMembers)),
          map: toMember
        })
      })

      const update = Effect.fn("Members.update")(function*(principal: Principal, userId: string, input: { readonly role: Role }) {
        yield* requirePermission(principal, "members.manage")
        return yield* sql.withTransaction(Effect.gen(function*() {
          yield* lockOrganization(principal.organization_id)
          const before = yield* memberRow(principal.organization_id, userId)
          if (before === undefined) {
            return yield* new NotFound({ field: "user_id", message: `no member ${userId} in this organization` })
          }
          if (before.role === input.role) return toMember(before)
          if (input.role !== "admin") yield* keepAnAdmin(principal.organization_id, before, "demoted")
          yield* sql`
            UPDATE memberships SET role = ${input.role}
            WHERE organization_id = ${principal.organization_id}::uuid AND user_id = ${userId}::uuid`
          const after = toMember({ ...before, role: input.role })
          yield* recordAudit(principal, {
            action: "member.role_changed",
            entity_type: "member",
            entity_id: userId,
            before: toMember(before),
            after
          })
          return after
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      const remove = Effect.fn("Members.remove")(function*(principal: Principal, userId: string) {
        yield* requirePermission(principal, "members.manage")
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* lockOrganization(principal.organization_id)
          const before = yield* memberRow(principal.organization_id, userId)
          if (before === undefined) {
            return yield* new NotFound({ field: "user_id", message: `no member ${userId} in this organization` })
          }
          yield* keepAnAdmin(principal.organization_id, before, "removed")
          yield* sql`
            DELETE FROM memberships WHERE organization_id = ${principal.organization_id}::uuid AND user_id = ${userId}::uuid`
          yield* recordAudit(principal, { action: "member.removed", entity_type: "member", entity_id: userId, before: toMember(before) })
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      const invitationColumns = sql.literal(
        `t.id, t.email, t.role, t.invited_by, t.expires_at, t.created_at, t.accepted_at, t.revoked_at,
         t.expires_at <= now() AS expired, ${cursorAt}`
      )

      const listInvitations = Effect.fn("Members.listInvitations")(function*(principal: Principal, page: PageRequest) {
        yield* requirePermission(principal, "view")
        return yield* listPage({
          page,
          select: (where, limit) =>
            sql`
              SELECT ${invitationColumns} FROM invitations t
              WHERE t.organization_id = ${principal.organization_id}::uuid
                AND t.accepted_at IS NULL AND t.revoked_at IS NULL AND t.expires_at > now() AND ${where}
              ORDER BY t.created_at, t.id LIMIT ${limit}`.pipe(Effect.flatMap(decodeInvitations)),
          map: toInvitation
        })
      })

      const invite = Effect.fn("Members.invite")(function*(principal: Principal, input: { readonly email: string; readonly role: Role }) {
        yield* requirePermission(principal, "members.manage")
        const email = input.email.trim().toLowerCase()
        return yield* sql.withTransaction(Effect.gen(function*() {
          yield* lockOrganization(principal.organization_id)
          const [member] = yield* sql`
            SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id
            WHERE m.organization_id = ${principal.organization_id}::uuid AND lower(u.email) = ${email}`
          if (member !== undefined) return yield* new Conflict({ field: "email", message: `${email} is already a member` })
          const open = yield* sql`
            SELECT expires_at <= now() AS expired FROM invitations
            WHERE organization_id = ${principal.organization_id}::uuid AND lower(email) = ${email}
              AND accepted_at IS NULL AND revoked_at IS NULL`.pipe(Effect.flatMap(invitationsExpiredRows))
          if (open.some((i) => !i.expired)) {
            return yield* new Conflict({ field: "email", message: `${email} already has an open invitation; revoke it to invite again` })
          }
          // An expired invitation still holds the one-open-invitation-per-address index: close it.
          if (open.length > 0) {
            yield* sql`
              UPDATE invitations SET revoked_at = now()
              WHERE organization_id = ${principal.organization_id}::uuid AND lower(email) = ${email}
                AND accepted_at IS NULL AND revoked_at IS NULL`
          }
          yield* ensureWithinLimit(principal.organization_id, "max_users")
          const token = newToken()
          const [row] = yield* sql`
            INSERT INTO invitations AS t (organization_id, email, role, token_hash, invited_by, expires_at)
            VALUES (${principal.organization_id}::uuid, ${email}, ${input.role}, ${hashInvitationToken(token)},
              ${principal.actor.kind === "user" ? principal.actor.id : null}::uuid, now() + ${ttlHours} * interval '1 hour')
            RETURNING ${invitationColumns}`.pipe(Effect.flatMap(decodeInvitations))
          const invitation = toInvitation(row!)
          yield* recordAudit(principal, { action: "invitation.created", entity_type: "invitation", entity_id: invitation.id, after: invitation })
          // The e-mail with the link, queued in this transaction and sent by the notifier's mail worker; the token travels sealed.
          const [org] = yield* sql`SELECT name FROM organizations WHERE id = ${principal.organization_id}::uuid`.pipe(Effect.flatMap(organizationsNameRows))
          const mail = invitationMail({
            organization: org?.name ?? principal.organization_slug,
            email,
            role: input.role,
            link: `${publicUrl.replace(/\/$/, "")}/invite/${token}`,
            expiresAt: invitation.expires_at
          })
          yield* sql`INSERT INTO invitation_mails (invitation_id, sealed)
            VALUES (${invitation.id}::uuid, ${box.seal(JSON.stringify(mail), secretBinding("invitation mail", principal.organization_id, invitation.id))})`
          return { ...invitation, accept_url: `/invite/${token}` }
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      const revokeInvitation = Effect.fn("Members.revokeInvitation")(function*(principal: Principal, id: string) {
        yield* requirePermission(principal, "members.manage")
        yield* sql.withTransaction(Effect.gen(function*() {
          const [before] = yield* sql`
            SELECT ${invitationColumns} FROM invitations t
            WHERE t.id = ${id}::uuid AND t.organization_id = ${principal.organization_id}::uuid FOR UPDATE`.pipe(Effect.flatMap(decodeInvitations))
          if (before === undefined) return yield* new NotFound({ field: "id", message: `no invitation ${id} in this organization` })
          if (before.accepted_at !== null) {
            return yield* new Conflict({ field: "id", message: "the invitation was accepted; remove the member instead" })
          }
          // Revoking twice is not a second change.
          if (before.revoked_at !== null) return
          const [after] = yield* sql`
            UPDATE invitations AS t SET revoked_at = now() WHERE t.id = ${id}::uuid RETURNING ${invitationColumns}`.pipe(Effect.flatMap(decodeInvitations))
          yield* recordAudit(principal, {
            action: "invitation.revoked",
            entity_type: "invitation",
            entity_id: id,
            before: { ...toInvitation(before), revoked_at: null },
            after: { ...toInvitation(after!), revoked_at: new Date(after!.revoked_at!).toISOString() }
          })
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      const acceptInvitation = Effect.fn("Members.acceptInvitation")(function*(userId: string, token: string, ip: string | null = null) {
        const hash = hashInvitationToken(token)
        const unknown = new NotFound({ field: "token", message: "no invitation has this token" })
        return yield* sql.withTransaction(Effect.gen(function*() {
          const [found] = yield* sql`SELECT organization_id FROM invitations WHERE token_hash = ${hash}`.pipe(Effect.flatMap(invitationsOrganizationIdRows))
          if (found === undefined) return yield* unknown
          const [organization] = yield* sql`
            SELECT slug, plan_id FROM organizations WHERE id = ${found.organization_id}::uuid FOR UPDATE`.pipe(Effect.flatMap(organizationsSlugPlanIdRows))
          const [invitation] = yield* sql`
            SELECT ${invitationColumns} FROM invitations t WHERE t.token_hash = ${hash} FOR UPDATE`.pipe(Effect.flatMap(decodeInvitations))
          if (organization === undefined || invitation === undefined) return yield* unknown
          if (invitation.accepted_at !== null) return yield* new Conflict({ field: "token", message: "this invitation was already accepted" })
          if (invitation.revoked_at !== null) return yield* new Conflict({ field: "token", message: "this invitation was revoked" })
          if (invitation.expired) {
            return yield* new Conflict({
              field: "token",
              message: `this invitation expired at ${new Date(invitation.expires_at).toISOString()}; ask for a new one`
            })
          }
          const [user] = yield* sql`SELECT email, name FROM users WHERE id = ${userId}::uuid`.pipe(Effect.flatMap(usersEmailNameRows))
          if (user === undefined) return yield* new NotFound({ field: "user_id", message: `no user ${userId}` })
          const existing = yield* memberRow(found.organization_id, userId)
          if (existing !== undefined) {
            return yield* new Conflict({ field: "token", message: "you are already a member of this organization" })
          }
          // The open invitation already counts against max_users; accepting adds nothing, unless the plan shrank since.
          yield* ensureWithinLimit(found.organization_id, "max_users", 0)
          const [row] = yield* sql`
            INSERT INTO memberships (organization_id, user_id, role)
            VALUES (${found.organization_id}::uuid, ${userId}::uuid, ${invitation.role}) RETURNING created_at`.pipe(Effect.flatMap(membershipsCreatedAtRows))
          yield* sql`UPDATE invitations SET accepted_at = now() WHERE id = ${invitation.id}::uuid`
          const member = toMember({ id: userId, email: user.email, name: user.name, role: invitation.role, created_at: row!.created_at, cursor_at: "" })
          const principal: Principal = {
            organization_id: found.organization_id,
            organization_slug: organization.slug,
            plan: organization.plan_id,
            role: invitation.role,
            actor: { kind: "user", id: userId },
            ip
          }
          yield* recordAudit(principal, {
            action: "member.joined",
            entity_type: "member",
            entity_id: userId,
            after: { ...member, invitation_id: invitation.id, invited_email: invitation.email }
          })
          return { organization_id: found.organization_id, organization_slug: organization.slug, member }
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      const invitationByToken = Effect.fn("Members.invitationByToken")(function*(token: string) {
        const [row] = yield* sql`
          SELECT o.name AS organization_name, o.slug AS organization_slug, t.email, t.role, u.name AS invited_by_name,
            t.expires_at,
            CASE WHEN t.accepted_at IS NOT NULL THEN 'accepted' WHEN t.revoked_at IS NOT NULL THEN 'revoked'
              WHEN t.expires_at <= now() THEN 'expired' ELSE 'open' END AS state
          FROM invitations t JOIN organizations o ON o.id = t.organization_id
          LEFT JOIN users u ON u.id = t.invited_by
          WHERE t.token_hash = ${hashInvitationToken(token)}`.pipe(Effect.orDie, Effect.flatMap(invitationViewRows))
        if (row === undefined) return yield* new NotFound({ field: "token", message: "no invitation has this token" })
        return { ...row, expires_at: new Date(row.expires_at).toISOString() } satisfies InvitationView
      })

      // The audit log, limits and paging run on this layer's connection (and so inside its transactions).
      const onSql = <A, E>(effect: Effect.Effect<A, E, SqlClient>) => Effect.provideService(effect, SqlClient, sql)
      return Members.of({
        list: (principal, page) => onSql(list(principal, page)),
        update: (principal, userId, input) => onSql(update(principal, userId, input)),
        remove: (principal, userId) => onSql(remove(principal, userId)),
        listInvitations: (principal, page) => onSql(listInvitations(principal, page)),
        invite: (principal, input) => onSql(invite(principal, input)),
        revokeInvitation: (principal, id) => onSql(revokeInvitation(principal, id)),
        acceptInvitation: (userId, token, ip) => onSql(acceptInvitation(userId, token, ip ?? null)),
        invitationByToken: (token) => onSql(invitationByToken(token))
      })
    })
  )
}
