import { Form, useNavigation } from "react-router"
import { type ReportResult, symptomWords } from "../catalog/CrowdReport.tsx"
import { CsrfField } from "../Forms.tsx"

/**
 * "Report a problem" on a page showing several services (a stack page, a shared stack): which
 * service, what is wrong; a plain POST (`intent=report`) that works without JavaScript, answered
 * by the page's action with the same service as the API (portal/app/lib/crowdReport.server.ts).
 */
export function ReportProblem({ sources, result }: {
  readonly sources: ReadonlyArray<{ readonly key: string; readonly name: string }>
  readonly result: ReportResult | undefined
}) {
  const navigation = useNavigation()
  const sending = navigation.state === "submitting" && navigation.formData?.get("intent") === "report"
  if (sources.length === 0) return null
  return (
    <section className="panel report-problem" aria-labelledby="report-title">
      <h2 id="report-title">Something wrong?</h2>
      <p className="muted small">Tell us if a service does not work for you: reports from many people become a warning before the official status may show it.</p>
      <Form method="post" className="crowd-form" preventScrollReset>
        <CsrfField />
        <input type="hidden" name="intent" value="report" />
        {sources.length === 1 ? <input type="hidden" name="source" value={sources[0]!.key} /> : (
          <>
            <label htmlFor="report-source">Which service</label>
            <select id="report-source" name="source" defaultValue={sources[0]!.key}>
              {sources.map((s) => <option key={s.key} value={s.key}>{s.name}</option>)}
            </select>
          </>
        )}
        <label htmlFor="report-symptom">What is wrong{sources.length === 1 ? ` with ${sources[0]!.name}` : ""}?</label>
        <select id="report-symptom" name="symptom" defaultValue="down">
          {symptomWords.map(([value, words]) => <option key={value} value={value}>{words}</option>)}
        </select>
        <button type="submit" className="button" disabled={sending}>{sending ? "Reporting…" : "Report a problem"}</button>
      </Form>
      {result === undefined ? null : result.ok
        ? (
          <p className="form-success" role="status">
            {result.counted ? "Thank you: your report is counted." : "Your report of the last few minutes is already counted."}{" "}
            {result.crowd.reason}
          </p>
        )
        : <p className="form-error" role="alert">{result.error}</p>}
    </section>
  )
}
