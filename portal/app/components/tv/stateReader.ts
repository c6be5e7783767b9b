/**
 * Reads a screen's state (`/tv/<token>/state`, `/share/<token>/state`) for
 * its live hook: one read at a time (a read asked for meanwhile runs after
 * it), bursts debounced, each read bounded by a timeout, and a read that
 * fails (network, timeout, 5xx) tried again with a growing delay until one
 * succeeds. After a reconnection the stream is open and quiet, so a lost
 * resync read would otherwise leave the screen stale until the next change.
 * A 404 (the link was revoked) calls `onGone` and stops.
 */
export interface StateReaderOptions<A> {
  readonly url: string
  readonly onState: (state: A) => void
  readonly onGone: () => void
  readonly fetch?: typeof fetch
  /** A burst of `soon()` calls reads once, this long after the last. */
  readonly debounceMs?: number
  /** A read taking longer is abandoned (a half-open connection would otherwise hold every later read back). */
  readonly timeoutMs?: number
  /** The first retry's delay, doubling up to `maxRetryMs`. */
  readonly retryMs?: number
  readonly maxRetryMs?: number
}

export interface StateReader {
  /** Reads now (or right after the read in flight). */
  readonly read: () => void
  /** Reads after the debounce. */
  readonly soon: () => void
  readonly stop: () => void
}

export const stateReader = <A>(options: StateReaderOptions<A>): StateReader => {
  const get = options.fetch ?? ((input, init) => fetch(input, init))
  const debounceMs = options.debounceMs ?? 250
  const timeoutMs = options.timeoutMs ?? 10_000
  const firstRetryMs = options.retryMs ?? 2_000
  const maxRetryMs = options.maxRetryMs ?? 30_000
  let stopped = false
  let reading = false
  let again = false
  let retryDelay = firstRetryMs
  let debounce: ReturnType<typeof setTimeout> | undefined
  let retry: ReturnType<typeof setTimeout> | undefined

  const attempt = async (): Promise<"ok" | "failed" | "gone"> => {
    try {
      const response = await get(options.url, {
        headers: { accept: "application/json" },
        cache: "no-store",
        signal: AbortSignal.timeout(timeoutMs)
      })
      if (response.status === 404) return "gone"
      if (!response.ok) return "failed"
      const state = (await response.json()) as A
      if (!stopped) options.onState(state)
      return "ok"
    } catch {
      return "failed"
    }
  }

  const read = (): void => {
    if (stopped) return
    if (reading) {
      again = true
      return
    }
    reading = true
    clearTimeout(retry)
    void attempt().then((outcome) => {
      reading = false
      if (stopped) return
      if (outcome === "gone") {
        stopped = true
        options.onGone()
        return
      }
      if (outcome === "ok") {
        retryDelay = firstRetryMs
      } else {
        retry = setTimeout(read, retryDelay)
        retryDelay = Math.min(retryDelay * 2, maxRetryMs)
      }
      if (again) {
        again = false
        read()
      }
    })
  }

  return {
    read,
    soon: () => {
      clearTimeout(debounce)
      debounce = setTimeout(read, debounceMs)
    },
    stop: () => {
      stopped = true
      clearTimeout(debounce)
      clearTimeout(retry)
    }
  }
}
