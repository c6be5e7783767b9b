import { useEffect, useState } from "react"
import type { Connection } from "./useLiveScreen.ts"

const clock = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" })

/** "Live · updated 12:03:04" or "Reconnecting… · last update 12:03:04", announced politely to screen readers. */
export function LiveState({ connection, updatedAt }: { readonly connection: Connection; readonly updatedAt: string }) {
  // The server renders UTC; the browser switches to local time after hydration.
  const [local, setLocal] = useState(false)
  useEffect(() => setLocal(true), [])
  const time = local ? clock(updatedAt) : `${updatedAt.slice(11, 19)} UTC`
  const down = connection === "reconnecting"
  return (
    <p className={`live-state ${down ? "is-down" : "is-live"}`} role="status" aria-live="polite">
      <span className="live-dot" aria-hidden="true" />
      {down ? "Reconnecting…" : connection === "live" ? "Live" : "Connecting…"}
      <span className="live-time">
        {down ? " · last update " : " · updated "}
        <time dateTime={updatedAt} suppressHydrationWarning>{time}</time>
      </span>
    </p>
  )
}
