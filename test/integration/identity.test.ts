import { assert, describe, layer } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { createHash, generateKeyPairSync, randomBytes } from "node:crypto"
import { type Completion, Oidc, type OidcProviderConfig } from "../../services/identity/Oidc.ts"
import * as Passwords from "../../services/identity/Passwords.ts"
import { hashSessionToken, Sessions } from "../../services/identity/Sessions.ts"
import { Users } from "../../services/identity/Users.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { FakeIdp, type Person } from "../support/oidcProvider.ts"
import { freshDatabase, withConfig } from "../support/stores.ts"

const tag = () => Math.random().toString(36).slice(2, 10)
const password = "correct horse battery"

class Idps extends Context.Service<Idps, { readonly google: FakeIdp; readonly microsoft: FakeIdp }>()("test/Idps") {}

const idpsLayer = Layer.effect(
  Idps,
  Effect.acquireRelease(
    Effect.promise(async () => {
      const google = new FakeIdp("google")
      const microsoft = new FakeIdp("microsoft")
      await google.start()
      await microsoft.start()
      return { google, microsoft }
    }),
    ({ google, microsoft }) =>
      Effect.promise(() => Promise.all([google.stop(), microsoft.stop()]))
  )
)

/** The portal's side of the flow: ask for the URL, "sign in" at the provider, come back with the code. */
const signInFlow = (providerId: "google" | "microsoft", person: Person) =>
  Effect.gen(function*() {
    const idps = yield* Idps
    const oidc = yield* Oidc
    idps[providerId].person = person
    const redirectUri = "https://portal.example/auth/callback"
    const request = yield* oidc.authorizationUrl(providerId, redirectUri)
    const answer = yield* Effect.promise(() => fetch(request.url, { redirect: "manual" }))
    assert.strictEqual(answer.status, 302)
    const back = new URL(answer.headers.get("location")!)
    assert.strictEqual(back.searchParams.get("state"), request.state)
    // What the portal's callback passes on: the query as it came, and what it kept of this sign-in.
    const completion: Completion = { parameters: back.searchParams, state: request.state, verifier: request.verifier, nonce: request.nonce, redirectUri }
    return { request, code: back.searchParams.get("code")!, redirectUri, completion }
  })

const database = Layer.effectDiscard(Migrations.migratePostgres()).pipe(
  Layer.provideMerge(Layer.unwrap(Effect.map(freshDatabase, (url) => Postgres.layerServer(url, { maxConnections: 4 }))))
)

const oidcLayer = Layer.unwrap(Effect.gen(function*() {
  const { google, microsoft } = yield* Idps
  const providers: Array<OidcProviderConfig> = [google, microsoft].map((idp) => ({
    id: idp.kind,
    issuer: idp.issuer,
    client_id: idp.clientId,
    client_secret: idp.clientSecret,
    kind: idp.kind,
    // Microsoft's multi-tenant issuer needs the tenants allowed (the stand-in's one).
    ...(idp.kind === "microsoft" ? { tenants: [idp.tenant] } : {})
  }))
  // Configured with another issuer than its discovery document names (localhost, not 127.0.0.1).
  providers.push({ ...providers[0]!, id: "lookalike", issuer: google.issuer.replace("127.0.0.1", "localhost") })
  // Key sets asked for again at most every second (60 by default): the rotation test waits that long.
  return Oidc.layer.pipe(Layer.provide(withConfig({ OIDC_PROVIDERS: JSON.stringify(providers), OIDC_JWKS_REFETCH_SECONDS: "1" })))
}))

const identity = Layer.mergeAll(Users.layer, Sessions.layer, oidcLayer).pipe(
  Layer.provideMerge(idpsLayer),
  Layer.provideMerge(database)
)

describe("identity: users, passwords, organizations, sessions, OpenID Connect", () => {
  layer(identity, { timeout: 120_000, excludeTestServices: true })("on PostgreSQL", (it) => {
    it.effect("sign-up: address lower-cased and unique in any case (409), password 10 to 200 characters, stored as scrypt", () =>
      Effect.gen(function*() {
        const users = yield* Users
        const sql = yield* SqlClient
        const email = `Mixed.Case-${tag()}@Example.ORG`
        const user = yield* users.signUp(`  ${email} `, password, "  Grace Hopper ")
        assert.strictEqual(user.email, email.toLowerCase())
        assert.strictEqual(user.name, "Grace Hopper")
        assert.isNull(user.last_login_at)
        assert.deepStrictEqual(Object.keys(user).toSorted(), ["created_at", "email", "id", "last_login_at", "name"])
        const [row] = yield* sql<{ password_hash: string }>`SELECT password_hash FROM users WHERE id = ${user.id}::uuid`
        // With the configured cost (PASSWORD_SCRYPT_COST, lowered for the tests in vitest.config.ts; 17 by default).
        const configured = yield* Passwords.fromConfig
        assert.isTrue(row!.password_hash.startsWith(`scrypt$${configured.params.N}$8$1$`), row!.password_hash)
        assert.isFalse(configured.needsRehash(row!.password_hash))
        assert.notInclude(row!.password_hash, password)
        assert.isTrue(yield* Passwords.verify(password, row!.password_hash))

        const duplicate = yield* Effect.flip(users.signUp(email.toUpperCase(), "another good password", "Imposter"))
        assert.strictEqual(duplicate._tag, "Conflict")
        assert.strictEqual((duplicate as { field?: string }).field, "email")

        const [before] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM users`
        const bad: Array<[string, string, string, string]> = [
          [`short-${tag()}@example.com`, "9 chars!!", "X", "password"],
          [`long-${tag()}@example.com`, "x".repeat(201), "X", "password"],
          ["not-an-address", password, "X", "email"],
          [`${"a".repeat(320)}@example.com`, password, "X", "email"],
          [`noname-${tag()}@example.com`, password, "   ", "name"],
          [`longname-${tag()}@example.com`, password, "n".repeat(201), "name"]
        ]
        for (const [e, p, n, field] of bad) {
          const error = yield* Effect.flip(users.signUp(e, p, n))
          assert.strictEqual(error._tag, "InvalidParameter", field)
          assert.strictEqual((error as { field?: string }).field, field)
        }
        const [after] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM users`
        assert.strictEqual(after!.n, before!.n)
        // The bounds themselves are accepted; length counts characters, not bytes.
        yield* users.signUp(`ten-${tag()}@example.com`, "1234567890", "Ten")
        yield* users.signUp(`max-${tag()}@example.com`, "é".repeat(200), "Max")
      }))

    it.effect("sign-in: the same 401 for a wrong password, an unknown address and a user without password; success records the time", () =>
      Effect.gen(function*() {
        const users = yield* Users
        const sql = yield* SqlClient
        const user = yield* users.signUp(`signin-${tag()}@example.com`, password, "Sig")
        const signedIn = yield* users.signIn(user.email.toUpperCase(), password)
        assert.strictEqual(signedIn.id, user.id)
        assert.isString(signedIn.last_login_at)

        const [oidcOnly] = yield* sql<{ id: string; email: string }>`
          INSERT INTO users (email, name) VALUES (${`sso-${tag()}@example.com`}, 'SSO') RETURNING id, email`
        const failures = [
          yield* Effect.flip(users.signIn(user.email, `${password}!`)),
          yield* Effect.flip(users.signIn(`nobody-${tag()}@example.com`, password)),
          yield* Effect.flip(users.signIn(oidcOnly!.email, password)),
          yield* Effect.flip(users.signIn(user.email, "x".repeat(100_000)))
        ]
        for (const f of failures) {
          assert.strictEqual(f._tag, "Unauthorized")
          assert.strictEqual(f.message, "the e-mail address or the password is wrong")
        }
        const [after] = yield* sql<{ last_login_at: Date }>`SELECT last_login_at FROM users WHERE id = ${oidcOnly!.id}::uuid`
        assert.isNull(after!.last_login_at)
      }))

    it.effect("sign-in moves a hash made with older parameters to the current ones", () =>
      Effect.gen(function*() {
        const users = yield* Users
        const sql = yield* SqlClient
        const configured = yield* Passwords.fromConfig
        const user = yield* users.signUp(`rehash-${tag()}@example.com`, password, "Old")
        const stored = Effect.map(sql<{ password_hash: string }>`SELECT password_hash FROM users WHERE id = ${user.id}::uuid`, ([row]) => row!.password_hash)
        const old = yield* Passwords.hash(password, { ...configured.params, N: 2 ** 10 })
        yield* sql`UPDATE users SET password_hash = ${old} WHERE id = ${user.id}::uuid`
        // A wrong password changes nothing: the password is not known.
        yield* Effect.flip(users.signIn(user.email, `${password}!`))
        assert.strictEqual(yield* stored, old)
        yield* users.signIn(user.email, password)
        const upgraded = yield* stored
        assert.notStrictEqual(upgraded, old)
        assert.isTrue(upgraded.startsWith(`scrypt$${configured.params.N}$8$1$`), upgraded)
        assert.isFalse(configured.needsRehash(upgraded))
        assert.isTrue(yield* Passwords.verify(password, upgraded))
        // A current hash stays as it is at the next sign-in.
        yield* users.signIn(user.email, password)
        assert.strictEqual(yield* stored, upgraded)
      }))

    it.effect("organizations: created on Free with the user as admin (one organization.created entry), listed, and the user's principal", () =>
      Effect.gen(function*() {
        const users = yield* Users
        const sql = yield* SqlClient
        const user = yield* users.signUp(`founder-${tag()}@example.com`, password, "Founder")
        const slug = `acme-${tag()}`
        const org = yield* users.createOrganization(user.id, { name: " Acme <Ops> ", slug }, "198.51.100.4")
        assert.deepStrictEqual({ ...org, joined_at: "" }, { id: org.id, slug, name: "Acme <Ops>", plan: "free", role: "admin", joined_at: "" })
        const audit = yield* sql<{ action: string; entity_id: string; actor_user_id: string; ip: string; after: Record<string, unknown> }>`
          SELECT action, entity_id, actor_user_id, host(ip) AS ip, after FROM audit_log WHERE organization_id = ${org.id}::uuid`
        assert.strictEqual(audit.length, 1)
        assert.deepStrictEqual([audit[0]!.action, audit[0]!.entity_id, audit[0]!.actor_user_id, audit[0]!.ip], ["organization.created", org.id, user.id, "198.51.100.4"])
        assert.strictEqual(audit[0]!.after["slug"], slug)

        const second = yield* users.createOrganization(user.id, { name: "Beta", slug: `beta-${tag()}` })
        const mine = yield* users.organizationsOf(user.id)
        assert.deepStrictEqual(mine.map((o) => [o.id, o.role]), [[org.id, "admin"], [second.id, "admin"]])

        const principal = yield* users.principalFor(user.id, org.id, "203.0.113.9")
        assert.deepStrictEqual(principal, {
          organization_id: org.id,
          organization_slug: slug,
          plan: "free",
          role: "admin",
          actor: { kind: "user", id: user.id },
          ip: "203.0.113.9"
        })
        const stranger = yield* users.signUp(`stranger-${tag()}@example.com`, password, "Stranger")
        const notMember = yield* Effect.flip(users.principalFor(stranger.id, org.id))
        assert.strictEqual(notMember._tag, "NotFound")
        assert.deepStrictEqual(yield* users.organizationsOf(stranger.id), [])
      }))

    it.effect("organizations: a taken or malformed slug is 409 and a bad name 400, and nothing is half-created", () =>
      Effect.gen(function*() {
        const users = yield* Users
        const sql = yield* SqlClient
        const user = yield* users.signUp(`slugs-${tag()}@example.com`, password, "Slugs")
        const slug = `taken-${tag()}`
        yield* users.createOrganization(user.id, { name: "First", slug })
        const count = sql<{ orgs: number; memberships: number; audit: number }>`
          SELECT (SELECT count(*)::int FROM organizations) AS orgs, (SELECT count(*)::int FROM memberships) AS memberships,
            (SELECT count(*)::int FROM audit_log) AS audit`
        const [before] = yield* count
        const taken = yield* Effect.flip(users.createOrganization(user.id, { name: "Second", slug }))
        assert.strictEqual(taken._tag, "Conflict")
        assert.strictEqual((taken as { field?: string }).field, "slug")
        const malformed = yield* Effect.flip(users.createOrganization(user.id, { name: "Bad", slug: "Bad Slug'; --" }))
        assert.strictEqual(malformed._tag, "Conflict")
        assert.strictEqual((malformed as { field?: string }).field, "slug")
        const noName = yield* Effect.flip(users.createOrganization(user.id, { name: "  ", slug: `ok-${tag()}` }))
        assert.strictEqual(noName._tag, "InvalidParameter")
        const noUser = yield* Effect.flip(users.createOrganization("00000000-0000-4000-8000-000000000000", { name: "x", slug: `ok-${tag()}` }))
        assert.strictEqual(noUser._tag, "NotFound")
        assert.deepStrictEqual((yield* count)[0], before)
      }))

    it.effect("sessions: token and CSRF token returned once, stored as SHA-256; resolve, choose an organization, sign out", () =>
      Effect.gen(function*() {
        const users = yield* Users
        const sessions = yield* Sessions
        const sql = yield* SqlClient
        const user = yield* users.signUp(`session-${tag()}@example.com`, password, "Sess")
        const org = yield* users.createOrganization(user.id, { name: "Mine", slug: `mine-${tag()}` })
        const other = yield* users.createOrganization(
          (yield* users.signUp(`other-${tag()}@example.com`, password, "Other")).id,
          { name: "Theirs", slug: `theirs-${tag()}` }
        )
        const { token, csrf, session } = yield* sessions.create(user.id)
        assert.match(token, /^[A-Za-z0-9_-]{43}$/)
        assert.match(csrf, /^[A-Za-z0-9_-]{43}$/)
        assert.notStrictEqual(token, csrf)
        assert.strictEqual(session.id, hashSessionToken(token))
        assert.isNull(session.organization_id)
        const [row] = yield* sql<{ id: string; expires_at: Date; created_at: Date }>`
          SELECT id, expires_at, created_at FROM sessions WHERE user_id = ${user.id}::uuid`
        assert.strictEqual(row!.id, createHash("sha256").update(token).digest("hex"))
        assert.approximately(new Date(row!.expires_at).getTime() - new Date(row!.created_at).getTime(), 7 * 24 * 3600 * 1000, 1000)
        const stored = yield* sql`SELECT * FROM sessions WHERE id = ${token}`
        assert.strictEqual(stored.length, 0, "the token itself is not a key")

        const resolved = yield* sessions.resolve(token)
        assert.strictEqual(resolved.user_id, user.id)
        yield* sessions.checkCsrf(resolved, csrf)
        const mismatch = yield* Effect.flip(sessions.checkCsrf(resolved, token))
        assert.strictEqual(mismatch._tag, "CsrfMismatch")

        const notMine = yield* Effect.flip(sessions.selectOrganization(resolved, other.id))
        assert.strictEqual(notMine._tag, "NotFound")
        const chosen = yield* sessions.selectOrganization(resolved, org.id)
        assert.strictEqual(chosen.organization_id, org.id)
        assert.strictEqual((yield* sessions.resolve(token)).organization_id, org.id)

        const unknown = yield* Effect.flip(sessions.resolve(randomBytes(32).toString("base64url")))
        assert.strictEqual(unknown._tag, "SessionExpired")
        yield* sessions.destroy(token)
        const signedOut = yield* Effect.flip(sessions.resolve(token))
        assert.strictEqual(signedOut._tag, "SessionExpired")
        assert.strictEqual(signedOut.code, "session_expired")
      }))

    it.effect("sessions end after 12 h idle or 7 days in all; activity is recorded at most once a minute", () =>
      Effect.gen(function*() {
        const users = yield* Users
        const sessions = yield* Sessions
        const sql = yield* SqlClient
        const user = yield* users.signUp(`idle-${tag()}@example.com`, password, "Idle")

        const active = yield* sessions.create(user.id)
        yield* sql`UPDATE sessions SET last_seen_at = now() - interval '11 hours 59 minutes' WHERE id = ${active.session.id}`
        const touched = yield* sessions.resolve(active.token)
        assert.isBelow(Date.now() - new Date(touched.last_seen_at).getTime(), 5_000, "resolving restarts the idle clock")
        yield* sql`UPDATE sessions SET last_seen_at = now() - interval '30 seconds' WHERE id = ${active.session.id}`
        const [before] = yield* sql<{ last_seen_at: Date }>`SELECT last_seen_at FROM sessions WHERE id = ${active.session.id}`
        yield* sessions.resolve(active.token)
        const [after] = yield* sql<{ last_seen_at: Date }>`SELECT last_seen_at FROM sessions WHERE id = ${active.session.id}`
        assert.strictEqual(new Date(after!.last_seen_at).getTime(), new Date(before!.last_seen_at).getTime(), "not rewritten within a minute")

        const idle = yield* sessions.create(user.id)
        yield* sql`UPDATE sessions SET last_seen_at = now() - interval '12 hours 1 minute' WHERE id = ${idle.session.id}`
        const idleError = yield* Effect.flip(sessions.resolve(idle.token))
        assert.strictEqual(idleError._tag, "SessionExpired")
        assert.include(idleError.message, "expired")
        assert.strictEqual((yield* sql`SELECT 1 FROM sessions WHERE id = ${idle.session.id}`).length, 0, "an ended session is deleted")

        const old = yield* sessions.create(user.id)
        yield* sql`
          UPDATE sessions SET created_at = now() - interval '8 days', expires_at = now() - interval '1 day', last_seen_at = now()
          WHERE id = ${old.session.id}`
        assert.strictEqual((yield* Effect.flip(sessions.resolve(old.token)))._tag, "SessionExpired")

        const ended = yield* sessions.create(user.id)
        yield* sql`UPDATE sessions SET last_seen_at = now() - interval '13 hours' WHERE id = ${ended.session.id}`
        assert.isAtLeast(yield* sessions.purgeExpired(), 1)
        assert.strictEqual((yield* sql`SELECT 1 FROM sessions WHERE id = ${ended.session.id}`).length, 0)
        assert.strictEqual((yield* sessions.resolve(active.token)).id, active.session.id, "a live session survives the purge")
        assert.strictEqual(yield* sessions.destroyAllOf(user.id), 1)
      }))

    it.effect("OIDC (Google-type): PKCE code flow, validated ID token; a new user on first sign-in, the same user after", () =>
      Effect.gen(function*() {
        const oidc = yield* Oidc
        const idps = yield* Idps
        assert.deepStrictEqual(oidc.providers, [
          { id: "google", kind: "google" },
          { id: "microsoft", kind: "microsoft" },
          { id: "lookalike", kind: "google" }
        ])
        const person = { sub: `g-${tag()}`, email: `Ann-${tag()}@Gmail.example`, email_verified: true, name: "Ann Example" }
        const flow = yield* signInFlow("google", person)
        const url = new URL(flow.request.url)
        assert.strictEqual(url.origin + url.pathname, `${idps.google.base}/authorize`)
        assert.deepStrictEqual(
          [...url.searchParams.keys()].toSorted(),
          ["client_id", "code_challenge", "code_challenge_method", "nonce", "redirect_uri", "response_type", "scope", "state"]
        )
        assert.strictEqual(url.searchParams.get("code_challenge"), createHash("sha256").update(flow.request.verifier).digest("base64url"))
        assert.notInclude(flow.request.url, flow.request.verifier)
        assert.notInclude(flow.request.url, idps.google.clientSecret)

        const first = yield* oidc.signInWithOidc("google", flow.completion)
        assert.isTrue(first.created)
        assert.strictEqual(first.user.email, person.email.toLowerCase())
        assert.strictEqual(first.user.name, "Ann Example")
        const sql = yield* SqlClient
        const links = yield* sql<{ user_id: string }>`SELECT user_id FROM user_identities WHERE provider = 'google' AND subject = ${person.sub}`
        assert.deepStrictEqual(links.map((l) => l.user_id), [first.user.id])

        // Again, even with another address at the provider: the link decides.
        const again = yield* signInFlow("google", { ...person, email: `changed-${tag()}@gmail.example` })
        const second = yield* oidc.signInWithOidc("google", again.completion)
        assert.deepStrictEqual([second.user.id, second.created, second.linked], [first.user.id, false, false])
        // A code works once.
        const reused = yield* Effect.flip(oidc.complete("google", again.completion))
        assert.strictEqual(reused._tag, "OidcSignInFailed")
        assert.include(reused.message, "400")
      }))

    it.effect("OIDC: a verified address links an existing password account, dropping its password and sessions; unverified is refused", () =>
      Effect.gen(function*() {
        const oidc = yield* Oidc
        const users = yield* Users
        const sessions = yield* Sessions
        const sql = yield* SqlClient
        const existing = yield* users.signUp(`linked-${tag()}@example.com`, password, "Linda")
        const open = yield* sessions.create(existing.id)
        const flow = yield* signInFlow("google", { sub: `g-${tag()}`, email: existing.email.toUpperCase(), email_verified: true })
        const result = yield* oidc.signInWithOidc("google", flow.completion)
        assert.deepStrictEqual([result.user.id, result.created, result.linked], [existing.id, false, true])
        const [row] = yield* sql<{ password_hash: string | null }>`SELECT password_hash FROM users WHERE id = ${existing.id}::uuid`
        assert.isNull(row!.password_hash)
        assert.strictEqual((yield* Effect.flip(sessions.resolve(open.token)))._tag, "SessionExpired")
        assert.strictEqual((yield* Effect.flip(users.signIn(existing.email, password)))._tag, "Unauthorized")

        const [usersBefore] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM users`
        for (const person of [
          { sub: `g-${tag()}`, email: `unverified-${tag()}@example.com`, email_verified: false },
          { sub: `g-${tag()}`, email: existing.email, email_verified: false },
          { sub: `g-${tag()}` }
        ]) {
          const f = yield* signInFlow("google", person)
          const refused = yield* Effect.flip(oidc.signInWithOidc("google", f.completion))
          assert.strictEqual(refused._tag, "Unprocessable", JSON.stringify(person))
          assert.strictEqual((refused as { field?: string }).field, "email")
        }
        const [usersAfter] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM users`
        assert.strictEqual(usersAfter!.n, usersBefore!.n)
      }))

    it.effect("OIDC: forged, expired, misaddressed or replayed ID tokens and a wrong PKCE verifier are refused", () =>
      Effect.gen(function*() {
        const oidc = yield* Oidc
        const idps = yield* Idps
        const idp = idps.google
        const stranger = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey
        const now = Math.floor(Date.now() / 1000)
        const cases: Array<[string, FakeIdp["tamper"], string]> = [
          ["signed with another key", { key: stranger }, "signature"],
          ["alg none", { header: { alg: "none" } }, "RS256"],
          ["alg HS256", { header: { alg: "HS256" } }, "RS256"],
          ["unknown kid", { header: { kid: "nope" } }, "key set"],
          ["another issuer", { claims: { iss: "https://evil.example" } }, "issued by"],
          ["another audience", { claims: { aud: "someone-else" } }, "another client"],
          ["several audiences, azp another", { claims: { aud: [idp.clientId, "other"], azp: "other" } }, "another party"],
          ["expired", { claims: { exp: now - 120 } }, "expired"],
          ["issued in the future", { claims: { iat: now + 600 } }, "future"],
          ["another nonce", { claims: { nonce: "replayed" } }, "nonce"],
          ["no subject", { claims: { sub: "" } }, "claims"]
        ]
        for (const [what, tamper, expected] of cases) {
          const flow = yield* signInFlow("google", { sub: `g-${tag()}`, email: `t-${tag()}@example.com`, email_verified: true })
          idp.tamper = tamper
          const error = yield* Effect.flip(oidc.complete("google", flow.completion))
          assert.strictEqual(error._tag, "OidcSignInFailed", what)
          assert.include(error.message, expected, what)
        }
        const flow = yield* signInFlow("google", { sub: `g-${tag()}`, email: `pkce-${tag()}@example.com`, email_verified: true })
        const wrongVerifier = yield* Effect.flip(oidc.complete("google", { ...flow.completion, verifier: randomBytes(32).toString("base64url") }))
        assert.strictEqual(wrongVerifier._tag, "OidcSignInFailed")
        assert.include(wrongVerifier.message, "invalid_grant")
        // The untampered token of the same flow still works: the checks above are not failing for another reason.
        const ok = yield* oidc.complete("google", flow.completion)
        assert.strictEqual(ok.email_verified, true)
        const unknown = yield* Effect.flip(oidc.authorizationUrl("github", "https://portal.example/cb"))
        assert.strictEqual(unknown._tag, "NotFound")
        const lookalike = yield* Effect.flip(oidc.authorizationUrl("lookalike", "https://portal.example/cb"))
        assert.strictEqual(lookalike._tag, "OidcSignInFailed")
        assert.include(lookalike.message, "names the issuer")
      }))

    it.effect("OIDC: a rotated signing key is fetched when a token names it; metadata is cached otherwise", () =>
      Effect.gen(function*() {
        const oidc = yield* Oidc
        const idp = (yield* Idps).google
        const warm = yield* signInFlow("google", { sub: `g-${tag()}`, email: `warm-${tag()}@example.com`, email_verified: true })
        yield* oidc.complete("google", warm.completion)
        const hits = { ...idp.hits }
        const kid = idp.rotate()
        // Past the limit on key-set requests (OIDC_JWKS_REFETCH_SECONDS, 1 s here; oidc-conformance.test.ts tests the limit).
        yield* Effect.sleep("1100 millis")
        const flow = yield* signInFlow("google", { sub: `g-${tag()}`, email: `rot-${tag()}@example.com`, email_verified: true })
        const identity = yield* oidc.complete("google", flow.completion)
        assert.strictEqual(identity.email_verified, true)
        assert.strictEqual(idp.hits.jwks, hits.jwks + 1, `fetched the key set once for ${kid}`)
        assert.strictEqual(idp.hits.discovery, hits.discovery, "discovery cached")
      }))

    it.effect("OIDC (Microsoft-type): the {tenantid} issuer is checked against the token's tid; xms_edov counts as verified", () =>
      Effect.gen(function*() {
        const oidc = yield* Oidc
        const idp = (yield* Idps).microsoft
        const person = { sub: `m-${tag()}`, email: `Max-${tag()}@Contoso.example`, email_verified: true, name: "Max" }
        const flow = yield* signInFlow("microsoft", person)
        const result = yield* oidc.signInWithOidc("microsoft", flow.completion)
        assert.isTrue(result.created)
        assert.strictEqual(result.user.email, person.email.toLowerCase())

        const other = yield* signInFlow("microsoft", person)
        idp.tamper = { claims: { tid: "00000000-0000-0000-0000-000000000000" } }
        const wrongTenant = yield* Effect.flip(oidc.complete("microsoft", other.completion))
        assert.strictEqual(wrongTenant._tag, "OidcSignInFailed")
        assert.include(wrongTenant.message, "issued by")

        const unverified = yield* signInFlow("microsoft", { sub: `m-${tag()}`, email: `nov-${tag()}@contoso.example` })
        const identity = yield* oidc.complete("microsoft", unverified.completion)
        assert.strictEqual(identity.email_verified, false)
      }))
  })
})

/** Builds the Oidc layer from this OIDC_PROVIDERS value (no database is touched while building). */
const build = (value: string) =>
  Effect.exit(Effect.scoped(Layer.build(Oidc.layer.pipe(
    Layer.provide(withConfig({ OIDC_PROVIDERS: value })),
    Layer.provide(Layer.succeed(SqlClient, {} as never))
  ))))

describe("identity: OIDC_PROVIDERS configuration", () => {

  layer(Layer.empty)("invalid settings stop the start with the reason", (it) => {
    it.effect("not JSON, missing fields, bad ids, plain-HTTP issuers and duplicate ids are refused", () =>
      Effect.gen(function*() {
        const base = { id: "google", issuer: "https://accounts.google.com", client_id: "c", client_secret: "s", kind: "google" }
        const cases: Array<[string, string]> = [
          ["[{", "OIDC_PROVIDERS is invalid"],
          [JSON.stringify([{ ...base, client_secret: undefined }]), "client_secret"],
          [JSON.stringify([{ ...base, id: "Google Workspace" }]), "id"],
          [JSON.stringify([{ ...base, kind: "github" }]), "kind"],
          [JSON.stringify([{ ...base, issuer: "http://accounts.google.com" }]), "HTTPS"],
          [JSON.stringify([base, base]), "used twice"]
        ]
        for (const [value, expected] of cases) {
          const exit = yield* build(value)
          assert.isTrue(Exit.isFailure(exit), value)
          if (Exit.isFailure(exit)) assert.include(Cause.pretty(exit.cause), expected, value)
        }
        const none = yield* build("[]")
        assert.strictEqual(none._tag, "Success")
      }))
  })
})
