import { createHash } from "node:crypto"
import type { MonitorEvent, MonitorEventType } from "../domain/Event.ts"
import type { MonitorState } from "../domain/Monitor.ts"
import type { CheckOutcome } from "./HttpCheck.ts"

/** What a monitor remembers between checks (columns of `monitors`). */
export interface MonitorCheckState {
  readonly state: MonitorState
  readonly consecutive_failures: number
  /** Smallest SSL-expiry threshold already announced for the current certificate (column ssl_notified_days). */
  readonly last_ssl_threshold_notified?: number | null
  /** When `state` last changed, ISO 8601: the start of a downtime. */
  readonly last_changed_at?: string | null
  readonly last_checked_at?: string | null
  readonly last_error?: string | null
}

export interface NextState {
  readonly state: MonitorState
  readonly consecutive_failures: number
  readonly last_ssl_threshold_notified: number | null
  readonly last_changed_at: string | null
  readonly last_checked_at: string | null
  /** The last check's error; null after a success. */
  readonly last_error: string | null
}

export interface StepSettings {
  readonly monitor: { readonly id: string; readonly name: string; readonly url: string }
  readonly alert_threshold: number
  readonly ssl_expiry_days: ReadonlyArray<number>
}

/** The parts of a check outcome the state machine reads. */
export type StepOutcome = Pick<CheckOutcome, "status" | "http_status" | "error" | "phases" | "tls">

export interface StepResult {
  readonly next: NextState
  readonly events: ReadonlyArray<MonitorEvent>
}

/**
 * Same monitor, same transition out of a state that began at the same time: same id, whichever check
 * observed it (consumers de-duplicate on it). A check replayed, or the same change observed again
 * after a restart (the state saved before it not yet replaced), gives the same id; the same
 * transition later, out of a state entered at another time, another.
 */
const eventId = (parts: ReadonlyArray<string | number>): string =>
  createHash("sha256").update(parts.join("\u0000")).digest("base64url").slice(0, 22)

const normalized = (s: MonitorCheckState): NextState => ({
  state: s.state,
  consecutive_failures: s.consecutive_failures,
  last_ssl_threshold_notified: s.last_ssl_threshold_notified ?? null,
  last_changed_at: s.last_changed_at ?? null,
  last_checked_at: s.last_checked_at ?? null,
  last_error: s.last_error ?? null
})

/**
 * The SSL threshold to announce for a certificate with `daysLeft` days, and
 * what to remember: the tightest threshold reached (a certificate first seen
 * with 5 days left announces 7 once, not 30, 14 and 7); nothing again until
 * a smaller threshold is reached; forgotten once the certificate has more
 * days left than the largest threshold (renewed).
 */
export const sslThresholdStep = (
  lastNotified: number | null,
  daysLeft: number,
  thresholds: ReadonlyArray<number>
): { readonly notified: number | null; readonly announce: number | null } => {
  let tightest: number | null = null
  let largest = -Infinity
  for (const t of thresholds) {
    if (t > largest) largest = t
    if (t >= daysLeft && (tightest === null || t < tightest)) tightest = t
  }
  if (tightest === null) return { notified: daysLeft > largest ? null : lastNotified, announce: null }
  if (lastNotified === null || tightest < lastNotified) return { notified: tightest, announce: tightest }
  return { notified: lastNotified, announce: null }
}

/**
 * Applies one check outcome to a monitor's state (services/monitors/README.md
 * has the table). Pure: `now` is the check's time, used for the state's
 * timestamps; the events' ids depend on what changed, not on `now`.
 */
export const step = (
  previous: MonitorCheckState,
  outcome: StepOutcome,
  settings: StepSettings,
  now: Date
): StepResult => {
  // Paused monitors are not checked; an outcome arriving anyway (a check in flight while pausing) changes nothing.
  if (previous.state === "paused") return { next: normalized(previous), events: [] }
  const at = now.toISOString()
  const events: Array<MonitorEvent> = []
  const success = outcome.status !== "down"
  let state: MonitorState = previous.state
  let failures: number

  const event = (type: MonitorEventType, to: MonitorState, extra: Partial<MonitorEvent> = {}, key: string | number = "") => {
    events.push({
      id: eventId([settings.monitor.id, type, previous.state, to, previous.last_changed_at ?? "", key]),
      type,
      timestamp: at,
      monitor: { id: settings.monitor.id, name: settings.monitor.name, url: settings.monitor.url },
      previous_state: previous.state,
      current_state: to,
      error: outcome.error,
      http_status: outcome.http_status,
      response_time_ms: outcome.phases.total_ms,
      ...extra
    })
  }

  if (success) {
    failures = 0
    const to = outcome.status === "degraded" ? "degraded" : "up"
    if (previous.state === "down" || (previous.state === "degraded" && to === "up")) {
      const since = previous.last_changed_at ? Date.parse(previous.last_changed_at) : NaN
      event("monitor.recovered", to, { duration_ms: Number.isNaN(since) ? null : Math.max(0, now.getTime() - since) })
    } else if (to === "degraded" && previous.state !== "degraded") {
      event("monitor.degraded", to)
    }
    state = to
  } else {
    failures = previous.consecutive_failures + 1
    if (previous.state !== "down" && failures >= settings.alert_threshold) {
      event("monitor.down", "down")
      state = "down"
    }
  }

  let notified = previous.last_ssl_threshold_notified ?? null
  if (outcome.tls) {
    const ssl = sslThresholdStep(notified, outcome.tls.days_left, settings.ssl_expiry_days)
    notified = ssl.notified
    if (ssl.announce !== null) {
      const tls = outcome.tls
      // The SSL event says where the monitor now is; its previous_state is the same state.
      events.push({
        // Announced once per certificate and threshold.
        id: eventId([settings.monitor.id, "monitor.ssl_expiring", ssl.announce, tls.valid_to]),
        type: "monitor.ssl_expiring",
        timestamp: at,
        monitor: { id: settings.monitor.id, name: settings.monitor.name, url: settings.monitor.url },
        previous_state: state,
        current_state: state,
        error: outcome.error,
        http_status: outcome.http_status,
        response_time_ms: outcome.phases.total_ms,
        ssl: {
          threshold_days: ssl.announce,
          days_left: tls.days_left,
          valid_to: tls.valid_to,
          issuer: tls.issuer,
          subject: tls.subject
        }
      })
    }
  }

  return {
    next: {
      state,
      consecutive_failures: failures,
      last_ssl_threshold_notified: notified,
      last_changed_at: state !== previous.state ? at : previous.last_changed_at ?? null,
      last_checked_at: at,
      last_error: success ? null : outcome.error
    },
    events
  }
}

/** Pausing stops checks and alerts; counters start over on resume. */
export const pause = (previous: MonitorCheckState, now: Date): NextState => ({
  ...normalized(previous),
  state: "paused",
  consecutive_failures: 0,
  last_changed_at: previous.state === "paused" ? previous.last_changed_at ?? null : now.toISOString()
})

/** A resumed monitor is pending until its first check, with no failures counted. */
export const resume = (previous: MonitorCheckState, now: Date): NextState =>
  previous.state !== "paused"
    ? normalized(previous)
    : { ...normalized(previous), state: "pending", consecutive_failures: 0, last_changed_at: now.toISOString() }
