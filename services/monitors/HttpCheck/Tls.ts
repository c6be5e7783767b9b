import type { TLSSocket } from "node:tls"

/** The certificate of a check's https response, read once per connection. */

export interface TlsInfo {
  /** ISO 8601. */
  readonly valid_to: string
  /** Whole days until valid_to, rounded down; negative once expired. */
  readonly days_left: number
  readonly issuer: string
  readonly subject: string
  /** The chain verified against the trusted roots (and the name matched). */
  readonly authorized: boolean
  /** OpenSSL's reason when not authorized, e.g. DEPTH_ZERO_SELF_SIGNED_CERT; "" otherwise. */
  readonly authorization_error: string
}

export interface CertFacts {
  readonly validTo: number
  readonly valid_to: string
  readonly issuer: string
  readonly subject: string
  readonly authorized: boolean
  readonly authorization_error: string
}

/** getPeerCertificate parses the whole certificate: once per connection is enough. */
const certCache = new WeakMap<TLSSocket, CertFacts>()

const firstOf = (v: string | ReadonlyArray<string> | undefined): string | undefined =>
  v === undefined ? undefined : typeof v === "string" ? v : v[0]

export const certFacts = (socket: TLSSocket): CertFacts | undefined => {
  const cached = certCache.get(socket)
  if (cached) return cached
  const cert = socket.getPeerCertificate()
  if (!cert || !cert.valid_to) return undefined
  const validTo = new Date(cert.valid_to).getTime()
  const issuer = cert.issuer as unknown as Record<string, string | Array<string> | undefined> | undefined
  const subject = cert.subject as unknown as Record<string, string | Array<string> | undefined> | undefined
  const facts: CertFacts = {
    validTo,
    valid_to: Number.isNaN(validTo) ? cert.valid_to : new Date(validTo).toISOString(),
    issuer: firstOf(issuer?.["CN"]) ?? firstOf(issuer?.["O"]) ?? "",
    subject: firstOf(subject?.["CN"]) ?? firstOf(subject?.["O"]) ?? "",
    authorized: socket.authorized,
    authorization_error: socket.authorizationError ? String(socket.authorizationError) : ""
  }
  certCache.set(socket, facts)
  return facts
}

const dayMs = 86_400_000

export const tlsInfo = (facts: CertFacts, now: number): TlsInfo => ({
  valid_to: facts.valid_to,
  days_left: Math.floor((facts.validTo - now) / dayMs),
  issuer: facts.issuer,
  subject: facts.subject,
  authorized: facts.authorized,
  authorization_error: facts.authorization_error
})
