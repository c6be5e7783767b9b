import { assert, describe, layer } from "@effect/vitest"
import { Cause, Clock, Context, Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { createHash, randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, it } from "vitest"
import { type Completion, Oidc, type OidcSignInFailed } from "../../services/identity/Oidc.ts"
import { FakeIdp, type Person } from "../support/oidcProvider.ts"
import { childEnv, embeddedServers, freePort, type Running, runCli } from "../support/process.ts"
import { withConfig } from "../support/stores.ts"

/**
 * OpenID Connect conformance of services/identity/Oidc.ts (on oauth4webapi)
 * against the local stand-in (test/support/oidcProvider.ts: real HTTP, real
 * RS256 signatures): the authorization response's `iss` (RFC 9207), the
 * nonce, PKCE, Microsoft's tenants, key rotation and the limit on key-set
 * requests. First through the portal's real routes of a `statusgrid start`
 * (`/signin/<provider>` → the provider → `/signin/<provider>/callback`), then
 * through the Oidc service itself where a test needs to see more (messages,
 * counts, a clock moved forward). The routes are those of portal/build (as in
 * security-headers.test.ts): infra/test builds it first; after changing the
 * portal, `npx react-router build portal`.
 */

const tag = () => Math.random().toString(36).slice(2, 10)
const otherTenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"

// ---------------------------------------------------------------------------------------------------------
// Through the portal's routes
// ---------------------------------------------------------------------------------------------------------

const start = embeddedServers()

interface Attempt {
  /** The callback's answer: 302 on to the portal with a session, or 401 with the "Sign-in failed" page. */
  readonly status: number
  readonly location: string | null
  readonly page: string
  readonly session: boolean
  /** Token requests the provider got during this attempt. */
  readonly tokenRequests: number
}

/**
 * A sign-in as a browser makes it, without a browser: start (the pending
 * `sg_oidc` cookie), the provider's authorization endpoint, back to the
 * callback with the cookie. `pending` may change what the cookie keeps.
 */
const signInThroughRoutes = async (
  server: Running,
  provider: string,
  idp: FakeIdp,
  pending: (kept: Record<string, string>) => Record<string, string> = (kept) => kept
): Promise<Attempt> => {
  const tokensBefore = idp.hits.token
  const started = await fetch(`${server.url}/signin/${provider}?next=/orgs`, { redirect: "manual" })
  assert.strictEqual(started.status, 302, await started.text())
  const cookie = /^sg_oidc=([^;]+)/u.exec(started.headers.get("set-cookie") ?? "")?.[1]
  assert.isDefined(cookie)
  const kept = pending(JSON.parse(Buffer.from(cookie!, "base64url").toString("utf8")) as Record<string, string>)
  const atProvider = await fetch(started.headers.get("location")!, { redirect: "manual" })
  assert.strictEqual(atProvider.status, 302)
  const back = atProvider.headers.get("location")!
  assert.isTrue(back.startsWith(`${server.url}/signin/${provider}/callback?`), back)
  const done = await fetch(back, {
    redirect: "manual",
    headers: { cookie: `sg_oidc=${Buffer.from(JSON.stringify(kept)).toString("base64url")}` }
  })
  return {
    status: done.status,
    location: done.headers.get("location"),
    page: done.status === 302 ? "" : await done.text(),
    session: done.headers.getSetCookie().some((c) => /^sg_session=[^;]+/u.test(c) && !c.includes("Max-Age=0")),
    tokenRequests: idp.hits.token - tokensBefore
  }
}

/** A refusal: the "Sign-in failed" page (401) with this message, no session. */
const assertRefused = (attempt: Attempt, message: string) => {
  assert.strictEqual(attempt.status, 401, attempt.page)
  assert.include(attempt.page, "Sign-in failed")
  assert.include(attempt.page, message)
  assert.isFalse(attempt.session)
}

describe("OIDC conformance through the portal's routes (a real statusgrid start)", () => {
  const google = new FakeIdp("google")
  const microsoft = new FakeIdp("microsoft")
  let server: Running

  beforeAll(async () => {
    await Promise.all([google.start(), microsoft.start()])
    // Microsoft-type: the multi-tenant issuer, the stand-in's tenant allowed (FakeIdp.config). "offline": nothing listens there.
    const offline = { ...google.config("offline"), issuer: `http://127.0.0.1:${await freePort()}` }
    server = await start({ OIDC_PROVIDERS: JSON.stringify([google.config(), microsoft.config(), offline]) })
  }, 180_000)

  afterAll(async () => {
    await Promise.all([google.stop(), microsoft.stop()])
  })

  it("end to end with the library: PKCE S256, state, nonce and iss all right, a session and on to the portal", async () => {
    google.person = { sub: `g-${tag()}`, email: `ok-${tag()}@example.com`, email_verified: true, name: "Ok" }
    const refusalsBefore = google.tokenRefusals.length
    const attempt = await signInThroughRoutes(server, "google", google)
    assert.strictEqual(attempt.status, 302, attempt.page)
    assert.isTrue(attempt.session)
    assert.strictEqual(attempt.tokenRequests, 1)
    assert.strictEqual(google.tokenRefusals.length, refusalsBefore, "the stand-in found the code_verifier matching the challenge")
  })

  it("RFC 9207: a wrong iss in the authorization response, or none when the provider advertises it, is refused before the code is exchanged", async () => {
    google.person = { sub: `g-${tag()}`, email: `iss-${tag()}@example.com`, email_verified: true }
    google.tamperAuthorization = { iss: "https://evil.example" }
    const wrong = await signInThroughRoutes(server, "google", google)
    assertRefused(wrong, "answer could not be verified")
    assert.strictEqual(wrong.tokenRequests, 0, "no code exchanged on a mixed-up response")

    google.tamperAuthorization = { iss: null }
    const missing = await signInThroughRoutes(server, "google", google)
    assertRefused(missing, "answer could not be verified")
    assert.strictEqual(missing.tokenRequests, 0)

    // The details are in the server's log, not on the page.
    const logged = server.logs.filter((l) => l["message"] === "OpenID Connect sign-in failed")
      .map((l) => String((l["annotations"] as Record<string, unknown>)["error"]))
    assert.isTrue(logged.some((e) => e.includes("names another issuer") && e.includes("RFC 9207")), logged.join("\n"))
    assert.isTrue(logged.some((e) => e.includes("has no iss")), logged.join("\n"))
    assert.notInclude(wrong.page, "RFC 9207")
  })

  it("a wrong nonce in the ID token is refused", async () => {
    google.person = { sub: `g-${tag()}`, email: `nonce-${tag()}@example.com`, email_verified: true }
    google.tamper = { claims: { nonce: "another-sign-in" } }
    const attempt = await signInThroughRoutes(server, "google", google)
    assertRefused(attempt, "answer could not be verified")
    assert.strictEqual(attempt.tokenRequests, 1)
  })

  it("PKCE: a verifier that is not the one of the challenge is refused by the provider, and so is the sign-in", async () => {
    google.person = { sub: `g-${tag()}`, email: `pkce-${tag()}@example.com`, email_verified: true }
    const attempt = await signInThroughRoutes(server, "google", google, (kept) => ({ ...kept, verifier: randomBytes(32).toString("base64url") }))
    assertRefused(attempt, "would not complete this sign-in")
    assert.strictEqual(google.tokenRefusals.at(-1), "invalid_grant: code_verifier does not match the code_challenge")
  })

  it("Microsoft: an allowed tenant signs in; another tenant's account is refused with a page saying so", async () => {
    microsoft.person = { sub: `m-${tag()}`, email: `max-${tag()}@contoso.example`, email_verified: true, name: "Max" }
    const allowed = await signInThroughRoutes(server, "microsoft", microsoft)
    assert.strictEqual(allowed.status, 302, allowed.page)
    assert.isTrue(allowed.session)

    const configured = microsoft.tenant
    microsoft.tenant = otherTenant
    try {
      microsoft.person = { sub: `m-${tag()}`, email: `eve-${tag()}@fabrikam.example`, email_verified: true }
      const refused = await signInThroughRoutes(server, "microsoft", microsoft)
      assertRefused(refused, "Accounts of your Microsoft organization cannot sign in here")
    } finally {
      microsoft.tenant = configured
    }
  })

  it("a provider that cannot be reached: back to the sign-in page, which says so", async () => {
    const started = await fetch(`${server.url}/signin/offline?next=/orgs`, { redirect: "manual" })
    assert.strictEqual(started.status, 302)
    const location = new URL(started.headers.get("location")!, server.url)
    assert.strictEqual(location.pathname, "/signin")
    assert.strictEqual(location.searchParams.get("oidc_error"), "offline could not be reached. Try again, or sign in with your password.")
    assert.strictEqual(location.searchParams.get("next"), "/orgs")
    assert.isNull(started.headers.get("set-cookie"))
    const page = await fetch(location)
    assert.strictEqual(page.status, 200)
    assert.include(await page.text(), "offline could not be reached.")
  })
})

describe("OIDC configuration: a multi-tenant Microsoft issuer without tenants stops the start", () => {
  it("statusgrid start fails with one line naming the tenants to list", async () => {
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-oidc-"))
    try {
      const providers = [{ id: "microsoft", kind: "microsoft", issuer: "https://login.microsoftonline.com/organizations/v2.0", client_id: "c", client_secret: "s" }]
      const result = await runCli(["start"], childEnv({ DATA_DIR: dataDir, PORT: String(await freePort()), HOST: "127.0.0.1", OIDC_PROVIDERS: JSON.stringify(providers) }))
      assert.notStrictEqual(result.code, 0)
      const lines = result.stderr.trimEnd().split("\n")
      assert.strictEqual(lines.length, 1, result.stderr)
      assert.match(lines[0]!, /^statusgrid start failed: OIDC_PROVIDERS: microsoft uses Microsoft's multi-tenant issuer .*"tenants"/u)
    } finally {
      Fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 120_000)
})

// ---------------------------------------------------------------------------------------------------------
// Through the Oidc service
// ---------------------------------------------------------------------------------------------------------

class Idps extends Context.Service<Idps, {
  /** Google-type, advertising and sending iss (RFC 9207). */
  readonly google: FakeIdp
  /** Google-type, for counting key-set requests (nothing else asks it). */
  readonly keys: FakeIdp
  /** Microsoft-type, multi-tenant issuer, its own tenant allowed. */
  readonly microsoft: FakeIdp
}>()("test/oidc-conformance/Idps") {}

const idpsLayer = Layer.effect(
  Idps,
  Effect.acquireRelease(
    Effect.promise(async () => {
      const idps = { google: new FakeIdp("google"), keys: new FakeIdp("google"), microsoft: new FakeIdp("microsoft") }
      await Promise.all(Object.values(idps).map((idp) => idp.start()))
      return idps
    }),
    (idps) => Effect.promise(() => Promise.all(Object.values(idps).map((idp) => idp.stop())))
  )
)

// Users (account linking) is not reached by `complete`: an SqlClient that is never used.
const oidcLayer = Layer.unwrap(Effect.gen(function*() {
  const idps = yield* Idps
  const providers = [idps.google.config("google"), idps.keys.config("keys"), idps.microsoft.config("microsoft")]
  return Oidc.layer.pipe(
    Layer.provide(withConfig({ OIDC_PROVIDERS: JSON.stringify(providers) })),
    Layer.provide(Layer.succeed(SqlClient, {} as never))
  )
}))

const redirectUri = "https://portal.example/signin/cb"

/** The portal's side: ask for the URL, go to the provider (it signs `person` in), come back with what the callback gets. */
const flow = (providerId: string, idp: FakeIdp, person: Person) =>
  Effect.gen(function*() {
    const oidc = yield* Oidc
    idp.person = person
    const request = yield* oidc.authorizationUrl(providerId, redirectUri)
    const answer = yield* Effect.promise(() => fetch(request.url, { redirect: "manual" }))
    assert.strictEqual(answer.status, 302)
    const back = new URL(answer.headers.get("location")!)
    const completion: Completion = { parameters: back.searchParams, state: request.state, verifier: request.verifier, nonce: request.nonce, redirectUri }
    return { request, completion, back }
  })

const someone = (prefix: string): Person => ({ sub: `${prefix}-${tag()}`, email: `${prefix}-${tag()}@example.com`, email_verified: true })

/** `complete`, expected to fail with OidcSignInFailed. */
const refusal = (providerId: string, completion: Completion) =>
  Effect.flatMap(Oidc, (oidc) => Effect.flip(oidc.complete(providerId, completion))).pipe(
    Effect.map((error) => {
      assert.strictEqual(error._tag, "OidcSignInFailed", error.message)
      return error as OidcSignInFailed
    })
  )

/**
 * This effect with the clock at `seconds` after `base` (ms): what the limit on
 * key-set requests reads. oauth4webapi's own clock is not moved (its key set
 * stays fresh), nor the stand-in's.
 */
const at = (base: number, seconds: number) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const real = yield* Clock.Clock
    const offsetMs = base + seconds * 1000 - real.currentTimeMillisUnsafe()
    const shifted: Clock.Clock = {
      currentTimeMillisUnsafe: () => real.currentTimeMillisUnsafe() + offsetMs,
      currentTimeMillis: Effect.sync(() => real.currentTimeMillisUnsafe() + offsetMs),
      currentTimeNanosUnsafe: () => real.currentTimeNanosUnsafe() + BigInt(offsetMs) * 1_000_000n,
      currentTimeNanos: Effect.sync(() => real.currentTimeNanosUnsafe() + BigInt(offsetMs) * 1_000_000n),
      monotonicTimeNanosUnsafe: () => real.monotonicTimeNanosUnsafe(),
      monotonicTimeNanos: real.monotonicTimeNanos,
      sleep: (duration) => real.sleep(duration)
    }
    return yield* Effect.provideService(effect, Clock.Clock, shifted)
  })

/** `complete` with the provider `keys`. */
const completeKeys = (completion: Completion) => Effect.flatMap(Oidc, (o) => o.complete("keys", completion))

describe("OIDC conformance of the Oidc service (oauth4webapi) against the stand-in", () => {
  layer(Layer.provideMerge(oidcLayer, idpsLayer), { timeout: 120_000, excludeTestServices: true })("three providers", (it) => {
    it.effect("RFC 9207: the response's iss must be the issuer; missing while advertised, or another, is refused before the token endpoint", () =>
      Effect.gen(function*() {
        const { google, microsoft } = yield* Idps
        const ok = yield* flow("google", google, someone("iss"))
        assert.strictEqual(ok.back.searchParams.get("iss"), google.base, "the stand-in sends iss")

        const tokens = google.hits.token
        google.tamperAuthorization = { iss: `${google.base}/other` }
        const wrong = yield* refusal("google", (yield* flow("google", google, someone("iss"))).completion)
        assert.strictEqual(wrong.reason, "unverified")
        assert.include(wrong.message, `names another issuer than ${google.base} (RFC 9207)`)
        google.tamperAuthorization = { iss: null }
        const missing = yield* refusal("google", (yield* flow("google", google, someone("iss"))).completion)
        assert.strictEqual(missing.reason, "unverified")
        assert.include(missing.message, "has no iss")
        assert.strictEqual(google.hits.token, tokens, "no code was exchanged")
        // The untouched response of the first flow still completes.
        yield* Effect.flatMap(Oidc, (o) => o.complete("google", ok.completion))

        // Microsoft does not advertise it: no iss is fine (below), but a wrong one is refused all the same.
        microsoft.tamperAuthorization = { iss: "https://login.example/evil/v2.0" }
        const mixedUp = yield* refusal("microsoft", (yield* flow("microsoft", microsoft, someone("ms"))).completion)
        assert.include(mixedUp.message, "RFC 9207")
        // Its tenant's issuer, for an allowed tenant, is the right one.
        microsoft.tamperAuthorization = { iss: microsoft.tokenIssuer }
        const tenantIss = yield* flow("microsoft", microsoft, someone("ms"))
        assert.strictEqual(tenantIss.back.searchParams.get("iss"), microsoft.tokenIssuer)
        yield* Effect.flatMap(Oidc, (o) => o.complete("microsoft", tenantIss.completion))
        // The state is checked by the library too (the portal compares it first).
        const state = yield* flow("google", google, someone("state"))
        const otherState = yield* refusal("google", { ...state.completion, state: "another-sign-in" })
        assert.include(otherState.message, "state")
      }))

    it.effect("nonce: an ID token with another sign-in's nonce, or a sign-in completed with another nonce, is refused", () =>
      Effect.gen(function*() {
        const { google } = yield* Idps
        const first = yield* flow("google", google, someone("nonce"))
        google.tamper = { claims: { nonce: "replayed" } }
        const replayed = yield* refusal("google", first.completion)
        assert.strictEqual(replayed.reason, "unverified")
        assert.include(replayed.message, "nonce mismatch")

        const second = yield* flow("google", google, someone("nonce"))
        const crossed = yield* refusal("google", { ...second.completion, nonce: first.request.nonce })
        assert.include(crossed.message, "nonce mismatch")
        google.tamper = { claims: { nonce: undefined } }
        const none = yield* refusal("google", (yield* flow("google", google, someone("nonce"))).completion)
        assert.include(none.message, "belongs to another sign-in (nonce missing)")
      }))

    it.effect("PKCE: S256 challenge sent; the stand-in refuses a missing, malformed or wrong verifier; the right one completes", () =>
      Effect.gen(function*() {
        const { google } = yield* Idps
        const { request, completion, back } = yield* flow("google", google, someone("pkce"))
        const url = new URL(request.url)
        assert.strictEqual(url.searchParams.get("code_challenge_method"), "S256")
        assert.strictEqual(url.searchParams.get("code_challenge"), createHash("sha256").update(request.verifier).digest("base64url"))
        assert.match(request.verifier, /^[A-Za-z0-9_-]{43,128}$/u)

        // The token endpoint itself, asked without the library: no verifier, a malformed one.
        const ask = (verifier: string | undefined) =>
          Effect.promise(async () => {
            const form = new URLSearchParams({ grant_type: "authorization_code", code: back.searchParams.get("code")!, redirect_uri: redirectUri, client_id: google.clientId, client_secret: google.clientSecret })
            if (verifier !== undefined) form.set("code_verifier", verifier)
            const answer = await fetch(`${google.base}/token`, { method: "POST", body: form })
            return { status: answer.status, body: await answer.json() as { error?: string; error_description?: string } }
          })
        assert.deepStrictEqual(yield* ask(undefined), { status: 400, body: { error: "invalid_grant", error_description: "code_verifier missing" } })
        assert.deepStrictEqual(yield* ask("short"), { status: 400, body: { error: "invalid_grant", error_description: "code_verifier malformed" } })

        const wrong = yield* refusal("google", { ...completion, verifier: randomBytes(32).toString("base64url") })
        assert.strictEqual(wrong.reason, "refused")
        assert.include(wrong.message, "400 invalid_grant (code_verifier does not match the code_challenge)")
        assert.strictEqual(google.tokenRefusals.at(-1), "invalid_grant: code_verifier does not match the code_challenge")

        const identity = yield* Effect.flatMap(Oidc, (o) => o.complete("google", completion))
        assert.strictEqual(identity.email_verified, true)
      }))

    it.effect("Microsoft multi-tenant: each token's iss is its tenant's; only the configured tenants sign in", () =>
      Effect.gen(function*() {
        const { microsoft } = yield* Idps
        const allowed = microsoft.tenant
        const person = { sub: `m-${tag()}`, email: `max-${tag()}@contoso.example`, email_verified: true, name: "Max" }
        const identity = yield* Effect.flatMap(Oidc, (o) => Effect.flatMap(flow("microsoft", microsoft, person), ({ completion }) => o.complete("microsoft", completion)))
        assert.deepStrictEqual(identity, { subject: person.sub, email: person.email, email_verified: true, name: "Max" })

        microsoft.tenant = otherTenant
        try {
          const other = yield* refusal("microsoft", (yield* flow("microsoft", microsoft, someone("ms"))).completion)
          assert.strictEqual(other.reason, "tenant")
          assert.include(other.message, `the Microsoft tenant ${otherTenant} is not among the tenants allowed for microsoft`)
          // An authorization response naming that tenant's issuer is refused as well, before the token endpoint.
          microsoft.tamperAuthorization = { iss: microsoft.tokenIssuer }
          const tokens = microsoft.hits.token
          const byIss = yield* refusal("microsoft", (yield* flow("microsoft", microsoft, someone("ms"))).completion)
          assert.strictEqual(byIss.reason, "tenant")
          assert.strictEqual(microsoft.hits.token, tokens)
        } finally {
          microsoft.tenant = allowed
        }
        // An allowed tid, but the iss of another tenant; and no tid at all: the issuer check refuses both.
        microsoft.tamper = { claims: { iss: `${microsoft.base}/${otherTenant}/v2.0` } }
        const crossed = yield* refusal("microsoft", (yield* flow("microsoft", microsoft, someone("ms"))).completion)
        assert.strictEqual(crossed.reason, "unverified")
        assert.include(crossed.message, `issued by ${microsoft.base}/${otherTenant}/v2.0, not ${microsoft.base}/${allowed}/v2.0`)
        microsoft.tamper = { claims: { tid: undefined } }
        const noTid = yield* refusal("microsoft", (yield* flow("microsoft", microsoft, someone("ms"))).completion)
        assert.include(noTid.message, "issued by")
      }))

    it.effect("key rotation: a new key is taken once the limit allows; unknown kids cost at most one key-set request per 60 s", () =>
      Effect.gen(function*() {
        const { keys: idp } = yield* Idps
        yield* flow("keys", idp, someone("warm")).pipe(Effect.flatMap(({ completion }) => completeKeys(completion)))
        assert.strictEqual(idp.hits.jwks, 1)
        const warmed = yield* Clock.currentTimeMillis
        // Seconds are counted from here (just after that first key-set request).
        const later = (seconds: number) => at(warmed, seconds)

        // Tokens naming kids nobody published: refused, and no request for the key set within the minute.
        for (let i = 0; i < 10; i++) {
          const { completion } = yield* flow("keys", idp, someone("forged"))
          idp.tamper = { header: { kid: `unknown-${i}-${tag()}` } }
          const refused = yield* refusal("keys", completion)
          assert.include(refused.message, "is not in the provider's key set (asked for again at most every 60 s)")
        }
        assert.strictEqual(idp.hits.jwks, 1, "no key-set request within the limit")

        // The provider rotates: its new kid is not known yet, and not asked for within the limit either.
        const kid = idp.rotate({ retirePrevious: true })
        const early = yield* refusal("keys", (yield* flow("keys", idp, someone("early"))).completion).pipe(later(59))
        assert.include(early.message, `key ${kid} is not in the provider's key set`)
        assert.strictEqual(idp.hits.jwks, 1)

        // A minute on: ten sign-ins at once with the new key share one request, and all pass.
        const flows = yield* Effect.forEach(Array.from({ length: 10 }, (_, i) => someone(`rotated${i}`)), (person) => flow("keys", idp, person))
        const identities = yield* Effect.forEach(flows, ({ completion }) => completeKeys(completion), { concurrency: "unbounded" }).pipe(later(61))
        assert.strictEqual(identities.length, 10)
        assert.strictEqual(idp.hits.jwks, 2, "one key-set request for the rotated key")

        // Unknown kids again: one request in the next window (at 122 s), none more in it.
        for (const seconds of [62, 100, 122, 130, 150]) {
          const { completion } = yield* flow("keys", idp, someone("forged"))
          idp.tamper = { header: { kid: `unknown-${seconds}` } }
          yield* refusal("keys", completion).pipe(later(seconds))
        }
        assert.strictEqual(idp.hits.jwks, 3, "at most one key-set request per 60 s")
        // The known key still verifies from the cache, without a request.
        yield* flow("keys", idp, someone("after")).pipe(Effect.flatMap(({ completion }) => completeKeys(completion)), later(150))
        assert.strictEqual(idp.hits.jwks, 3)
      }))
  })
})

/** Builds the Oidc layer from these settings (nothing is fetched while building). */
const build = (settings: Record<string, string>) =>
  Effect.exit(Effect.scoped(Layer.build(Oidc.layer.pipe(
    Layer.provide(withConfig(settings)),
    Layer.provide(Layer.succeed(SqlClient, {} as never))
  ))))

const providers = (...p: Array<Record<string, unknown>>) => ({ OIDC_PROVIDERS: JSON.stringify(p) })

describe("OIDC configuration: tenants and the key-set limit", () => {
  layer(Layer.empty)("settings", (it) => {
    it.effect("a multi-tenant Microsoft issuer needs tenants (GUIDs); tenants are for Microsoft only; the limit is 1 to 300 s", () =>
      Effect.gen(function*() {
        const microsoft = { id: "microsoft", kind: "microsoft", issuer: "https://login.microsoftonline.com/common/v2.0", client_id: "c", client_secret: "s" }
        const google = { id: "google", kind: "google", issuer: "https://accounts.google.com", client_id: "c", client_secret: "s" }
        const refused: Array<[Record<string, string>, string]> = [
          [providers(microsoft), "multi-tenant issuer https://login.microsoftonline.com/common/v2.0"],
          [providers({ ...microsoft, issuer: "https://login.microsoftonline.com/organizations/v2.0" }), "\"tenants\""],
          [providers({ ...microsoft, tenants: [] }), "tenants"],
          [providers({ ...microsoft, tenants: ["contoso.onmicrosoft.com"] }), "not domain names"],
          [providers({ ...google, tenants: [otherTenant] }), "applies only to kind microsoft"],
          [providers({ ...google, jwks_refetch_seconds: 0 }), "jwks_refetch_seconds"],
          [providers({ ...google, jwks_refetch_seconds: 301 }), "jwks_refetch_seconds"],
          [{ ...providers(google), OIDC_JWKS_REFETCH_SECONDS: "0" }, "OIDC_JWKS_REFETCH_SECONDS"],
          [{ ...providers(google), OIDC_JWKS_REFETCH_SECONDS: "soon" }, "OIDC_JWKS_REFETCH_SECONDS"]
        ]
        for (const [settings, expected] of refused) {
          const exit = yield* build(settings)
          assert.isTrue(Exit.isFailure(exit), JSON.stringify(settings))
          if (Exit.isFailure(exit)) assert.include(Cause.pretty(exit.cause), expected, JSON.stringify(settings))
        }
        const accepted: Array<Record<string, string>> = [
          providers({ ...microsoft, tenants: [otherTenant] }),
          // One tenant's own issuer: its tokens can only be that tenant's.
          providers({ ...microsoft, issuer: `https://login.microsoftonline.com/${otherTenant}/v2.0` }),
          { ...providers({ ...google, jwks_refetch_seconds: 300 }), OIDC_JWKS_REFETCH_SECONDS: "1" }
        ]
        for (const settings of accepted) assert.strictEqual((yield* build(settings))._tag, "Success", JSON.stringify(settings))
      }))
  })
})
