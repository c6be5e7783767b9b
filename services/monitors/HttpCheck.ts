import * as http from "node:http"
import * as https from "node:https"
import { isIP } from "node:net"
import { performance } from "node:perf_hooks"
import type { TLSSocket } from "node:tls"
import { hostOf, isDisallowedAddress } from "../platform/AddressGuard.ts"
import type { AgentPool } from "./HttpCheck/Agents.ts"
import { type CheckErrorCode, classify, type NodeError, resetCodes } from "./HttpCheck/Errors.ts"
import type { CheckRequest } from "./HttpCheck/Request.ts"
import { certFacts, type TlsInfo, tlsInfo } from "./HttpCheck/Tls.ts"

/**
 * The HTTP(S) check of a website monitor: `runCheck`, its callback core (decision 0006). Its parts:
 * the keep-alive agents (`HttpCheck/Agents.ts`), the request built from a monitor's settings
 * (`HttpCheck/Request.ts`), failures as error codes (`HttpCheck/Errors.ts`), the certificate
 * (`HttpCheck/Tls.ts`); this module re-exports them.
 */

export { type AgentPool, type AgentPoolOptions, makeAgentPool } from "./HttpCheck/Agents.ts"
export type { CheckErrorCode } from "./HttpCheck/Errors.ts"
export { type CheckRequest, requestFromSettings, userAgent } from "./HttpCheck/Request.ts"
export type { TlsInfo } from "./HttpCheck/Tls.ts"

/** Most redirects followed; one more is `too_many_redirects`. */
export const maxRedirects = 5
/** Most body bytes read; the rest is not read and the outcome says `truncated`. */
export const maxBodyBytes = 1024 * 1024

export interface CheckPhases {
  /** Name resolution; 0 on a reused connection or an IP literal. */
  readonly dns_ms: number
  /** TCP connect after resolution; 0 on a reused connection. */
  readonly connect_ms: number
  /** TLS handshake after connect; 0 for http and on a reused connection. */
  readonly tls_ms: number
  /** From the connection being ready (request sent) to the response headers. */
  readonly first_byte_ms: number
  /** The whole check, from start to the last body byte (or the failure). */
  readonly total_ms: number
}

export interface CheckOutcome {
  readonly status: "up" | "degraded" | "down"
  /** The final response's status; 0 when there was none. */
  readonly http_status: number
  readonly error_code: "" | CheckErrorCode
  readonly error: string
  /** Sums over the hops when redirects were followed. */
  readonly phases: CheckPhases
  /** The final request went over a kept-alive connection. */
  readonly reused: boolean
  readonly redirects: number
  readonly final_url: string
  /** Body bytes read from the final response (at most 1 MiB). */
  readonly bytes: number
  readonly truncated: boolean
  /** The certificate of the first https response. */
  readonly tls?: TlsInfo
  /** When the check started, ISO 8601. */
  readonly checked_at: string
}

export interface RunCheckOptions {
  readonly agentPool: AgentPool
  /** Let the check reach private, loopback and link-local addresses (simulator, tests, intranet installs). */
  readonly allowPrivate: boolean
}

const redirectStatuses = new Set([301, 302, 303, 307, 308])
const round1 = (ms: number) => Math.round(ms * 10) / 10
const noop = () => {}

/**
 * Runs one HTTP(S) check. Never rejects: every failure is an outcome.
 * Plain callbacks rather than Effect: this is the hot path of the monitor
 * shards (target: under 1 ms of CPU per check).
 */
export const runCheck = (request: CheckRequest, options: RunCheckOptions): Promise<CheckOutcome> =>
  new Promise<CheckOutcome>((resolve) => {
    const started = performance.now()
    // Wall-clock time read directly, not through Effect's Clock: this callback core runs outside any fiber
    // (decision 0006). Durations use the monotonic performance.now().
    const checkedAt = new Date().toISOString()
    let dnsMs = 0
    let connectMs = 0
    let tlsMs = 0
    let firstByteMs = 0
    let reused = false
    let redirects = 0
    let httpStatus = 0
    let bytes = 0
    let truncated = false
    let tls: TlsInfo | undefined
    let url: URL
    let method: string = request.method
    let body = request.body
    let headers = request.headers
    let current: http.ClientRequest | undefined
    let done = false

    const finish = (code: "" | CheckErrorCode, error: string) => {
      if (done) return
      done = true
      clearTimeout(timer)
      const total = performance.now() - started
      const status = code !== "" ? "down" : request.degraded_after_ms !== undefined && total > request.degraded_after_ms ? "degraded" : "up"
      resolve({
        status,
        http_status: httpStatus,
        error_code: code,
        error,
        phases: {
          dns_ms: round1(dnsMs),
          connect_ms: round1(connectMs),
          tls_ms: round1(tlsMs),
          first_byte_ms: round1(firstByteMs),
          total_ms: round1(total)
        },
        reused,
        redirects,
        final_url: url ? url.href : request.url,
        bytes,
        truncated,
        ...(tls ? { tls } : {}),
        checked_at: checkedAt
      })
    }

    const timer = setTimeout(() => {
      finish("timeout", `no complete response within ${request.timeout_ms} ms`)
      current?.destroy()
    }, request.timeout_ms)

    const hop = (target: URL, retry: boolean) => {
      url = target
      const host = hostOf(target)
      // IP literals are connected to without a lookup, so the guard is applied here.
      if (!options.allowPrivate && isIP(host) !== 0) {
        const reason = isDisallowedAddress(host)
        if (reason !== null) {
          return finish("private_address", `${host} is a ${reason.replace(/_/g, " ")} address; monitors may only check public addresses`)
        }
      }
      const secure = target.protocol === "https:"
      const agent = options.agentPool.agent(secure ? "https:" : "http:", request.tls_verify, options.allowPrivate)
      const hopHeaders = body ? { ...headers, "Content-Length": String(body.length) } : headers
      let ready = 0
      let responded = false
      let hopReused = false
      const req = (secure ? https : http).request({
        protocol: target.protocol,
        hostname: host,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method,
        headers: hopHeaders,
        agent
      })
      current = req

      req.on("socket", (socket) => {
        const t0 = performance.now()
        // A socket the agent hands over from its queue is already connected but not flagged as reused:
        // waiting for its "connect" would add listeners that never fire.
        if (req.reusedSocket || !(socket as { connecting?: boolean }).connecting) {
          hopReused = true
          ready = t0
          return
        }
        let looked = t0
        let connected = t0
        socket.once("lookup", () => {
          looked = performance.now()
          dnsMs += looked - t0
        })
        socket.once("connect", () => {
          connected = performance.now()
          connectMs += connected - looked
          if (!secure) ready = connected
        })
        if (secure) {
          socket.once("secureConnect", () => {
            ready = performance.now()
            tlsMs += ready - connected
          })
        }
      })

      req.on("error", (err: NodeError) => {
        if (done) return
        // A kept-alive connection the server closed while idle: retry once on a new one.
        if (hopReused && !responded && retry && resetCodes.has(err.code ?? "")) return hop(target, false)
        const [code, message] = classify(err, target)
        finish(code, message)
      })

      req.on("response", (res) => {
        const now = performance.now()
        responded = true
        reused = hopReused
        firstByteMs += now - (ready || now)
        httpStatus = res.statusCode ?? 0
        res.on("error", noop)
        if (secure && tls === undefined) {
          const facts = certFacts(res.socket as TLSSocket)
          // Wall clock (no fiber here, see checkedAt): days left until the certificate's valid_to.
          if (facts) tls = tlsInfo(facts, Date.now())
        }
        if (done) {
          res.destroy()
          return
        }

        const location = res.headers.location
        if (request.follow_redirects && redirectStatuses.has(httpStatus) && location !== undefined) {
          if (redirects >= maxRedirects) {
            res.destroy()
            return finish("too_many_redirects", `more than ${maxRedirects} redirects (last to ${location.slice(0, 200)})`)
          }
          let next: URL
          try {
            next = new URL(location, target)
          } catch {
            res.destroy()
            return finish("protocol", `redirect to an invalid URL: ${location.slice(0, 200)}`)
          }
          if (next.protocol !== "http:" && next.protocol !== "https:") {
            res.destroy()
            return finish("protocol", `redirect to a non-HTTP URL: ${next.protocol}`)
          }
          redirects++
          // As browsers do: 303, and 301/302 after POST, continue as GET without a body.
          if ((httpStatus === 303 && method !== "HEAD") || ((httpStatus === 301 || httpStatus === 302) && method === "POST")) {
            method = "GET"
            body = undefined
          }
          // Credentials stay with the origin they were given for.
          if (next.origin !== target.origin && headers["Authorization"] !== undefined) {
            const { Authorization: _, ...rest } = headers
            headers = rest
          }
          // Drain the redirect's body first so that a same-origin hop can reuse the connection.
          let moved = false
          const go = () => {
            if (moved || done) return
            moved = true
            hop(next, true)
          }
          res.once("end", go)
          res.once("close", go)
          res.resume()
          return
        }

        readBody(res)
      })

      req.end(body)
    }

    const readBody = (res: http.IncomingMessage) => {
      const keyword = request.keyword
      const chunks: Array<Buffer> | undefined = keyword !== undefined ? [] : undefined
      let ended = false
      res.on("data", (chunk: Buffer) => {
        if (done) return
        const room = maxBodyBytes - bytes
        if (chunk.length > room) {
          if (chunks && room > 0) chunks.push(chunk.subarray(0, room))
          bytes = maxBodyBytes
          truncated = true
          ended = true
          res.destroy()
          complete(chunks)
          return
        }
        bytes += chunk.length
        if (chunks) chunks.push(chunk)
      })
      res.once("end", () => {
        if (ended) return
        ended = true
        complete(chunks)
      })
      res.once("close", () => {
        if (!ended && !done) finish("reset", "the connection was closed before the response body was complete")
      })
    }

    const complete = (chunks: Array<Buffer> | undefined) => {
      if (!request.expected.matches(httpStatus)) {
        return finish("status", `expected ${request.expected.text}, got ${httpStatus}`)
      }
      const keyword = request.keyword
      if (keyword !== undefined && chunks !== undefined) {
        // Byte search of the UTF-8 keyword: same answer as decoding first, without the copy.
        const found = Buffer.concat(chunks).indexOf(keyword, 0, "utf8") >= 0
        const where = truncated ? "the first 1 MiB of the body" : "the body"
        if (request.keyword_mode === "contains" && !found) {
          return finish("keyword", `keyword ${JSON.stringify(keyword)} not found in ${where}`)
        }
        if (request.keyword_mode === "absent" && found) {
          return finish("keyword", `keyword ${JSON.stringify(keyword)} found in ${where}`)
        }
      }
      finish("", "")
    }

    try {
      hop(new URL(request.url), true)
    } catch (e) {
      // Invalid URL or header rejected by node: settings bypassed validation.
      finish("protocol", `cannot send the request: ${e instanceof Error ? e.message : String(e)}`)
    }
  })
