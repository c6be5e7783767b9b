import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A local OpenID Connect provider that speaks the real protocol, for tests
 * of services/identity/Oidc.ts and of the portal's sign-in: a discovery
 * document, an authorization endpoint that redirects back at once with a code
 * (for the `person` set beforehand), a token endpoint checking client secret,
 * redirect URI and PKCE (S256) and answering with an RS256-signed ID token,
 * and a JWKS from generated RSA keys. Google-type, or Microsoft-type with the
 * multi-tenant `{tenantid}` issuer.
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

const encode = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url")

export class FakeIdp {
  readonly kind: "google" | "microsoft"
  readonly clientId = `client-${tag()}`
  readonly clientSecret = randomBytes(16).toString("hex")
  readonly tenant = "9188040d-6c67-4c5b-b112-36a304b66dad"
  base = ""
  server: Server | undefined
  keys: Array<{ kid: string; privateKey: KeyObject; publicKey: KeyObject }> = []
  person: Person = { sub: "nobody" }
  /** Changes to the next ID token only: claims, header, or the key that signs it. */
  tamper: { claims?: Record<string, unknown>; header?: Record<string, unknown>; key?: KeyObject } | undefined
  readonly codes = new Map<string, IssuedCode>()
  readonly hits = { discovery: 0, jwks: 0, token: 0 }

  constructor(kind: "google" | "microsoft") {
    this.kind = kind
    this.rotate()
  }

  /** The issuer the operator configures. */
  get issuer() {
    return this.kind === "google" ? this.base : `${this.base}/common/v2.0`
  }

  /** A new signing key, published next to the old one. */
  rotate() {
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
    const kid = `k${this.keys.length + 1}-${tag()}`
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
      iss: microsoft ? `${this.base}/${this.tenant}/v2.0` : this.base,
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

  async handle(request: IncomingMessage): Promise<{ status: number; body?: unknown; location?: string }> {
    const url = new URL(request.url ?? "/", this.base)
    const prefix = this.kind === "google" ? "" : "/common/v2.0"
    if (url.pathname === `${prefix}/.well-known/openid-configuration`) {
      this.hits.discovery++
      return {
        status: 200,
        body: {
          issuer: this.kind === "google" ? this.base : `${this.base}/{tenantid}/v2.0`,
          authorization_endpoint: `${this.base}/authorize`,
          token_endpoint: `${this.base}/token`,
          jwks_uri: `${this.base}/jwks`,
          response_types_supported: ["code"],
          id_token_signing_alg_values_supported: ["RS256"]
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
      const q = url.searchParams
      if (q.get("response_type") !== "code" || q.get("code_challenge_method") !== "S256" || !q.get("scope")?.split(" ").includes("openid")) {
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
      return { status: 302, location: `${q.get("redirect_uri")}?code=${code}&state=${encodeURIComponent(q.get("state")!)}` }
    }
    if (url.pathname === "/token" && request.method === "POST") {
      this.hits.token++
      let text = ""
      for await (const chunk of request) text += chunk
      const form = new URLSearchParams(text)
      const issued = this.codes.get(form.get("code") ?? "")
      const challenge = createHash("sha256").update(form.get("code_verifier") ?? "").digest("base64url")
      if (
        form.get("grant_type") !== "authorization_code" || issued === undefined || form.get("client_id") !== this.clientId ||
        form.get("client_secret") !== this.clientSecret || issued.clientId !== this.clientId ||
        form.get("redirect_uri") !== issued.redirectUri || challenge !== issued.challenge
      ) {
        return { status: 400, body: { error: "invalid_grant" } }
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

  /** Its entry in `OIDC_PROVIDERS` (services/identity/Oidc.ts). */
  config(id: string = this.kind) {
    return { id, issuer: this.issuer, client_id: this.clientId, client_secret: this.clientSecret, kind: this.kind }
  }
}
