import { createDecipheriv, createECDH, createPublicKey, hkdfSync, randomBytes, randomUUID, verify } from "node:crypto"
import type { ECDH } from "node:crypto"
import { type Answer, type HttpReceiver, type Received, startHttpReceiver } from "./receivers.ts"
import type { TestCerts } from "./tls.ts"

/**
 * A local push service (RFC 8030) for Web Push tests, checking a message as a
 * real one does and reading it as the browser would:
 * - the VAPID `Authorization: vapid t=<JWT>, k=<public key>` header (RFC 8292):
 *   an ES256 JWT signed by `k`, `aud` the endpoint's origin, `exp` in the
 *   future and at most 24 hours ahead, `sub` a `mailto:` or `https:` contact;
 * - `Content-Encoding: aes128gcm` and a `TTL`;
 * - the body decrypted with the subscription's private key (RFC 8291: ECDH
 *   P-256, HKDF-SHA-256, AES-128-GCM in RFC 8188's single record).
 * A message it accepts gets 201 and is kept decrypted in `received`; a refused
 * one gets 400 or 401 and its problem in `problems`. A subscription marked
 * `gone` gets 410, as after the user unsubscribed; one marked `busy`, 503.
 */

/** A browser's side of one subscription: what it gives the server (`json`) and the keys it keeps. */
export interface Subscription {
  readonly id: string
  /** `PushSubscription.toJSON()`: the channel's settings. */
  readonly json: { readonly endpoint: string; readonly keys: { readonly p256dh: string; readonly auth: string } }
  readonly ecdh: ECDH
  readonly authSecret: Buffer
}

export interface PushMessage {
  readonly subscription: string
  /** `k` of the Authorization header: the server's VAPID public key, base64url. */
  readonly vapidKey: string
  readonly claims: { readonly aud: string; readonly exp: number; readonly sub: string }
  readonly headers: Received["headers"]
  /** The decrypted body. */
  readonly plaintext: string
}

export interface PushService {
  readonly url: string
  readonly receiver: HttpReceiver
  readonly received: Array<PushMessage>
  readonly problems: Array<string>
  /** A new subscription on this service, its key pair generated here as a browser would. */
  readonly subscribe: () => Subscription
  /** Subscriptions answered 410 Gone from now on. */
  readonly gone: Set<string>
  /** Subscriptions answered 503 (after the checks) this many more times, as an overloaded push service. */
  readonly busy: Map<string, number>
  readonly close: () => Promise<void>
}

const b64url = (s: string) => Buffer.from(s, "base64url")

/** The RFC 8291 message of `body` for the subscription, or why it cannot be read. */
export const decryptAes128gcm = (body: Buffer, sub: Pick<Subscription, "ecdh" | "authSecret">): string => {
  // RFC 8188 header: salt (16) | record size (4) | key id length (1) | key id (the sender's ECDH public key).
  if (body.length < 21) throw new Error("body shorter than the aes128gcm header")
  const salt = body.subarray(0, 16)
  const recordSize = body.readUInt32BE(16)
  const idLength = body[20]!
  if (idLength !== 65) throw new Error(`key id of ${idLength} bytes, not an uncompressed P-256 key`)
  const senderKey = body.subarray(21, 21 + idLength)
  const record = body.subarray(21 + idLength)
  if (record.length > recordSize) throw new Error("more than one record")
  // RFC 8291 section 3.4: the input keying material from the ECDH secret and the auth secret.
  const ecdhSecret = sub.ecdh.computeSecret(senderKey)
  const keyInfo = Buffer.concat([Buffer.from("WebPush: info\0"), sub.ecdh.getPublicKey(), senderKey])
  const ikm = Buffer.from(hkdfSync("sha256", ecdhSecret, sub.authSecret, keyInfo, 32))
  const cek = Buffer.from(hkdfSync("sha256", ikm, salt, Buffer.from("Content-Encoding: aes128gcm\0"), 16))
  const nonce = Buffer.from(hkdfSync("sha256", ikm, salt, Buffer.from("Content-Encoding: nonce\0"), 12))
  const decipher = createDecipheriv("aes-128-gcm", cek, nonce)
  decipher.setAuthTag(record.subarray(record.length - 16))
  const padded = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()])
  // The last (only) record ends with the delimiter 0x02, then zero padding.
  let end = padded.length - 1
  while (end >= 0 && padded[end] === 0) end--
  if (padded[end] !== 2) throw new Error("no last-record delimiter")
  return padded.subarray(0, end).toString("utf8")
}

/** The JWT's claims if `k` signed it (ES256), else the problem. */
const verifyVapid = (authorization: string, origin: string, nowS: number): { claims: PushMessage["claims"]; key: string } | string => {
  const match = /^vapid t=([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+), ?k=([A-Za-z0-9_-]+)$/.exec(authorization)
  if (match === null) return `Authorization is not "vapid t=<JWT>, k=<key>": ${authorization.slice(0, 40)}`
  const [, token, key] = match as unknown as [string, string, string]
  const [header, payload, signature] = token.split(".") as [string, string, string]
  const point = b64url(key)
  if (point.length !== 65 || point[0] !== 4) return "k is not an uncompressed P-256 public key"
  const publicKey = createPublicKey({
    key: { kty: "EC", crv: "P-256", x: point.subarray(1, 33).toString("base64url"), y: point.subarray(33).toString("base64url") },
    format: "jwk"
  })
  const head = JSON.parse(b64url(header).toString("utf8")) as { alg?: string }
  if (head.alg !== "ES256") return `JWT alg ${head.alg}, not ES256`
  if (!verify("sha256", Buffer.from(`${header}.${payload}`), { key: publicKey, dsaEncoding: "ieee-p1363" }, b64url(signature))) {
    return "JWT signature does not verify with k"
  }
  const claims = JSON.parse(b64url(payload).toString("utf8")) as PushMessage["claims"]
  if (claims.aud !== origin) return `JWT aud ${claims.aud}, not the endpoint's origin ${origin}`
  if (typeof claims.exp !== "number" || claims.exp <= nowS) return "JWT expired"
  if (claims.exp > nowS + 24 * 60 * 60) return "JWT exp more than 24 hours ahead"
  if (typeof claims.sub !== "string" || !/^(mailto:|https:)/.test(claims.sub)) return `JWT sub ${claims.sub} is not mailto: or https:`
  return { claims, key }
}

/** A refusal: its status, and the problem as body and in `problems`. */
const refuse = (status: number, problem: string): Answer & { problem: string } => ({ status, body: problem, problem })

export const startPushService = async (certs: TestCerts): Promise<PushService> => {
  const subscriptions = new Map<string, Subscription>()
  const received: Array<PushMessage> = []
  const gone = new Set<string>()
  const busy = new Map<string, number>()
  let origin = ""
  const receiver = await startHttpReceiver((req) => {
    const id = /^\/push\/([0-9a-f-]+)$/.exec(req.path)?.[1]
    const sub = id === undefined ? undefined : subscriptions.get(id)
    if (req.method !== "POST" || sub === undefined) return refuse(404, `no subscription at ${req.method} ${req.path}`)
    if (gone.has(sub.id)) return { status: 410, body: "push subscription has unsubscribed or expired" }
    const vapid = verifyVapid(String(req.headers["authorization"] ?? ""), origin, Math.floor(Date.now() / 1000))
    if (typeof vapid === "string") return refuse(401, vapid)
    if (req.headers["content-encoding"] !== "aes128gcm") return refuse(400, `Content-Encoding ${req.headers["content-encoding"]}, not aes128gcm`)
    if (!/^\d+$/.test(String(req.headers["ttl"] ?? ""))) return refuse(400, "no TTL header")
    let plaintext: string
    try {
      plaintext = decryptAes128gcm(req.body, sub)
    } catch (error) {
      return refuse(400, `cannot decrypt: ${String(error)}`)
    }
    const unavailable = busy.get(sub.id) ?? 0
    if (unavailable > 0) {
      busy.set(sub.id, unavailable - 1)
      return { status: 503, body: "try again", headers: { "retry-after": "0" } }
    }
    received.push({ subscription: sub.id, vapidKey: vapid.key, claims: vapid.claims, headers: req.headers, plaintext })
    return { status: 201, headers: { location: `${origin}/message/${randomUUID()}` } }
  }, certs)
  origin = receiver.url
  return {
    url: receiver.url,
    receiver,
    received,
    problems: receiver.problems,
    gone,
    busy,
    subscribe: () => {
      const id = randomUUID()
      const ecdh = createECDH("prime256v1")
      ecdh.generateKeys()
      const authSecret = randomBytes(16)
      const sub = {
        id,
        json: { endpoint: `${receiver.url}/push/${id}`, keys: { p256dh: ecdh.getPublicKey().toString("base64url"), auth: authSecret.toString("base64url") } },
        ecdh,
        authSecret
      }
      subscriptions.set(id, sub)
      return sub
    },
    close: receiver.close
  }
}
