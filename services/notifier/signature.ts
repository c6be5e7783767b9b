import { createHmac, timingSafeEqual } from "node:crypto"

/**
 * Webhook signatures (README "Verifying webhooks").
 *
 * - `X-Service-Signature`: hex HMAC-SHA256 of the exact body bytes, keyed by
 *   the signing secret's UTF-8 bytes, the secret exactly as shown (the
 *   service's own header).
 * - `webhook-signature`: the Standard Webhooks scheme, `v1,` + base64
 *   HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`. It binds the
 *   timestamp and id, so a receiver can reject replays. Its key is the
 *   Standard Webhooks key of the secret (`standardKey`): for a secret in the
 *   specification's form, `whsec_` + base64 (what the API generates), the
 *   bytes that base64 stands for, so the secret works as it is in Standard
 *   Webhooks libraries (`new Webhook(secret)`); for any other secret (hex
 *   ones generated before, or chosen by the organization), its UTF-8 bytes,
 *   as before (`new Webhook(secret, { format: "raw" })`).
 *   For a `whsec_` secret the header also carries a second `v1,` signature
 *   keyed by the secret's UTF-8 bytes (the key every secret had before), so
 *   that receivers set up that way keep verifying; the specification lets a
 *   header carry several signatures, and receivers accept any that matches.
 */

/** The signing secret: its UTF-8 bytes are the HMAC key (bytes given as such are used as they are). */
export type Key = string | Uint8Array

/**
 * `whsec_` then padded standard base64 of at least one byte: the form every Standard Webhooks library
 * decodes the same way (the JavaScript one also takes unpadded text, the Python and Go ones refuse it).
 */
const standardSecret = /^whsec_((?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4}))$/

/**
 * The key of `webhook-signature` for a signing secret: the decoded bytes of
 * a `whsec_<base64>` secret, else the secret itself (its UTF-8 bytes; bytes
 * given as such are used as they are).
 */
export const standardKey = (secret: Key): Key => {
  if (typeof secret !== "string") return secret
  const base64 = standardSecret.exec(secret)?.[1]
  return base64 === undefined ? secret : Buffer.from(base64, "base64")
}

export const signatureHeader = "x-service-signature"
export const standardSignatureHeader = "webhook-signature"

/** Hex HMAC-SHA256 of `body` under `secret`: the value of X-Service-Signature. */
export const signBody = (secret: Key, body: string | Uint8Array): string =>
  createHmac("sha256", secret).update(body).digest("hex")

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` under `key` as given: one signature of webhook-signature. */
export const signTimestamped = (key: Key, id: string, timestampSeconds: number, body: string | Uint8Array): string =>
  `v1,${createHmac("sha256", key).update(`${id}.${timestampSeconds}.`).update(body).digest("base64")}`

/**
 * The signing headers of one request, names in lower case: `webhook-signature`
 * under the secret's Standard Webhooks key, then, when that differs from the
 * secret's UTF-8 bytes (a `whsec_` secret), under those too.
 */
export const signatureHeaders = (
  secret: Key,
  id: string,
  timestampSeconds: number,
  body: string | Uint8Array
): Readonly<Record<string, string>> => {
  const key = standardKey(secret)
  const signatures = [signTimestamped(key, id, timestampSeconds, body)]
  if (key !== secret) signatures.push(signTimestamped(secret, id, timestampSeconds, body))
  return {
    [signatureHeader]: signBody(secret, body),
    [standardSignatureHeader]: signatures.join(" ")
  }
}

const equalText = (a: string, b: string): boolean => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/** Whether `header` is the X-Service-Signature of `body` (constant-time comparison). */
export const verifyBody = (secret: Key, body: string | Uint8Array, header: string | undefined): boolean =>
  header !== undefined && equalText(signBody(secret, body), header.trim().toLowerCase())

export interface TimestampedHeaders {
  readonly id: string | undefined
  readonly timestamp: string | undefined
  readonly signature: string | undefined
}

/**
 * Whether `webhook-signature` (one or more space-separated `v1,<base64>`)
 * signs this id, timestamp and body under the Standard Webhooks key of
 * `secret` (`standardKey`), with the timestamp within `toleranceSeconds` of
 * `nowSeconds` (Standard Webhooks uses 5 minutes).
 */
export const verifyTimestamped = (
  secret: Key,
  headers: TimestampedHeaders,
  body: string | Uint8Array,
  nowSeconds: number,
  toleranceSeconds = 300
): boolean => {
  const { id, signature, timestamp } = headers
  if (id === undefined || timestamp === undefined || signature === undefined || !/^\d+$/.test(timestamp)) return false
  const ts = Number(timestamp)
  if (Math.abs(nowSeconds - ts) > toleranceSeconds) return false
  const expected = signTimestamped(standardKey(secret), id, ts, body)
  return signature.split(" ").some((candidate) => equalText(candidate, expected))
}
