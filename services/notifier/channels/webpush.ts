import { Config, Effect, Option, Redacted, Result, Schema } from "effect"
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import webPush from "web-push"
import type { Sender } from "../Sender.ts"
import { failure, sendHttp } from "./http.ts"
import type { HttpOptions } from "./http.ts"
import { settingsOf } from "./settings.ts"

/**
 * Web Push (RFC 8030) with VAPID (RFC 8292): the alert's JSON (`title`,
 * `body`, `url`) encrypted for the subscription (RFC 8291, aes128gcm) by the
 * `web-push` library, and POSTed to the subscription's endpoint through the
 * same HTTP attempt (and address guard) as the other channels. A push
 * service answering 404 or 410 says the subscription is gone: a final
 * failure. Push services have no idempotency key: a retry may show twice,
 * unless the first is still queued there, as each delivery's messages share a
 * `Topic` (the key's hash) and a queued one is replaced.
 */

export interface VapidKeys {
  /** Uncompressed P-256 public key, base64url (the `applicationServerKey` browsers subscribe with). */
  readonly publicKey: string
  /** P-256 private key, base64url. */
  readonly privateKey: string
  /** Contact of the operator for push services: `mailto:` or `https:`. */
  readonly subject: string
}

export class VapidError extends Schema.TaggedError<VapidError>()("VapidError", { message: Schema.String }) {}

/** How long a push service keeps a message for an offline device: a day. */
const ttlSeconds = 24 * 60 * 60

/** `Topic`: at most 32 base64url characters; the same for every attempt of a delivery. */
const topicOf = (idempotencyKey: string) => createHash("sha256").update(idempotencyKey).digest("base64url").slice(0, 32)

export const webPushMessage = (message: { readonly title: string; readonly text: string; readonly url: string }) =>
  JSON.stringify({ title: message.title, body: message.text, url: message.url })

export const makeWebPushSender = (options: HttpOptions, vapid: VapidKeys | undefined): Sender => async (destination, message, context) => {
  const settings = settingsOf("webpush", destination)
  if (Result.isFailure(settings)) return settings.failure
  if (vapid === undefined) return failure(0, false, "Web Push is not configured: no VAPID keys")
  const { endpoint, keys } = settings.success
  const request = webPush.generateRequestDetails({ endpoint, keys: { p256dh: keys.p256dh, auth: keys.auth } }, webPushMessage(message), {
    vapidDetails: vapid,
    TTL: ttlSeconds,
    contentEncoding: "aes128gcm",
    urgency: message.level === "critical" ? "high" : "normal",
    topic: topicOf(context.idempotencyKey)
  })
  const result = await sendHttp({
    url: request.endpoint,
    method: "POST",
    headers: Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)])),
    body: request.body,
    timeoutMs: context.timeoutMs
  }, options)
  return result.status === 404 || result.status === 410
    ? failure(result.status, false, `HTTP ${result.status}: the push subscription is gone (expired or unsubscribed); subscribe the device again`)
    : result
}

/** The keys if they sign a VAPID header (the library throws on a malformed key or subject, as it would when sending). */
const checked = (keys: VapidKeys) =>
  Effect.try({
    try: () => {
      webPush.getVapidHeaders("https://push.example", keys.subject, keys.publicKey, keys.privateKey, "aes128gcm")
      return keys
    },
    catch: (error) => new VapidError({ message: `invalid VAPID settings: ${error instanceof Error ? error.message : String(error)}` })
  })

/** A key pair generated once in `file` ("wx": two processes starting at once cannot both write one), then read. */
const keyPairIn = (file: string) =>
  Effect.try({
    try: () => {
      Fs.mkdirSync(Path.dirname(file), { recursive: true, mode: 0o700 })
      if (!Fs.existsSync(file)) {
        try {
          Fs.writeFileSync(file, JSON.stringify(webPush.generateVAPIDKeys()), { mode: 0o600, flag: "wx" })
        } catch (error) {
          if ((error as { code?: unknown }).code !== "EEXIST") throw error
        }
      }
      const { privateKey, publicKey } = JSON.parse(Fs.readFileSync(file, "utf8")) as { publicKey: string; privateKey: string }
      return { publicKey, privateKey }
    },
    catch: (cause) => new VapidError({ message: `cannot read or create the VAPID keys in ${file}: ${String(cause)}` })
  })

/**
 * The VAPID keys (README "Configuration"): `VAPID_PUBLIC_KEY` and
 * `VAPID_PRIVATE_KEY`, else a pair generated once in `DATA_DIR/vapid.json`
 * (runners sharing a database must share it: subscriptions are bound to the
 * public key); `VAPID_SUBJECT`, default `PUBLIC_URL` when it is https.
 */
export const vapidConfig = Effect.gen(function*() {
  const publicKey = yield* Config.option(Config.String("VAPID_PUBLIC_KEY"))
  const privateKey = yield* Config.option(Config.Redacted("VAPID_PRIVATE_KEY"))
  const publicUrl = yield* Config.String("PUBLIC_URL").pipe(Config.withDefault("http://localhost:8080"))
  const subject = yield* Config.String("VAPID_SUBJECT").pipe(
    Config.withDefault(publicUrl.startsWith("https://") ? publicUrl : "mailto:webpush@statusgrid.invalid")
  )
  if (Option.isSome(publicKey) !== Option.isSome(privateKey)) {
    return yield* new VapidError({ message: "VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY are set together, or neither" })
  }
  const pair = Option.isSome(publicKey) && Option.isSome(privateKey)
    ? { publicKey: publicKey.value, privateKey: Redacted.value(privateKey.value) }
    : yield* keyPairIn(Path.join(Path.resolve(yield* Config.String("DATA_DIR").pipe(Config.withDefault("./data"))), "vapid.json"))
  return yield* checked({ ...pair, subject })
})
