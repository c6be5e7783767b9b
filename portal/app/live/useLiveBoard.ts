import { useEffect, useRef, useState } from "react"
import { useRevalidator } from "react-router"
import { applyDelta, type LiveBoard as Board, parseDelta } from "./board.ts"

/** Where the page's event stream stands. */
export type LiveState = "connecting" | "live" | "reconnecting"

export interface LiveBoard {
  readonly board: Board
  readonly state: LiveState
  /** When the page last had news: its loader's data or a delta (ms since the epoch); null before hydration. */
  readonly updatedAt: number | null
}

/** Longest wait before opening a stream again after it was refused or closed (the browser's own retry covers drops). */
const maxBackoffMs = 30_000
/**
 * A delta carries statuses, and says when incidents or maintenances changed
 * (then the loader is read again at once). After other deltas the loader is
 * read again this long later (at most once per this time however many
 * arrive) for what else came with them, while statuses changed at once.
 */
const settleMs = 5_000
/** After a delta about incidents: extra reads this long after it (the recorder may lag under load). */
const incidentRereadsMs = [1_500, 15_000, 45_000]

/**
 * The loader's board kept live: ONE EventSource per page on
 * `/api/v1/organizations/{org}/stream` (one stack's with `stack`), with the
 * session cookie. `delta` events are applied to the board (statuses, banner
 * by the domain rule); `resync`, and every reconnection after a drop,
 * revalidate the loader (deltas are at most once, so state is reloaded, not
 * replayed). New loader data replaces the board. A delta that opened,
 * updated or resolved an incident or maintenance reads the loader again at
 * once; every delta reads it again a few seconds later.
 */
export function useLiveBoard(loaded: Board, org: string, stack?: string): LiveBoard {
  const [board, setBoard] = useState(loaded)
  const [state, setState] = useState<LiveState>("connecting")
  const [updatedAt, setUpdatedAt] = useState<number | null>(null)
  const revalidator = useRevalidator()
  const revalidate = useRef(revalidator.revalidate)
  revalidate.current = revalidator.revalidate

  useEffect(() => {
    setBoard(loaded)
    setUpdatedAt(Date.now())
  }, [loaded])

  useEffect(() => {
    const url = `/api/v1/organizations/${encodeURIComponent(org)}/stream${stack === undefined ? "" : `?stack=${encodeURIComponent(stack)}`}`
    let source: EventSource | undefined
    let dropped = false
    let timer: ReturnType<typeof setTimeout> | undefined
    let backoff = 1_000
    let stopped = false
    let settle: ReturnType<typeof setTimeout> | undefined
    const later: Array<ReturnType<typeof setTimeout>> = []

    const open = () => {
      source = new EventSource(url)
      source.addEventListener("hello", () => {
        setState("live")
        backoff = 1_000
        // Anything may have changed while the stream was down: reload, then apply what follows.
        if (dropped) void revalidate.current()
        dropped = false
        setUpdatedAt(Date.now())
      })
      source.addEventListener("delta", (event) => {
        const delta = parseDelta((event as MessageEvent<string>).data)
        if (delta === undefined) return
        setBoard((current) => applyDelta(current, delta))
        setUpdatedAt(Date.now())
        if (delta.kind === "source" && delta.incidents) {
          // The incident lists changed: read them now and a little later again. The delta is published
          // before the event recorder has written the incident's rows to PostgreSQL (services/platform/
          // Publisher.ts), so the first read may not have them yet; the settle below reads once more.
          void revalidate.current()
          for (const ms of incidentRereadsMs) later.push(setTimeout(() => void revalidate.current(), ms))
        }
        settle ??= setTimeout(() => {
          settle = undefined
          void revalidate.current()
        }, settleMs)
      })
      source.addEventListener("resync", () => void revalidate.current())
      source.addEventListener("error", () => {
        dropped = true
        setState("reconnecting")
        // The browser retries a dropped stream itself; a refused one (401, 404, 5xx) is closed: open it again later.
        if (source?.readyState === EventSource.CLOSED && !stopped) {
          source.close()
          timer = setTimeout(open, backoff)
          backoff = Math.min(maxBackoffMs, backoff * 2)
        }
      })
    }
    open()
    return () => {
      stopped = true
      if (timer !== undefined) clearTimeout(timer)
      if (settle !== undefined) clearTimeout(settle)
      for (const timer of later) clearTimeout(timer)
      source?.close()
    }
  }, [org, stack])

  return { board, state, updatedAt }
}
