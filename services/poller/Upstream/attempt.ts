import type { IncomingHttpHeaders } from "node:http"
import type { Dispatcher } from "undici"
import { bodyTooLarge, concatChunks, decodeBody, isRetryableStatus } from "../../platform/Outbound.ts"

/** What one attempt produced. */
export type Outcome =
  | { readonly _tag: "Answer"; readonly status: number; readonly headers: IncomingHttpHeaders; readonly body: Uint8Array }
  | { readonly _tag: "NotModified"; readonly headers: IncomingHttpHeaders }
  /** A 5xx/429 that will be retried after `delayMs`; its body is not read. */
  | { readonly _tag: "Retry"; readonly delayMs: number }

/** One attempt's request. */
export interface AttemptRequest {
  readonly dispatcher: Dispatcher
  readonly origin: string
  /** Path and query. */
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  /** From sending the request to the last body byte, redirects included. */
  readonly timeoutMs: number
  readonly maxBodyBytes: number
  readonly maxRedirects: number
  /** Whether a 5xx/429 is retried (the delay before the next attempt) or read as the answer (undefined). */
  readonly retryDelay: (retryAfter: string | undefined) => number | undefined
}

/** Why an attempt's request was aborted when its caller gave up (an interrupted check). */
export const attemptEnded = new Error("the attempt ended")
/** The reason an attempt's own timer aborts its request with (the caller recognises it). */
export const attemptTimedOut = new Error("the attempt timed out")

const redirectStatuses = new Set([300, 301, 302, 303, 307, 308])
const emptyBody = new Uint8Array()

export const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

/**
 * One HTTP attempt as an undici dispatch handler: no response stream, no promise per request step,
 * no async-hook resource (undici's `request()` makes all three), so what a request in flight keeps
 * alive is this object and undici's own request. A check waits 50-500 ms on the network, longer than
 * a young-generation collection apart at thousands of checks a second: whatever it holds while it
 * waits is copied by the collector, so holding little is most of the cost (issue #18's profile).
 *
 * - One timer covers the attempt, redirects and body included; it aborts the request however
 *   steadily the body trickles, and settles a request still queued for a connection at once.
 * - Redirects (300-308 with Location, at most `maxRedirects`) are followed here, each hop a new
 *   request through the same dispatcher (so an organization's URL passes the address guard at
 *   every hop); past the limit the redirect itself is the answer.
 * - A 304, and a 5xx/429 that will be retried, settle at their headers; their body is not read
 *   (undici drains or drops the connection).
 * - Bodies over `maxBodyBytes`, declared or streamed, fail with "body too large"; a
 *   Content-Encoding is undone by `decodeBody`, capped likewise.
 */
export class Attempt implements Dispatcher.DispatchHandler {
  private readonly timer: ReturnType<typeof setTimeout>
  private controller: Dispatcher.DispatchController | undefined
  /** Set once the caller has its outcome; later callbacks of undici are ignored. */
  private settled = false
  /** An abort asked for before undici started the request: applied when it starts. */
  private reason: Error | undefined
  private origin: string
  private path: string
  private hops = 0
  /** Reading a redirect's body, to be dropped: the next hop is requested at its end. */
  private redirect: URL | undefined
  private status = 0
  private headers: IncomingHttpHeaders | undefined
  private chunks: Array<Buffer> | undefined
  private size = 0

  private readonly request: AttemptRequest
  private readonly resolve: (outcome: Outcome) => void
  private readonly reject: (error: unknown) => void

  constructor(request: AttemptRequest, resolve: (outcome: Outcome) => void, reject: (error: unknown) => void) {
    this.request = request
    this.resolve = resolve
    this.reject = reject
    this.origin = request.origin
    this.path = request.path
    this.timer = setTimeout(() => this.abort(attemptTimedOut), request.timeoutMs)
  }

  /** Sends the first request. */
  start(): void {
    this.dispatch()
  }

  /** Aborts the request (its socket is closed) and fails the attempt with `reason`, unless it has settled. */
  abort(reason: Error): void {
    if (this.settled) return
    if (this.controller === undefined) {
      // Queued for a connection: undici aborts it when it starts; the caller does not wait for that.
      this.reason = reason
      this.fail(reason)
      return
    }
    this.controller.abort(reason)
    // undici reports the abort in onResponseError; settle now in case it already ended.
    this.fail(reason)
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller
    if (this.reason !== undefined) controller.abort(this.reason)
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (this.settled || statusCode < 200) return
    const location = redirectStatuses.has(statusCode) ? header(headers, "location") : undefined
    if (location !== undefined && this.hops < this.request.maxRedirects) {
      let next: URL | undefined
      try {
        next = new URL(location, this.origin + this.path)
      } catch {
        next = undefined
      }
      if (next !== undefined && (next.protocol === "http:" || next.protocol === "https:")) {
        this.redirect = next
        return
      }
    }
    if (statusCode === 304) return this.succeed({ _tag: "NotModified", headers })
    if (isRetryableStatus(statusCode)) {
      const delayMs = this.request.retryDelay(header(headers, "retry-after"))
      if (delayMs !== undefined) return this.succeed({ _tag: "Retry", delayMs })
    }
    if (Number(header(headers, "content-length") ?? 0) > this.request.maxBodyBytes) {
      controller.abort(bodyTooLarge())
      return this.fail(bodyTooLarge())
    }
    this.status = statusCode
    this.headers = headers
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled || this.headers === undefined) return
    this.size += chunk.byteLength
    if (this.size > this.request.maxBodyBytes) {
      controller.abort(bodyTooLarge())
      return this.fail(bodyTooLarge())
    }
    if (this.chunks === undefined) this.chunks = [chunk]
    else this.chunks.push(chunk)
  }

  onResponseEnd(): void {
    if (this.settled) return
    if (this.redirect !== undefined) {
      const next = this.redirect
      this.redirect = undefined
      this.hops++
      this.origin = next.origin
      this.path = next.pathname + next.search
      this.controller = undefined
      return this.dispatch()
    }
    const headers = this.headers
    if (headers === undefined) return this.fail(new Error("the response ended without a final status"))
    const body = this.chunks === undefined ? emptyBody : concatChunks(this.chunks, this.size)
    this.chunks = undefined
    const encoding = header(headers, "content-encoding")
    if (encoding === undefined || encoding === "" || encoding === "identity") {
      return this.succeed({ _tag: "Answer", status: this.status, headers, body })
    }
    const status = this.status
    decodeBody(encoding, body, this.request.maxBodyBytes).then(
      (decoded) => this.succeed({ _tag: "Answer", status, headers, body: decoded }),
      (error: unknown) => this.fail(error)
    )
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.fail(error)
  }

  private dispatch(): void {
    try {
      this.request.dispatcher.dispatch({
        origin: this.origin,
        path: this.path,
        method: "GET",
        headers: this.request.headers,
        headersTimeout: this.request.timeoutMs,
        bodyTimeout: this.request.timeoutMs
      }, this)
    } catch (error) {
      this.fail(error)
    }
  }

  private succeed(outcome: Outcome): void {
    if (this.settled) return
    this.settled = true
    clearTimeout(this.timer)
    this.resolve(outcome)
  }

  private fail(error: unknown): void {
    if (this.settled) return
    this.settled = true
    clearTimeout(this.timer)
    this.reject(error)
  }
}
