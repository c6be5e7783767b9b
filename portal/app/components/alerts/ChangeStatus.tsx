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

/**
 * An alert's title for a heading: without the leading status emoji the
 * notifier puts in chat titles (the level badge says it, in words), so it
 * reads the same where no emoji font is installed.
 */
export const plainTitle = (title: string) => title.replace(/^\p{Extended_Pictographic}\uFE0F?\s*/u, "")

/** The message's text as the page shows it: without the signed acknowledgment link (the page has its own button). */
export const shownText = (text: string) => text.split("\n").filter((line) => !line.startsWith("Acknowledge: ")).join("\n")
