import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { passwordLength } from "../domain/api/Account.ts"
import { Conflict, InvalidParameter, NotFound, Unauthorized, Unprocessable } from "../domain/api/Errors.ts"
import { emailPattern, maxEmailLength } from "../domain/api/Members.ts"
import { PlanId, Role } from "../domain/Organization.ts"
import type { Principal } from "../domain/Principal.ts"
import { recordAudit } from "../orgs/Audit.ts"
import { OrganizationCreated } from "../orgs/OrganizationCreated.ts"
import { Organizations } from "../orgs/Organizations.ts"
import { rowsOf } from "../platform/Rows.ts"
import * as Passwords from "./Passwords.ts"
import { NullOr } from "../domain/NullOr.ts"

/** A user as the portal shows them: never the password hash. */
export interface User {
  readonly id: string
  readonly email: string
  readonly name: string
  readonly created_at: string
  readonly last_login_at: string | null
}

/** An organization the user belongs to, for choosing one after sign-in. */
export interface UserOrganization {
  readonly id: string
  readonly slug: string
  readonly name: string
  readonly plan: PlanId
  readonly role: Role
  readonly joined_at: string
}

/** What an identity provider vouches for (Oidc.ts `complete`). */
export interface ProviderIdentity {
  readonly subject: string
  readonly email: string | null
  readonly email_verified: boolean
  readonly name: string | null
}

/** Password rules (services/domain/api/Account.ts, shared with the portal's sign-up form). */
export { passwordLength }

const UserRow = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  name: Schema.String,
  password_hash: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  last_login_at: NullOr(Schema.Date)
})
type UserRow = typeof UserRow.Type
const decodeUsers = rowsOf("users", UserRow)
const decodeUsersWithIdentity = rowsOf("users", Schema.Struct({ ...UserRow.fields, has_identity: Schema.Boolean }))
const decodeMemberships = rowsOf("memberships", Schema.Struct({
  id: Schema.String,
  slug: Schema.String,
  name: Schema.String,
  plan_id: PlanId,
  role: Role,
  created_at: Schema.Date
}))

const identityRows = rowsOf("user_identities", Schema.Struct({ provider: Schema.String, created_at: Schema.Date }))

const toUser = (row: UserRow): User => ({
  id: row.id,
  email: row.email,
  name: row.name,
  created_at: new Date(row.created_at).toISOString(),
  last_login_at: row.last_login_at === null ? null : new Date(row.last_login_at).toISOString()
})

/** Lower-cased and trimmed: one account per address whatever its case. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase()

const validEmail = (email: string) => email.length <= maxEmailLength && emailPattern.test(email)

const validName = (name: string, field: string) => {
  const trimmed = name.trim()
  return trimmed.length >= 1 && trimmed.length <= 200
    ? Effect.succeed(trimmed)
    : Effect.fail(new InvalidParameter({ field, message: `${field} must be 1 to 200 characters` }))
}

const wrongCredentials = () => new Unauthorized({ message: "the e-mail address or the password is wrong" })

const userColumns = "u.id, u.email, u.name, u.password_hash, u.created_at, u.last_login_at"

/**
 * Users of the portal: sign-up and sign-in with e-mail and password, sign-in
 * through an identity provider (Oidc.ts), and after sign-in the choice or
 * creation of an organization, which gives the Principal the domain services
 * take. The portal calls `principalFor` on every request, so a role change or
 * a removal applies at once.
 */
export class Users extends Context.Service<Users, {
  /** E-mail stored lower-case and unique (409 naming `email`); password 10 to 200 characters (400 naming `password`). */
  signUp(email: string, password: string, name: string): Effect.Effect<User, Conflict | InvalidParameter>
  /** The same 401 for an unknown address, a wrong password and a user without password; records the sign-in. */
  signIn(email: string, password: string): Effect.Effect<User, Unauthorized>
  get(userId: string): Effect.Effect<User, NotFound>
  /** Changes the user's name (1 to 200 characters after trimming, 400 naming `name`). */
  rename(userId: string, name: string): Effect.Effect<User, InvalidParameter | NotFound>
  /**
   * Changes the password: the current one must match (400 naming
   * `current_password`, also for an account without a password), the new one
   * follows the sign-up rules (400 naming `new_password`).
   */
  changePassword(userId: string, current: string, next: string): Effect.Effect<void, InvalidParameter>
  /** The identity providers linked to the user (Google, Microsoft...), oldest first. */
  identitiesOf(userId: string): Effect.Effect<ReadonlyArray<{ readonly provider: string; readonly linked_at: string }>>
  /** Creates an organization on the Free plan with the user as its admin (audit `organization.created`). */
  createOrganization(
    userId: string,
    input: { readonly name: string; readonly slug: string },
    ip?: string | null
  ): Effect.Effect<UserOrganization, Conflict | InvalidParameter | NotFound>
  /** The user's organizations, by name. */
  organizationsOf(userId: string): Effect.Effect<ReadonlyArray<UserOrganization>>
  /** The user acting in one of their organizations; 404 when they are not a member of it. */
  principalFor(userId: string, organizationId: string, ip?: string | null): Effect.Effect<Principal, NotFound>
  /**
   * The user an identity provider's account signs in as: the one already
   * linked to (provider, subject); else the user with the same e-mail address
   * when the provider verified it (linked now); else a new user. An address
   * the provider did not verify is refused (422 naming `email`).
   */
  signInWithIdentity(provider: string, identity: ProviderIdentity): Effect.Effect<
    { readonly user: User; readonly created: boolean; readonly linked: boolean },
    Unprocessable
  >
}>()("statusgrid/identity/Users") {
  static readonly layer = Layer.effect(
    Users,
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const organizations = yield* Organizations
      // Nothing by default; demo mode gives a new organization its starter stack (orgs/OrganizationCreated.ts).
      const onCreated = yield* OrganizationCreated
      // PASSWORD_SCRYPT_COST and PASSWORD_HASH_CONCURRENCY (Passwords.ts).
      const passwords = yield* Passwords.fromConfig
      // Compared against when the address is unknown, so that both failures take one scrypt.
      const decoy = yield* Effect.cached(passwords.hash("decoy password for unknown users"))

      const signUp = Effect.fn("Users.signUp")(function*(rawEmail: string, password: string, rawName: string) {
        const email = normalizeEmail(rawEmail)
        if (!validEmail(email)) return yield* new InvalidParameter({ field: "email", message: "email must be an e-mail address" })
        const length = [...password].length
        if (length < passwordLength.min || length > passwordLength.max) {
          return yield* new InvalidParameter({
            field: "password",
            message: `password must be ${passwordLength.min} to ${passwordLength.max} characters`
          })
        }
        const name = yield* validName(rawName, "name")
        const hash = yield* passwords.hash(password)
        const [row] = yield* sql`
          INSERT INTO users AS u (email, name, password_hash) VALUES (${email}, ${name}, ${hash})
          ON CONFLICT DO NOTHING RETURNING ${sql.literal(userColumns)}`.pipe(Effect.flatMap(decodeUsers), Effect.orDie)
        if (row === undefined) return yield* new Conflict({ field: "email", message: `an account with ${email} exists; sign in instead` })
        return toUser(row)
      })

      const signIn = Effect.fn("Users.signIn")(function*(rawEmail: string, password: string) {
        // No stored password is longer than the rules allow: refuse at once rather than hash a huge input.
        if ([...password].length > passwordLength.max) return yield* wrongCredentials()
        const email = normalizeEmail(rawEmail)
        const [row] = yield* sql`
          SELECT ${sql.literal(userColumns)} FROM users u WHERE lower(u.email) = ${email}`.pipe(Effect.flatMap(decodeUsers), Effect.orDie)
        if (row === undefined || row.password_hash === null) {
          yield* passwords.verify(password, yield* decoy)
          return yield* wrongCredentials()
        }
        if (!(yield* passwords.verify(password, row.password_hash))) return yield* wrongCredentials()
        // The password is at hand only now: the moment to move an old hash to the current parameters.
        const rehash = passwords.needsRehash(row.password_hash) ? yield* passwords.hash(password) : null
        const [updated] = yield* sql`
          UPDATE users AS u SET last_login_at = now(), password_hash = coalesce(${rehash}, u.password_hash)
          WHERE u.id = ${row.id}::uuid RETURNING ${sql.literal(userColumns)}`.pipe(Effect.flatMap(decodeUsers), Effect.orDie)
        return toUser(updated ?? row)
      })

      const get = Effect.fn("Users.get")(function*(userId: string) {
        const [row] = yield* sql`SELECT ${sql.literal(userColumns)} FROM users u WHERE u.id = ${userId}::uuid`.pipe(Effect.flatMap(decodeUsers), Effect.orDie)
        if (row === undefined) return yield* new NotFound({ field: "user_id", message: `no user ${userId}` })
        return toUser(row)
      })

      const rename = Effect.fn("Users.rename")(function*(userId: string, rawName: string) {
        const name = yield* validName(rawName, "name")
        const [row] = yield* sql`
          UPDATE users AS u SET name = ${name} WHERE u.id = ${userId}::uuid
          RETURNING ${sql.literal(userColumns)}`.pipe(Effect.flatMap(decodeUsers), Effect.orDie)
        if (row === undefined) return yield* new NotFound({ field: "user_id", message: `no user ${userId}` })
        return toUser(row)
      })

      const changePassword = Effect.fn("Users.changePassword")(function*(userId: string, current: string, next: string) {
        const length = [...next].length
        if (length < passwordLength.min || length > passwordLength.max) {
          return yield* new InvalidParameter({
            field: "new_password",
            message: `new_password must be ${passwordLength.min} to ${passwordLength.max} characters`
          })
        }
        const wrong = new InvalidParameter({ field: "current_password", message: "current_password is wrong" })
        if ([...current].length > passwordLength.max) return yield* wrong
        const [row] = yield* sql`
          SELECT ${sql.literal(userColumns)} FROM users u WHERE u.id = ${userId}::uuid`.pipe(Effect.flatMap(decodeUsers), Effect.orDie)
        if (row === undefined || row.password_hash === null) {
          yield* passwords.verify(current, yield* decoy)
          return yield* new InvalidParameter({
            field: "current_password",
            message: "current_password: this account has no password; it signs in through its identity provider"
          })
        }
        if (!(yield* passwords.verify(current, row.password_hash))) return yield* wrong
        const hash = yield* passwords.hash(next)
        yield* sql`UPDATE users SET password_hash = ${hash} WHERE id = ${userId}::uuid`.pipe(Effect.orDie)
      })

      const identitiesOf = (userId: string) =>
        sql`SELECT provider, created_at FROM user_identities WHERE user_id = ${userId}::uuid ORDER BY created_at, provider`.pipe(
          Effect.flatMap(identityRows),
          Effect.map((rows) => rows.map((r) => ({ provider: r.provider, linked_at: new Date(r.created_at).toISOString() }))),
          Effect.orDie
        )

      const membershipsOf = (userId: string, organizationId?: string) =>
        sql`
          SELECT o.id, o.slug, o.name, o.plan_id, m.role, m.created_at
          FROM memberships m JOIN organizations o ON o.id = m.organization_id
          WHERE m.user_id = ${userId}::uuid
            AND ${organizationId === undefined ? sql`true` : sql`m.organization_id = ${organizationId}::uuid`}
          ORDER BY lower(o.name), o.id`.pipe(Effect.flatMap(decodeMemberships),
          Effect.map((rows) =>
            rows.map((r): UserOrganization => ({
              id: r.id,
              slug: r.slug,
              name: r.name,
              plan: r.plan_id,
              role: r.role,
              joined_at: new Date(r.created_at).toISOString()
            }))
          ),
          Effect.orDie
        )

      const createOrganization = Effect.fn("Users.createOrganization")(function*(
        userId: string,
        input: { readonly name: string; readonly slug: string },
        ip: string | null
      ) {
        const name = yield* validName(input.name, "name")
        const user = yield* get(userId)
        const created = yield* sql.withTransaction(Effect.gen(function*() {
          const { id } = yield* organizations.create({ name, slug: input.slug, plan: "free" })
          yield* sql`INSERT INTO memberships (organization_id, user_id, role) VALUES (${id}::uuid, ${userId}::uuid, 'admin')`
          const principal: Principal = {
            organization_id: id,
            organization_slug: input.slug,
            plan: "free",
            role: "admin",
            actor: { kind: "user", id: userId },
            ip
          }
          yield* recordAudit(principal, {
            action: "organization.created",
            entity_type: "organization",
            entity_id: id,
            after: { id, slug: input.slug, name, plan: "free", admin: { user_id: userId, email: user.email } }
          })
          const [created] = yield* membershipsOf(userId, id)
          return { membership: created!, principal }
        })).pipe(Effect.provideService(SqlClient, sql), Effect.catchTag("SqlError", Effect.die))
        yield* onCreated.created(created.principal).pipe(
          Effect.catchCause((cause) => Effect.logWarning("after creating an organization: the listener failed", cause))
        )
        return created.membership
      })

      const principalFor = Effect.fn("Users.principalFor")(function*(userId: string, organizationId: string, ip: string | null) {
        const [membership] = yield* membershipsOf(userId, organizationId)
        if (membership === undefined) {
          return yield* new NotFound({ field: "organization_id", message: `no organization ${organizationId} of this user` })
        }
        return {
          organization_id: membership.id,
          organization_slug: membership.slug,
          plan: membership.plan,
          role: membership.role,
          actor: { kind: "user", id: userId },
          ip
        } satisfies Principal
      })

      const signInWithIdentity = Effect.fn("Users.signInWithIdentity")(function*(provider: string, identity: ProviderIdentity) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const [linked] = yield* sql`
            UPDATE users AS u SET last_login_at = now() FROM user_identities i
            WHERE i.provider = ${provider} AND i.subject = ${identity.subject} AND u.id = i.user_id
            RETURNING ${sql.literal(userColumns)}`.pipe(Effect.flatMap(decodeUsers))
          if (linked !== undefined) return { user: toUser(linked), created: false, linked: false }

          const email = identity.email === null ? "" : normalizeEmail(identity.email)
          if (!validEmail(email) || !identity.email_verified) {
            return yield* new Unprocessable({
              field: "email",
              message: "the identity provider did not give a verified e-mail address; sign in another way"
            })
          }
          const name = (identity.name ?? "").trim().slice(0, 200)
          const [inserted] = yield* sql`
            INSERT INTO users AS u (email, name, last_login_at) VALUES (${email}, ${name}, now())
            ON CONFLICT DO NOTHING RETURNING ${sql.literal(userColumns)}`.pipe(Effect.flatMap(decodeUsers))
          let user = inserted
          if (user === undefined) {
            // An account with this address exists. The provider proved the address belongs to this person, but
            // whoever set the account's password did not (sign-up does not verify addresses): on its first link,
            // drop that password and its sessions, so an account made in advance with someone else's address
            // does not stay open to its maker.
            const [existing] = yield* sql`
              SELECT ${sql.literal(userColumns)}, EXISTS (SELECT 1 FROM user_identities i WHERE i.user_id = u.id) AS has_identity
              FROM users u WHERE lower(u.email) = ${email} FOR UPDATE`.pipe(Effect.flatMap(decodeUsersWithIdentity))
            const dropPassword = !existing!.has_identity && existing!.password_hash !== null
            const [updated] = yield* sql`
              UPDATE users AS u SET last_login_at = now(), password_hash = CASE WHEN ${dropPassword} THEN NULL ELSE u.password_hash END
              WHERE u.id = ${existing!.id}::uuid RETURNING ${sql.literal(userColumns)}`.pipe(Effect.flatMap(decodeUsers))
            if (dropPassword) yield* sql`DELETE FROM sessions WHERE user_id = ${existing!.id}::uuid`
            user = updated!
          }
          yield* sql`
            INSERT INTO user_identities (user_id, provider, subject) VALUES (${user.id}::uuid, ${provider}, ${identity.subject})
            ON CONFLICT DO NOTHING`
          return { user: toUser(user), created: inserted !== undefined, linked: inserted === undefined }
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      return Users.of({
        signUp,
        signIn,
        get,
        rename,
        changePassword,
        identitiesOf,
        createOrganization: (userId, input, ip) => createOrganization(userId, input, ip ?? null),
        organizationsOf: (userId) => membershipsOf(userId),
        principalFor: (userId, organizationId, ip) => principalFor(userId, organizationId, ip ?? null),
        signInWithIdentity
      })
    })
  ).pipe(Layer.provide(Organizations.layer))
}
