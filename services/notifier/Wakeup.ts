import { Context, Effect, Layer } from "effect"

/**
 * Tells the delivery worker of this process that new deliveries are due, so
 * an alert written by the consumer is sent at once rather than at the next
 * poll. Other processes' workers still find it by polling
 * (`NOTIFIER_POLL_MS`). A wake with nobody waiting is kept for the next wait.
 */
export class Wakeup extends Context.Service<Wakeup, {
  readonly wake: Effect.Effect<void>
  /** Returns at the next wake, or after `ms`. */
  wait(ms: number): Effect.Effect<void>
}>()("statusgrid/notifier/Wakeup") {
  static readonly layer = Layer.sync(Wakeup, () => {
    let pending = false
    let waiter: (() => void) | undefined
    return Wakeup.of({
      wake: Effect.sync(() => {
        if (waiter === undefined) pending = true
        else waiter()
      }),
      wait: (ms) =>
        Effect.callback<void>((resume) => {
          if (pending) {
            pending = false
            resume(Effect.void)
            return
          }
          const timer = setTimeout(() => {
            waiter = undefined
            resume(Effect.void)
          }, ms)
          waiter = () => {
            clearTimeout(timer)
            waiter = undefined
            resume(Effect.void)
          }
          return Effect.sync(() => {
            clearTimeout(timer)
            waiter = undefined
          })
        })
    })
  })
}
