import { useEffect, useState } from "react"

const units: ReadonlyArray<readonly [number, string]> = [[86_400, "d"], [3_600, "h"], [60, "min"]]

/** "just now", "3 min ago", "2 h ago", "5 d ago". */
export const relative = (then: Date, now: Date): string => {
  const seconds = Math.round((now.getTime() - then.getTime()) / 1000)
  if (seconds < 45) return seconds < -45 ? "in the future" : "just now"
  for (const [size, unit] of units) if (seconds >= size) return `${Math.floor(seconds / size)} ${unit} ago`
  return "1 min ago"
}

/**
 * A time as "3 min ago", the absolute time in the title and `dateTime`. The
 * server renders it in UTC; in the browser it switches to the viewer's time
 * zone and keeps counting.
 */
export function RelativeTime({ date }: { readonly date: string }) {
  const then = new Date(date)
  const [now, setNow] = useState<Date | null>(null)
  useEffect(() => {
    setNow(new Date())
    const timer = setInterval(() => setNow(new Date()), 30_000)
    return () => clearInterval(timer)
  }, [])
  const absolute = now === null ? then.toUTCString() : then.toLocaleString()
  return (
    <time dateTime={then.toISOString()} title={absolute} suppressHydrationWarning>
      {relative(then, now ?? new Date())}
    </time>
  )
}
