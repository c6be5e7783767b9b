import { promisify } from "node:util"
import * as Zlib from "node:zlib"

/** Why an answer's body could not be used; `retryable` says whether another attempt may help. */
export class BodyError extends Error {
  readonly retryable: boolean
  constructor(message: string, retryable: boolean) {
    super(message)
    this.name = "BodyError"
    this.retryable = retryable
  }
}

export const bodyTooLarge = () => new BodyError("body too large", false)

/** What the poller advertises in `Accept-Encoding`; `decodeBody` reads exactly these. */
export const acceptEncoding = "gzip, deflate, br"

/**
 * Reads a response body, refusing more than `maxBytes` (the stream is
 * destroyed as soon as the cap is passed, so a huge body costs at most the cap).
 */
export const readBody = async (body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<Uint8Array> => {
  const chunks: Array<Uint8Array> = []
  let size = 0
  // Leaving the loop by throwing calls the iterator's return(), which destroys the stream.
  for await (const chunk of body) {
    size += chunk.byteLength
    if (size > maxBytes) throw bodyTooLarge()
    chunks.push(chunk)
  }
  return concatChunks(chunks, size)
}

/** The chunks of a body as one array (the chunk itself when there is one), `size` their total length. */
export const concatChunks = (chunks: ReadonlyArray<Uint8Array>, size: number): Uint8Array => {
  if (chunks.length === 1) return chunks[0]!
  const out = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    out.set(chunk, offset)
    offset += chunk.byteLength
  }
  return out
}

const gunzip = promisify(Zlib.gunzip)
const inflate = promisify(Zlib.inflate)
const inflateRaw = promisify(Zlib.inflateRaw)
const brotli = promisify(Zlib.brotliDecompress)

/**
 * Undoes `Content-Encoding` (codings applied in order, so undone last first).
 * The decoded size is capped too (`maxOutputLength`), so a small compressed
 * body cannot expand past `maxBytes`.
 */
export const decodeBody = async (contentEncoding: string, body: Uint8Array, maxBytes: number): Promise<Uint8Array> => {
  const codings = contentEncoding.split(",").map((c) => c.trim().toLowerCase()).filter((c) => c !== "" && c !== "identity")
  let out = body
  for (const coding of codings.toReversed()) out = await decodeOne(coding, out, maxBytes)
  return out
}

const decodeOne = async (coding: string, body: Uint8Array, maxBytes: number): Promise<Uint8Array> => {
  const options = { maxOutputLength: maxBytes }
  try {
    switch (coding) {
      case "gzip":
      case "x-gzip":
        return await gunzip(body, options)
      case "br":
        return await brotli(body, options)
      case "deflate":
        // RFC 9110 deflate is zlib-wrapped, but some servers send raw deflate.
        try {
          return await inflate(body, options)
        } catch (error) {
          if (isTooLarge(error)) throw error
          return await inflateRaw(body, options)
        }
      default:
        throw new BodyError(`unsupported content-encoding ${coding}`, false)
    }
  } catch (error) {
    if (error instanceof BodyError) throw error
    if (isTooLarge(error)) throw bodyTooLarge()
    throw new BodyError(`invalid ${coding} body: ${(error as Error).message}`, false)
  }
}

const isTooLarge = (error: unknown) => (error as { code?: unknown } | undefined)?.code === "ERR_BUFFER_TOO_LARGE"
