import type { ComponentStatus, MonitorState, SourceStatus } from "./Status.ts"

/**
 * How statusgrid shows a status to people (portal, e-mails, TV): the spec's
 * word, a colour token (portal/app/app.css `--status-<tone>`) and an icon, so
 * no status is told by colour alone (docs: PORTAL.md "Words and colours").
 */
export type Shown = "operational" | "degraded" | "partial_outage" | "major_outage" | "maintenance" | "unknown"

export interface StatusLook {
  readonly status: Shown
  /** The spec's word, lower case as in running text ("partial outage"). */
  readonly word: string
  /** The CSS colour token's suffix: `var(--status-${tone})`. */
  readonly tone: "ok" | "warn" | "partial" | "down" | "maint" | "unknown"
  /** A text icon that reads without colour (also in plain-text e-mails). */
  readonly icon: string
}

export const statusLooks: { readonly [S in Shown]: StatusLook } = {
  operational: { status: "operational", word: "operational", tone: "ok", icon: "✓" },
  degraded: { status: "degraded", word: "degraded", tone: "warn", icon: "!" },
  partial_outage: { status: "partial_outage", word: "partial outage", tone: "partial", icon: "◐" },
  major_outage: { status: "major_outage", word: "major outage", tone: "down", icon: "✕" },
  maintenance: { status: "maintenance", word: "maintenance", tone: "maint", icon: "⚙" },
  unknown: { status: "unknown", word: "unknown", tone: "unknown", icon: "?" }
}

/** A source's stored status as shown: `down` is a major outage. */
export const fromSourceStatus = (s: SourceStatus | null | undefined): Shown =>
  s === "down" ? "major_outage" : s ?? "unknown"

/** A component's stored status as shown: `critical` is a major outage. */
export const fromComponentStatus = (s: ComponentStatus | null | undefined): Shown =>
  s === "critical" ? "major_outage" : s ?? "unknown"

/** A monitor's state as shown: pending and paused tell nothing about the site. */
export const fromMonitorState = (s: MonitorState | null | undefined): Shown =>
  s === "up" ? "operational" : s === "degraded" ? "degraded" : s === "down" ? "major_outage" : "unknown"

/** The health banner of a stack or page (spec words), with the status its colour and icon come from. */
export type Banner = "operational" | "degraded" | "partial_outage" | "major_outage" | "maintenance"

export const bannerWords: { readonly [B in Banner]: string } = {
  operational: "All Systems Operational",
  degraded: "Degraded Performance",
  partial_outage: "Partial Outage",
  major_outage: "Major Outage",
  maintenance: "Under Maintenance"
}
