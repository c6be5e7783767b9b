import { Clock, Config, Context, Effect, Layer } from "effect"
import { Bus } from "../platform/Bus.ts"

export interface RateDecision {
  readonly allowed: boolean
  /** Seconds until the current window ends (when refused). */
  readonly retryAfterS: number
}

/** Longest the limiter waits for the bus before counting in this process instead. */
const busTimeoutMs = 250
/** After the bus failed, count in this process for this long before asking the bus again. */
const localForMs = 5_000

/**
 * Per-API-key request limits: a fixed one-minute window counted on the bus
 * (Redis when configured, so every process of a deployment shares the count;
 * in-process when embedded). `API_RATE_LIMIT_PER_MINUTE`, default 1200.
 *
 * While the bus is down (or slower than 250 ms) each process counts on its
 * own, with the same limit, for the next 5 s before it asks the bus again:
 * the API neither fails nor goes unlimited; with N processes a key may get
 * up to N times its limit during the outage (decision 0007). Windows are
 * read from the fiber's `Clock`.
 */
export class RateLimiter extends Context.Service<RateLimiter, {
  /** Counts one request of `subject` in the current minute; allowed up to `perMinute` (default `API_RATE_LIMIT_PER_MINUTE`). */
  take(subject: string, perMinute?: number): Effect.Effect<RateDecision>
}>()("statusgrid/api/RateLimiter") {
  static readonly layer = Layer.effect(
    RateLimiter,
    Effect.gen(function*() {
      const bus = yield* Bus
      const perMinute = yield* Config.Int("API_RATE_LIMIT_PER_MINUTE").pipe(Config.withDefault(1200), Effect.orDie)
      const windowMs = 60_000
      /** Counts of this process while the bus is away: subject → [window, count]. */
      let local = new Map<string, readonly [number, number]>()
      let localUntil = 0

      const countLocally = (subject: string, window: number) => {
        const [at, count] = local.get(subject) ?? [window, 0]
        const next = at === window ? count + 1 : 1
        local.set(subject, [window, next])
        return next
      }

      return RateLimiter.of({
        take: Effect.fnUntraced(function*(subject: string, limit: number = perMinute) {
          const now = yield* Clock.currentTimeMillis
          const window = Math.floor(now / windowMs)
          const decide = (count: number) => ({
            allowed: count <= limit,
            retryAfterS: Math.max(1, Math.ceil(((window + 1) * windowMs - now) / 1000))
          })
          if (now < localUntil) return decide(countLocally(subject, window))
          const counted = yield* bus.incr(`sg:ratelimit:${subject}:${window}`, windowMs + 1_000).pipe(
            Effect.timeout(busTimeoutMs),
            Effect.result
          )
          if (counted._tag === "Success") {
            if (local.size > 0) local = new Map()
            return decide(counted.success)
          }
          localUntil = now + localForMs
          yield* Effect.logWarning("rate limiter: bus unavailable, counting in this process", counted.failure)
          return decide(countLocally(subject, window))
        })
      })
    })
  )
}
