import { CustomSourceCreate, CustomSourcePatch } from "#services/domain/api/CustomSources.ts"
import { SourceStatus } from "#services/domain/Status.ts"
import { fromSourceStatus, statusLooks } from "#services/domain/StatusWords.ts"
import { CustomSources } from "#services/orgs/CustomSources.ts"
import { Organizations } from "#services/orgs/Organizations.ts"
import { DateTime, Effect } from "effect"
import { data, Form, redirect } from "react-router"
import type { Route } from "./+types/sources.ts"
import stylesheet from "../../components/settings/monitors/monitors.css?url"
import { CsrfField, Field, FormError } from "../../components/Forms.tsx"
import { Control } from "../../components/settings/monitors/MonitorForm.tsx"
import { RelativeTime } from "../../components/RelativeTime.tsx"
import { StatusBadge } from "../../components/StatusBadge.tsx"
import { runEffect } from "../../lib/effect.server.ts"
import { decodeForm, type FieldErrors, fieldError, formFields } from "../../lib/forms.server.ts"
import { requireMember, requireMemberAction } from "../../lib/member.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: stylesheet }]

export const meta: Route.MetaFunction = ({ loaderData }) => [{ title: `Custom sources · ${loaderData?.organization ?? "Settings"} · statusgrid` }]

const statuses = SourceStatus.literals

/** The organization's custom sources (the API's list) with the plan's limit; `?added=<key>` shows what detection found. */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, principal, allowed } = await requireMember(context, request, params.org)
  const { page, org } = await runEffect(context, request, Effect.all({
    page: CustomSources.use((s) => s.list(principal, { limit: 200 })),
    org: Organizations.use((o) => o.get(principal))
  }))
  const added = new URL(request.url).searchParams.get("added")
  return {
    organization: organization.name,
    plan: org.plan,
    limit: org.limits.max_custom_sources,
    allowed: { write: allowed["content.write"], remove: allowed["content.delete"] },
    added,
    sources: page.data.map((s) => ({
      key: s.key,
      name: s.name,
      description: s.description,
      kind: s.kind,
      status: s.status,
      provider: s.provider_type,
      url: s.status_page_url,
      components: s.components_count,
      last_checked_at: s.last_checked_at === null ? null : DateTime.formatIso(s.last_checked_at),
      last_changed_at: s.last_changed_at === null ? null : DateTime.formatIso(s.last_changed_at)
    }))
  }
}

type Failure = { readonly intent: string; readonly key?: string; readonly values: Record<string, string>; readonly errors: FieldErrors }
const failed = (failure: Failure) => data(failure, { status: 400 })

/** Add (by URL, detected, or manual), rename, set a manual status, delete: the API's CustomSources calls. */
export async function action({ request, context, params }: Route.ActionArgs) {
  const form = await request.formData()
  const { organization, principal } = await requireMemberAction(context, request, form, params.org)
  const intent = String(form.get("intent") ?? "")
  const here = `/settings/${organization.slug}/sources`

  if (intent === "add") {
    const fields = formFields(form, ["name", "type", "status_page_url", "status_page_type", "status"])
    const body: Record<string, string> = { name: fields["name"]!, type: fields["type"] === "manual" ? "manual" : "url" }
    if (body["type"] === "url") {
      body["status_page_url"] = fields["status_page_url"]!
      if (fields["status_page_type"] !== "") body["status_page_type"] = fields["status_page_type"]!
    } else if (fields["status"] !== "") body["status"] = fields["status"]!
    const decoded = decodeForm(CustomSourceCreate, body)
    if (!decoded.ok) return failed({ intent, values: fields, errors: decoded.errors })
    const created = await runEffect(context, request, CustomSources.use((s) => s.create(principal, decoded.value)).pipe(
      Effect.map((s) => ({ key: s.key, errors: undefined })),
      Effect.catchTags({
        InvalidParameter: (e) => Effect.succeed({ key: undefined, errors: fieldError(e) }),
        Unprocessable: (e) => Effect.succeed({ key: undefined, errors: fieldError(e) }),
        PlanLimitReached: (e) => Effect.succeed({ key: undefined, errors: { form: e.message } })
      })
    ))
    if (created.key === undefined) return failed({ intent, values: fields, errors: created.errors })
    throw redirect(`${here}?added=${encodeURIComponent(created.key)}`)
  }

  const key = String(form.get("key") ?? "")
  if (intent === "delete") {
    await runEffect(context, request, CustomSources.use((s) => s.remove(principal, key)))
    throw redirect(here)
  }
  if (intent === "edit" || intent === "status") {
    const fields = formFields(form, intent === "edit" ? ["name", "description"] : ["status"])
    const decoded = decodeForm(CustomSourcePatch, fields)
    if (!decoded.ok) return failed({ intent, key, values: fields, errors: decoded.errors })
    const saved = await runEffect(context, request, CustomSources.use((s) => s.update(principal, key, decoded.value)).pipe(
      Effect.map(() => undefined),
      Effect.catchTag("InvalidParameter", (e) => Effect.succeed(fieldError(e)))
    ))
    if (saved !== undefined) return failed({ intent, key, values: fields, errors: saved })
    return { intent, key, done: intent === "status" ? `Status set to ${statusLooks[fromSourceStatus(decoded.value.status)].word}.` : "Saved." }
  }
  throw data({ message: `unknown action ${intent}` }, { status: 400 })
}

export default function CustomSourcesPage({ loaderData, actionData }: Route.ComponentProps) {
  const { sources, limit, plan, allowed, added } = loaderData
  const failure = actionData !== undefined && "errors" in actionData ? actionData : undefined
  const addErrors: Record<string, string | undefined> = failure?.intent === "add" ? failure.errors : {}
  const addValues: Record<string, string | undefined> = failure?.intent === "add" ? failure.values : {}
  const full = limit.limit !== null && limit.used >= limit.limit
  const fresh = sources.find((s) => s.key === added)
  return (
    <>
      <section className="panel">
        <div className="page-head">
          <h1>Custom sources</h1>
          <p className="muted" id="source-usage">
            {limit.limit === null ? `${limit.used} custom sources · unlimited` : `${limit.used} of ${limit.limit} custom sources on ${plan}`}
          </p>
        </div>
        <p className="muted">Status pages the catalog does not list, private to this organization, or a status your team sets by hand.</p>
        {fresh !== undefined
          ? (
            <div className="detection" role="status" id="detection">
              {fresh.kind === "url"
                ? (
                  <>
                    <strong>{fresh.name} added.</strong> Provider detected: <strong>{fresh.provider ?? "unknown"}</strong>.{" "}
                    {fresh.last_checked_at === null
                      ? "Reading its components now; reload in a few seconds."
                      : <>Components read: <strong id="detected-components">{fresh.components}</strong>.</>}
                  </>
                )
                : <><strong>{fresh.name} added</strong> as a manual source: set its status below whenever it changes.</>}
            </div>
          )
          : null}
        {actionData !== undefined && "done" in actionData ? <p className="notice" role="status">{actionData.done}</p> : null}
        {sources.length === 0 ? <p className="muted empty">No custom sources yet.</p> : (
          <ul className="source-list">
            {sources.map((s) => {
              const mine = failure !== undefined && failure.key === s.key ? failure : undefined
              return (
                <li key={s.key} className="source-item" id={`source-${s.key}`}>
                  <div className="page-head">
                    <div>
                      <h2>{s.name}</h2>
                      <p className="muted small url">
                        {s.kind === "manual" ? "Manual: status set by your team" : `${s.provider ?? "detecting"} · ${s.url ?? ""}`}
                        {s.kind === "url" ? ` · ${s.components} components` : ""}
                      </p>
                    </div>
                    <div className="actions">
                      <StatusBadge status={fromSourceStatus(s.status)} />
                      {s.last_changed_at ? <span className="muted small">since <RelativeTime date={s.last_changed_at} /></span> : null}
                    </div>
                  </div>
                  {allowed.write && s.kind === "manual"
                    ? (
                      <Form method="post" className="inline-form">
                        <CsrfField />
                        <input type="hidden" name="intent" value="status" />
                        <input type="hidden" name="key" value={s.key} />
                        <Control name="status" id={`status-${s.key}`} label={`Status of ${s.name}`} error={mine?.intent === "status" ? mine.errors["status"] : undefined}>
                          {(attrs) => (
                            <select {...attrs} defaultValue={s.status}>
                              {statuses.map((v) => <option key={v} value={v}>{statusLooks[fromSourceStatus(v)].word}</option>)}
                            </select>
                          )}
                        </Control>
                        <button type="submit" className="button small">Set status</button>
                      </Form>
                    )
                    : null}
                  {allowed.write
                    ? (
                      <details className="edit">
                        <summary>Edit or delete</summary>
                        <Form method="post">
                          <CsrfField />
                          <input type="hidden" name="intent" value="edit" />
                          <input type="hidden" name="key" value={s.key} />
                          <Control name="name" id={`name-${s.key}`} label="Name" error={mine?.intent === "edit" ? mine.errors["name"] : undefined}>
                            {(attrs) => <input {...attrs} defaultValue={mine?.intent === "edit" ? mine.values["name"] : s.name} />}
                          </Control>
                          <Control name="description" id={`description-${s.key}`} label="Description" error={mine?.intent === "edit" ? mine.errors["description"] : undefined}>
                            {(attrs) => <input {...attrs} defaultValue={mine?.intent === "edit" ? mine.values["description"] : s.description} />}
                          </Control>
                          <button type="submit" className="button small">Save</button>
                        </Form>
                        {allowed.remove
                          ? (
                            <Form method="post" className="delete-form">
                              <CsrfField />
                              <input type="hidden" name="intent" value="delete" />
                              <input type="hidden" name="key" value={s.key} />
                              <button type="submit" className="button small danger">Delete {s.name}</button>
                            </Form>
                          )
                          : null}
                      </details>
                    )
                    : null}
                </li>
              )
            })}
          </ul>
        )}
      </section>
      {allowed.write
        ? (
          <section className="panel" aria-labelledby="add-source">
            <h2 id="add-source">Add a custom source</h2>
            {full
              ? <p className="form-error" role="status">All {limit.limit} custom sources of this organization are in use: delete one to add another.</p>
              : (
                <Form method="post" noValidate key={`add-${added ?? ""}-${sources.length}`}>
                  <CsrfField />
                  <input type="hidden" name="intent" value="add" />
                  <FormError message={addErrors["form"]} />
                  <Field name="name" label="Name" defaultValue={addValues["name"]} error={addErrors["name"]} />
                  <fieldset className="mode-choice">
                    <legend className="visually-hidden">How it gets its status</legend>
                    <label><input type="radio" name="type" value="url" defaultChecked={addValues["type"] !== "manual"} /> From a status page URL</label>
                    <label><input type="radio" name="type" value="manual" defaultChecked={addValues["type"] === "manual"} /> Set by hand (manual)</label>
                  </fieldset>
                  <Field
                    name="status_page_url"
                    label="Status page URL"
                    type="url"
                    required={false}
                    defaultValue={addValues["status_page_url"]}
                    error={addErrors["status_page_url"]}
                    hint="For a URL source: its provider (Statuspage, Better Stack, Instatus, Cachet, …) is detected."
                  />
                  <Field
                    name="status_page_type"
                    label="Provider (optional)"
                    required={false}
                    defaultValue={addValues["status_page_type"]}
                    error={addErrors["status_page_type"]}
                    hint="Only when detection cannot tell, e.g. statuspage_io."
                  />
                  <Control name="status" label="Initial status (manual)" error={addErrors["status"]}>
                    {(attrs) => (
                      <select {...attrs} defaultValue={addValues["status"] ?? "operational"}>
                        {statuses.map((v) => <option key={v} value={v}>{statusLooks[fromSourceStatus(v)].word}</option>)}
                      </select>
                    )}
                  </Control>
                  <button type="submit" className="button">Add source</button>
                </Form>
              )}
          </section>
        )
        : <p className="muted">Your role can view custom sources; a Member or Admin adds and changes them.</p>}
    </>
  )
}
