import { MonitorPatch } from "#services/domain/api/Monitors.ts"
import { fromMonitorState } from "#services/domain/StatusWords.ts"
import { StatusHistory } from "#services/history/StatusHistory.ts"
import { validateMonitorResult } from "#services/monitors/Validate.ts"
import { mergePatch, Monitors } from "#services/orgs/Monitors.ts"
import { DateTime, Effect, Result, Schema } from "effect"
import { data, Form, Link, redirect } from "react-router"
import type { Route } from "./+types/monitor.ts"
import stylesheet from "../../../components/settings/monitors/monitors.css?url"
import { CheckLog, CheckResultView, ResponseChart } from "../../../components/settings/monitors/CheckViews.tsx"
import { MonitorFields } from "../../../components/settings/monitors/MonitorForm.tsx"
import { CsrfField, FormError } from "../../../components/Forms.tsx"
import { RelativeTime } from "../../../components/RelativeTime.tsx"
import { StatusBadge } from "../../../components/StatusBadge.tsx"
import { runEffect } from "../../../lib/effect.server.ts"
import { formFields } from "../../../lib/forms.server.ts"
import { requireMember, requireMemberAction } from "../../../lib/member.server.ts"
import { formFieldOf, formValuesOf, issuesAsErrors, monitorFormNames, readMonitorForm, settingsOfRecord } from "../../../lib/monitorForm.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: stylesheet }]

export const meta: Route.MetaFunction = ({ loaderData }) => [{ title: `${loaderData?.monitor.name ?? "Monitor"} · Website monitors · statusgrid` }]

const isUuid = Schema.is(Schema.String.check(Schema.isUUID()))
const notFound = (id: string) => data({ message: `no monitor ${id}` }, { status: 404 })

/** Checks per page of the log. */
const checkPage = 50

/** One monitor: the API's record, the recommendations it does not follow, its latest checks from ClickHouse. */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, principal, allowed } = await requireMember(context, request, params.org)
  if (!isUuid(params.id)) throw notFound(params.id)
  const { monitor, checks } = await runEffect(context, request, Effect.gen(function*() {
    const monitor = yield* Monitors.use((m) => m.get(principal, params.id))
    // Without ClickHouse the page still shows the monitor, saying the log is unavailable.
    // `?before=` (a page's last check): the older checks, as the API's `next_before` pages them.
    const before = Date.parse(new URL(request.url).searchParams.get("before") ?? "")
    const checks = yield* StatusHistory.use((h) => h.monitorChecks(monitor.id, checkPage, Number.isFinite(before) ? before : undefined)).pipe(
      Effect.catchTag("HistoryUnavailable", () => Effect.succeed(null))
    )
    return { monitor, checks }
  }))
  const validated = validateMonitorResult(settingsOfRecord(monitor))
  const warnings = Result.isSuccess(validated)
    ? Object.fromEntries(validated.success.warnings.map((w) => [formFieldOf(w.field), w.message]))
    : {}
  return {
    slug: organization.slug,
    created: new URL(request.url).searchParams.get("created") === "1",
    allowed: { write: allowed["content.write"], remove: allowed["content.delete"] },
    monitor: {
      id: monitor.id,
      name: monitor.name,
      url: monitor.url,
      state: monitor.state,
      interval: monitor.interval,
      auth: monitor.auth.type,
      consecutive_failures: monitor.consecutive_failures,
      alert_threshold: monitor.alert_threshold,
      last_response_ms: monitor.last_response_ms,
      last_http_status: monitor.last_http_status,
      last_error: monitor.last_error,
      last_checked_at: iso(monitor.last_checked_at),
      last_changed_at: iso(monitor.last_changed_at),
      tls_valid_to: iso(monitor.tls_valid_to),
      tls_issuer: monitor.tls_issuer
    },
    values: formValuesOf(monitor),
    warnings,
    checks,
    older: checks !== null && checks.length === checkPage ? checks.at(-1)!.checked_at : null,
    paged: new URL(request.url).searchParams.has("before")
  }
}

/** The unit shown after a setting's value in the read-only view. */
const units: Record<string, string> = { interval: " s", timeout: " ms", alert_threshold: " failures" }

const iso = (d: DateTime.Utc | null) => d === null ? null : DateTime.formatIso(d)

const decodePatch = Schema.decodeUnknownResult(MonitorPatch)

/** Save, pause, resume, check now, delete: each the API's own service call with the member's principal. */
export async function action({ request, context, params }: Route.ActionArgs) {
  const form = await request.formData()
  const { organization, principal } = await requireMemberAction(context, request, form, params.org)
  if (!isUuid(params.id)) throw notFound(params.id)
  const intent = String(form.get("intent") ?? "")
  const id = params.id
  if (intent === "pause" || intent === "resume") {
    await runEffect(context, request, Monitors.use((m) => intent === "pause" ? m.pause(principal, id) : m.resume(principal, id)))
    return { intent, done: intent === "pause" ? "Paused: no checks until you resume." : "Resumed: checking again from pending." }
  }
  if (intent === "check") {
    const check = await runEffect(context, request, Monitors.use((m) => m.checkNow(principal, id)))
    return { intent, check }
  }
  if (intent === "delete") {
    await runEffect(context, request, Monitors.use((m) => m.remove(principal, id)))
    throw redirect(`/settings/${organization.slug}/monitors`)
  }
  if (intent !== "save") throw data({ message: `unknown action ${intent}` }, { status: 400 })

  const stored = await runEffect(context, request, Monitors.use((m) => m.get(principal, id)))
  const fields = formFields(form, monitorFormNames)
  const read = readMonitorForm(fields, stored.auth.type)
  const patch: Record<string, unknown> = { ...read.settings, keyword: read.settings["keyword"] ?? null }
  if (read.auth !== undefined) patch["auth"] = read.auth
  // The merged settings through the create rules, every field's problem at once (the service checks them again).
  const storedAuth = stored.auth.type === "bearer"
    ? { type: "bearer", token: "stored" }
    : stored.auth.type === "basic"
    ? { type: "basic", username: "", password: "" }
    : undefined
  const decoded = decodePatch(patch)
  const merged = Result.isSuccess(decoded)
    ? mergePatch({ ...settingsOfRecord(stored), ...(storedAuth ? { auth: storedAuth } : {}) }, decoded.success)
    : { ...settingsOfRecord(stored), ...patch }
  const checked = validateMonitorResult(merged)
  const errors = { ...(Result.isFailure(checked) ? issuesAsErrors(checked.failure.issues) : {}), ...read.errors }
  if (Object.keys(errors).length > 0 || Result.isFailure(decoded)) {
    return data({ intent, values: fields, errors: Object.keys(errors).length > 0 ? errors : { form: "the settings could not be read" } }, { status: 400 })
  }
  const saved = await runEffect(context, request, Monitors.use((m) => m.update(principal, id, decoded.success)).pipe(
    Effect.map((m) => ({ ok: true as const, warnings: m.warnings })),
    Effect.catchTags({
      InvalidParameter: (e) => Effect.succeed({ ok: false as const, errors: { [formFieldOf(e.field ?? "form")]: e.message.replace(/^invalid monitor: \S+ /, "") } }),
      Conflict: (e) => Effect.succeed({ ok: false as const, errors: { form: e.message } })
    })
  ))
  if (!saved.ok) return data({ intent, values: fields, errors: saved.errors }, { status: 400 })
  // `saved` keys the form: it is drawn anew from the stored settings, the secret fields blank again.
  return { intent, done: "Saved.", saved: crypto.randomUUID() }
}

export default function MonitorPage({ loaderData, actionData }: Route.ComponentProps) {
  const { monitor, allowed, slug, checks, warnings, created } = loaderData
  const failed = actionData !== undefined && "errors" in actionData ? actionData : undefined
  const errors: Record<string, string | undefined> = failed?.errors ?? {}
  const done = actionData !== undefined && "done" in actionData ? actionData.done : created ? "Monitor added: its first check runs within seconds." : undefined
  const check = actionData !== undefined && "check" in actionData ? actionData.check : undefined
  const paused = monitor.state === "paused"
  return (
    <>
      <p className="crumbs"><Link to={`/settings/${slug}/monitors`}>Website monitors</Link> /</p>
      <section className="panel">
        <div className="page-head">
          <div>
            <h1>{monitor.name}</h1>
            <p className="muted url">{monitor.url}</p>
            <p><Link to={`/settings/${slug}/monitors/${monitor.id}/analytics`}>Uptime and outages</Link></p>
          </div>
          <div className="actions">
            <StatusBadge status={fromMonitorState(monitor.state)} />
            <span className="muted" id="monitor-state">{monitor.state}</span>
          </div>
        </div>
        {done ? <p className="notice" role="status">{done}</p> : null}
        <dl className="facts">
          <div><dt>Response time</dt><dd id="last-response">{monitor.last_response_ms === null ? "no check yet" : `${monitor.last_response_ms} ms`}</dd></div>
          <div><dt>HTTP status</dt><dd id="last-http">{monitor.last_http_status === null ? "—" : monitor.last_http_status === 0 ? "no response" : monitor.last_http_status}</dd></div>
          <div><dt>Last check</dt><dd>{monitor.last_checked_at === null ? "—" : <RelativeTime date={monitor.last_checked_at} />}</dd></div>
          <div><dt>State since</dt><dd>{monitor.last_changed_at === null ? "—" : <RelativeTime date={monitor.last_changed_at} />}</dd></div>
          <div><dt>Failures in a row</dt><dd>{monitor.consecutive_failures} of {monitor.alert_threshold}</dd></div>
          <div><dt>Certificate</dt><dd>{monitor.tls_valid_to === null ? "—" : `until ${monitor.tls_valid_to.slice(0, 10)}${monitor.tls_issuer ? ` (${monitor.tls_issuer})` : ""}`}</dd></div>
        </dl>
        {monitor.last_error ? <p className="form-error">Last error: {monitor.last_error}</p> : null}
        {allowed.write
          ? (
            <div className="actions">
              <Form method="post">
                <CsrfField />
                <input type="hidden" name="intent" value="check" />
                <button type="submit" className="button">Check now</button>
              </Form>
              <Form method="post">
                <CsrfField />
                <input type="hidden" name="intent" value={paused ? "resume" : "pause"} />
                <button type="submit" className="button secondary">{paused ? "Resume" : "Pause"}</button>
              </Form>
            </div>
          )
          : null}
        {check ? <CheckResultView result={check} /> : null}
      </section>

      <section className="panel" aria-labelledby="history-title">
        <h2 id="history-title">Response time</h2>
        {checks === null ? <p className="muted">The check log is unavailable right now (ClickHouse did not answer).</p> : (
          <>
            <ResponseChart checks={checks} />
            <h3>Check log</h3>
            <CheckLog checks={checks} />
            <p className="pager">
              {loaderData.paged ? <Link to="?" preventScrollReset>Latest checks</Link> : null}
              {loaderData.paged && loaderData.older !== null ? " · " : null}
              {loaderData.older === null ? null : <Link to={`?before=${encodeURIComponent(loaderData.older)}`} preventScrollReset>Older checks</Link>}
            </p>
          </>
        )}
      </section>

      <section className="panel" aria-labelledby="settings-title">
        <h2 id="settings-title">Settings</h2>
        {Object.keys(warnings).length > 0
          ? (
            <ul className="warnings">
              {Object.entries(warnings).map(([field, message]) => <li key={field}>Recommendation for {field.replace(/_/g, " ")}: {message}</li>)}
            </ul>
          )
          : null}
        {allowed.write
          ? (
            <Form method="post" noValidate key={`${actionData !== undefined && "saved" in actionData ? actionData.saved : "settings"}:${JSON.stringify(loaderData.values)}`}>
              <CsrfField />
              <input type="hidden" name="intent" value="save" />
              <FormError message={errors["form"]} />
              <MonitorFields values={failed?.values ?? loaderData.values} errors={errors} storedAuth={monitor.auth} warnings={warnings} />
              <button type="submit" className="button">Save settings</button>
            </Form>
          )
          : (
            <dl className="facts">
              {Object.entries(loaderData.values).filter(([k, v]) => v !== "" && !k.startsWith("auth_")).map(([k, v]) => (
                <div key={k}><dt>{k.replace(/_/g, " ")}</dt><dd>{v}{units[k] ?? ""}</dd></div>
              ))}
              <div><dt>authentication</dt><dd>{monitor.auth}</dd></div>
            </dl>
          )}
      </section>

      {allowed.remove
        ? (
          <section className="panel danger-zone" aria-labelledby="delete-title">
            <h2 id="delete-title">Delete this monitor</h2>
            <p className="muted">Its checks stop and it leaves the stacks that show it. This cannot be undone.</p>
            <Form method="post">
              <CsrfField />
              <input type="hidden" name="intent" value="delete" />
              <button type="submit" className="button danger">Delete monitor</button>
            </Form>
          </section>
        )
        : null}
    </>
  )
}
