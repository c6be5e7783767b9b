import { Config, Context, Effect, Layer, Schema } from "effect"
import type { Scope } from "effect"
import type { Agent } from "undici"
import type { Fetched } from "../adapters/Adapter.ts"
import {
  acceptDocuments,
  acceptEncoding,
  backoffDelayMs,
  BodyError,
  defaultTimeoutMs,
  type GuardPolicy,
  isPrivateAddressRefusal,
  maxDocumentBytes,
  outboundAgent,
  retryAfterMs,
  SourceGuardConfig,
  sourcesRule,
  userAgent
} from "../platform/Outbound.ts"
import { Attempt, attemptEnded, type AttemptRequest, attemptTimedOut, header, type Outcome } from "./Upstream/attempt.ts"
import { HostSlots } from "./Upstream/hostSlots.ts"
import { ValidatorCache } from "./Upstream/validators.ts"
import { noCallSite, withSpanWhenTracing } from "../platform/Tracing.ts"

export interface GetOptions {
  /** Time for one attempt, from sending the request to the last body byte. Default: the layer's (POLL_TIMEOUT_MS). */
  readonly timeoutMs?: number
  /** Send If-None-Match / If-Modified-Since from the URL's last 2xx answer. Default true. */
  readonly conditional?: boolean
  /**
   * The operator's own URL (a catalog source): connected to without the
   * address guard. Default false: the URL is an organization's and every
   * connection (redirects included) passes the layer's guard.
   */
  readonly trusted?: boolean
}

/** An HTTP answer with a body: any 2xx, or the final status of a 4xx/5xx (the adapter decides what it means). */
export interface Fresh {
  readonly _tag: "Fresh"
  readonly fetched: Fetched
  /** Duration of the final attempt (request sent to body decoded), excluding queueing and backoff. */
  readonly latencyMs: number
  /** HTTP attempts made, retries included. */
  readonly attempts: number
}

/** 304: the document has not changed since the validators sent; no body was read. */
export interface NotModified {
  readonly _tag: "NotModified"
  readonly latencyMs: number
  readonly attempts: number
}

/** No usable HTTP answer: network error, timeout, body too large or undecodable, invalid URL. */
export interface Failed {
  readonly _tag: "Failed"
  /** e.g. "timeout after 10000 ms", "ECONNREFUSED", "body too large". */
  readonly error: string
  readonly latencyMs: number
  readonly attempts: number
}

export type UpstreamResult = Fresh | NotModified | Failed

export interface UpstreamStats {
  /** `get` calls started. */
  readonly requests: number
  /** `get` calls answered NotModified. */
  readonly notModified: number
  /** Attempts beyond each call's first. */
  readonly retries: number
  /** `get` calls that ended Failed. */
  readonly failures: number
  /** `get` calls started and not yet finished (waiting for a host slot, in flight or backing off). */
  readonly inFlight: number
}

export interface UpstreamOptions {
  /** Default per-attempt timeout covering headers and body. Default 10,000. */
  readonly timeoutMs?: number
  /** Attempts after the first on network errors, timeouts, 5xx and 429. Default 2. */
  readonly retries?: number
  /** Backoff before retry n is uniform in [0, min(cap, base * 2^(n-1))). Defaults 200 and 2,000. */
  readonly backoffBaseMs?: number
  readonly backoffCapMs?: number
  /** Most requests in flight to one hostname (all ports and schemes together). Default 6. */
  readonly perHostConcurrency?: number
  /** Largest body, before and after decoding; more is Failed "body too large". Default 8 MiB. */
  readonly maxBodyBytes?: number
  /** URLs whose validators are remembered for conditional GETs (least recently answered forgotten first). Default 200,000. */
  readonly maxRememberedUrls?: number
  /** How long an idle keep-alive connection is kept (servers' Keep-Alive hints may shorten it). Default 60,000. */
  readonly keepAliveTimeoutMs?: number
  /** Redirects followed per attempt. Default 5. */
  readonly maxRedirects?: number
  /** The address guard of untrusted URLs (decision 0009). Default: private targets refused. */
  readonly guard?: GuardPolicy
}

const defaults = {
  timeoutMs: defaultTimeoutMs,
  retries: 2,
  backoffBaseMs: 200,
  backoffCapMs: 2_000,
  perHostConcurrency: 6,
  maxBodyBytes: maxDocumentBytes,
  maxRememberedUrls: 200_000,
  keepAliveTimeoutMs: 60_000,
  maxRedirects: 5
} as const

/** Why one attempt produced no answer; `retryable` says whether another attempt may help. */
class AttemptError extends Schema.TaggedError<AttemptError>()("UpstreamAttemptError", {
  message: Schema.String,
  retryable: Schema.Boolean
}) {}

const requestHeaders = {
  "user-agent": userAgent,
  accept: acceptDocuments,
  "accept-encoding": acceptEncoding
} as const

/**
 * The upstream client, with one keep-alive connection pool per origin, closed
 * when the scope closes. A `get` runs as one promise (`fetchUrl`): its
 * time (timeouts, backoff, Retry-After budget) is the process's clock and its
 * jitter `Math.random`, not Effect's Clock and Random.
 */
const make = Effect.fn("Upstream.make")(function*(options: UpstreamOptions = {}): Effect.fn.Return<Upstream["Service"], never, Scope.Scope> {
  const timeoutMs = Math.max(1, options.timeoutMs ?? defaults.timeoutMs)
  const retries = Math.max(0, options.retries ?? defaults.retries)
  const backoffBaseMs = Math.max(0, options.backoffBaseMs ?? defaults.backoffBaseMs)
  const backoffCapMs = Math.max(0, options.backoffCapMs ?? defaults.backoffCapMs)
  const perHost = Math.max(1, options.perHostConcurrency ?? defaults.perHostConcurrency)
  const maxBodyBytes = Math.max(0, options.maxBodyBytes ?? defaults.maxBodyBytes)
  const keepAliveTimeoutMs = Math.max(1, options.keepAliveTimeoutMs ?? defaults.keepAliveTimeoutMs)

  const agentOptions = {
    // More connections than requests allowed in flight per host would never be used.
    connections: perHost,
    pipelining: 1,
    keepAliveTimeout: keepAliveTimeoutMs,
    keepAliveMaxTimeout: Math.max(keepAliveTimeoutMs, 600_000),
    connectTimeout: timeoutMs,
    // Backstops only: each attempt's own timeout (below) covers headers and body together.
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs
  }
  const pool = (guard: GuardPolicy | undefined) =>
    Effect.acquireRelease(
      Effect.sync(() => outboundAgent({ ...agentOptions, guard })),
      // close() lets requests in flight finish; past a few seconds, cut them off.
      (agent: Agent) =>
        Effect.promise(() => agent.close().catch(() => undefined)).pipe(
          Effect.timeoutOrElse({ duration: 5_000, orElse: () => Effect.promise(() => agent.destroy().catch(() => undefined)) })
        )
    )
  const maxRedirects = Math.max(0, options.maxRedirects ?? defaults.maxRedirects)
  // Two pools: the operator's URLs, and organizations' URLs whose every connection (each redirect hop
  // too: `Attempt` follows redirects through the same pool) is guarded.
  const trusted = yield* pool(undefined)
  const guarded = yield* pool({ rule: sourcesRule, ...(options.guard ?? { allowPrivate: false }) })

  const validators = new ValidatorCache(options.maxRememberedUrls ?? defaults.maxRememberedUrls, requestHeaders)
  const counters = { requests: 0, notModified: 0, retries: 0, failures: 0, inFlight: 0 }
  const slots = new HostSlots(perHost)

  /**
   * A `get` as one promise: the host's slot, the attempts, the backoffs between them. Effect sees it
   * as one asynchronous step (below); a check's Effect steps around a request were most of what a
   * check kept alive while it waited, and with them most of what the collector copied.
   */
  const fetchUrl = async (url: string, getOptions: GetOptions | undefined, call: Call): Promise<UpstreamResult> => {
    const attemptTimeoutMs = Math.max(1, getOptions?.timeoutMs ?? timeoutMs)
    // Bounds the only open-ended wait, Retry-After: one is honoured only if it ends within this.
    const budgetMs = attemptTimeoutMs * (retries + 1)
    const target = parseTarget(url)
    if (typeof target === "string") {
      counters.failures++
      return { _tag: "Failed", error: target, latencyMs: 0, attempts: 0 } satisfies Failed
    }
    const startedAt = Date.now()
    let attempts = 0
    // Undefined: no retry (none left, or Retry-After beyond the budget).
    const retryDelay = (retryAfter: string | undefined): number | undefined => {
      if (attempts > retries) return undefined
      const now = Date.now()
      const after = retryAfterMs(retryAfter, now)
      if (after !== undefined) return after <= budgetMs - (now - startedAt) ? after : undefined
      return backoffDelayMs(attempts, backoffBaseMs, backoffCapMs, Math.random())
    }
    const request: AttemptRequest = {
      dispatcher: getOptions?.trusted === true ? trusted : guarded,
      origin: target.origin,
      path: target.path,
      headers: getOptions?.conditional === false ? requestHeaders : validators.headers(url),
      timeoutMs: attemptTimeoutMs,
      maxBodyBytes,
      maxRedirects,
      retryDelay
    }
    while (true) {
      // Cancelled during a backoff: no further attempt.
      if (call.cancelled) return { _tag: "Failed", error: "cancelled", latencyMs: 0, attempts } satisfies Failed
      attempts++
      const waiting = slots.take(target.hostname)
      if (waiting !== undefined) await waiting
      const begun = performance.now()
      let outcome: Outcome | AttemptError
      try {
        outcome = call.cancelled ? attemptError(attemptEnded, attemptTimeoutMs, timeoutMs) : await attempt(request, call)
      } catch (error) {
        outcome = attemptError(error, attemptTimeoutMs, timeoutMs)
      } finally {
        slots.release(target.hostname)
        call.attempt = undefined
      }
      const latencyMs = Math.round((performance.now() - begun) * 10) / 10
      if (call.cancelled) return { _tag: "Failed", error: "cancelled", latencyMs, attempts } satisfies Failed
      if (outcome instanceof AttemptError) {
        const delayMs = outcome.retryable ? retryDelay(undefined) : undefined
        if (delayMs !== undefined) {
          counters.retries++
          await call.sleep(delayMs)
          continue
        }
        counters.failures++
        return { _tag: "Failed", error: outcome.message, latencyMs, attempts } satisfies Failed
      }
      switch (outcome._tag) {
        case "Retry":
          counters.retries++
          await call.sleep(outcome.delayMs)
          continue
        case "NotModified": {
          counters.notModified++
          // A 304 may carry updated validators; either way it refreshes the URL's place in the cache.
          const known = validators.get(url)
          validators.answered(url, header(outcome.headers, "etag") ?? known?.etag, header(outcome.headers, "last-modified") ?? known?.lastModified)
          return { _tag: "NotModified", latencyMs, attempts } satisfies NotModified
        }
        case "Answer":
          if (outcome.status >= 200 && outcome.status < 300) {
            validators.answered(url, header(outcome.headers, "etag"), header(outcome.headers, "last-modified"))
          }
          return {
            _tag: "Fresh",
            fetched: {
              url,
              status: outcome.status,
              contentType: header(outcome.headers, "content-type") ?? "",
              body: outcome.body
            },
            latencyMs,
            attempts
          } satisfies Fresh
      }
    }
  }

  const get = (url: string, getOptions: GetOptions | undefined): Effect.Effect<UpstreamResult> =>
    Effect.callback<UpstreamResult>((resume) => {
      const call = new Call()
      counters.requests++
      counters.inFlight++
      fetchUrl(url, getOptions, call).then(
        (result) => {
          counters.inFlight--
          resume(Effect.succeed(result))
        },
        (defect: unknown) => {
          counters.inFlight--
          resume(Effect.die(defect))
        }
      )
      // Interrupted (the shard stops): the request in flight is aborted, a backoff cut short.
      return Effect.sync(() => call.cancel())
    })

  return Upstream.of({
    // A span per request while tracing (a check's trace shows its requests).
    get: (url, getOptions) => withSpanWhenTracing(get(url, getOptions), "Upstream.get", noCallSite),
    stats: Effect.sync((): UpstreamStats => ({ ...counters }))
  })
})

/** One attempt of `call`, settled with its outcome or the error its request failed with. */
const attempt = (request: AttemptRequest, call: Call) =>
  new Promise<Outcome>((resolve, reject) => {
    const running = new Attempt(request, resolve, reject)
    call.attempt = running
    running.start()
  })

/** A `get` in progress: what its interruption stops. */
class Call {
  cancelled = false
  attempt: Attempt | undefined
  private wake: (() => void) | undefined

  /** Waits `ms`, or less when the call is cancelled. */
  sleep(ms: number): Promise<void> {
    if (this.cancelled) return Promise.resolve()
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms)
      this.wake = () => {
        clearTimeout(timer)
        resolve()
      }
    })
  }

  cancel(): void {
    this.cancelled = true
    this.attempt?.abort(attemptEnded)
    this.wake?.()
  }
}

/**
 * The poller's HTTP client for upstream status pages. A broken upstream is
 * data: `get` never fails, it returns `Failed`.
 *
 * - One undici Agent: a keep-alive pool per origin (`perHostConcurrency`
 *   connections, no pipelining), redirects followed (`maxRedirects`).
 * - Each attempt has one timeout covering connect, headers and the whole body.
 * - Conditional GET: a 2xx's ETag / Last-Modified are remembered per URL
 *   (bounded, see ValidatorCache) and sent unless `conditional: false`; a 2xx
 *   without them forgets the URL's. A 304 is NotModified, its body unread.
 * - Retries (`retries`, default 2) on network errors, timeouts, 5xx and 429,
 *   after full-jitter backoff or the answer's Retry-After when that ends
 *   within the call's budget (timeout x (retries + 1)); never on other 4xx,
 *   TLS/certificate errors, oversized or undecodable bodies. When retries run
 *   out, a 5xx/429 is reported as Fresh with its status and body.
 * - At most `perHostConcurrency` attempts in flight per hostname; others wait
 *   (waiting and backoff are not part of `latencyMs`).
 * - Bodies over `maxBodyBytes` (8 MiB), on the wire or decoded, are Failed
 *   "body too large" (cut while streaming); gzip, deflate and br are decoded.
 * - The outbound module's agents (services/platform/Outbound.ts, decision
 *   0009): a URL is an organization's unless `trusted` (catalog sources),
 *   and every connection of an organization's URL, each redirect hop and DNS
 *   answer included, passes the address guard; a refusal is Failed
 *   "refused: …", not retried.
 */
export class Upstream extends Context.Service<Upstream, {
  get(url: string, options?: GetOptions): Effect.Effect<UpstreamResult>
  readonly stats: Effect.Effect<UpstreamStats>
}>()("statusgrid/poller/Upstream") {
  /** The client with explicit options; its connections close with the scope. */
  static readonly make = make

  static readonly layerWith = (options: UpstreamOptions) => Layer.effect(Upstream, make(options))

  /**
   * From POLL_TIMEOUT_MS (10000), POLL_RETRIES (2) and POLL_PER_HOST_CONCURRENCY (6); untrusted URLs
   * guarded as MONITOR_ALLOW_PRIVATE and OUTBOUND_ALLOW_ADDRESSES say.
   */
  static readonly layer = Layer.effect(
    Upstream,
    Effect.gen(function*() {
      const timeoutMs = yield* Config.Int("POLL_TIMEOUT_MS").pipe(Config.withDefault(defaults.timeoutMs))
      const retries = yield* Config.Int("POLL_RETRIES").pipe(Config.withDefault(defaults.retries))
      const perHostConcurrency = yield* Config.Int("POLL_PER_HOST_CONCURRENCY").pipe(
        Config.withDefault(defaults.perHostConcurrency)
      )
      const guard = yield* SourceGuardConfig
      return yield* make({ timeoutMs, retries, perHostConcurrency, guard })
    })
  )
}

/** Where a request goes: the parts of a URL that undici takes. */
interface Target {
  readonly origin: string
  /** Path and query. */
  readonly path: string
  readonly hostname: string
}

/** The URL's parts undici takes, or why it cannot be requested (parsed once: `URL.canParse` then `new URL` parses twice). */
const parseTarget = (url: string): Target | string => {
  let target: URL
  try {
    target = new URL(url)
  } catch {
    return "invalid URL"
  }
  if (target.protocol !== "http:" && target.protocol !== "https:") return `unsupported protocol ${target.protocol}`
  return { origin: target.origin, path: target.pathname + target.search, hostname: target.hostname }
}

const refusalMessage = (error: unknown): string => {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if ((e as { code?: unknown }).code === "EPRIVATEADDRESS") return `refused: ${e.message}`
  }
  return "refused: private address"
}

const timeoutCodes = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"])
/** Undici errors that say the request itself is wrong, not the network. */
const permanentUndiciCodes = new Set(["UND_ERR_INVALID_ARG", "UND_ERR_NOT_SUPPORTED", "UND_ERR_HEADERS_OVERFLOW"])

const errorCode = (error: unknown): string | undefined => {
  const e = error as { code?: unknown; errors?: ReadonlyArray<{ code?: unknown }>; cause?: { code?: unknown } } | null
  const code = e?.code ?? e?.errors?.[0]?.code ?? e?.cause?.code
  return typeof code === "string" ? code : undefined
}

/** A short, stable description of why an attempt failed, and whether retrying may help. */
const attemptError = (error: unknown, timeoutMs: number, connectTimeoutMs: number): AttemptError => {
  if (error === attemptTimedOut) return new AttemptError({ message: `timeout after ${timeoutMs} ms`, retryable: true })
  if (error instanceof BodyError) return new AttemptError({ message: error.message, retryable: error.retryable })
  // The address guard's refusal names the host and the address; another attempt would be refused again.
  if (isPrivateAddressRefusal(error)) return new AttemptError({ message: refusalMessage(error), retryable: false })
  const code = errorCode(error)
  const message = error instanceof Error ? error.message : String(error)
  if (code === undefined) return new AttemptError({ message, retryable: true })
  if (timeoutCodes.has(code)) return new AttemptError({ message: `timeout after ${timeoutMs} ms`, retryable: true })
  if (code === "UND_ERR_CONNECT_TIMEOUT") {
    return new AttemptError({ message: `connect timeout after ${connectTimeoutMs} ms`, retryable: true })
  }
  if (code.startsWith("UND_ERR_")) return new AttemptError({ message, retryable: !permanentUndiciCodes.has(code) })
  // TLS and certificate failures do not heal within a poll; system errors (ECONNREFUSED, ECONNRESET, …) may.
  return new AttemptError({ message: code, retryable: !/CERT|TLS|SSL/.test(code) })
}
