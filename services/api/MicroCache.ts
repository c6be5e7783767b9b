import { Clock, Deferred, Effect, Exit } from "effect"

interface Entry {
  readonly until: number
  readonly result: Deferred.Deferred<unknown, unknown>
}

/**
 * A short-lived cache of read results by key (a micro-cache, as CDNs keep):
 * answers computed less than `ttlMs` ago are served again, and concurrent
 * misses of one key share one computation. With `ttlMs` 0 nothing is cached.
 * Failures are cached like successes (an unknown key stays unknown for the
 * same short time); defects and interruptions are not. Time is the fiber's
 * `Clock` (tests move it with `TestClock`).
 */
export const makeMicroCache = (ttlMs: number, maxEntries = 10_000) => {
  const entries = new Map<string, Entry>()
  return <A, E, R>(key: string, compute: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
    if (ttlMs <= 0) return compute
    return Clock.clockWith((clock) => {
      const now = clock.currentTimeMillisUnsafe()
      const hit = entries.get(key)
      if (hit !== undefined && hit.until > now) return Deferred.await(hit.result as Deferred.Deferred<A, E>)
      if (entries.size >= maxEntries) {
        for (const [k, e] of entries) if (e.until <= now) entries.delete(k)
        if (entries.size >= maxEntries) entries.clear()
      }
      const result = Deferred.makeUnsafe<A, E>()
      entries.set(key, { until: now + ttlMs, result: result as Deferred.Deferred<unknown, unknown> })
      return compute.pipe(
        Effect.onExit((exit) => {
          // Only answers are kept; a defect or interruption is not an answer to repeat.
          if (Exit.isFailure(exit) && !Exit.hasFails(exit)) entries.delete(key)
          return Deferred.done(result, exit)
        })
      )
    })
  }
}
