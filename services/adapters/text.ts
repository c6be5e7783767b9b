import { Effect } from "effect"
import { AdapterError, type Fetched } from "./Adapter.ts"

const utf8 = new TextDecoder("utf-8")
const utf16le = new TextDecoder("utf-16le")
const utf16be = new TextDecoder("utf-16be")

/**
 * Body bytes as text. Honours a byte-order mark and a `charset=utf-16` content
 * type (AWS serves its current-events JSON as UTF-16); UTF-8 otherwise.
 */
export const decodeText = (body: Uint8Array, contentType = ""): string => {
  if (body.length >= 2 && body[0] === 0xff && body[1] === 0xfe) return utf16le.decode(body.subarray(2))
  if (body.length >= 2 && body[0] === 0xfe && body[1] === 0xff) return utf16be.decode(body.subarray(2))
  if (body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return utf8.decode(body.subarray(3))
  if (/charset\s*=\s*"?utf-?16/i.test(contentType)) {
    // No BOM: guess the byte order from where the zero bytes of ASCII characters sit.
    return body.length >= 2 && body[0] === 0 ? utf16be.decode(body) : utf16le.decode(body)
  }
  return utf8.decode(body)
}

/** Whether a body looks like an HTML page rather than data. */
export const looksLikeHtml = (text: string): boolean => /^\s*(<!doctype html|<html[\s>])/i.test(text)

/**
 * A fetched document as JSON. Fails with a clear reason for a non-2xx status,
 * an HTML page answering a JSON path (SPA catch-all), or a body that is not
 * JSON (including a truncated one).
 */
export const json = (provider: string, fetched: Fetched): Effect.Effect<unknown, AdapterError> =>
  Effect.suspend(() => {
    const text = httpText(provider, fetched)
    if (typeof text !== "string") return text
    if (looksLikeHtml(text)) {
      return Effect.fail(new AdapterError({
        provider,
        url: fetched.url,
        reason: "html_catch_all",
        message: "the server answered a JSON path with an HTML page"
      }))
    }
    try {
      return Effect.succeed(JSON.parse(text) as unknown)
    } catch (error) {
      return Effect.fail(new AdapterError({
        provider,
        url: fetched.url,
        reason: "not_json",
        message: `the body is not valid JSON (${(error as Error).message}; ${fetched.body.length} bytes)`
      }))
    }
  })

/** A fetched document as text, failing on a non-2xx status. */
export const text = (provider: string, fetched: Fetched): Effect.Effect<string, AdapterError> =>
  Effect.suspend(() => {
    const result = httpText(provider, fetched)
    return typeof result === "string" ? Effect.succeed(result) : result
  })

const httpText = (provider: string, fetched: Fetched): string | Effect.Effect<never, AdapterError> =>
  fetched.status >= 200 && fetched.status < 300
    ? decodeText(fetched.body, fetched.contentType)
    : Effect.fail(new AdapterError({
      provider,
      url: fetched.url,
      reason: "http_status",
      message: `HTTP ${fetched.status}`
    }))

/** `base` (a page URL, maybe with a path prefix) joined with an absolute `path`. */
export const joinUrl = (base: string, path: string): string => {
  const url = new URL(base)
  url.pathname = url.pathname.replace(/\/+$/, "") + path
  url.search = ""
  url.hash = ""
  return url.toString()
}
