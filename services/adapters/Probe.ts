import { Effect } from "effect"
import type { Adapter, Fetched, SourceConfig } from "./Adapter.ts"
import { Fetcher } from "./Fetcher.ts"

/**
 * Reads a source once: fetches the adapter's endpoints (the primary must
 * answer; a secondary that cannot be reached is handed to the adapter as a
 * failed document) and parses them.
 */
export const read = Effect.fn("Probe.read")(function*(adapter: Adapter, source: SourceConfig, now: Date) {
  const fetcher = yield* Fetcher
  const [primary, ...rest] = adapter.endpoints(source)
  const fetched: ReadonlyArray<Fetched> = yield* Effect.all(
    [
      fetcher.get(primary ?? source.url),
      ...rest.map((url) =>
        fetcher.get(url).pipe(
          Effect.orElseSucceed((): Fetched => ({ url, status: 0, contentType: "", body: new Uint8Array() }))
        )
      )
    ],
    { concurrency: "unbounded" }
  )
  return yield* adapter.parse(fetched, source, now)
})
