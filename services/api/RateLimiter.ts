import { Config, Context, Effect, Layer } from "effect"
import { Bus } from "../platform/Bus.ts"

export interface RateDecision {
  readonly allowed: boolean
  /** Seconds until the current window ends (when refused). */
  readonly retryAfterS: number
}

/**
 * Per-API-key request limits: a fixed one-minute window counted on the bus
 * (Redis when configured, so every process of a deployment shares the count;
 * in-process when embedded). `API_RATE_LIMIT_PER_MINUTE`, default 1200.
 */
export class RateLimiter extends Context.Service<RateLimiter, {
  take(subject: string): Effect.Effect<RateDecision>
}>()("statusgrid/api/RateLimiter") {
  static readonly layer = Layer.effect(
    RateLimiter,
    Effect.gen(function*() {
      const bus = yield* Bus
      const perMinute = yield* Config.Int("API_RATE_LIMIT_PER_MINUTE").pipe(Config.withDefault(1200), Effect.orDie)
      const windowMs = 60_000
      return RateLimiter.of({
        take: (subject) =>
          Effect.gen(function*() {
            const now = Date.now()
            const window = Math.floor(now / windowMs)
            const count = yield* bus.incr(`sg:ratelimit:${subject}:${window}`, windowMs + 1_000)
            return { allowed: count <= perMinute, retryAfterS: Math.max(1, Math.ceil(((window + 1) * windowMs - now) / 1000)) }
          }).pipe(
            // The bus being down must not take the API down with it: allow, and say so.
            Effect.catch((error) => Effect.logWarning("rate limiter unavailable", error).pipe(Effect.as({ allowed: true, retryAfterS: 0 })))
          )
      })
    })
  )
}
