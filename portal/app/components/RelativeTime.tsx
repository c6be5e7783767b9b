import { useSyncExternalStore } from "react"

const units: ReadonlyArray<readonly [number, string]> = [[86_400, "d"], [3_600, "h"], [60, "min"]]

/** "just now", "3 min ago", "2 h ago", "5 d ago". */
export const relative = (then: Date, now: Date): string => {
  const seconds = Math.round((now.getTime() - then.getTime()) / 1000)
  if (seconds < 45) return seconds < -45 ? "in the future" : "just now"
  for (const [size, unit] of units) if (seconds >= size) return `${Math.floor(seconds / size)} ${unit} ago`
  return "1 min ago"
}

/**
 * One clock for every relative time on the page: one interval, one
 * re-render pass every 30 s (a dashboard shows hundreds of these; an
 * effect and a timer each made hydration twice as long). The server and
 * hydration read 0, "not in the browser yet".
 */
let clockNow = 0
let timer: ReturnType<typeof setInterval> | undefined
const listeners = new Set<() => void>()
const tick = () => {
  clockNow = Date.now()
  for (const listener of listeners) listener()
}
const subscribe = (listener: () => void) => {
  listeners.add(listener)
  if (timer === undefined) {
    clockNow = Date.now()
    timer = setInterval(tick, 30_000)
  }
  return () => {
    listeners.delete(listener)
    if (listeners.size === 0 && timer !== undefined) {
      clearInterval(timer)
      timer = undefined
    }
  }
}
const browserNow = () => clockNow
const serverNow = () => 0

/** The viewer's locale and time zone; one formatter (toLocaleString builds one per call). */
let localFormat: Intl.DateTimeFormat | undefined
const local = (date: Date) => (localFormat ??= new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" })).format(date)

/**
 * A time as "3 min ago", the absolute time in the title and `dateTime`. The
 * server renders it in UTC; in the browser it switches to the viewer's time
 * zone and keeps counting.
 */
export function RelativeTime({ date }: { readonly date: string }) {
  const then = new Date(date)
  const now = useSyncExternalStore(subscribe, browserNow, serverNow)
  const absolute = now === 0 ? then.toUTCString() : local(then)
  return (
    <time dateTime={then.toISOString()} title={absolute} suppressHydrationWarning>
      {relative(then, now === 0 ? new Date() : new Date(now))}
    </time>
  )
}
