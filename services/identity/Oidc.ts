import { Clock, Config, Context, Effect, Layer, Redacted, Schema } from "effect"
import * as oauth from "oauth4webapi"
import { NotFound, type Unprocessable } from "../domain/api/Errors.ts"
import { type ProviderIdentity, type User, Users } from "./Users.ts"

/**
 * Why a sign-in through a provider failed, for the page the person sees:
 * `unreachable` (the provider could not be asked), `refused` (its token
 * endpoint would not complete this sign-in: a used code, a wrong PKCE
 * verifier), `unverified` (its answer did not hold up: issuer, signature,
 * audience, expiry, nonce), `tenant` (a Microsoft organization this
 * installation does not allow).
 */
export const OidcFailureReason = Schema.Literals(["unreachable", "refused", "unverified", "tenant"])
export type OidcFailureReason = typeof OidcFailureReason.Type

/**
 * Sign-in failed at the identity provider or its answer did not hold up
 * (unreachable, code refused, ID token forged, expired, for another client or
 * another sign-in, a Microsoft tenant not allowed). The portal shows the
 * sign-in page again with what `reason` means; `message` (the details) is logged.
 */
export class OidcSignInFailed extends Schema.Error<OidcSignInFailed>("OidcSignInFailed")({
  _tag: Schema.tagDefaultOmit("OidcSignInFailed"),
  code: Schema.tag("oidc_failed"),
  reason: OidcFailureReason,
  message: Schema.String
}, { httpApiStatus: 401, identifier: "OidcSignInFailed" }) {}

/** A Microsoft Entra tenant ID (the `tid` claim): a GUID. */
const TenantId = Schema.String.check(Schema.isPattern(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/iu, {
  message: "must be tenant IDs (GUIDs such as 9188040d-6c67-4c5b-b112-36a304b66dad), not domain names"
}))

/** Seconds between two requests for a provider's key set, at most 300 (oauth4webapi keeps a key set 5 minutes). */
const RefetchSeconds = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 300 }))

/** One provider in `OIDC_PROVIDERS` (a JSON array), set by the operator. */
export const OidcProviderConfig = Schema.Struct({
  id: Schema.String.check(Schema.isPattern(/^[a-z0-9_-]{1,40}$/u, { message: "must be 1 to 40 of a-z, 0-9, _ and -" })),
  issuer: Schema.String.check(Schema.isPattern(/^https?:\/\/[^\s]+$/u, { message: "must be an http(s) URL" })),
  client_id: Schema.String.check(Schema.isNonEmpty()),
  client_secret: Schema.String.check(Schema.isNonEmpty()),
  kind: Schema.Literals(["google", "microsoft"]),
  /** Microsoft: the tenants (`tid`) whose accounts may sign in; required with a multi-tenant issuer (`common`, `organizations`). */
  tenants: Schema.optional(Schema.Array(TenantId).check(Schema.isMinLength(1))),
  /** Overrides `OIDC_JWKS_REFETCH_SECONDS` for this provider. */
  jwks_refetch_seconds: Schema.optional(RefetchSeconds)
})
export type OidcProviderConfig = typeof OidcProviderConfig.Type

const ProvidersJson = Schema.fromJsonString(Schema.Array(OidcProviderConfig))

/**
 * What a provider's key set needs between sign-ins. `cache` is oauth4webapi's
 * own (`jwksCache`: it keeps a key set 5 minutes and asks again on a `kid` it
 * does not know once the set is a minute old); the rest limits how often the
 * `jwks_uri` is actually requested: at most once per `refetchMs`, whatever
 * asks (an unknown `kid`, the 5 minutes), concurrent asks sharing one request.
 * Within the limit the last key set answers again.
 */
interface KeySet {
  cache: oauth.JWKSCacheInput
  lastRequestAt: number | undefined
  lastBody: string | undefined
  inflight: Promise<string> | undefined
  /** Key sets received so far. */
  generation: number
}

interface Provider {
  readonly id: string
  readonly issuer: string
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  readonly kind: "google" | "microsoft"
  /** Microsoft's multi-tenant issuer: discovery names `…/{tenantid}/v2.0`, each ID token its own tenant's issuer. */
  readonly multiTenant: boolean
  /** Lower-cased tenant IDs allowed to sign in (Microsoft), or undefined for any (single-tenant issuers, Google). */
  readonly tenants: ReadonlySet<string> | undefined
  readonly refetchMs: number
  /** Plain HTTP on this machine (a development or test provider). */
  readonly insecure: boolean
  readonly keys: KeySet
}

const IdTokenClaims = Schema.Struct({
  sub: Schema.String.check(Schema.isNonEmpty()),
  iat: Schema.Number,
  email: Schema.optional(Schema.String),
  email_verified: Schema.optional(Schema.Union([Schema.Boolean, Schema.String])),
  name: Schema.optional(Schema.String),
  // Microsoft: the tenant (fills `{tenantid}` in the multi-tenant issuer), and "e-mail domain owner verified".
  tid: Schema.optional(Schema.String),
  xms_edov: Schema.optional(Schema.Union([Schema.Boolean, Schema.String]))
})

/** What the portal keeps (in the pre-sign-in cookie) between `authorizationUrl` and `complete`. */
export interface AuthorizationRequest {
  readonly url: string
  readonly state: string
  readonly verifier: string
  readonly nonce: string
}

export interface Completion {
  /** The query of the request to the redirect URI as it came (`code`, `state`, `iss`, …). */
  readonly parameters: URLSearchParams
  /** The `state`, PKCE verifier and nonce of this sign-in (`AuthorizationRequest`). */
  readonly state: string
  readonly verifier: string
  readonly nonce: string
  readonly redirectUri: string
}

/** Clock difference tolerated on `exp` and `iat`. */
const skewSeconds = 60
/** Discovery documents are fetched again after this long. */
const metadataTtlMs = 60 * 60 * 1000
const requestTimeoutMs = 10_000
const scope = "openid email profile"

const multiTenantPath = /\/(common|organizations)\/v2\.0$/u

/**
 * oauth4webapi's hooks for an issuer that is not one fixed URL, exported by it
 * but not in its typings; openid-client (the same author's) uses them for
 * Microsoft Entra ID's multi-tenant endpoints: `_nodiscoverycheck` takes the
 * discovery document whose issuer is the `{tenantid}` template, and
 * `_expectedIssuer` on the server metadata names the issuer each ID token
 * must carry (the template filled with its `tid`).
 */
const hooks = oauth as unknown as { readonly _nodiscoverycheck?: symbol; readonly _expectedIssuer?: symbol }

const failed = (reason: OidcFailureReason, message: string) => new OidcSignInFailed({ reason, message })

/** Plain HTTP only to this machine (a development or test provider); everything else must be HTTPS. */
const allowedUrl = (raw: string) => {
  const url = URL.parse(raw)
  if (url === null) return false
  return url.protocol === "https:" ||
    (url.protocol === "http:" && ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname))
}

/** What oauth4webapi hands its `customFetch` (a GET, or a POST of a form). */
type FetchOptions = Omit<oauth.CustomFetchOptions<string, URLSearchParams | undefined>, "signal"> & { readonly signal?: AbortSignal | undefined }

/** Every request to a provider: HTTPS (or this machine), no redirects (oauth4webapi asks for "manual": a 3xx is then an error), a timeout. */
const guardedFetch = (url: string, init: FetchOptions): Promise<Response> => {
  if (!allowedUrl(url)) return Promise.reject(new Error(`${url} is not HTTPS`))
  const signal = init.signal ? AbortSignal.any([init.signal, AbortSignal.timeout(requestTimeoutMs)]) : AbortSignal.timeout(requestTimeoutMs)
  return fetch(url, { ...init, signal } as RequestInit)
}

const jsonResponse = (body: string) => new Response(body, { status: 200, headers: { "content-type": "application/json" } })

const flag = (value: boolean | string | undefined) => value === true || value === "true"

const show = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value))

/** The claim name of an oauth4webapi claim check, and what it expected. */
const claimCheck = (error: oauth.OperationProcessingError) => {
  const cause = error.cause as { readonly claim?: unknown; readonly expected?: unknown; readonly claims?: Record<string, unknown> } | undefined
  return { claim: typeof cause?.claim === "string" ? cause.claim : undefined, expected: cause?.expected, claims: cause?.claims ?? {} }
}

/** An oauth4webapi failure validating the token response or its ID token, in words. */
const idTokenProblem = (error: unknown, refetchSeconds?: number): OidcSignInFailed => {
  if (error instanceof OidcSignInFailed) return error
  if (!(error instanceof oauth.OperationProcessingError)) {
    return error instanceof oauth.UnsupportedOperationError
      ? failed("unverified", `the ID token cannot be checked: ${error.message}`)
      : failed("unreachable", `the ID token could not be checked: ${error instanceof Error ? error.message : String(error)}`)
  }
  const { claim, expected, claims } = claimCheck(error)
  const header = (error.cause as { readonly header?: { readonly alg?: unknown; readonly kid?: unknown } } | undefined)?.header
  if (error.message.includes("\"alg\"")) return failed("unverified", `the ID token is signed with ${show(header?.alg)}; RS256 is required`)
  if (error.code === oauth.KEY_SELECTION) {
    return failed(
      "unverified",
      `the ID token's key ${show(header?.kid ?? "(no kid)")} is not in the provider's key set` +
        (refetchSeconds === undefined ? "" : ` (asked for again at most every ${refetchSeconds} s)`)
    )
  }
  if (error.message.includes("signature verification failed")) return failed("unverified", "the ID token's signature does not verify")
  if (error.code === oauth.JWT_CLAIM_COMPARISON) {
    switch (claim) {
      case "iss":
        return failed("unverified", `the ID token was issued by ${show(claims["iss"])}, not ${show(expected)}`)
      case "aud":
        return error.message.includes("untrusted")
          ? failed("unverified", "the ID token is for several parties and names none (azp)")
          : failed("unverified", "the ID token is for another client")
      case "azp":
        return failed("unverified", "the ID token was issued to another party")
      case "nonce":
        return failed("unverified", "the ID token belongs to another sign-in (nonce mismatch)")
    }
  }
  if (error.code === oauth.JWT_TIMESTAMP_CHECK && claim === "exp") return failed("unverified", "the ID token has expired")
  const missing = /^JWT "(\w+)" \(.*\) claim missing$/u.exec(error.message)?.[1]
  if (missing === "nonce") return failed("unverified", "the ID token belongs to another sign-in (nonce missing)")
  if (missing !== undefined) return failed("unverified", `the ID token lacks its ${missing} claim`)
  return failed("unverified", `the token response is invalid: ${error.message}`)
}

/** The token endpoint's answer refused (an OAuth error: a used code, a wrong PKCE verifier), or not valid, in words. */
const tokenProblem = (error: unknown): OidcSignInFailed => {
  if (error instanceof oauth.ResponseBodyError) {
    return failed("refused", `the token endpoint refused the code: ${error.status} ${error.error}${error.error_description ? ` (${error.error_description})` : ""}`)
  }
  if (error instanceof oauth.WWWAuthenticateChallengeError) return failed("refused", `the token endpoint refused the client: ${error.message}`)
  return idTokenProblem(error)
}

/** An oauth4webapi failure validating the authorization response (RFC 9207 `iss`, `state`), in words. */
const authorizationResponseProblem = (issuer: string) => (error: unknown): OidcSignInFailed => {
  if (error instanceof oauth.AuthorizationResponseError) return failed("refused", `the provider answered ${error.error}`)
  const message = error instanceof Error ? error.message : String(error)
  if (message.includes("\"iss\"")) {
    return message.includes("missing")
      ? failed("unverified", `the authorization response has no iss, though the provider says it sends one (RFC 9207)`)
      : failed("unverified", `the authorization response names another issuer than ${issuer} (RFC 9207)`)
  }
  return failed("unverified", `the authorization response is invalid: ${message}`)
}

/**
 * Sign-in through OpenID Connect providers configured by the operator
 * (`OIDC_PROVIDERS`), with oauth4webapi (OpenID Certified relying-party
 * routines): the authorization-code flow with PKCE (S256), a nonce and a
 * state; the authorization response's `iss` checked (RFC 9207) when the
 * provider says it sends one; the ID token's issuer, audience, expiry and
 * nonce checked, and its RS256 signature against the provider's JWKS (key
 * sets requested at most once per `OIDC_JWKS_REFETCH_SECONDS`). Microsoft's
 * multi-tenant issuer: each token's issuer is its tenant's, and the tenant
 * must be one of the provider's `tenants`.
 */
export class Oidc extends Context.Service<Oidc, {
  /** The configured providers, for the sign-in page. */
  readonly providers: ReadonlyArray<{ readonly id: string; readonly kind: "google" | "microsoft" }>
  /** Where to send the browser, and what to keep until it comes back. */
  authorizationUrl(providerId: string, redirectUri: string): Effect.Effect<AuthorizationRequest, NotFound | OidcSignInFailed>
  /** Checks the authorization response, exchanges the code (with the PKCE verifier) and returns who the validated ID token says signed in. */
  complete(providerId: string, completion: Completion): Effect.Effect<ProviderIdentity, NotFound | OidcSignInFailed>
  /** `complete`, then the user that identity signs in as (Users.signInWithIdentity). */
  signInWithOidc(providerId: string, completion: Completion): Effect.Effect<
    { readonly user: User; readonly created: boolean; readonly linked: boolean },
    NotFound | OidcSignInFailed | Unprocessable
  >
}>()("statusgrid/identity/Oidc") {
  /**
   * From `OIDC_PROVIDERS` (JSON array of `{ id, issuer, client_id, client_secret, kind, tenants?,
   * jwks_refetch_seconds? }`; none when unset) and `OIDC_JWKS_REFETCH_SECONDS` (60).
   */
  static readonly layer = Layer.effect(
    Oidc,
    Effect.gen(function*() {
      const raw = yield* Config.String("OIDC_PROVIDERS").pipe(Config.withDefault("[]"), Effect.orDie)
      const configured = yield* Schema.decodeUnknownEffect(ProvidersJson)(raw).pipe(
        Effect.mapError((error) => new Error(`OIDC_PROVIDERS is invalid: ${error.message}`)),
        Effect.orDie
      )
      return yield* make(configured, yield* refetchSecondsConfig)
    })
  ).pipe(Layer.provide(Users.layer))

  /** With these providers instead of `OIDC_PROVIDERS`. */
  static readonly layerWith = (configured: ReadonlyArray<OidcProviderConfig>) =>
    Layer.effect(Oidc, Effect.flatMap(refetchSecondsConfig, (seconds) => make(configured, seconds))).pipe(Layer.provide(Users.layer))
}

const refetchSecondsConfig = Config.schema(RefetchSeconds, "OIDC_JWKS_REFETCH_SECONDS").pipe(
  Config.withDefault(60),
  Effect.mapError((error) => new Error(`OIDC_JWKS_REFETCH_SECONDS must be a whole number of seconds from 1 to 300: ${error.message}`)),
  Effect.orDie
)

/** The provider of `p`, or why the configuration cannot start. */
const providerOf = (p: OidcProviderConfig, defaultRefetchSeconds: number): Provider | string => {
  if (!allowedUrl(p.issuer)) return `the issuer of ${p.id} must be HTTPS`
  const issuer = p.issuer.replace(/\/+$/u, "")
  const multiTenant = p.kind === "microsoft" && multiTenantPath.test(new URL(issuer).pathname)
  if (p.kind !== "microsoft" && p.tenants !== undefined) return `${p.id}: "tenants" applies only to kind microsoft`
  if (multiTenant && p.tenants === undefined) {
    return `${p.id} uses Microsoft's multi-tenant issuer ${issuer}, which accepts accounts of any organization: ` +
      `list the tenant IDs allowed to sign in as "tenants": ["<tenant GUID>", …]`
  }
  if (multiTenant && (hooks._nodiscoverycheck === undefined || hooks._expectedIssuer === undefined)) {
    return `${p.id}: this oauth4webapi has no hooks for Microsoft's multi-tenant issuer (_nodiscoverycheck, _expectedIssuer)`
  }
  const url = new URL(issuer)
  return {
    id: p.id,
    issuer,
    clientId: p.client_id,
    clientSecret: Redacted.make(p.client_secret),
    kind: p.kind,
    multiTenant,
    tenants: p.tenants === undefined ? undefined : new Set(p.tenants.map((t) => t.toLowerCase())),
    refetchMs: (p.jwks_refetch_seconds ?? defaultRefetchSeconds) * 1000,
    insecure: url.protocol === "http:",
    keys: { cache: {}, lastRequestAt: undefined, lastBody: undefined, inflight: undefined, generation: 0 }
  }
}

const make = Effect.fnUntraced(function*(configured: ReadonlyArray<OidcProviderConfig>, defaultRefetchSeconds: number) {
  const users = yield* Users
  const providers = new Map<string, Provider>()
  for (const p of configured) {
    if (providers.has(p.id)) return yield* Effect.die(new Error(`OIDC_PROVIDERS: the id ${p.id} is used twice`))
    const provider = providerOf(p, defaultRefetchSeconds)
    if (typeof provider === "string") return yield* Effect.die(new Error(`OIDC_PROVIDERS: ${provider}`))
    providers.set(p.id, provider)
  }

  const discoveries = new Map<string, { readonly server: oauth.AuthorizationServer; readonly until: number }>()

  const find = (id: string) => {
    const provider = providers.get(id)
    return provider === undefined
      ? Effect.fail(new NotFound({ field: "provider", message: `no identity provider ${id}` }))
      : Effect.succeed(provider)
  }

  /** The options of every oauth4webapi request to this provider. */
  const http = (provider: Provider, signal: AbortSignal) => ({
    signal,
    [oauth.customFetch]: guardedFetch,
    // Plain HTTP only for a provider on this machine; guardedFetch still refuses any other plain-HTTP URL.
    ...(provider.insecure ? { [oauth.allowInsecureRequests]: true } : {})
  })

  /**
   * `jwks_uri` requests for oauth4webapi: at most one per `refetchMs` (`now`
   * is the caller's Clock), concurrent ones sharing it; within the limit the
   * last key set answers again, so a `kid` nobody published costs no request.
   */
  const keySetFetch = (provider: Provider, now: () => number) => async (url: string, init: FetchOptions): Promise<Response> => {
    const keys = provider.keys
    if (keys.inflight !== undefined) return jsonResponse(await keys.inflight)
    const at = now()
    if (keys.lastRequestAt !== undefined && at - keys.lastRequestAt < provider.refetchMs) {
      if (keys.lastBody !== undefined) return jsonResponse(keys.lastBody)
      throw new Error(`the key set of ${provider.id} could not be fetched ${Math.round((at - keys.lastRequestAt) / 1000)} s ago; it is asked at most every ${provider.refetchMs / 1000} s`)
    }
    keys.lastRequestAt = at
    // Shared by the callers waiting on it: its own timeout, not one caller's interruption.
    const request = guardedFetch(url, { ...init, signal: undefined }).then(async (response) => {
      const body = await response.text()
      if (!response.ok) throw new Error(`the key set at ${url} answered ${response.status}`)
      keys.lastBody = body
      keys.generation++
      return body
    }).finally(() => {
      keys.inflight = undefined
    })
    keys.inflight = request
    return jsonResponse(await request)
  }

  const discover = Effect.fnUntraced(function*(provider: Provider) {
    const now = yield* Clock.currentTimeMillis
    const cached = discoveries.get(provider.id)
    if (cached !== undefined && cached.until > now) return cached.server
    const response = yield* Effect.tryPromise({
      try: (signal) => oauth.discoveryRequest(new URL(provider.issuer), http(provider, signal)),
      catch: (cause) => failed("unreachable", `the discovery document of ${provider.id} could not be fetched: ${cause instanceof Error ? cause.message : String(cause)}`)
    })
    // OpenID Connect Discovery 4.3: the document names the configured issuer. Microsoft's multi-tenant
    // endpoints name the `{tenantid}` template instead, checked here against the configured issuer.
    const expected = provider.multiTenant ? provider.issuer.replace(multiTenantPath, "/{tenantid}/v2.0") : provider.issuer
    const document = yield* Effect.tryPromise({
      try: () => oauth.processDiscoveryResponse(provider.multiTenant ? hooks._nodiscoverycheck as never : new URL(provider.issuer), response),
      catch: (cause) =>
        cause instanceof oauth.OperationProcessingError && cause.code === oauth.JSON_ATTRIBUTE_COMPARISON
          ? failed("unverified", `the discovery document of ${provider.id} names the issuer ${show((cause.cause as { body?: { issuer?: unknown } }).body?.issuer)}, not ${provider.issuer}`)
          : failed("unreachable", `the discovery document of ${provider.id} is not what OpenID Connect specifies: ${cause instanceof Error ? cause.message : String(cause)}`)
    })
    if (provider.multiTenant && document.issuer !== expected) {
      return yield* failed("unverified", `the discovery document of ${provider.id} names the issuer ${document.issuer}, not ${expected}`)
    }
    for (const endpoint of [document.authorization_endpoint, document.token_endpoint, document.jwks_uri]) {
      if (endpoint === undefined || !allowedUrl(endpoint)) {
        return yield* failed("unverified", `the discovery document of ${provider.id} lacks an HTTPS endpoint (${endpoint ?? "none"})`)
      }
    }
    const template = document.issuer
    const server: oauth.AuthorizationServer = provider.multiTenant
      ? {
        ...document,
        // Each ID token's issuer is its tenant's: the template with its `tid`.
        [hooks._expectedIssuer!]: ({ claims }: { readonly claims: Record<string, unknown> }) =>
          typeof claims["tid"] === "string" ? template.replace("{tenantid}", claims["tid"]) : template
      }
      : document
    discoveries.set(provider.id, { server, until: (yield* Clock.currentTimeMillis) + metadataTtlMs })
    return server
  })

  /**
   * The ID token's signature against the provider's key set (oauth4webapi,
   * its `jwksCache`, the requests through `keySetFetch`). A `kid` not in the
   * set: the provider may have rotated its keys. oauth4webapi asks again by
   * itself only once its set is a minute old; here the set is asked for again
   * at once if the limit allows, or taken again if another sign-in received a
   * newer one meanwhile (once: then the key is not published).
   */
  const verifySignature = Effect.fnUntraced(function*(provider: Provider, server: oauth.AuthorizationServer, response: Response, clock: Clock.Clock) {
    const keys = provider.keys
    const attempt = () =>
      Effect.tryPromise({
        try: (signal) =>
          // A copy each time: oauth4webapi keeps its own key set per server object; ours is `keys.cache`.
          oauth.validateApplicationLevelSignature({ ...server }, response, {
            ...http(provider, signal),
            [oauth.customFetch]: keySetFetch(provider, () => clock.currentTimeMillisUnsafe()),
            [oauth.jwksCache]: keys.cache
          }),
        catch: (cause) => cause
      })
    const generation = keys.generation
    yield* attempt().pipe(
      Effect.catchIf(
        (cause) => cause instanceof oauth.OperationProcessingError && cause.code === oauth.KEY_SELECTION,
        (cause) =>
          Effect.suspend(() => {
            if (keys.generation !== generation || keys.inflight !== undefined) return attempt()
            if (keys.lastRequestAt !== undefined && clock.currentTimeMillisUnsafe() - keys.lastRequestAt < provider.refetchMs) return Effect.fail(cause)
            keys.cache = {}
            return attempt()
          })
      ),
      Effect.mapError((cause) => idTokenProblem(cause, provider.refetchMs / 1000))
    )
  })

  const client = (provider: Provider): oauth.Client => ({
    client_id: provider.clientId,
    id_token_signed_response_alg: "RS256",
    [oauth.clockTolerance]: skewSeconds
  })

  /**
   * Microsoft's multi-tenant issuer in the authorization response (RFC 9207),
   * should it send one: its tenant's issuer, for an allowed tenant; then that
   * issuer is the one the response is checked against (and the ID token's
   * tenant must be the same).
   */
  const responseIssuer = Effect.fnUntraced(function*(provider: Provider, server: oauth.AuthorizationServer, parameters: URLSearchParams) {
    const iss = parameters.get("iss")
    if (!provider.multiTenant || iss === null) return { server, tenant: undefined }
    const [before, after] = server.issuer.split("{tenantid}") as [string, string]
    if (!iss.startsWith(before) || !iss.endsWith(after) || iss.length <= before.length + after.length) return { server, tenant: undefined }
    const tenant = iss.slice(before.length, iss.length - after.length).toLowerCase()
    if (provider.tenants?.has(tenant) !== true) {
      return yield* failed("tenant", `the Microsoft tenant ${tenant} is not among the tenants allowed for ${provider.id}`)
    }
    return { server: { ...server, issuer: iss }, tenant }
  })

  const authorizationUrl = Effect.fn("Oidc.authorizationUrl")(function*(providerId: string, redirectUri: string) {
    const provider = yield* find(providerId)
    const server = yield* discover(provider)
    const state = oauth.generateRandomState()
    const verifier = oauth.generateRandomCodeVerifier()
    const nonce = oauth.generateRandomNonce()
    const challenge = yield* Effect.promise(() => oauth.calculatePKCECodeChallenge(verifier))
    const url = new URL(server.authorization_endpoint!)
    url.search = new URLSearchParams({
      response_type: "code",
      client_id: provider.clientId,
      redirect_uri: redirectUri,
      scope,
      state,
      nonce,
      code_challenge: challenge,
      code_challenge_method: "S256"
    }).toString()
    return { url: url.href, state, verifier, nonce }
  })

  const complete = Effect.fn("Oidc.complete")(function*(providerId: string, completion: Completion) {
    const provider = yield* find(providerId)
    const discovered = yield* discover(provider)
    const clock = yield* Clock.Clock
    const metadata = client(provider)
    // RFC 9207 and the state: the response must come from this provider (when it says it sends `iss`) for this sign-in.
    const { server, tenant: responseTenant } = yield* responseIssuer(provider, discovered, completion.parameters)
    const callback = yield* Effect.try({
      try: () => oauth.validateAuthResponse(server, metadata, completion.parameters, completion.state),
      catch: authorizationResponseProblem(server.issuer)
    })
    const response = yield* Effect.tryPromise({
      try: (signal) =>
        oauth.authorizationCodeGrantRequest(
          discovered,
          metadata,
          oauth.ClientSecretPost(Redacted.value(provider.clientSecret)),
          callback,
          completion.redirectUri,
          completion.verifier,
          http(provider, signal)
        ),
      catch: (cause) => failed("unreachable", `the token endpoint of ${provider.id} could not be reached: ${cause instanceof Error ? cause.message : String(cause)}`)
    })
    const tokens = yield* Effect.tryPromise({
      try: () => oauth.processAuthorizationCodeResponse(discovered, metadata, response, { expectedNonce: completion.nonce, requireIdToken: true }),
      catch: tokenProblem
    })
    // The signature too, though the token came straight from the token endpoint: over plain HTTP on this
    // machine, and against anything between, it is what proves the provider issued it.
    yield* verifySignature(provider, discovered, response, clock)
    const validated = oauth.getValidatedIdTokenClaims(tokens)
    const claims = yield* Schema.decodeUnknownEffect(IdTokenClaims)(validated).pipe(
      Effect.mapError((error) => failed("unverified", `the ID token's claims are invalid: ${error.message}`))
    )
    if (claims.iat > (yield* Clock.currentTimeMillis) / 1000 + skewSeconds) return yield* failed("unverified", "the ID token is issued in the future")
    if (provider.tenants !== undefined) {
      const tid = claims.tid?.toLowerCase()
      if (tid === undefined || !provider.tenants.has(tid)) {
        return yield* failed("tenant", `the Microsoft tenant ${tid ?? "(no tid)"} is not among the tenants allowed for ${provider.id}`)
      }
      if (responseTenant !== undefined && responseTenant !== tid) {
        return yield* failed("unverified", `the authorization response is of tenant ${responseTenant}, the ID token of ${tid}`)
      }
    }
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
