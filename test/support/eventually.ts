import { Duration, Effect } from "effect"

/** Runs `check` every 50 ms until it gives a value; dies with "`what`: not within `ms` ms" after `ms`. */
export const waitFor = <A, E, R>(ms: number, what: string, check: Effect.Effect<A | undefined, E, R>) =>
  Effect.gen(function*() {
    const deadline = Date.now() + ms
    for (;;) {
      const value = yield* check
      if (value !== undefined) return value
      if (Date.now() > deadline) return yield* Effect.die(new Error(`${what}: not within ${ms} ms`))
      yield* Effect.sleep(Duration.millis(50))
    }
  })

/** `waitFor` without a name for the condition. */
export const eventually = <A, E, R>(ms: number, check: Effect.Effect<A | undefined, E, R>) => waitFor(ms, "the condition", check)

/** Outside Effect: polls `f` (awaited) every 250 ms until it gives a value, or fails after `timeoutMs` naming `what`. */
export const waitForValue = async <A>(what: string, f: () => A | undefined | Promise<A | undefined>, timeoutMs: number): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await f()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}
