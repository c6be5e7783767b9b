import { Effect } from "effect"
import { HttpMethod, HttpServerRequest } from "effect/http"
import type { HttpApiEndpoint } from "effect/http-api"
import { InvalidParameter, UnsupportedMediaType } from "../domain/api/Errors.ts"
import { fnWhenTracing } from "../platform/Tracing.ts"

/** The media type of a `Content-Type` header, compared as the API builder compares it (absent: JSON). */
export const mediaTypeOf = (header: string | undefined): string => {
  const normalized = (header ?? "application/json").toLowerCase().trim()
  const end = normalized.indexOf(";")
  return end === -1 ? normalized : normalized.slice(0, end).trim()
}

/**
 * The path (`name`, `settings.headers.X-Token`, `triggers.0`) of the first
 * string or object key in a JSON value that holds a NUL character.
 */
export const nulPath = (value: unknown, path: ReadonlyArray<string> = []): string | undefined => {
  const here = (key: string) => [...path, key].join(".")
  if (typeof value === "string") return value.includes("\u0000") ? (path.length === 0 ? "body" : path.join(".")) : undefined
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = nulPath(item, [...path, String(i)])
      if (found !== undefined) return found
    }
    return undefined
  }
  if (value === null || typeof value !== "object") return undefined
  for (const [key, item] of Object.entries(value)) {
    if (key.includes("\u0000")) return here(key)
    const found = nulPath(item, [...path, key])
    if (found !== undefined) return found
  }
  return undefined
}

/**
 * Checks a request body before the endpoint decodes it: a body of a media type
 * the endpoint does not take (`text/plain`, a form) is a 415 with the API's
 * JSON error body (the builder would answer plain text), and a JSON body with
 * NUL in any string or key is a 400 naming it (PostgreSQL refuses NUL in
 * `text` and `jsonb`, so it must never reach a write). A body that is not JSON
 * at all is left to the endpoint's decoding (a 400). The body is read once:
 * the request caches it for the decoder.
 */
export const checkBody = fnWhenTracing("RequestBody.checkBody")(Effect.fnUntraced(function*(endpoint: HttpApiEndpoint.Top) {
  if (endpoint.payload.size === 0) return
  const request = yield* HttpServerRequest.HttpServerRequest
  if (!HttpMethod.hasBody(request.method)) return
  const type = mediaTypeOf(request.headers["content-type"])
  if (!endpoint.payload.has(type)) {
    return yield* new UnsupportedMediaType({
      field: "content-type",
      message: `the body must be sent with Content-Type: ${[...endpoint.payload.keys()].join(" or ")}, not ${type === "" ? "an empty one" : type}`
    })
  }
  if (type !== "application/json") return
  // A body over the size limit fails here as it would in the decoder (a defect the API answers with 413).
  const text = yield* Effect.orDie(request.text)
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return
  }
  const field = nulPath(parsed)
  if (field !== undefined) {
    return yield* new InvalidParameter({ field, message: `${field} must not contain NUL characters` })
  }
}))
