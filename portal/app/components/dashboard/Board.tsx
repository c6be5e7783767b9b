import { fromComponentStatus, fromMonitorState, fromSourceStatus, type Shown } from "#services/domain/StatusWords.ts"
import type { BoardIncident, BoardMaintenance } from "#services/orgs/StackBoard.ts"
import type { LiveStack } from "../../live/board.ts"
import { useEffect, useState } from "react"
import type { LiveState } from "../../live/useLiveBoard.ts"
import { RelativeTime } from "../RelativeTime.tsx"

export { fromComponentStatus, fromMonitorState, fromSourceStatus, type Shown }

/** "Live · updated 12 s ago", "Reconnecting…", "Connecting…": what the page last heard, never a silent stale picture. */
export function LiveIndicator({ state, updatedAt }: { readonly state: LiveState; readonly updatedAt: number | null }) {
  const [now, setNow] = useState<number | null>(null)
  useEffect(() => {
    setNow(Date.now())
    const timer = setInterval(() => setNow(Date.now()), 1_000)
    return () => clearInterval(timer)
  }, [])
  const ago = updatedAt === null || now === null ? null : Math.max(0, Math.round((now - updatedAt) / 1000))
  const agoText = ago === null ? "" : ago < 60 ? `${ago} s ago` : `${Math.floor(ago / 60)} min ago`
  return (
    <p className={`live live-${state}`} data-live={state}>
      <span className="live-dot" aria-hidden="true" />
      <span role="status">{state === "live" ? "Live" : state === "reconnecting" ? "Reconnecting…" : "Connecting…"}</span>
      {agoText === "" ? null : <span className="muted"> · updated {agoText}</span>}
    </p>
  )
}

/** Without JavaScript the page reloads itself every 30 s (the spec's fallback); with it, the stream keeps it current. */
export function NoScriptRefresh() {
  return <noscript><meta httpEquiv="refresh" content="30" /></noscript>
}

/** "3 operational · 1 degraded · 2 not checked yet" from a banner's counts. */
export function HealthCounts({ stack }: { readonly stack: LiveStack }) {
  const c = stack.health.counts
  const parts = [
    c.outage > 0 ? `${c.outage} down` : "",
    c.degraded > 0 ? `${c.degraded} degraded` : "",
    c.maintenance > 0 ? `${c.maintenance} in maintenance` : "",
    c.operational > 0 ? `${c.operational} operational` : "",
    c.unknown > 0 ? `${c.unknown} not checked yet` : ""
  ].filter(Boolean)
  return <p className="muted health-counts">{parts.length === 0 ? "Nothing in this stack yet" : parts.join(" · ")}</p>
}

const impactWords: Record<BoardIncident["impact"], string> = {
  none: "no impact",
  minor: "minor",
  major: "major",
  critical: "critical",
  maintenance: "maintenance"
}

/** Open incidents of the sources on the page, newest first, each with its provider, affected components and age. */
export function IncidentList({ incidents, headingId }: { readonly incidents: ReadonlyArray<BoardIncident>; readonly headingId: string }) {
  if (incidents.length === 0) return <p className="muted">No open incidents.</p>
  return (
    <ul className="incident-list" aria-labelledby={headingId}>
      {incidents.map((i) => (
        <li key={i.id} className={`incident impact-${i.impact}`}>
          <p className="incident-title">
            {i.url ? <a href={i.url} rel="noreferrer noopener" target="_blank">{i.title}</a> : i.title}
          </p>
          <p className="muted incident-meta">
            <span className="incident-source">{i.source_name}</span> · {i.status} · {impactWords[i.impact]} · since <RelativeTime date={i.started_at} />
          </p>
          {i.components.length === 0 ? null : <p className="incident-components">Affects {i.components.join(", ")}</p>}
        </li>
      ))}
    </ul>
  )
}

const dateTime = (iso: string) => `${iso.slice(0, 16).replace("T", " ")} UTC`

/** Maintenances under way or announced for the sources on the page. */
export function MaintenanceList({ maintenances, headingId }: { readonly maintenances: ReadonlyArray<BoardMaintenance>; readonly headingId: string }) {
  if (maintenances.length === 0) return <p className="muted">No maintenance announced.</p>
  return (
    <ul className="incident-list" aria-labelledby={headingId}>
      {maintenances.map((m) => (
        <li key={m.id} className="incident impact-maintenance">
          <p className="incident-title">{m.url ? <a href={m.url} rel="noreferrer noopener" target="_blank">{m.title}</a> : m.title}</p>
          <p className="muted incident-meta">
            <span className="incident-source">{m.source_name}</span> · {m.status.replace("_", " ")} ·{" "}
            <time dateTime={m.scheduled_for}>{dateTime(m.scheduled_for)}</time>
            {m.scheduled_until === null ? null : <> to <time dateTime={m.scheduled_until}>{dateTime(m.scheduled_until)}</time></>}
          </p>
        </li>
      ))}
    </ul>
  )
}
