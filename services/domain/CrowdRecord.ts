/**
 * A provider's record against its own status page (issue #17, decision 0015):
 * how often the crowd's signal came before the official status, by how much,
 * and how often it was a false alarm, over a rolling `recordDays`.
 *
 * - An **official onset** is the status page leaving operational or opening
 *   an incident, as statusgrid's poller saw it; one within `followMs` after
 *   another of the same source is the same trouble and not counted again.
 * - An onset is **led** by the earliest signal that started at most `followMs`
 *   before it while the official status was operational, and led no other
 *   onset; its **lead time** is onset − signal start.
 * - A signal is a **false alarm** when it started while the official status
 *   was operational, led no onset, and `followMs` has passed since it started.
 *   A signal that started during an official outage confirms it: neither a
 *   lead nor a false alarm.
 *
 * Plain TypeScript: the API computes the figures with it from rows, and the
 * tests and the benchmark check them by hand.
 */

/** How long after a signal's start an official onset counts as led by it. */
export const followMs = 60 * 60_000
/** The rolling period of a provider's figures. */
export const recordDays = 90

export interface SignalFact {
  readonly id: string
  readonly startedAt: number
  /** The official status when it started: anything but operational makes it a confirmation. */
  readonly officialStatus: string
}

export interface OnsetFact {
  readonly at: number
  /** The signal that led it, or null. */
  readonly signalId: string | null
}

export interface CrowdRecord {
  readonly days: number
  readonly signals: number
  readonly onsets: number
  /** Onsets a signal led. */
  readonly led: number
  /** led ÷ onsets, 0-100 (null without onsets). */
  readonly led_percent: number | null
  /** The median lead time over led onsets, in minutes (null when none was led). */
  readonly median_lead_minutes: number | null
  readonly false_alarms: number
  /** False alarms per 30 days over the period. */
  readonly false_alarms_per_30_days: number
  /** Signals still inside their follow window: not yet a lead or a false alarm. */
  readonly pending: number
}

/** The median of `values` (sorted here), or null when empty. */
export const median = (values: ReadonlyArray<number>): number | null => {
  if (values.length === 0) return null
  const sorted = values.toSorted((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** The record of one source from its signals and onsets of the period, at `now`. */
export const crowdRecord = (signals: ReadonlyArray<SignalFact>, onsets: ReadonlyArray<OnsetFact>, now: number): CrowdRecord => {
  const startOf = new Map(signals.map((s) => [s.id, s.startedAt]))
  const leads = onsets.flatMap((o) => {
    const started = o.signalId === null ? undefined : startOf.get(o.signalId)
    return started === undefined ? [] : [o.at - started]
  })
  const leading = new Set(onsets.flatMap((o) => (o.signalId === null ? [] : [o.signalId])))
  let falseAlarms = 0
  let pending = 0
  for (const s of signals) {
    if (s.officialStatus !== "operational" || leading.has(s.id)) continue
    if (now - s.startedAt >= followMs) falseAlarms++
    else pending++
  }
  const lead = median(leads)
  return {
    days: recordDays,
    signals: signals.length,
    onsets: onsets.length,
    led: leads.length,
    led_percent: onsets.length === 0 ? null : Math.round((leads.length / onsets.length) * 100),
    median_lead_minutes: lead === null ? null : Math.round((lead / 60_000) * 10) / 10,
    false_alarms: falseAlarms,
    false_alarms_per_30_days: Math.round((falseAlarms / recordDays) * 30 * 100) / 100,
    pending
  }
}

/** The source page's sentence: "statusgrid users usually see problems with X 7 minutes before its status page". */
export const recordSentence = (name: string, record: CrowdRecord): string => {
  if (record.onsets === 0 && record.signals === 0) return `No problems with ${name} in the last ${record.days} days, from its status page or its users.`
  if (record.median_lead_minutes === null || record.median_lead_minutes <= 0) {
    return `In the last ${record.days} days statusgrid users have not reported problems with ${name} before its status page showed them.`
  }
  const minutes = Math.round(record.median_lead_minutes)
  const lead = minutes < 1 ? "less than a minute" : `${minutes} ${minutes === 1 ? "minute" : "minutes"}`
  return `statusgrid users usually see problems with ${name} ${lead} before its status page ` +
    `(${record.led} of ${record.onsets} in ${record.days} days).`
}
