import { ReportScheduleCreate, reportsFeature } from "#services/domain/api/Reports.ts"
import { Stacks } from "#services/orgs/Stacks.ts"
import { ReportSchedules } from "#services/reports/ReportSchedules.ts"
import { Effect } from "effect"
import { data, Form, Link } from "react-router"
import type { Route } from "./+types/list.ts"
import { CsrfField, Field, FormError } from "../../../components/Forms.tsx"
import stylesheet from "../../../components/settings/stacks.css?url"
import { runEffect } from "../../../lib/effect.server.ts"
import { decodeForm, type FieldErrors, fieldError, formFields } from "../../../lib/forms.server.ts"
import { requireMember, requireMemberAction } from "../../../lib/member.server.ts"
import { isUuid } from "../stacks/stacks.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: stylesheet }]

export const meta: Route.MetaFunction = ({ loaderData }) => [{ title: `Reports · ${loaderData?.organization.name ?? "Settings"} · statusgrid` }]

/** The organization's report schedules and reports (the API's `GET /report-schedules` and `GET /reports`), its stacks to choose from. */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, principal, allowed } = await requireMember(context, request, params.org)
  const read = await runEffect(context, request, Effect.all({
    schedules: ReportSchedules.use((r) => r.listSchedules(principal, { limit: 100 })),
    reports: ReportSchedules.use((r) => r.listReports(principal, { limit: 200 })),
    stacks: Stacks.use((s) => s.list(principal, { limit: 100 }))
  }, { concurrency: 3 }))
  const names = new Map(read.stacks.data.map((s) => [s.id, s.name]))
  return {
    organization: { slug: organization.slug, name: organization.name },
    canManage: allowed["notifications.manage"],
    stacks: read.stacks.data.map((s) => ({ id: s.id, name: s.name })),
    schedules: read.schedules.data.map((s) => ({
      ...s,
      stacks: s.stack_ids.length === 0 ? "every stack" : s.stack_ids.map((id) => names.get(id) ?? "a removed stack").join(", ")
    })),
    // Latest period first.
    reports: read.reports.data.toReversed()
  }
}

interface ActionResult {
  readonly intent: "create" | "toggle" | "delete" | "unknown"
  readonly errors: FieldErrors
  readonly values?: { readonly text: Record<string, string>; readonly stack_ids: ReadonlyArray<string> }
  readonly done?: string
}

/** Recipients as typed: one per line, or separated by commas or spaces. */
const recipientsOf = (text: string) => text.split(/[\s,;]+/).map((r) => r.trim()).filter((r) => r !== "")

/**
 * Creates, pauses or resumes, and deletes report schedules through the service of the API's
 * `POST /report-schedules`, `PATCH` and `DELETE /report-schedules/{id}` (permission, plan, audit),
 * input decoded by `ReportScheduleCreate`.
 */
export async function action({ request, context, params }: Route.ActionArgs) {
  const form = await request.formData()
  const { principal } = await requireMemberAction(context, request, form, params.org)
  const intent = form.get("intent")
  if (intent === "toggle" || intent === "delete") {
    const { id, enabled } = formFields(form, ["id", "enabled"])
    if (!isUuid(id!)) return data<ActionResult>({ intent, errors: { id: "must be a UUID" } }, { status: 400 })
    if (intent === "toggle") {
      if (enabled !== "true" && enabled !== "false") return data<ActionResult>({ intent, errors: { enabled: "must be true or false" } }, { status: 400 })
      await runEffect(context, request, ReportSchedules.use((r) => r.updateSchedule(principal, id!, { enabled: enabled === "true" })))
      return { intent, errors: {}, done: enabled === "true" ? "Schedule resumed." : "Schedule paused: no report is sent until it is resumed." } satisfies ActionResult
    }
    await runEffect(context, request, ReportSchedules.use((r) => r.deleteSchedule(principal, id!)))
    return { intent, errors: {}, done: "Schedule deleted with its reports." } satisfies ActionResult
  }
  if (intent !== "create") return data<ActionResult>({ intent: "unknown", errors: { form: "unknown action" } }, { status: 400 })
  const text = formFields(form, ["name", "frequency", "time_zone", "recipients", "sla_target"])
  const stackIds = form.getAll("stack_id").filter((v): v is string => typeof v === "string")
  const values = { text, stack_ids: stackIds }
  const fail = (errors: FieldErrors, status = 400) => data<ActionResult>({ intent, errors, values }, { status })
  const target = text["sla_target"]!.trim()
  // The API's Schema on the same JSON shape: recipients as a list, the target as a number (empty: the default).
  const input = {
    name: text["name"],
    frequency: text["frequency"],
    time_zone: text["time_zone"]!.trim() === "" ? "UTC" : text["time_zone"]!.trim(),
    recipients: recipientsOf(text["recipients"]!),
    stack_ids: stackIds,
    ...(target === "" ? {} : { sla_target: /^\d+(\.\d+)?$/.test(target) ? Number(target) : target })
  }
  const decoded = decodeForm(ReportScheduleCreate, input as unknown as Record<string, string>)
  if (!decoded.ok) return fail(decoded.errors)
  const outcome = await runEffect(
    context,
    request,
    ReportSchedules.use((r) => r.createSchedule(principal, decoded.value)).pipe(
      Effect.map(() => ({ ok: true as const })),
      Effect.catchTags({
        PlanLimitReached: (e) => Effect.succeed({ ok: false as const, status: 402, errors: { form: e.message } as FieldErrors }),
        NotFound: (e) => Effect.succeed({ ok: false as const, status: 404, errors: fieldError(e, "stack_ids") })
      })
    )
  )
  if (!outcome.ok) return fail(outcome.errors, outcome.status)
  return { intent, errors: {}, done: `Scheduled “${decoded.value.name}”.` } satisfies ActionResult
}

const statusWords = { pending: "due", sending: "sending", sent: "sent", failed: "failed" } as const
const day = (iso: string) => iso.slice(0, 10)

export default function ReportsSettings({ loaderData, actionData }: Route.ComponentProps) {
  const { organization, schedules, reports, stacks, canManage } = loaderData
  const result = actionData as ActionResult | undefined
  const errors = result?.intent === "create" ? result.errors : {}
  const values = result?.intent === "create" && result.done === undefined ? result.values : undefined
  const chosen = new Set(values?.stack_ids ?? [])
  const base = `/settings/${organization.slug}/reports`
  return (
    <>
      <section className="panel" aria-labelledby="reports-title">
        <h1 id="reports-title">Scheduled reports</h1>
        <p className="muted">
          Weekly or monthly uptime reports by e-mail: each stack's uptime against your target, its outages and incidents, the slowest
          monitors, with the figures as CSV and PDF. Each period is sent once when it ends (Pro and Enterprise plans).
        </p>
        {result?.done && result.intent !== "create" ? <p className="form-success" role="status">{result.done}</p> : null}
        {result && result.intent !== "create" ? <FormError message={Object.values(result.errors)[0]} /> : null}
        {schedules.length === 0
          ? <p>No report scheduled yet.</p>
          : (
            <ul className="stack-rows">
              {schedules.map((s) => (
                <li key={s.id} className="stack-row">
                  <div>
                    <h2>{s.name}{s.enabled ? null : <span className="badge tone-unknown"> paused</span>}</h2>
                    <p className="muted">
                      {s.frequency === "weekly" ? "Every Monday" : "On the 1st of each month"} ({s.time_zone}) · {s.stacks} · target {s.sla_target} %
                    </p>
                    <p className="muted small">To {s.recipients.join(", ")}</p>
                  </div>
                  {canManage
                    ? (
                      <div className="row-actions">
                        <Form method="post">
                          <CsrfField />
                          <input type="hidden" name="id" value={s.id} />
                          <input type="hidden" name="enabled" value={s.enabled ? "false" : "true"} />
                          <button type="submit" name="intent" value="toggle" className="button small secondary" aria-label={`${s.enabled ? "Pause" : "Resume"} ${s.name}`}>
                            {s.enabled ? "Pause" : "Resume"}
                          </button>
                        </Form>
                        <Form method="post">
                          <CsrfField />
                          <input type="hidden" name="id" value={s.id} />
                          <button type="submit" name="intent" value="delete" className="button small danger" aria-label={`Delete ${s.name}`}>Delete</button>
                        </Form>
                      </div>
                    )
                    : null}
                </li>
              ))}
            </ul>
          )}
      </section>
      <section className="panel" aria-labelledby="sent-title">
        <h2 id="sent-title">Reports sent</h2>
        {reports.length === 0
          ? <p className="muted">None yet: a schedule's first report comes when its first period ends.</p>
          : (
            <div className="table-wrap">
              <table className="data-table" data-testid="reports">
                <caption className="visually-hidden">Reports, latest period first</caption>
                <thead><tr><th scope="col">Period</th><th scope="col">Schedule</th><th scope="col">Status</th><th scope="col">Files</th></tr></thead>
                <tbody>
                  {reports.map((r) => (
                    <tr key={r.id}>
                      <th scope="row"><Link to={`${base}/${r.id}`}>{day(r.from)} to {day(r.to)}</Link></th>
                      <td>{r.schedule_name}</td>
                      <td>{statusWords[r.status]}{r.last_error ? <span className="muted small"> ({r.last_error})</span> : null}</td>
                      <td>
                        {r.generated
                          ? <><a href={`${base}/${r.id}/csv`} download>CSV</a> · <a href={`${base}/${r.id}/pdf`} download>PDF</a></>
                          : <span className="muted">not generated yet</span>}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
      </section>
      {canManage
        ? (
          <section className="panel" aria-labelledby="report-create-title">
            <h2 id="report-create-title">New schedule</h2>
            {result?.intent === "create" && result.done ? <p className="form-success" role="status">{result.done}</p> : null}
            <Form method="post" className="stack-form" key={result?.done ?? "form"}>
              <CsrfField />
              <input type="hidden" name="intent" value="create" />
              <FormError message={errors["form"]} />
              <Field name="name" label="Name" defaultValue={values?.text["name"]} error={errors["name"]} hint="e.g. “Weekly uptime for the board”." />
              <div className="field">
                <label htmlFor="field-frequency">How often</label>
                <select id="field-frequency" name="frequency" defaultValue={values?.text["frequency"] ?? "weekly"} aria-invalid={errors["frequency"] ? true : undefined}>
                  <option value="weekly">Weekly (Monday to Monday)</option>
                  <option value="monthly">Monthly (1st to 1st)</option>
                </select>
                {errors["frequency"] ? <p className="field-error">How often {errors["frequency"]}</p> : null}
              </div>
              <Field name="time_zone" label="Time zone" required={false} defaultValue={values?.text["time_zone"] ?? "UTC"} error={errors["time_zone"]} hint="An IANA name, e.g. Europe/Paris: periods start at its midnight." />
              <div className="field">
                <label htmlFor="field-recipients">Recipients</label>
                <textarea id="field-recipients" name="recipients" rows={3} defaultValue={values?.text["recipients"]} aria-invalid={errors["recipients"] ? true : undefined}
                  aria-describedby={errors["recipients"] ? "field-recipients-error" : "field-recipients-hint"} />
                <p className="hint" id="field-recipients-hint">E-mail addresses, one per line or separated by commas.</p>
                {errors["recipients"] ? <p className="field-error" id="field-recipients-error">Recipients {errors["recipients"]}</p> : null}
              </div>
              <fieldset className="stack-choice" aria-describedby={errors["stack_ids"] ? "stack_ids-error" : undefined}>
                <legend>Stacks (none chosen: every stack)</legend>
                {errors["stack_ids"] ? <p className="field-error" id="stack_ids-error">Stacks {errors["stack_ids"]}</p> : null}
                {stacks.map((s) => (
                  <div className="choice" key={s.id}>
                    <input type="checkbox" id={`rp-s-${s.id}`} name="stack_id" value={s.id} defaultChecked={chosen.has(s.id)} />
                    <label htmlFor={`rp-s-${s.id}`}>{s.name}</label>
                  </div>
                ))}
              </fieldset>
              <Field name="sla_target" label="Uptime target (%)" required={false} defaultValue={values?.text["sla_target"] ?? "99.9"} error={errors["sla_target"]} hint="Each stack is reported as meeting or missing it." />
              <button type="submit" className="button">Schedule the report</button>
            </Form>
            <p className="muted small">Plans: scheduled reports need the Pro or Enterprise plan ({reportsFeature}).</p>
          </section>
        )
        : <p className="muted read-only">Your role can read the reports but not schedule them.</p>}
    </>
  )
}
