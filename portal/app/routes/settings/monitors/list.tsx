import { Monitors } from "#services/orgs/Monitors.ts"
import { Organizations } from "#services/orgs/Organizations.ts"
import { validateMonitorResult } from "#services/monitors/Validate.ts"
import { fromMonitorState } from "#services/domain/StatusWords.ts"
import { DateTime, Effect, Result } from "effect"
import { data, Form, Link, redirect } from "react-router"
import type { Route } from "./+types/list.ts"
import stylesheet from "../../../components/settings/monitors/monitors.css?url"
import { CsrfField, FormError } from "../../../components/Forms.tsx"
import { MonitorFields } from "../../../components/settings/monitors/MonitorForm.tsx"
import { StatusBadge } from "../../../components/StatusBadge.tsx"
import { RelativeTime } from "../../../components/RelativeTime.tsx"
import { runEffect } from "../../../lib/effect.server.ts"
import { fieldError, formFields } from "../../../lib/forms.server.ts"
import { requireMember, requireMemberAction } from "../../../lib/member.server.ts"
import { formFieldOf, issuesAsErrors, monitorFormNames, readMonitorForm } from "../../../lib/monitorForm.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: stylesheet }]

export const meta: Route.MetaFunction = ({ loaderData }) => [{ title: `Website monitors · ${loaderData?.organization ?? "Settings"} · statusgrid` }]

/** The organization's monitors (the API's list, first 200) with the plan's monitor limit. */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, principal, allowed } = await requireMember(context, request, params.org)
  const { page, org } = await runEffect(context, request, Effect.all({
    page: Monitors.use((m) => m.list(principal, { limit: 200 })),
    org: Organizations.use((o) => o.get(principal))
  }))
  return {
    organization: organization.name,
    slug: organization.slug,
    plan: org.plan,
    limit: org.limits.max_monitors,
    canWrite: allowed["content.write"],
    monitors: page.data.map((m) => ({
      id: m.id,
      name: m.name,
      url: m.url,
      state: m.state,
      interval: m.interval,
      last_response_ms: m.last_response_ms,
      last_http_status: m.last_http_status,
      last_checked_at: m.last_checked_at === null ? null : DateTime.formatIso(m.last_checked_at)
    }))
  }
}

/** Create: the API's rules (validateMonitor for every field's error at once, then Monitors.add: role, plan limit, audit). */
export async function action({ request, context, params }: Route.ActionArgs) {
  const form = await request.formData()
  const { organization, principal } = await requireMemberAction(context, request, form, params.org)
  const fields = formFields(form, monitorFormNames)
  const read = readMonitorForm(fields)
  const input = { ...read.settings, ...(read.auth ? { auth: read.auth } : {}) }
  const checked = validateMonitorResult(input)
  const errors = { ...(Result.isFailure(checked) ? issuesAsErrors(checked.failure.issues) : {}), ...read.errors }
  if (Object.keys(errors).length > 0) return data({ values: fields, errors }, { status: 400 })
  const saved = await runEffect(context, request, Monitors.use((m) => m.add(principal, input)).pipe(
    Effect.map((m) => ({ id: m.id, errors: undefined })),
    Effect.catchTags({
      InvalidParameter: (e) => Effect.succeed({ id: undefined, errors: fieldError({ field: formFieldOf(e.field ?? "form"), message: e.message.replace(/^invalid monitor: \S+ /, "") }) }),
      PlanLimitReached: (e) => Effect.succeed({ id: undefined, errors: { form: e.message } })
    })
  ))
  if (saved.id === undefined) return data({ values: fields, errors: saved.errors }, { status: 400 })
  throw redirect(`/settings/${organization.slug}/monitors/${saved.id}?created=1`)
}

const stateWord: Record<string, string> = { pending: "pending first check", paused: "paused" }

export default function MonitorsList({ loaderData, actionData }: Route.ComponentProps) {
  const { monitors, limit, plan, canWrite, slug } = loaderData
  const errors: Record<string, string | undefined> = actionData?.errors ?? {}
  const full = limit.limit !== null && limit.used >= limit.limit
  return (
    <>
      <section className="panel">
        <div className="page-head">
          <h1>Website monitors</h1>
          <p className="muted" id="monitor-usage">
            {limit.limit === null
              ? `${limit.used} ${limit.used === 1 ? "monitor" : "monitors"} · unlimited on ${plan}`
              : `${limit.used} of ${limit.limit} ${limit.limit === 1 ? "monitor" : "monitors"} on ${plan}`}
          </p>
        </div>
        {monitors.length === 0 ? <p className="muted empty">No monitors yet: add your own endpoints below and they are checked every minute.</p> : (
          <div className="table-wrap">
            <table className="data-table">
              <caption className="visually-hidden">Monitors, their state and last check</caption>
              <thead>
                <tr>
                  <th scope="col">Monitor</th>
                  <th scope="col">State</th>
                  <th scope="col">Response</th>
                  <th scope="col">HTTP</th>
                  <th scope="col">Last check</th>
                </tr>
              </thead>
              <tbody>
                {monitors.map((m) => (
                  <tr key={m.id}>
                    <td>
                      <Link to={`/settings/${slug}/monitors/${m.id}`}>{m.name}</Link>
                      <div className="muted small url">{m.url}</div>
                    </td>
                    <td>
                      <StatusBadge status={fromMonitorState(m.state)} />
                      {stateWord[m.state] ? <div className="muted small">{stateWord[m.state]}</div> : null}
                    </td>
                    <td>{m.last_response_ms === null ? "—" : `${m.last_response_ms} ms`}</td>
                    <td>{m.last_http_status === null ? "—" : m.last_http_status === 0 ? "no response" : m.last_http_status}</td>
                    <td>{m.last_checked_at === null ? "—" : <RelativeTime date={m.last_checked_at} />}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {canWrite
        ? (
          <section className="panel" aria-labelledby="add-monitor">
            <h2 id="add-monitor">Add a monitor</h2>
            {full
              ? <p className="form-error" role="status">The {plan} plan allows {limit.limit} website {limit.limit === 1 ? "monitor" : "monitors"} and {limit.limit === 1 ? "it is" : "all are"} in use: delete one or move to a larger plan to add another.</p>
              : (
                <Form method="post" noValidate>
                  <CsrfField />
                  <FormError message={errors["form"]} />
                  <MonitorFields values={actionData?.values ?? {}} errors={errors} />
                  <button type="submit" className="button">Add monitor</button>
                </Form>
              )}
          </section>
        )
        : <p className="muted">Your role can view monitors; a Member or Admin adds and edits them.</p>}
    </>
  )
}
