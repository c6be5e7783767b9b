import { useEffect, useState } from "react"
import type { Connection } from "./useLiveScreen.ts"

const clock = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" })

/** A time of day: UTC from the server, the viewer's local time after hydration. */
export function ClockTime({ iso }: { readonly iso: string }) {
  const [local, setLocal] = useState(false)
  useEffect(() => setLocal(true), [])
  return <time dateTime={iso} suppressHydrationWarning>{local ? clock(iso) : `${iso.slice(11, 19)} UTC`}</time>
}

/** "Live · updated 12:03:04" or "Reconnecting… · last update 12:03:04", announced politely to screen readers. */
export function LiveState({ connection, updatedAt }: { readonly connection: Connection; readonly updatedAt: string }) {
  const down = connection === "reconnecting"
  return (
    <p className={`live-state ${down ? "is-down" : "is-live"}`} role="status" aria-live="polite">
      <span className="live-dot" aria-hidden="true" />
      {down ? "Reconnecting…" : connection === "live" ? "Live" : "Connecting…"}
      <span className="live-time">
        {down ? " · last update " : " · updated "}
        <ClockTime iso={updatedAt} />
      </span>
    </p>
  )
}
