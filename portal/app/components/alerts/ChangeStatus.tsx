import { fromComponentStatus, fromMonitorState, statusLooks } from "#services/domain/StatusWords.ts"
import { StatusBadge } from "../StatusBadge.tsx"

const componentStatuses = new Set(["operational", "degraded", "critical", "maintenance"])
const monitorStates = new Set(["pending", "up", "down", "paused"])

/**
 * A status from an alert's payload as the portal shows statuses (word, icon,
 * colour): a component's status or a monitor's state; anything else (an
 * incident's "investigating") as its own word.
 */
export function ChangeStatus({ value }: { readonly value: string }) {
  if (value === "") return <span className="muted">unknown</span>
  if (componentStatuses.has(value)) return <StatusBadge status={fromComponentStatus(value as "operational")} />
  if (monitorStates.has(value)) return <StatusBadge status={fromMonitorState(value as "up")} />
  return <span className={`badge tone-${statusLooks.unknown.tone}`}>{value.replaceAll("_", " ")}</span>
}

const levelWords = { critical: "Critical", degraded: "Degraded", info: "Info" } as const
const levelTones = { critical: "down", degraded: "warn", info: "maint" } as const
const levelIcons = { critical: "✕", degraded: "!", info: "i" } as const

/** An alert's level as a badge (icon + word). */
export function LevelBadge({ level }: { readonly level: "critical" | "degraded" | "info" }) {
  return (
    <span className={`badge tone-${levelTones[level]}`}>
      <span className="badge-icon" aria-hidden="true">{levelIcons[level]}</span>
      {levelWords[level]}
    </span>
  )
}
