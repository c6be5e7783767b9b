import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A local OpenID Connect provider that speaks the real protocol (real HTTP,
 * real RS256 signatures), for tests of services/identity/Oidc.ts and of the
 * portal's sign-in:
 *
 * - a discovery document; Google-type at the issuer itself, Microsoft-type at
 *   `/common/v2.0` and `/organizations/v2.0` (the multi-tenant `{tenantid}`
 *   issuer) and `/<tenant>/v2.0` (that tenant's own issuer);
 * - an authorization endpoint that redirects back at once with a code for the
 *   `person` set beforehand (it insists on state, nonce and an S256 challenge),
 *   and, when `issParameter` (RFC 9207; Google-type by default), advertises
 *   and sends `iss` with it;
 * - a token endpoint checking client secret, redirect URI and the PKCE
 *   `code_verifier` against the challenge (a missing, malformed or wrong one is
 *   `invalid_grant`, the reason kept in `tokenRefusals`), answering with an
 *   RS256-signed ID token;
 * - a JWKS of generated RSA keys (`rotate` adds one and signs with it).
 *
 * What tests can bend: `tamper` (the next ID token's claims, header or key:
 * e.g. `{ claims: { nonce: "other" } }` for a wrong nonce),
 * `tamperAuthorization` (the next authorization response's `iss`: another
 * value, or `null` to leave it out), `tenant` (the Microsoft tenant, `tid`,
 * the next tokens are issued for, with its own `iss`); and read: `hits` (how
 * often each endpoint was asked, `jwks` counting key-set fetches) and
 * `tokenRefusals`.
 */

const tag = () => Math.random().toString(36).slice(2, 10)

export interface Person {
  sub: string
  email?: string | undefined
  email_verified?: boolean | undefined
  name?: string | undefined
}

interface IssuedCode {
  readonly person: Person
  readonly challenge: string
  readonly nonce: string
  readonly redirectUri: string
  readonly clientId: string
}

export interface FakeIdpOptions {
  /** RFC 9207: advertise `authorization_response_iss_parameter_supported` and send `iss` with each code (default: Google-type yes, Microsoft-type no, as Microsoft). */
  readonly issParameter?: boolean
}

const encode = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url")

/** RFC 7636 4.1: 43 to 128 characters of A-Z, a-z, 0-9 and -._~ */
const verifierShape = /^[A-Za-z0-9._~-]{43,128}$/u

/** The consumer (personal Microsoft account) tenant: the default tenant of a Microsoft-type stand-in. */
export const consumerTenant = "9188040d-6c67-4c5b-b112-36a304b66dad"

export class FakeIdp {
  readonly kind: "google" | "microsoft"
  readonly issParameter: boolean
  readonly clientId = `client-${tag()}`
  readonly clientSecret = randomBytes(16).toString("hex")
  /** Microsoft-type: the tenant (`tid`) the next ID tokens are issued for; their `iss` is `<base>/<tenant>/v2.0`. */
  tenant = consumerTenant
  base = ""
  server: Server | undefined
  keys: Array<{ kid: string; privateKey: KeyObject; publicKey: KeyObject }> = []
  person: Person = { sub: "nobody" }
  /** Changes to the next ID token only: claims, header, or the key that signs it. */
  tamper: { claims?: Record<string, unknown>; header?: Record<string, unknown>; key?: KeyObject } | undefined
  /** Changes to the next authorization response only: its `iss` (RFC 9207) another value, or `null` to leave it out. */
  tamperAuthorization: { iss?: string | null } | undefined
  readonly codes = new Map<string, IssuedCode>()
  readonly hits = { discovery: 0, authorize: 0, jwks: 0, token: 0 }
  /** Why the token endpoint refused, oldest first (`invalid_grant: code_verifier does not match the code_challenge`, …). */
  readonly tokenRefusals: Array<string> = []

  constructor(kind: "google" | "microsoft", options: FakeIdpOptions = {}) {
    this.kind = kind
    this.issParameter = options.issParameter ?? kind === "google"
    this.rotate()
  }

  /** The issuer the operator configures (Microsoft-type: the multi-tenant `common` one). */
  get issuer() {
    return this.kind === "google" ? this.base : `${this.base}/common/v2.0`
  }

  /** The issuer of the discovery document (Microsoft-type: the `{tenantid}` template). */
  get discoveredIssuer() {
    return this.kind === "google" ? this.base : `${this.base}/{tenantid}/v2.0`
  }

  /** The `iss` of the ID tokens issued next. */
  get tokenIssuer() {
    return this.kind === "google" ? this.base : `${this.base}/${this.tenant}/v2.0`
  }

  /**
   * A new signing key, published in the JWKS next to the old ones (or instead
   * of them with `retirePrevious`); the next ID tokens are signed with it.
   */
  rotate(options: { readonly retirePrevious?: boolean } = {}) {
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
    const kid = `k${this.keys.length + 1}-${tag()}`
    if (options.retirePrevious === true) this.keys = []
    this.keys.push({ kid, privateKey, publicKey })
    return kid
  }

  jwt(header: Record<string, unknown>, claims: Record<string, unknown>, key: KeyObject) {
    const signed = `${encode(header)}.${encode(claims)}`
    return `${signed}.${sign("RSA-SHA256", Buffer.from(signed), key).toString("base64url")}`
  }

  idToken(code: IssuedCode) {
    const now = Math.floor(Date.now() / 1000)
    const current = this.keys.at(-1)!
    const microsoft = this.kind === "microsoft"
    const { email_verified, ...person } = code.person
    const claims: Record<string, unknown> = {
      iss: this.tokenIssuer,
      aud: this.clientId,
      exp: now + 300,
      iat: now,
      nonce: code.nonce,
      ...person,
      ...(microsoft ? { tid: this.tenant, ...(email_verified ? { xms_edov: true } : {}) } : { email_verified }),
      ...this.tamper?.claims
    }
    const header = { alg: "RS256", typ: "JWT", kid: current.kid, ...this.tamper?.header }
    const token = this.jwt(header, claims, this.tamper?.key ?? current.privateKey)
    this.tamper = undefined
    return token
  }

  private refuse(description: string) {
    this.tokenRefusals.push(`invalid_grant: ${description}`)
    return { status: 400, body: { error: "invalid_grant", error_description: description } }
  }

  async handle(request: IncomingMessage): Promise<{ status: number; body?: unknown; location?: string }> {
    const url = new URL(request.url ?? "/", this.base)
    const discovery = this.kind === "google"
      ? (url.pathname === "/.well-known/openid-configuration" ? this.base : undefined)
      : /^\/([^/]+)\/v2\.0\/\.well-known\/openid-configuration$/u.exec(url.pathname)?.[1]
    if (discovery !== undefined) {
      this.hits.discovery++
      const issuer = this.kind === "google"
        ? this.base
        : ["common", "organizations"].includes(discovery) ? this.discoveredIssuer : `${this.base}/${discovery}/v2.0`
      return {
        status: 200,
        body: {
          issuer,
          authorization_endpoint: `${this.base}/authorize`,
          token_endpoint: `${this.base}/token`,
          jwks_uri: `${this.base}/jwks`,
          response_types_supported: ["code"],
          id_token_signing_alg_values_supported: ["RS256"],
          code_challenge_methods_supported: ["S256"],
          ...(this.issParameter ? { authorization_response_iss_parameter_supported: true } : {})
        }
      }
    }
    if (url.pathname === "/jwks") {
      this.hits.jwks++
      return {
        status: 200,
        body: { keys: this.keys.map((k) => ({ ...k.publicKey.export({ format: "jwk" }), kid: k.kid, use: "sig", alg: "RS256" })) }
      }
    }
    if (url.pathname === "/authorize") {
      this.hits.authorize++
      const q = url.searchParams
      if (
        q.get("response_type") !== "code" || q.get("code_challenge_method") !== "S256" || !q.get("scope")?.split(" ").includes("openid") ||
        !/^[A-Za-z0-9_-]{43}$/u.test(q.get("code_challenge") ?? "") || !q.get("state") || !q.get("nonce") || !q.get("redirect_uri")
      ) {
        return { status: 400, body: { error: "invalid_request" } }
      }
      const code = randomBytes(16).toString("hex")
      this.codes.set(code, {
        person: { ...this.person },
        challenge: q.get("code_challenge")!,
        nonce: q.get("nonce")!,
        redirectUri: q.get("redirect_uri")!,
        clientId: q.get("client_id")!
      })
      const back = new URL(q.get("redirect_uri")!)
      back.searchParams.set("code", code)
      back.searchParams.set("state", q.get("state")!)
      const iss = this.tamperAuthorization !== undefined && "iss" in this.tamperAuthorization
        ? this.tamperAuthorization.iss
        : this.issParameter ? this.discoveredIssuer : null
      if (iss !== null && iss !== undefined) back.searchParams.set("iss", iss)
      this.tamperAuthorization = undefined
      return { status: 302, location: back.href }
    }
    if (url.pathname === "/token" && request.method === "POST") {
      this.hits.token++
      let text = ""
      for await (const chunk of request) text += chunk
      const form = new URLSearchParams(text)
      const issued = this.codes.get(form.get("code") ?? "")
      if (
        form.get("grant_type") !== "authorization_code" || issued === undefined || form.get("client_id") !== this.clientId ||
        form.get("client_secret") !== this.clientSecret || issued.clientId !== this.clientId
      ) {
        return this.refuse("unknown or used code, or wrong client")
      }
      if (form.get("redirect_uri") !== issued.redirectUri) return this.refuse("redirect_uri differs from the authorization request's")
      const verifier = form.get("code_verifier")
      if (verifier === null) return this.refuse("code_verifier missing")
      if (!verifierShape.test(verifier)) return this.refuse("code_verifier malformed")
      if (createHash("sha256").update(verifier).digest("base64url") !== issued.challenge) {
        return this.refuse("code_verifier does not match the code_challenge")
      }
      this.codes.delete(form.get("code")!)
      return { status: 200, body: { access_token: "at", token_type: "Bearer", expires_in: 3600, id_token: this.idToken(issued) } }
    }
    return { status: 404, body: { error: "not_found" } }
  }

  start() {
    return new Promise<void>((resolve) => {
      this.server = createServer((request, response) => {
        void this.handle(request).then((r) => {
          response.writeHead(r.status, { "content-type": "application/json", ...(r.location ? { location: r.location } : {}) })
          response.end(r.body === undefined ? "" : JSON.stringify(r.body))
        })
      })
      this.server.listen(0, "127.0.0.1", () => {
        this.base = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`
        resolve()
      })
    })
  }

  /** Closes the server (and its kept-alive connections). */
  stop() {
    this.server?.closeAllConnections()
    return new Promise<void>((resolve) => (this.server === undefined ? resolve() : this.server.close(() => resolve())))
  }

  /** Its entry in `OIDC_PROVIDERS` (services/identity/Oidc.ts); Microsoft-type allows its current tenant. */
  config(id: string = this.kind, extra: Record<string, unknown> = {}) {
    return {
      id,
      issuer: this.issuer,
      client_id: this.clientId,
      client_secret: this.clientSecret,
      kind: this.kind,
      ...(this.kind === "microsoft" ? { tenants: [this.tenant] } : {}),
      ...extra
    }
  }
}
