import type { CrowdSourceScore } from "#services/domain/api/Crowd.ts"
import { Form, useNavigation } from "react-router"
import { CsrfField } from "../Forms.tsx"
import { RelativeTime } from "../RelativeTime.tsx"

/** The crowd's score of a source as the page shows it (GET /api/v1/sources/{key}/crowd's figures). */
export interface ShownCrowd {
  readonly confidence: number
  readonly reporters: number
  readonly reason: string
  readonly window_minutes: number
  /** The open crowd signal (decision 0015), or null. */
  readonly signal: { readonly started_at: string; readonly peak_confidence: number } | null
}

/** What the page keeps of a score. */
export const shownCrowdOf = (c: CrowdSourceScore): ShownCrowd => ({
  confidence: c.confidence,
  reporters: c.reporters,
  reason: c.reason,
  window_minutes: c.window_minutes,
  signal: c.signal === null ? null : { started_at: c.signal.started_at, peak_confidence: c.signal.peak_confidence }
})

/** The source's record against its status page (GET /api/v1/sources/{key}/crowd/record): the sentence and false alarms. */
export interface ShownRecord {
  readonly sentence: string
  readonly false_alarms: number
  readonly days: number
}

/** What the source page's action answers to a report. */
export type ReportResult =
  | { readonly report: true; readonly ok: true; readonly counted: boolean; readonly crowd: ShownCrowd }
  | { readonly report: true; readonly ok: false; readonly error: string }

export const symptomWords = [
  ["down", "It is down"],
  ["slow", "It is slow"],
  ["errors", "It shows errors"],
  ["login", "I cannot sign in"],
  ["other", "Something else"]
] as const

/**
 * "Users report problems": the crowd's confidence that the source has trouble (decision 0014) with
 * the reason in words, kept apart from the official status, and the form to report a problem
 * (anonymous or signed in; a plain POST that works without JavaScript).
 */
export function CrowdReport({ crowd, record, components, result }: {
  readonly crowd: ShownCrowd | null
  readonly record: ShownRecord | null
  readonly components: ReadonlyArray<{ readonly id: string; readonly name: string }>
  readonly result: ReportResult | undefined
}) {
  const navigation = useNavigation()
  const sending = navigation.state === "submitting" && navigation.formData?.get("intent") === "report"
  const shown = result?.ok === true ? result.crowd : crowd
  return (
    <>
      {shown === null
        ? <p className="muted">Reports are unavailable right now.</p>
        : (
          <p className="crowd-score">
            <strong>{shown.confidence} %</strong>
            <span className="muted"> confidence that users see a problem · {shown.reason}</span>
          </p>
        )}
      {shown?.signal == null ? null : (
        <p className="crowd-signal" role="status">
          <span aria-hidden="true">⚠ </span>
          <strong>Users report problems</strong> since <RelativeTime date={shown.signal.started_at} /> (up to {shown.signal.peak_confidence} % confidence)
        </p>
      )}
      <p className="muted small">A user report, not the official status: it does not change the status above.</p>
      {record === null ? null : (
        <p className="crowd-record">
          {record.sentence}
          {record.false_alarms === 0 ? null : ` ${record.false_alarms} false ${record.false_alarms === 1 ? "alarm" : "alarms"} in ${record.days} days.`}
        </p>
      )}
      <Form method="post" className="crowd-form" preventScrollReset>
        <CsrfField />
        <input type="hidden" name="intent" value="report" />
        <label htmlFor="crowd-symptom">What is wrong?</label>
        <select id="crowd-symptom" name="symptom" defaultValue="down">
          {symptomWords.map(([value, words]) => <option key={value} value={value}>{words}</option>)}
        </select>
        {components.length === 0 ? null : (
          <>
            <label htmlFor="crowd-component">Which part (optional)</label>
            <select id="crowd-component" name="component_id" defaultValue="">
              <option value="">The whole service</option>
              {components.map((c) => <option key={c.id} value={c.id}>{c.name}</option>)}
            </select>
          </>
        )}
        <button type="submit" className="button" disabled={sending}>{sending ? "Reporting…" : "Report a problem"}</button>
      </Form>
      {result === undefined ? null : result.ok
        ? (
          <p className="form-success" role="status">
            {result.counted ? "Thank you: your report is counted." : "Your report of the last few minutes is already counted."}
          </p>
        )
        : <p className="form-error" role="alert">{result.error}</p>}
    </>
  )
}
