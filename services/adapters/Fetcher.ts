import { Context, Effect, Layer, Schema } from "effect"
import type { Scope } from "effect"
import { interceptors } from "undici"
import {
  acceptDocuments,
  acceptEncoding,
  BodyError,
  bodyTooLarge,
  decodeBody,
  defaultTimeoutMs,
  type GuardPolicy,
  isPrivateAddressRefusal,
  maxDocumentBytes,
  outboundAgent,
  readBody,
  SourceGuardConfig,
  sourcesRule,
  userAgent
} from "../platform/Outbound.ts"
import type { Fetched } from "./Adapter.ts"

export { userAgent }

export class FetchError extends Schema.TaggedError<FetchError>()("FetchError", {
  url: Schema.String,
  message: Schema.String,
  /** The address guard refused a connection (the URL or a redirect leads to a private address). */
  refused: Schema.optional(Schema.Boolean)
}) {}

export interface GetOptions {
  readonly timeoutMs?: number
  readonly headers?: Readonly<Record<string, string>>
  /**
   * The operator's own URL (a catalog source): read without the address
   * guard. Default false: every connection (each redirect hop too) is guarded.
   */
  readonly trusted?: boolean
}

export interface FetcherOptions {
  /** The guard of untrusted URLs (decision 0009). Default: private targets refused. */
  readonly guard?: GuardPolicy
  /** Largest body, on the wire and decoded; more is a FetchError, cut while streaming. Default 8 MiB. */
  readonly maxBodyBytes?: number
}

const maxRedirections = 5

const header = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : value?.[0]

const describe = (error: unknown, timeoutMs: number, signal: AbortSignal): string => {
  if (signal.aborted) return `timed out after ${timeoutMs} ms`
  if (error instanceof BodyError) return error.message
  if (isPrivateAddressRefusal(error)) {
    for (let e: unknown = error; e instanceof Error; e = e.cause) {
      if ((e as { code?: unknown }).code === "EPRIVATEADDRESS") return `refused: ${e.message}`
    }
  }
  const e = error as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } } | null
  const code = e?.code ?? e?.cause?.code
  return typeof code === "string" && !code.startsWith("UND_ERR_") ? code : String(e?.message ?? error)
}

/** A small keep-alive pool following redirects, destroyed with the scope. */
const pool = (guard: GuardPolicy | undefined) =>
  Effect.acquireRelease(
    Effect.sync(() => outboundAgent({ guard, keepAliveTimeout: 4_000 })),
    (agent) => Effect.promise(() => agent.destroy().catch(() => undefined))
  ).pipe(Effect.map((agent) => agent.compose(interceptors.redirect({ maxRedirections }))))

const make = Effect.fn("Fetcher.make")(function*(options: FetcherOptions = {}): Effect.fn.Return<Fetcher["Service"], never, Scope.Scope> {
  const maxBodyBytes = options.maxBodyBytes ?? maxDocumentBytes
  const trusted = yield* pool(undefined)
  const guarded = yield* pool({ rule: sourcesRule, ...(options.guard ?? { allowPrivate: false }) })

  return Fetcher.of({
    get: (url, getOptions = {}) => {
      const timeoutMs = getOptions.timeoutMs ?? defaultTimeoutMs
      return Effect.tryPromise({
        try: async (interrupted) => {
          const signal = AbortSignal.any([interrupted, AbortSignal.timeout(timeoutMs)])
          try {
            const target = new URL(url)
            if (target.protocol !== "http:" && target.protocol !== "https:") throw new Error(`unsupported protocol ${target.protocol}`)
            const response = await (getOptions.trusted === true ? trusted : guarded).request({
              origin: target.origin,
              path: target.pathname + target.search,
              method: "GET",
              signal,
              headers: { "user-agent": userAgent, accept: acceptDocuments, "accept-encoding": acceptEncoding, ...getOptions.headers }
            })
            // The body is read while streaming and cut past the cap: a huge answer costs at most the cap.
            if (Number(header(response.headers["content-length"]) ?? 0) > maxBodyBytes) {
              response.body.destroy()
              throw bodyTooLarge()
            }
            const raw = await readBody(response.body, maxBodyBytes)
            const body = await decodeBody(header(response.headers["content-encoding"]) ?? "", raw, maxBodyBytes)
            return { url, status: response.statusCode, contentType: header(response.headers["content-type"]) ?? "", body }
          } catch (error) {
            const message = describe(error, timeoutMs, signal)
            throw new FetchError({ url, message, ...(isPrivateAddressRefusal(error) ? { refused: true } : {}) })
          }
        },
        catch: (error) => error instanceof FetchError ? error : new FetchError({ url, message: String(error) })
      })
    }
  })
})

/**
 * One-off HTTP GETs for detection and `statusgrid probe`, on the outbound
 * module (services/platform/Outbound.ts): redirects followed, bodies cut at
 * 8 MiB while streaming, and organizations' URLs guarded on every connection.
 * Any HTTP status is an answer (the adapter decides what it means). The
 * poller has its own client (Upstream) with conditional requests and retries.
 */
export class Fetcher extends Context.Service<Fetcher, {
  get(url: string, options?: GetOptions): Effect.Effect<Fetched, FetchError>
}>()("statusgrid/adapters/Fetcher") {
  static readonly make = make

  static readonly layerWith = (options: FetcherOptions) => Layer.effect(Fetcher, make(options))

  /** Untrusted URLs guarded as MONITOR_ALLOW_PRIVATE and OUTBOUND_ALLOW_ADDRESSES say. */
  static readonly layer = Layer.effect(
    Fetcher,
    Effect.gen(function*() {
      const guard = yield* Effect.orDie(SourceGuardConfig)
      return yield* make({ guard })
    })
  )

  /** For the operator's own tools (`statusgrid probe`): nothing guarded. */
  static readonly layerOperator = Layer.effect(Fetcher, make({ guard: { allowPrivate: true } }))
}
