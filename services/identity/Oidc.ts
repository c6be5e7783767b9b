import { Clock, Config, Context, Effect, Layer, Redacted, Schema } from "effect"
import { createHash, createPublicKey, type KeyObject, randomBytes, verify as verifySignature } from "node:crypto"
import { NotFound, type Unprocessable } from "../domain/api/Errors.ts"
import { type ProviderIdentity, type User, Users } from "./Users.ts"

/**
 * Sign-in failed at the identity provider or its answer did not hold up
 * (unreachable, code refused, ID token forged, expired, for another client or
 * another sign-in). The portal shows the sign-in page again; details are logged.
 */
export class OidcSignInFailed extends Schema.Error<OidcSignInFailed>("OidcSignInFailed")({
  _tag: Schema.tagDefaultOmit("OidcSignInFailed"),
  code: Schema.tag("oidc_failed"),
  message: Schema.String
}, { httpApiStatus: 401, identifier: "OidcSignInFailed" }) {}

/** One provider in `OIDC_PROVIDERS` (a JSON array), set by the operator. */
export const OidcProviderConfig = Schema.Struct({
  id: Schema.String.check(Schema.isPattern(/^[a-z0-9_-]{1,40}$/u, { message: "must be 1 to 40 of a-z, 0-9, _ and -" })),
  issuer: Schema.String.check(Schema.isPattern(/^https?:\/\/[^\s]+$/u, { message: "must be an http(s) URL" })),
  client_id: Schema.String.check(Schema.isNonEmpty()),
  client_secret: Schema.String.check(Schema.isNonEmpty()),
  kind: Schema.Literals(["google", "microsoft"])
})
export type OidcProviderConfig = typeof OidcProviderConfig.Type

const ProvidersJson = Schema.fromJsonString(Schema.Array(OidcProviderConfig))

interface Provider {
  readonly id: string
  readonly issuer: string
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  readonly kind: "google" | "microsoft"
}

const Discovery = Schema.Struct({
  issuer: Schema.String,
  authorization_endpoint: Schema.String,
  token_endpoint: Schema.String,
  jwks_uri: Schema.String
})
type Discovery = typeof Discovery.Type

const Jwks = Schema.Struct({
  keys: Schema.Array(Schema.Struct({
    kty: Schema.String,
    kid: Schema.optional(Schema.String),
    use: Schema.optional(Schema.String),
    n: Schema.optional(Schema.String),
    e: Schema.optional(Schema.String)
  }))
})

const TokenResponse = Schema.Struct({ id_token: Schema.String })

const JwtHeader = Schema.Struct({ alg: Schema.String, kid: Schema.optional(Schema.String) })

const Flag = Schema.optional(Schema.Union([Schema.Boolean, Schema.String]))
const IdTokenClaims = Schema.Struct({
  iss: Schema.String,
  sub: Schema.String.check(Schema.isNonEmpty()),
  aud: Schema.Union([Schema.String, Schema.Array(Schema.String)]),
  exp: Schema.Number,
  iat: Schema.optional(Schema.Number),
  nonce: Schema.optional(Schema.String),
  azp: Schema.optional(Schema.String),
  email: Schema.optional(Schema.String),
  email_verified: Flag,
  name: Schema.optional(Schema.String),
  // Microsoft: the tenant (fills `{tenantid}` in the multi-tenant issuer), and "e-mail domain owner verified".
  tid: Schema.optional(Schema.String),
  xms_edov: Flag
})
type IdTokenClaims = typeof IdTokenClaims.Type

/** What the portal keeps (in the pre-sign-in cookie or session) between `authorizationUrl` and `complete`. */
export interface AuthorizationRequest {
  readonly url: string
  readonly state: string
  readonly verifier: string
  readonly nonce: string
}

export interface Completion {
  readonly code: string
  readonly verifier: string
  readonly nonce: string
  readonly redirectUri: string
}

/** Clock difference tolerated on `exp` and `iat`. */
const skewSeconds = 60
/** Discovery documents and key sets are fetched again after this long (keys also on an unknown `kid`). */
const metadataTtlMs = 60 * 60 * 1000
const requestTimeoutMs = 10_000

const secret = () => randomBytes(32).toString("base64url")
const challengeOf = (verifier: string) => createHash("sha256").update(verifier).digest("base64url")

const failed = (message: string) => new OidcSignInFailed({ message })

/** Plain HTTP only to this machine (a development or test provider); everything else must be HTTPS. */
const allowedUrl = (raw: string) => {
  const url = URL.parse(raw)
  if (url === null) return false
  return url.protocol === "https:" ||
    (url.protocol === "http:" && ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname))
}

const fetchJson = Effect.fn("Oidc.fetchJson")(function*<S extends Schema.Top & { readonly DecodingServices: never }>(
  what: string,
  url: string,
  schema: S,
  init?: RequestInit
): Effect.fn.Return<S["Type"], OidcSignInFailed> {
  if (!allowedUrl(url)) return yield* failed(`the ${what} URL ${url} is not HTTPS`)
  const response = yield* Effect.tryPromise({
    try: (signal) => fetch(url, { ...init, redirect: "error", signal: AbortSignal.any([signal, AbortSignal.timeout(requestTimeoutMs)]) }),
    catch: (cause) => failed(`the ${what} at ${url} could not be reached: ${String(cause)}`)
  })
  const text = yield* Effect.tryPromise({ try: () => response.text(), catch: () => failed(`the ${what} at ${url} broke off`) })
  if (!response.ok) return yield* failed(`the ${what} at ${url} answered ${response.status}: ${text.slice(0, 300)}`)
  return yield* Schema.decodeUnknownEffect(Schema.fromJsonString(schema))(text).pipe(
    Effect.mapError((error) => failed(`the ${what} at ${url} is not what OpenID Connect specifies: ${error.message}`))
  )
})

const decodeSegment = <S extends Schema.Top & { readonly DecodingServices: never }>(what: string, segment: string, schema: S) =>
  Schema.decodeUnknownEffect(Schema.fromJsonString(schema))(Buffer.from(segment, "base64url").toString("utf8")).pipe(
    Effect.mapError((error) => failed(`the ID token's ${what} is invalid: ${error.message}`))
  )

const flag = (value: boolean | string | undefined) => value === true || value === "true"

/**
 * Sign-in through OpenID Connect providers configured by the operator
 * (`OIDC_PROVIDERS`): the authorization-code flow with PKCE (S256), a nonce
 * and a state. The ID token is checked here even though it comes straight
 * from the token endpoint: RS256 signature against the provider's JWKS,
 * issuer, audience, expiry and nonce.
 */
export class Oidc extends Context.Service<Oidc, {
  /** The configured providers, for the sign-in page. */
  readonly providers: ReadonlyArray<{ readonly id: string; readonly kind: "google" | "microsoft" }>
  /** Where to send the browser, and what to keep until it comes back (check `state` before calling `complete`). */
  authorizationUrl(providerId: string, redirectUri: string): Effect.Effect<AuthorizationRequest, NotFound | OidcSignInFailed>
  /** Exchanges the code (with the PKCE verifier) and returns who the validated ID token says signed in. */
  complete(providerId: string, completion: Completion): Effect.Effect<ProviderIdentity, NotFound | OidcSignInFailed>
  /** `complete`, then the user that identity signs in as (Users.signInWithIdentity). */
  signInWithOidc(providerId: string, completion: Completion): Effect.Effect<
    { readonly user: User; readonly created: boolean; readonly linked: boolean },
    NotFound | OidcSignInFailed | Unprocessable
  >
}>()("statusgrid/identity/Oidc") {
  /** From `OIDC_PROVIDERS` (JSON array of `{ id, issuer, client_id, client_secret, kind }`; none when unset). */
  static readonly layer = Layer.effect(
    Oidc,
    Effect.gen(function*() {
      const raw = yield* Config.String("OIDC_PROVIDERS").pipe(Config.withDefault("[]"), Effect.orDie)
      const configured = yield* Schema.decodeUnknownEffect(ProvidersJson)(raw).pipe(
        Effect.mapError((error) => new Error(`OIDC_PROVIDERS is invalid: ${error.message}`)),
        Effect.orDie
      )
      return yield* make(configured)
    })
  ).pipe(Layer.provide(Users.layer))

  /** With these providers instead of the configuration. */
  static readonly layerWith = (configured: ReadonlyArray<OidcProviderConfig>) =>
    Layer.effect(Oidc, make(configured)).pipe(Layer.provide(Users.layer))
}

const make = Effect.fnUntraced(function*(configured: ReadonlyArray<OidcProviderConfig>) {
  const users = yield* Users
  const providers = new Map<string, Provider>()
  for (const p of configured) {
    if (providers.has(p.id)) return yield* Effect.die(new Error(`OIDC_PROVIDERS: the id ${p.id} is used twice`))
    if (!allowedUrl(p.issuer)) return yield* Effect.die(new Error(`OIDC_PROVIDERS: the issuer of ${p.id} must be HTTPS`))
    providers.set(p.id, {
      id: p.id,
      issuer: p.issuer.replace(/\/+$/u, ""),
      clientId: p.client_id,
      clientSecret: Redacted.make(p.client_secret),
      kind: p.kind
    })
  }

  const discoveries = new Map<string, { readonly document: Discovery; readonly until: number }>()
  const keySets = new Map<string, { readonly keys: Map<string | undefined, KeyObject>; readonly until: number }>()

  const providerOf = (id: string) => {
    const provider = providers.get(id)
    return provider === undefined
      ? Effect.fail(new NotFound({ field: "provider", message: `no identity provider ${id}` }))
      : Effect.succeed(provider)
  }

  const discover = Effect.fnUntraced(function*(provider: Provider) {
    const cached = discoveries.get(provider.id)
    const now = yield* Clock.currentTimeMillis
    if (cached !== undefined && cached.until > now) return cached.document
    const document = yield* fetchJson("discovery document", `${provider.issuer}/.well-known/openid-configuration`, Discovery)
    // OpenID Connect Discovery 4.3: the document's issuer is the configured one. Microsoft's multi-tenant
    // endpoints answer with the `{tenantid}` template instead, checked against each token's `tid`.
    const issuer = document.issuer.replace(/\/+$/u, "")
    if (provider.kind !== "microsoft" && issuer !== provider.issuer) {
      return yield* failed(`the discovery document of ${provider.id} names the issuer ${document.issuer}, not ${provider.issuer}`)
    }
    discoveries.set(provider.id, { document, until: (yield* Clock.currentTimeMillis) + metadataTtlMs })
    return document
  })

  const keysOf = Effect.fnUntraced(function*(provider: Provider, discovery: Discovery, refresh: boolean) {
    const cached = keySets.get(provider.id)
    const now = yield* Clock.currentTimeMillis
    if (!refresh && cached !== undefined && cached.until > now) return cached.keys
    const jwks = yield* fetchJson("key set", discovery.jwks_uri, Jwks)
    const keys = new Map<string | undefined, KeyObject>()
    for (const jwk of jwks.keys) {
      if (jwk.kty !== "RSA" || (jwk.use !== undefined && jwk.use !== "sig") || jwk.n === undefined || jwk.e === undefined) continue
      keys.set(jwk.kid, createPublicKey({ key: { kty: "RSA", n: jwk.n, e: jwk.e }, format: "jwk" }))
    }
    keySets.set(provider.id, { keys, until: (yield* Clock.currentTimeMillis) + metadataTtlMs })
    return keys
  })

  /** The claims of an ID token that passes every check, or why it does not. */
  const validate = Effect.fnUntraced(function*(provider: Provider, discovery: Discovery, idToken: string, nonce: string) {
    const parts = idToken.split(".")
    if (parts.length !== 3) return yield* failed("the ID token is not a signed JWT")
    const [headerPart, payloadPart, signaturePart] = parts as [string, string, string]
    const header = yield* decodeSegment("header", headerPart, JwtHeader)
    // Only RS256: never "none", and never an HMAC keyed with a public key.
    if (header.alg !== "RS256") return yield* failed(`the ID token is signed with ${header.alg}; RS256 is required`)
    let key = (yield* keysOf(provider, discovery, false)).get(header.kid)
    // A kid not seen yet: the provider may have rotated its keys since they were fetched.
    if (key === undefined) key = (yield* keysOf(provider, discovery, true)).get(header.kid)
    if (key === undefined) return yield* failed(`the ID token's key ${header.kid ?? "(no kid)"} is not in the provider's key set`)
    const signed = Buffer.from(`${headerPart}.${payloadPart}`, "ascii")
    if (!verifySignature("RSA-SHA256", signed, key, Buffer.from(signaturePart, "base64url"))) {
      return yield* failed("the ID token's signature does not verify")
    }
    const claims: IdTokenClaims = yield* decodeSegment("claims", payloadPart, IdTokenClaims)
    const issuer = discovery.issuer.replace(/\/+$/u, "").replace("{tenantid}", claims.tid ?? "{tenantid}")
    if (claims.iss.replace(/\/+$/u, "") !== issuer) return yield* failed(`the ID token was issued by ${claims.iss}, not ${issuer}`)
    const audiences = typeof claims.aud === "string" ? [claims.aud] : claims.aud
    if (!audiences.includes(provider.clientId)) return yield* failed("the ID token is for another client")
    if (audiences.length > 1 && claims.azp !== provider.clientId) return yield* failed("the ID token was issued to another party")
    const now = (yield* Clock.currentTimeMillis) / 1000
    if (claims.exp <= now - skewSeconds) return yield* failed("the ID token has expired")
    if (claims.iat !== undefined && claims.iat > now + skewSeconds) return yield* failed("the ID token is issued in the future")
    if (claims.nonce !== nonce) return yield* failed("the ID token belongs to another sign-in (nonce mismatch)")
    return claims
  })

  const authorizationUrl = Effect.fn("Oidc.authorizationUrl")(function*(providerId: string, redirectUri: string) {
    const provider = yield* providerOf(providerId)
    const discovery = yield* discover(provider)
    const state = secret()
    const verifier = secret()
    const nonce = secret()
    const url = URL.parse(discovery.authorization_endpoint)
    if (url === null || !allowedUrl(url.href)) return yield* failed(`the authorization endpoint of ${provider.id} is not HTTPS`)
    url.search = new URLSearchParams({
      response_type: "code",
      client_id: provider.clientId,
      redirect_uri: redirectUri,
      scope: "openid email profile",
      state,
      nonce,
      code_challenge: challengeOf(verifier),
      code_challenge_method: "S256"
    }).toString()
    return { url: url.href, state, verifier, nonce }
  })

  const complete = Effect.fn("Oidc.complete")(function*(providerId: string, completion: Completion) {
    const provider = yield* providerOf(providerId)
    const discovery = yield* discover(provider)
    const tokens = yield* fetchJson("token endpoint", discovery.token_endpoint, TokenResponse, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: completion.code,
        redirect_uri: completion.redirectUri,
        client_id: provider.clientId,
        client_secret: Redacted.value(provider.clientSecret),
        code_verifier: completion.verifier
      }).toString()
    })
    const claims = yield* validate(provider, discovery, tokens.id_token, completion.nonce)
    return {
      subject: claims.sub,
      email: claims.email ?? null,
      // Microsoft has no email_verified; its xms_edov says the address's domain owner verified it.
      email_verified: flag(claims.email_verified) || (provider.kind === "microsoft" && flag(claims.xms_edov)),
      name: claims.name ?? null
    } satisfies ProviderIdentity
  })

  const signInWithOidc = Effect.fn("Oidc.signInWithOidc")(function*(providerId: string, completion: Completion) {
    const identity = yield* complete(providerId, completion)
    return yield* users.signInWithIdentity(providerId, identity)
  })

  return Oidc.of({
    providers: [...providers.values()].map((p) => ({ id: p.id, kind: p.kind })),
    authorizationUrl,
    complete,
    signInWithOidc
  })
})
