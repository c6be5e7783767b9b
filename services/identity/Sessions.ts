import { Config, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import { NotFound } from "../domain/api/Errors.ts"
import { rowsOf } from "../platform/Rows.ts"

/**
 * 419: the session is unknown, signed out, idle too long or
 * past its absolute end. Same body shape as every API error. Kept here until
 * the portal's errors have a home beside services/domain/api/Errors.ts.
 */
export class SessionExpired extends Schema.Error<SessionExpired>("SessionExpired")({
  _tag: Schema.tagDefaultOmit("SessionExpired"),
  code: Schema.tag("session_expired"),
  message: Schema.String
}, { httpApiStatus: 419, identifier: "SessionExpired" }) {}

/** 419: a state-changing request without the session's CSRF token. */
export class CsrfMismatch extends Schema.Error<CsrfMismatch>("CsrfMismatch")({
  _tag: Schema.tagDefaultOmit("CsrfMismatch"),
  code: Schema.tag("csrf_mismatch"),
  message: Schema.String
}, { httpApiStatus: 419, identifier: "CsrfMismatch" }) {}

export const Session = Schema.Struct({
  /** SHA-256 of the token: what the table keys on, safe to log. */
  id: Schema.String,
  user_id: Schema.String,
  organization_id: Schema.NullOr(Schema.String),
  csrf_token: Schema.String,
  created_at: Schema.Date,
  expires_at: Schema.Date,
  last_seen_at: Schema.Date
})
export type Session = typeof Session.Type
const decodeSessions = rowsOf("sessions", Session)
const decodeResolved = rowsOf("sessions", Schema.Struct({ ...Session.fields, ended: Schema.Boolean, stale: Schema.Boolean }))

/** 32 random bytes, base64url: the cookie value (token) and the form value (csrf). */
const newSecret = () => randomBytes(32).toString("base64url")
export const hashSessionToken = (token: string) => createHash("sha256").update(token).digest("hex")

const sha256 = (value: string) => createHash("sha256").update(value).digest()

/** `CsrfMismatch` unless `presented` is the session's CSRF token; hashed first so the comparison is constant-time whatever the lengths. */
export const checkCsrf = (session: Session, presented: string | null | undefined): Effect.Effect<void, CsrfMismatch> =>
  typeof presented === "string" && presented !== "" && timingSafeEqual(sha256(presented), sha256(session.csrf_token))
    ? Effect.void
    : Effect.fail(new CsrfMismatch({ message: "the form is out of date (CSRF token mismatch); reload the page" }))

const count = (rows: ReadonlyArray<unknown>) => rows.length

/** How often `last_seen_at` is written: at most once a minute per session, not per request. */
const touchEverySeconds = 60

const columns = "s.id, s.user_id, s.organization_id, s.csrf_token, s.created_at, s.expires_at, s.last_seen_at"

/**
 * Server-side portal sessions. The cookie holds a random token; the table
 * holds its SHA-256, the user, the chosen organization and a CSRF token.
 * A session ends at the first of: `destroy` (sign-out), `SESSION_IDLE_MINUTES`
 * without a request (default 720, 12 h), `SESSION_ABSOLUTE_HOURS` after
 * sign-in (default 168, 7 days). Both failures are 419 in the portal.
 */
export class Sessions extends Context.Service<Sessions, {
  /** A new session for a signed-in user: `token` goes in the cookie, `csrf` in the portal's forms. */
  create(userId: string, organizationId?: string | null): Effect.Effect<{ readonly token: string; readonly csrf: string; readonly session: Session }>
  /** The live session of a cookie token, its idle clock restarted; `SessionExpired` otherwise (and an ended one is deleted). */
  resolve(token: string): Effect.Effect<Session, SessionExpired>
  /** `CsrfMismatch` unless `presented` is the session's CSRF token (compared in constant time). */
  checkCsrf(session: Session, presented: string | null | undefined): Effect.Effect<void, CsrfMismatch>
  /** Records the organization the user chose; 404 unless they are a member of it. */
  selectOrganization(session: Session, organizationId: string): Effect.Effect<Session, NotFound>
  /** Signs out: the token stops resolving at once. */
  destroy(token: string): Effect.Effect<void>
  /** Ends every session of a user (password change, removal); returns how many. */
  destroyAllOf(userId: string): Effect.Effect<number>
  /** Ends every session of a user but `keep` (a session's id): "sign out everywhere else"; returns how many. */
  destroyOthersOf(userId: string, keep: string): Effect.Effect<number>
  /** Deletes ended sessions; returns how many. */
  purgeExpired(): Effect.Effect<number>
}>()("statusgrid/identity/Sessions") {
  static readonly layer = Layer.effect(
    Sessions,
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const idleMinutes = yield* Config.Int("SESSION_IDLE_MINUTES").pipe(Config.withDefault(720), Effect.orDie)
      const absoluteHours = yield* Config.Int("SESSION_ABSOLUTE_HOURS").pipe(Config.withDefault(168), Effect.orDie)
      if (idleMinutes < 1 || absoluteHours < 1) {
        return yield* Effect.die(new Error("SESSION_IDLE_MINUTES and SESSION_ABSOLUTE_HOURS must be at least 1"))
      }
      const ended = sql`(s.expires_at <= now() OR s.last_seen_at <= now() - ${idleMinutes} * interval '1 minute')`

      const create = Effect.fn("Sessions.create")(function*(userId: string, organizationId: string | null) {
        const token = newSecret()
        const csrf = newSecret()
        const [row] = yield* sql`
          INSERT INTO sessions AS s (id, user_id, organization_id, csrf_token, expires_at)
          VALUES (${hashSessionToken(token)}, ${userId}::uuid, ${organizationId}::uuid, ${csrf}, now() + ${absoluteHours} * interval '1 hour')
          RETURNING ${sql.literal(columns)}`.pipe(Effect.flatMap(decodeSessions), Effect.orDie)
        return { token, csrf, session: row! }
      })

      const resolve = Effect.fn("Sessions.resolve")(function*(token: string) {
        const id = hashSessionToken(token)
        const [row] = yield* sql`
          SELECT ${sql.literal(columns)}, ${ended} AS ended,
            s.last_seen_at < now() - ${touchEverySeconds} * interval '1 second' AS stale
          FROM sessions s WHERE s.id = ${id}`.pipe(Effect.flatMap(decodeResolved), Effect.orDie)
        if (row === undefined) return yield* new SessionExpired({ message: "you are signed out; sign in again" })
        if (row.ended) {
          yield* sql`DELETE FROM sessions WHERE id = ${id}`.pipe(Effect.orDie)
          return yield* new SessionExpired({ message: "your session has expired; sign in again" })
        }
        const { ended: _, stale, ...session } = row
        if (!stale) return session
        const [touched] = yield* sql`
          UPDATE sessions AS s SET last_seen_at = now() WHERE s.id = ${id} RETURNING ${sql.literal(columns)}`.pipe(Effect.flatMap(decodeSessions), Effect.orDie)
        return touched ?? session
      })

      const selectOrganization = Effect.fn("Sessions.selectOrganization")(function*(session: Session, organizationId: string) {
        const [row] = yield* sql`
          UPDATE sessions AS s SET organization_id = m.organization_id
          FROM memberships m
          WHERE s.id = ${session.id} AND m.user_id = s.user_id AND m.organization_id = ${organizationId}::uuid
          RETURNING ${sql.literal(columns)}`.pipe(Effect.flatMap(decodeSessions), Effect.orDie)
        if (row === undefined) {
          return yield* new NotFound({ field: "organization_id", message: `no organization ${organizationId} of this user` })
        }
        return row
      })

      const destroy = (token: string) => sql`DELETE FROM sessions WHERE id = ${hashSessionToken(token)}`.pipe(Effect.asVoid, Effect.orDie)

      const destroyAllOf = (userId: string) =>
        sql`DELETE FROM sessions WHERE user_id = ${userId}::uuid RETURNING id`.pipe(Effect.map(count), Effect.orDie)
      const destroyOthersOf = (userId: string, keep: string) =>
        sql`DELETE FROM sessions WHERE user_id = ${userId}::uuid AND id <> ${keep} RETURNING id`.pipe(Effect.map(count), Effect.orDie)
      const purgeExpired = () => sql`DELETE FROM sessions s WHERE ${ended} RETURNING s.id`.pipe(Effect.map(count), Effect.orDie)

      return Sessions.of({
        create: (userId, organizationId) => create(userId, organizationId ?? null),
        resolve,
        checkCsrf,
        selectOrganization,
        destroy,
        destroyAllOf,
        destroyOthersOf,
        purgeExpired
      })
    })
  )
}
