import { createHmac, timingSafeEqual } from "node:crypto"

/**
 * Webhook signatures (README "Verifying webhooks").
 *
 * - `X-Service-Signature`: hex HMAC-SHA256 of the exact body bytes, keyed by
 *   the signing secret's UTF-8 bytes (the service's own header).
 * - `webhook-signature`: the Standard Webhooks scheme, `v1,` + base64
 *   HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`, same key. It
 *   binds the timestamp and id, so a receiver can reject replays; Standard
 *   Webhooks libraries verify it given `whsec_` + base64(secret).
 */

/** The signing secret: its UTF-8 bytes are the HMAC key (bytes given as such are used as they are). */
export type Key = string | Uint8Array

export const signatureHeader = "x-service-signature"
export const standardSignatureHeader = "webhook-signature"

/** Hex HMAC-SHA256 of `body` under `secret`: the value of X-Service-Signature. */
export const signBody = (secret: Key, body: string | Uint8Array): string =>
  createHmac("sha256", secret).update(body).digest("hex")

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`: the value of webhook-signature. */
export const signTimestamped = (secret: Key, id: string, timestampSeconds: number, body: string | Uint8Array): string =>
  `v1,${createHmac("sha256", secret).update(`${id}.${timestampSeconds}.`).update(body).digest("base64")}`

/** The signing headers of one request, names in lower case. */
export const signatureHeaders = (
  secret: Key,
  id: string,
  timestampSeconds: number,
  body: string | Uint8Array
): Readonly<Record<string, string>> => ({
  [signatureHeader]: signBody(secret, body),
  [standardSignatureHeader]: signTimestamped(secret, id, timestampSeconds, body)
})

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
 * signs this id, timestamp and body, with the timestamp within
 * `toleranceSeconds` of `nowSeconds` (Standard Webhooks uses 5 minutes).
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
  const expected = signTimestamped(secret, id, ts, body)
  return signature.split(" ").some((candidate) => equalText(candidate, expected))
}
