import { Context, Effect, Layer, Schema } from "effect"
import { version } from "../platform/Version.ts"
import type { Fetched } from "./Adapter.ts"

export class FetchError extends Schema.TaggedError<FetchError>()("FetchError", {
  url: Schema.String,
  message: Schema.String
}) {}

export const userAgent = `statusgrid/${version} (+https://github.com/statusgrid/statusgrid)`

/** Largest body read from an upstream; more is cut off (a status document is far smaller). */
const maxBodyBytes = 8 * 1024 * 1024

export interface GetOptions {
  readonly timeoutMs?: number
  readonly headers?: Readonly<Record<string, string>>
}

/**
 * One-off HTTP GETs for detection and `statusgrid probe`. The poller has its
 * own fetch path with keep-alive pools and conditional requests.
 */
export class Fetcher extends Context.Service<Fetcher, {
  get(url: string, options?: GetOptions): Effect.Effect<Fetched, FetchError>
}>()("statusgrid/adapters/Fetcher") {
  static readonly layer = Layer.succeed(
    Fetcher,
    Fetcher.of({
      get: (url, options = {}) =>
        Effect.tryPromise({
          try: async (signal) => {
            const response = await fetch(url, {
              redirect: "follow",
              signal: AbortSignal.any([signal, AbortSignal.timeout(options.timeoutMs ?? 10_000)]),
              headers: { "user-agent": userAgent, accept: "application/json, application/xml, text/xml, */*;q=0.8", ...options.headers }
            })
            const body = new Uint8Array(await response.arrayBuffer()).subarray(0, maxBodyBytes)
            return { url, status: response.status, contentType: response.headers.get("content-type") ?? "", body }
          },
          catch: (error) => {
            const cause = (error as { cause?: { code?: string; message?: string } }).cause
            const message = (error as Error).name === "TimeoutError"
              ? `timed out after ${options.timeoutMs ?? 10_000} ms`
              : cause?.code ?? cause?.message ?? (error as Error).message
            return new FetchError({ url, message })
          }
        })
    })
  )
}
