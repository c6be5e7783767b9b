import { useEffect, useRef, useState } from "react"
import { statusLooks } from "#services/domain/StatusWords.ts"
import type { ScreenData, ScreenItem, ScreenLinks } from "./screen.ts"
import { stateReader } from "./stateReader.ts"

/** A change seen live: an item whose status moved while the screen was open. */
export interface LiveChange {
  readonly id: string
  readonly at: string
  readonly stack: string
  readonly item: ScreenItem
  readonly from: ScreenItem["shown"]
}

export type Connection = "connecting" | "live" | "reconnecting"

const maxChanges = 20
/** Without a working stream the state is read again this often (the spec's 30 s refresh). */
const fallbackMs = 30_000

/** The items whose shown status differs between two states, as changes. */
const changesBetween = (before: ScreenData, after: ScreenData, at: string): Array<LiveChange> => {
  const previous = new Map<string, ScreenItem>()
  for (const stack of before.stacks) for (const item of stack.items) previous.set(`${stack.slug}/${item.key}`, item)
  const changes: Array<LiveChange> = []
  for (const stack of after.stacks) {
    for (const item of stack.items) {
      const old = previous.get(`${stack.slug}/${item.key}`)
      if (old !== undefined && old.shown !== item.shown) {
        changes.push({ id: `${at}/${stack.slug}/${item.key}`, at, stack: stack.name, item, from: old.shown })
      }
    }
  }
  return changes
}

/** "Payments API: operational → major outage". */
export const changeText = (change: LiveChange) =>
  `${change.item.name}: ${statusLooks[change.from].word} → ${statusLooks[change.item.shown].word}`

/**
 * Keeps a screen's state live: one EventSource on the screen's stream; each
 * `delta` (debounced), each `resync` and each reconnection reads the state
 * again from `links.state` (the same service reads as the page's loader) and
 * records the items whose status moved as changes. Reads go through
 * `stateReader` (one at a time, bounded, retried until one succeeds), so a
 * reconnection's resync is never lost to a failed read. The stream reconnects by
 * itself (its `retry:` hint); if it closes for good, a new one is opened with
 * a growing delay (2 s to 30 s). While it is down the state is read every
 * 30 s, and the last state stays on screen. A state read answering 404 (the
 * link was revoked) reloads the page, which then shows the 404 page.
 */
export function useLiveScreen(initial: ScreenData, links: ScreenLinks) {
  const [screen, setScreen] = useState(initial)
  const [changes, setChanges] = useState<ReadonlyArray<LiveChange>>([])
  const [connection, setConnection] = useState<Connection>("connecting")
  const [updatedAt, setUpdatedAt] = useState(initial.read_at)
  const current = useRef(initial)

  useEffect(() => {
    current.current = initial
    setScreen(initial)
    setUpdatedAt(initial.read_at)
  }, [initial])

  useEffect(() => {
    let closed = false
    let source: EventSource | undefined
    let reopen: ReturnType<typeof setTimeout> | undefined
    let delay = 2_000
    const reader = stateReader<ScreenData>({
      url: links.state,
      onGone: () => window.location.reload(),
      onState: (next) => {
        const found = changesBetween(current.current, next, next.read_at)
        current.current = next
        setScreen(next)
        setUpdatedAt(next.read_at)
        if (found.length > 0) setChanges((list) => [...found.toReversed(), ...list].slice(0, maxChanges))
      }
    })
    const { read, soon } = reader

    const open = () => {
      if (closed) return
      source = new EventSource(links.stream)
      source.addEventListener("hello", () => {
        setConnection("live")
        delay = 2_000
        // Every (re)connection reads the state: deltas sent before it (or while a reconnection was
        // under way) are not replayed. Also the first: the page's own data may be older than the stream.
        soon()
      })
      source.addEventListener("delta", soon)
      source.addEventListener("resync", soon)
      source.addEventListener("error", () => {
        if (closed) return
        setConnection("reconnecting")
        if (source?.readyState === EventSource.CLOSED) {
          source.close()
          // Closed for good (an error status, the server gone): check the link still exists, then open anew.
          read()
          reopen = setTimeout(open, delay)
          delay = Math.min(delay * 2, 30_000)
        }
      })
    }

    open()
    const fallback = setInterval(() => {
      if (source?.readyState !== EventSource.OPEN) read()
    }, fallbackMs)
    const online = () => soon()
    window.addEventListener("online", online)
    return () => {
      closed = true
      source?.close()
      clearTimeout(reopen)
      reader.stop()
      clearInterval(fallback)
      window.removeEventListener("online", online)
    }
  }, [links.state, links.stream])

  return { screen, changes, connection, updatedAt }
}
