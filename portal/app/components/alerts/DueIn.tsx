import { useEffect, useState } from "react"

const inWords = (ms: number) => {
  const minutes = Math.round(ms / 60_000)
  if (minutes < 1) return "in under a minute"
  if (minutes < 60) return `in ${minutes} min`
  const hours = Math.floor(minutes / 60)
  const rest = minutes % 60
  return rest === 0 ? `in ${hours} h` : `in ${hours} h ${rest} min`
}

/** A time still to come as "in 59 min" (the absolute time in the title), counting down in the browser. */
export function DueIn({ date }: { readonly date: string }) {
  const at = new Date(date)
  const [now, setNow] = useState<number | null>(null)
  useEffect(() => {
    setNow(Date.now())
    const timer = setInterval(() => setNow(Date.now()), 30_000)
    return () => clearInterval(timer)
  }, [])
  return (
    <time dateTime={at.toISOString()} title={now === null ? at.toUTCString() : at.toLocaleString()} suppressHydrationWarning>
      {inWords(at.getTime() - (now ?? Date.now()))}
    </time>
  )
}
