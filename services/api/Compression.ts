import * as Fs from "node:fs"
import * as Path from "node:path"
import { Readable } from "node:stream"
import type { ReadableStream as NodeReadableStream } from "node:stream/web"
import * as Zlib from "node:zlib"

/**
 * HTTP compression of the portal's answers (decision 0011): pages and loader
 * data gzip-compressed as they stream, the hashed client assets compressed
 * once (Brotli, else gzip) and kept in memory. Event streams and bodies already
 * encoded pass untouched. A reverse proxy in front may compress again; this
 * makes the one-process default fast on a slow link without one.
 */

type Encoding = "br" | "gzip"

/** The best encoding the request accepts among `offered`, by the `Accept-Encoding` header (a `q=0` refuses one). */
export const negotiate = (acceptEncoding: string | null, offered: ReadonlyArray<Encoding>): Encoding | undefined => {
  if (acceptEncoding === null) return undefined
  const accepted = new Map<string, number>()
  for (const part of acceptEncoding.split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";")
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="))
    accepted.set(name!, q === undefined ? 1 : Number(q.slice(2)) || 0)
  }
  const weight = (e: Encoding) => accepted.get(e) ?? accepted.get("*") ?? 0
  return offered.find((e) => weight(e) > 0)
}

const compressible = (contentType: string | null) =>
  contentType !== null && !contentType.startsWith("text/event-stream") &&
  (contentType.startsWith("text/") || contentType.startsWith("application/json") || contentType.includes("javascript") || contentType.includes("svg"))

/** Below this many bytes (when the length is known) compression does not pay. */
const minimumBytes = 1024

/**
 * The response gzip-compressed for a client that accepts it, flushing after
 * every chunk so a streamed page (React's shell, then its deferred parts)
 * reaches the browser as it is written; otherwise the response as it is.
 */
export const compressResponse = (request: Request, response: Response): Response => {
  const headers = response.headers
  const length = headers.get("content-length")
  if (
    request.method === "HEAD" || response.body === null || headers.has("content-encoding") ||
    !compressible(headers.get("content-type")) || (length !== null && Number(length) < minimumBytes) ||
    negotiate(request.headers.get("accept-encoding"), ["gzip"]) === undefined
  ) return response
  const gzip = Zlib.createGzip({ flush: Zlib.constants.Z_SYNC_FLUSH, level: 6 })
  const body = Readable.fromWeb(response.body as unknown as NodeReadableStream<Uint8Array>).pipe(gzip)
  const out = new Headers(headers)
  out.delete("content-length")
  out.set("content-encoding", "gzip")
  out.append("vary", "Accept-Encoding")
  return new Response(Readable.toWeb(body) as unknown as ReadableStream<Uint8Array>, {
    status: response.status,
    statusText: response.statusText,
    headers: out
  })
}

const assetTypes: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".json": "application/json",
  ".webmanifest": "application/manifest+json"
}

export interface CompressedAsset {
  readonly body: Uint8Array
  readonly encoding: Encoding
  readonly contentType: string
}

/**
 * The client build's text assets, each compressed once on first request (its
 * name is hashed, so it never changes) and kept: Brotli at quality 11 and
 * gzip at level 9, served by what the request accepts. `undefined` for a file
 * that is not text (fonts, images: served as they are).
 */
export const makeAssetCache = () => {
  const cache = new Map<string, { br: Uint8Array; gzip: Uint8Array; contentType: string }>()
  return (file: string, acceptEncoding: string | null): CompressedAsset | undefined => {
    const contentType = assetTypes[Path.extname(file)]
    if (contentType === undefined) return undefined
    const encoding = negotiate(acceptEncoding, ["br", "gzip"])
    if (encoding === undefined) return undefined
    let entry = cache.get(file)
    if (entry === undefined) {
      const raw = Fs.readFileSync(file)
      entry = {
        br: Zlib.brotliCompressSync(raw, { params: { [Zlib.constants.BROTLI_PARAM_QUALITY]: 11, [Zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.length } }),
        gzip: Zlib.gzipSync(raw, { level: 9 }),
        contentType
      }
      cache.set(file, entry)
    }
    return { body: entry[encoding], encoding, contentType: entry.contentType }
  }
}
