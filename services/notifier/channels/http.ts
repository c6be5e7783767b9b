import { request } from "undici"
import type { Dispatcher } from "undici"
import { isPrivateAddressRefusal, isRetryableStatus, retryAfterMs, userAgent } from "../../platform/Outbound.ts"
import type { SendContext, SendResult } from "../Sender.ts"

/**
 * One HTTP attempt of a delivery and what its answer means (issue #7):
 * 2xx ok; 429 and 5xx retryable, honouring Retry-After; other statuses
 * (3xx included: redirects are not followed) final; network errors and
 * timeouts retryable.
 */

export interface HttpOptions {
  /** Connection pool and TLS settings (a test CA, a proxy); default undici's global dispatcher, shared with `fetch`. */
  readonly dispatcher?: Dispatcher
  /** Clock for HTTP-date Retry-After values. Default `Date.now`. */
  readonly now?: () => number
}

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

export interface HttpRequest {
  readonly url: string
  readonly method: HttpMethod
  /** Names in any case; a later name equal but for case replaces nothing: give each once. */
  readonly headers: Readonly<Record<string, string>>
  /** Absent: no body (GET, DELETE). Bytes for binary bodies (an encrypted Web Push message). */
  readonly body?: string | Uint8Array
  /** The whole attempt: connecting, sending, the status and the body read. */
  readonly timeoutMs: number
  /** Reads a 2xx answer's body (its first 4 KiB) when the status alone does not tell (Slack's Web API answers 200 `{ok:false}`). */
  readonly inspect?: (body: string) => SendResult
}

/** Characters of an error answer kept in `error`: enough for "invalid_payload" or a JSON error message. */
const snippetChars = 300
/** Bytes of an answer read at most; the rest is dropped with the connection. */
const snippetBytes = 4096

export const ok: SendResult = { ok: true, status: 0, retryable: false, error: "" }

export const failure = (status: number, retryable: boolean, error: string, retryAfterMs?: number): SendResult =>
  retryAfterMs === undefined ? { ok: false, status, retryable, error } : { ok: false, status, retryable, retryAfterMs, error }

/** `Retry-After` in milliseconds: the outbound module's one parser (services/platform/Outbound.ts). */
export const parseRetryAfter = retryAfterMs

/** The result of an answer with `status`, its Retry-After header and the start of its body. */
export const resultOfStatus = (status: number, retryAfter: string | undefined, bodySnippet: string, nowMs: number): SendResult => {
  if (status >= 200 && status < 300) return { ...ok, status }
  const text = bodySnippet.replace(/\s+/g, " ").trim().slice(0, snippetChars)
  const error = status >= 300 && status < 400
    ? `HTTP ${status}: redirects are not followed; use the final URL`
    : `HTTP ${status}${text === "" ? "" : `: ${text}`}`
  if (!isRetryableStatus(status)) return failure(status, false, error)
  return failure(status, true, error, parseRetryAfter(retryAfter, nowMs))
}

const headerValue = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : value?.[0]

/** Up to `snippetBytes` of the body as text; stops reading there (the connection is then not reused). */
const readSnippet = async (body: AsyncIterable<Uint8Array>): Promise<string> => {
  const chunks: Array<Uint8Array> = []
  let size = 0
  for await (const chunk of body) {
    chunks.push(chunk)
    size += chunk.length
    if (size >= snippetBytes) break
  }
  return Buffer.concat(chunks).subarray(0, snippetBytes).toString("utf8")
}

const describeError = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error)
  const code = (error as { code?: unknown }).code
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ""
  return typeof code === "string" && !error.message.includes(code) ? `${code}: ${error.message}${cause}` : `${error.message}${cause}`
}

const badUrl = (url: string): string | undefined => {
  try {
    const parsed = new URL(url)
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? undefined : `unsupported URL scheme ${parsed.protocol}`
  } catch {
    return "invalid URL"
  }
}

/** Sends one request; never rejects. */
export const sendHttp = async (req: HttpRequest, options: HttpOptions = {}): Promise<SendResult> => {
  const invalid = badUrl(req.url)
  if (invalid !== undefined) return failure(0, false, invalid)
  const now = options.now ?? Date.now
  const signal = AbortSignal.timeout(req.timeoutMs)
  try {
    const answer = await request(req.url, {
      method: req.method,
      headers: Object.keys(req.headers).some((name) => name.toLowerCase() === "user-agent") ? req.headers : { "user-agent": userAgent, ...req.headers },
      body: req.body ?? null,
      signal,
      ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher })
    })
    const status = answer.statusCode
    // A 2xx body is not needed, but is read (briefly) so the connection goes back to the pool.
    const snippet = await readSnippet(answer.body)
    if (req.inspect !== undefined && status >= 200 && status < 300) return req.inspect(snippet)
    return resultOfStatus(status, headerValue(answer.headers["retry-after"]), snippet, now())
  } catch (error) {
    if (signal.aborted) return failure(0, true, `timeout after ${req.timeoutMs} ms`)
    // The address guard's refusal (services/notifier/Egress.ts) will not change on a retry.
    return failure(0, !isPrivateAddressRefusal(error), describeError(error))
  }
}

/** POSTs `value` as JSON; the usual shape of a chat webhook. */
export const postJson = (
  url: string,
  value: unknown,
  context: SendContext,
  options: HttpOptions = {},
  headers: Readonly<Record<string, string>> = {}
): Promise<SendResult> =>
  sendHttp({
    url,
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(value),
    timeoutMs: context.timeoutMs
  }, options)
