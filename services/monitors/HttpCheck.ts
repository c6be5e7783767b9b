import * as http from "node:http"
import * as https from "node:https"
import { isIP } from "node:net"
import { performance } from "node:perf_hooks"
import { rootCertificates, type TLSSocket } from "node:tls"
import { Result } from "effect"
import type { HttpMethod, KeywordMode, MonitorAuth } from "../domain/Monitor.ts"
import { guardedLookup, hostOf, isDisallowedAddress } from "../platform/AddressGuard.ts"
import { monitorUserAgent } from "../platform/Outbound.ts"
import { type ExpectedStatus, parseExpectedStatus } from "./ExpectedStatus.ts"
import type { MonitorSettings } from "./Validate.ts"

/** The monitors' own user agent, from the outbound module (services/platform/Outbound.ts), as its address guard. */
export const userAgent = monitorUserAgent

/** Most redirects followed; one more is `too_many_redirects`. */
export const maxRedirects = 5
/** Most body bytes read; the rest is not read and the outcome says `truncated`. */
export const maxBodyBytes = 1024 * 1024

// ---------------------------------------------------------------------------
// Agents

export interface AgentPoolOptions {
  /** Sockets per origin, in use and free (default 8). */
  readonly maxSockets?: number
  /** Idle keep-alive sockets kept per origin (default 4). */
  readonly maxFreeSockets?: number
  /** Sockets over all origins per agent (default unlimited). */
  readonly maxTotalSockets?: number
  /** Extra trusted CA certificates (PEM), added to the public roots: private CAs and tests. */
  readonly ca?: string | ReadonlyArray<string>
}

/** Keep-alive agents shared by all checks of a process, one per (scheme, tls_verify, allowPrivate). */
export interface AgentPool {
  readonly agent: (protocol: "http:" | "https:", tlsVerify: boolean, allowPrivate: boolean) => http.Agent
  /** Destroys every socket; the pool must not be used afterwards. */
  readonly close: () => void
}

export const makeAgentPool = (options: AgentPoolOptions = {}): AgentPool => {
  const agents = new Map<string, http.Agent>()
  const extraCa = options.ca === undefined ? [] : typeof options.ca === "string" ? [options.ca] : [...options.ca]
  // `ca` replaces the default roots in node: keep the public ones next to the private CA.
  const ca = extraCa.length > 0 ? [...rootCertificates, ...extraCa] : undefined
  const base = {
    keepAlive: true,
    scheduling: "lifo" as const,
    maxSockets: options.maxSockets ?? 8,
    maxFreeSockets: options.maxFreeSockets ?? 4,
    ...(options.maxTotalSockets !== undefined ? { maxTotalSockets: options.maxTotalSockets } : {})
  }
  return {
    agent: (protocol, tlsVerify, allowPrivate) => {
      const key = `${protocol}${tlsVerify ? "v" : "n"}${allowPrivate ? "p" : "g"}`
      let agent = agents.get(key)
      if (agent === undefined) {
        const lookup = guardedLookup(allowPrivate) as unknown as http.AgentOptions["lookup"]
        agent = protocol === "https:"
          ? new https.Agent({ ...base, lookup, rejectUnauthorized: tlsVerify, ...(ca ? { ca } : {}) })
          : new http.Agent({ ...base, lookup })
        agents.set(key, agent)
      }
      return agent
    },
    close: () => {
      for (const agent of agents.values()) agent.destroy()
      agents.clear()
    }
  }
}

// ---------------------------------------------------------------------------
// Request and outcome

/** One check, ready to run: built once per monitor (`requestFromSettings`), reused for every check. */
export interface CheckRequest {
  readonly url: string
  readonly method: HttpMethod
  /** Everything sent, User-Agent and Authorization included (not Host, Content-Length). */
  readonly headers: Readonly<Record<string, string>>
  readonly body?: Buffer
  readonly timeout_ms: number
  readonly expected: ExpectedStatus
  readonly keyword?: string
  readonly keyword_mode: KeywordMode
  readonly degraded_after_ms?: number
  readonly follow_redirects: boolean
  readonly tls_verify: boolean
}

export type CheckErrorCode =
  | "timeout"
  | "dns"
  | "connect"
  | "tls"
  | "private_address"
  | "status"
  | "keyword"
  | "too_many_redirects"
  | "reset"
  | "protocol"

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

export interface TlsInfo {
  /** ISO 8601. */
  readonly valid_to: string
  /** Whole days until valid_to, rounded down; negative once expired. */
  readonly days_left: number
  readonly issuer: string
  readonly subject: string
  /** The chain verified against the trusted roots (and the name matched). */
  readonly authorized: boolean
  /** OpenSSL's reason when not authorized, e.g. DEPTH_ZERO_SELF_SIGNED_CERT; "" otherwise. */
  readonly authorization_error: string
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

const basicAuth = (username: string, password: string) =>
  `Basic ${Buffer.from(`${username}:${password}`, "utf8").toString("base64")}`

/**
 * The request of a validated monitor. `secret` is the decrypted credentials
 * (the stored settings carry only the auth type); without it `settings.auth`
 * is used. Throws when `expected_status` does not parse: settings come from
 * `validateMonitor`, so that is a bug, not a monitor failure.
 */
export const requestFromSettings = (settings: MonitorSettings, secret?: MonitorAuth): CheckRequest => {
  const expected = parseExpectedStatus(settings.expected_status)
  if (Result.isFailure(expected)) throw new Error(`expected_status ${JSON.stringify(settings.expected_status)} ${expected.failure}`)
  const headers: Record<string, string> = {}
  const given = new Set<string>()
  for (const [name, value] of Object.entries(settings.headers)) {
    headers[name] = value
    given.add(name.toLowerCase())
  }
  if (!given.has("user-agent")) headers["User-Agent"] = userAgent
  if (!given.has("accept")) headers["Accept"] = "*/*"
  const auth = secret ?? settings.auth
  if (auth?.type === "basic") headers["Authorization"] = basicAuth(auth.username, auth.password)
  else if (auth?.type === "bearer") headers["Authorization"] = `Bearer ${auth.token}`
  return {
    url: settings.url,
    method: settings.method,
    headers,
    ...(settings.body !== undefined ? { body: Buffer.from(settings.body, "utf8") } : {}),
    timeout_ms: settings.timeout,
    expected: expected.success,
    ...(settings.keyword !== undefined ? { keyword: settings.keyword } : {}),
    keyword_mode: settings.keyword_mode,
    ...(settings.degraded_after_ms !== undefined ? { degraded_after_ms: settings.degraded_after_ms } : {}),
    follow_redirects: settings.follow_redirects,
    tls_verify: settings.tls_verify
  }
}

// ---------------------------------------------------------------------------
// Errors

const dnsCodes = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NODATA", "EAI_NONAME", "ENODATA", "ESERVFAIL", "EREFUSED"])
const connectCodes = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL", "ETIMEDOUT", "EHOSTDOWN", "ENETDOWN"])
const resetCodes = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED"])
const tlsCode = /^(CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|ERR_TLS_|ERR_SSL_|HOSTNAME_MISMATCH|INVALID_CA|INVALID_PURPOSE|PATH_LENGTH|EPROTO$)/

interface NodeError {
  readonly code?: string
  readonly message: string
  readonly errors?: ReadonlyArray<{ readonly code?: string; readonly message?: string }>
}

/** A socket/request error as the outcome's code and sentence. */
const classify = (err: NodeError, url: URL): readonly [CheckErrorCode, string] => {
  // Happy eyeballs (autoSelectFamily) reports an AggregateError of the attempts.
  const code = err.code ?? err.errors?.[0]?.code ?? ""
  const host = hostOf(url)
  if (code === "EPRIVATEADDRESS") return ["private_address", err.message]
  if (dnsCodes.has(code)) return ["dns", `could not resolve ${host} (${code})`]
  if (connectCodes.has(code)) return ["connect", `could not connect to ${url.host} (${code})`]
  if (resetCodes.has(code)) return ["reset", `the connection was closed before a complete response (${code})`]
  if (code.startsWith("HPE_") || code.startsWith("ERR_INVALID_") || code.startsWith("ERR_HTTP")) {
    return ["protocol", `invalid HTTP response (${code}: ${err.message})`]
  }
  if (tlsCode.test(code)) return ["tls", `TLS ${code}: ${err.message}`]
  return ["connect", `${code || "error"}: ${err.message}`]
}

// ---------------------------------------------------------------------------
// TLS

interface CertFacts {
  readonly validTo: number
  readonly valid_to: string
  readonly issuer: string
  readonly subject: string
  readonly authorized: boolean
  readonly authorization_error: string
}

/** getPeerCertificate parses the whole certificate: once per connection is enough. */
const certCache = new WeakMap<TLSSocket, CertFacts>()

const firstOf = (v: string | ReadonlyArray<string> | undefined): string | undefined =>
  v === undefined ? undefined : typeof v === "string" ? v : v[0]

const certFacts = (socket: TLSSocket): CertFacts | undefined => {
  const cached = certCache.get(socket)
  if (cached) return cached
  const cert = socket.getPeerCertificate()
  if (!cert || !cert.valid_to) return undefined
  const validTo = new Date(cert.valid_to).getTime()
  const issuer = cert.issuer as unknown as Record<string, string | Array<string> | undefined> | undefined
  const subject = cert.subject as unknown as Record<string, string | Array<string> | undefined> | undefined
  const facts: CertFacts = {
    validTo,
    valid_to: Number.isNaN(validTo) ? cert.valid_to : new Date(validTo).toISOString(),
    issuer: firstOf(issuer?.["CN"]) ?? firstOf(issuer?.["O"]) ?? "",
    subject: firstOf(subject?.["CN"]) ?? firstOf(subject?.["O"]) ?? "",
    authorized: socket.authorized,
    authorization_error: socket.authorizationError ? String(socket.authorizationError) : ""
  }
  certCache.set(socket, facts)
  return facts
}

const dayMs = 86_400_000

const tlsInfo = (facts: CertFacts, now: number): TlsInfo => ({
  valid_to: facts.valid_to,
  days_left: Math.floor((facts.validTo - now) / dayMs),
  issuer: facts.issuer,
  subject: facts.subject,
  authorized: facts.authorized,
  authorization_error: facts.authorization_error
})

// ---------------------------------------------------------------------------
// The check

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
