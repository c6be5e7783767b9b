import { Result } from "effect"
import type { Sender } from "../Sender.ts"
import { signatureHeaders } from "../signature.ts"
import { sendHttp } from "./http.ts"
import type { HttpOptions } from "./http.ts"
import { settingsOf } from "./settings.ts"

/**
 * Generic webhook: the webhook payload as JSON, signed (README "Verifying
 * webhooks"). The body is serialized once and those exact bytes are both
 * signed and sent. GET and DELETE carry no body; their signatures are over
 * the empty string.
 */

/** Headers the sender sets; a custom header of the same name (any case) is dropped. */
const ownHeaders: ReadonlySet<string> = new Set([
  "content-type",
  "idempotency-key",
  "webhook-id",
  "webhook-timestamp",
  "webhook-signature",
  "x-service-signature"
])

export const makeWebhookSender = (options: HttpOptions = {}): Sender => async (destination, message, context) => {
  const settings = settingsOf("webhook", destination)
  if (Result.isFailure(settings)) return settings.failure
  const { headers: custom, method, signing_secret: secret, url } = settings.success
  const hasBody = method !== "GET" && method !== "DELETE"
  const body = hasBody ? JSON.stringify(message.payload) : ""
  // A fresh timestamp on every attempt: a retry after a long backoff must not look like a replay; webhook-id stays the same.
  const timestamp = Math.floor((options.now ?? Date.now)() / 1000)
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(custom)) {
    if (!ownHeaders.has(name.toLowerCase())) headers[name] = value
  }
  if (hasBody) headers["content-type"] = "application/json"
  headers["idempotency-key"] = context.idempotencyKey
  headers["webhook-id"] = context.idempotencyKey
  headers["webhook-timestamp"] = String(timestamp)
  // Channels get a generated secret on create; one without (made before that, or by hand) is delivered unsigned.
  if (secret !== undefined) Object.assign(headers, signatureHeaders(secret, context.idempotencyKey, timestamp, body))
  return sendHttp({ url, method, headers, ...(hasBody ? { body } : {}), timeoutMs: context.timeoutMs }, options)
}
