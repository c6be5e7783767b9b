import { HttpServerResponse } from "effect/http"
import type { ErrorBody } from "../domain/api/Errors.ts"

/**
 * The API's 429: `Retry-After` and the error body `{ code: "rate_limited", message, retry_after_s }`,
 * whichever limit said no (an API key's requests, a live stream's, an address's crowd reports).
 */
export const rateLimitedResponse = (message: string, retryAfterS: number) =>
  HttpServerResponse.jsonUnsafe(rateLimitedBody(message, retryAfterS), { status: 429, headers: { "retry-after": String(retryAfterS) } })

/** The 429's body. */
export const rateLimitedBody = (message: string, retryAfterS: number): ErrorBody & { readonly retry_after_s: number } => ({
  code: "rate_limited",
  message,
  retry_after_s: retryAfterS
})

/** The message of a key's limit, the same in every answer. */
export const keyLimitMessage = (retryAfterS: number) => `too many requests for this API key; retry after ${retryAfterS} s`
