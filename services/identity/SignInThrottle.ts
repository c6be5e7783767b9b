import { Clock, Config, Context, Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import { RateLimited } from "../domain/api/Errors.ts"
import { Bus } from "../platform/Bus.ts"

/** The window sign-in attempts of one account are counted over. */
const windowMs = 15 * 60_000

/**
 * Sign-in attempts per account (services/identity/README.md, "Sign-in throttling"): at most
 * `SIGNIN_ATTEMPTS_PER_ACCOUNT` (10) password sign-ins for one e-mail address in a fixed
 * 15-minute window, from any address and any process (counted on the bus, keyed by a hash of the
 * lower-cased address), whatever their outcome; the next are refused with 429 before the password
 * is looked at, so guessing one account's password is 40 tries an hour at most. While the bus does
 * not answer (250 ms), sign-ins are not counted (the limits per client address still apply).
 */
export class SignInThrottle extends Context.Service<SignInThrottle, {
  /** Counts an attempt to sign in as `email`; fails when the account's attempts of this window are used up. */
  attempt(email: string): Effect.Effect<void, RateLimited>
}>()("statusgrid/identity/SignInThrottle") {
  static readonly layer = Layer.effect(SignInThrottle, Effect.gen(function*() {
    const bus = yield* Bus
    const perWindow = yield* Config.Int("SIGNIN_ATTEMPTS_PER_ACCOUNT").pipe(Config.withDefault(10))
    const attempt = Effect.fn("SignInThrottle.attempt")(function*(email: string) {
      if (perWindow <= 0) return
      const now = yield* Clock.currentTimeMillis
      const window = Math.floor(now / windowMs)
      const account = createHash("sha256").update(email.trim().toLowerCase()).digest("base64url")
      const count = yield* bus.incr(`sg:signin:${account}:${window}`, windowMs + 1_000).pipe(
        Effect.timeout(250),
        Effect.tapError((error) => Effect.logWarning("sign-in throttle: bus unavailable, attempts not counted", error)),
        Effect.orElseSucceed(() => 0)
      )
      if (count <= perWindow) return
      const retryAfterS = Math.max(1, Math.ceil(((window + 1) * windowMs - now) / 1000))
      return yield* new RateLimited({
        message: `too many sign-in attempts for this account; try again in ${Math.ceil(retryAfterS / 60)} min`,
        retry_after_s: retryAfterS
      })
    })
    return SignInThrottle.of({ attempt })
  }))
}
