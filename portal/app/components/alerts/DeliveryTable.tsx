import type { AlertDelivery } from "#services/domain/api/Alerts.ts"
import { RelativeTime } from "../RelativeTime.tsx"
import { channelTypeLabels } from "../settings/channels/fields.ts"

/** A delivery's status as a badge: tone, icon and word (never colour alone). */
const deliveryLooks = {
  pending: { tone: "unknown", icon: "…", word: "queued" },
  sending: { tone: "maint", icon: "↻", word: "sending" },
  delivered: { tone: "ok", icon: "✓", word: "delivered" },
  failed: { tone: "down", icon: "✕", word: "failed" },
  cancelled: { tone: "unknown", icon: "–", word: "cancelled" }
} as const


/** A delivery's status as a badge, and its last error unless delivered. */
export function DeliveryStatus({ status, lastError }: { readonly status: keyof typeof deliveryLooks; readonly lastError: string | null }) {
  const look = deliveryLooks[status]
  return (
    <>
      <span className={`badge tone-${look.tone}`}><span className="badge-icon" aria-hidden="true">{look.icon}</span>{look.word}</span>
      {lastError && status !== "delivered" ? <div className="error">{lastError}</div> : null}
    </>
  )
}

/** Each channel's delivery of an alert: channel, status (icon + word), attempts, when, last error. */
export function DeliveryTable({ deliveries }: { readonly deliveries: ReadonlyArray<AlertDelivery> }) {
  if (deliveries.length === 0) return <p className="muted">No channel was sent this alert (none enabled, or the plan's allowance was used up).</p>
  return (
    <table className="deliveries">
      <thead>
        <tr><th scope="col">Channel</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">When</th></tr>
      </thead>
      <tbody>
        {deliveries.map((d, i) => {
          return (
            <tr key={i}>
              <td>
                <strong>{d.channel_name}</strong>{" "}
                <span className="delivery-kind">{(channelTypeLabels as Readonly<Record<string, string>>)[d.channel_type] ?? d.channel_type}{d.escalation ? " · escalation" : ""}</span>
              </td>
              <td><DeliveryStatus status={d.status} lastError={d.last_error} /></td>
              <td>{d.attempts} {d.attempts === 1 ? "attempt" : "attempts"}</td>
              <td>{d.delivered_at === null ? <RelativeTime date={d.created_at} /> : <RelativeTime date={d.delivered_at} />}</td>
            </tr>
          )
        })}
      </tbody>
    </table>
  )
}
