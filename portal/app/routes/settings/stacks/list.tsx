import { StackCreate, stackLimits } from "#services/domain/api/Stacks.ts"
import { Stacks } from "#services/orgs/Stacks.ts"
import { Effect } from "effect"
import { data, Form, Link, redirect } from "react-router"
import type { Route } from "./+types/list.ts"
import { CsrfField, Field, FormError } from "../../../components/Forms.tsx"
import stylesheet from "../../../components/settings/stacks.css?url"
import { runEffect } from "../../../lib/effect.server.ts"
import { decodeForm, type FieldErrors, fieldError, formFields } from "../../../lib/forms.server.ts"
import { requireMember, requireMemberAction } from "../../../lib/member.server.ts"
import { planName, usageText } from "../../../components/settings/usage.ts"
import { stackUsage } from "./stacks.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: stylesheet }]

export const meta: Route.MetaFunction = ({ loaderData }) => [{ title: `Stacks · ${loaderData?.organization.name ?? "Settings"} · statusgrid` }]

/** The organization's stacks (the API's `GET /stacks`) and its stack limits (`GET /organization`). */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, principal, allowed } = await requireMember(context, request, params.org)
  const { page, usage } = await runEffect(context, request, Effect.all({
    page: Stacks.use((s) => s.list(principal, { limit: 100 })),
    usage: stackUsage(principal)
  }, { concurrency: 2 }))
  return {
    organization: { slug: organization.slug, name: organization.name },
    canWrite: allowed["content.write"],
    usage,
    stacks: page.data.map((s) => ({
      id: s.id,
      name: s.name,
      slug: s.slug,
      team: s.team,
      visibility: s.visibility,
      items: s.items_count,
      health: s.health.label
    }))
  }
}

const fieldNames = ["name", "description", "team", "visibility"] as const

/**
 * Creates a stack through the service of the API's `POST /stacks` (its permission, plan limit, slug
 * and audit entry), fields decoded by the API's `StackCreate`; then opens the new stack's settings.
 */
export async function action({ request, context, params }: Route.ActionArgs) {
  const form = await request.formData()
  const { organization, principal } = await requireMemberAction(context, request, form, params.org)
  const values = formFields(form, fieldNames)
  const fail = (errors: FieldErrors, status = 400) => data({ values, errors }, { status })
  const input = Object.fromEntries(Object.entries(values).filter(([k, v]) => k === "name" || v !== ""))
  const decoded = decodeForm(StackCreate, input)
  if (!decoded.ok) return fail(decoded.errors)
  const outcome = await runEffect(
    context,
    request,
    Stacks.use((s) => s.create(principal, decoded.value)).pipe(
      Effect.map((stack) => ({ ok: true as const, stack })),
      Effect.catchTags({
        PlanLimitReached: (e) => Effect.succeed({ ok: false as const, status: 402, errors: { form: e.message } }),
        Conflict: (e) => Effect.succeed({ ok: false as const, status: 409, errors: fieldError(e, "name") })
      })
    )
  )
  if (!outcome.ok) return fail(outcome.errors, outcome.status)
  return redirect(`/settings/${organization.slug}/stacks/${outcome.stack.id}`)
}

export default function StackList({ loaderData, actionData }: Route.ComponentProps) {
  const { organization, stacks, usage, canWrite } = loaderData
  const errors: FieldErrors = actionData?.errors ?? {}
  const values = actionData?.values
  const full = usage.stacks.full
  return (
    <>
      <section className="panel" aria-labelledby="stacks-title">
        <div className="section-head">
          <h1 id="stacks-title">Stacks</h1>
          <p className="usage" data-testid="stack-usage">
            {usageText(usage.stacks, "stacks", usage.plan)} · {usageText(usage.components, "components in stacks", usage.plan)}
          </p>
        </div>
        {stacks.length === 0
          ? <p className="muted">No stack yet. A stack groups the sources, components and monitors one team watches.</p>
          : (
            <ul className="stack-rows">
              {stacks.map((s) => (
                <li key={s.id} className="stack-row">
                  <div>
                    <h2><Link to={`/settings/${organization.slug}/stacks/${s.id}`}>{s.name}</Link></h2>
                    <p className="muted">
                      {s.items} {s.items === 1 ? "item" : "items"} · {s.visibility === "public" ? "public share link" : "private"}
                      {s.team ? ` · team ${s.team}` : ""} · {s.health}
                    </p>
                  </div>
                  <Link className="muted" to={`/dashboard/${organization.slug}/stacks/${s.slug}`}>Dashboard</Link>
                </li>
              ))}
            </ul>
          )}
      </section>

      {canWrite
        ? (
          <section className="panel" aria-labelledby="create-title">
            <h2 id="create-title">New stack</h2>
            {full
              ? (
                <p className="limit-note" role="note">
                  The {planName(usage.plan)} plan allows {usage.stacks.limit} {usage.stacks.limit === 1 ? "stack" : "stacks"}, and this
                  organization has {usage.stacks.used}: remove a stack or move to a larger plan to create another.
                </p>
              )
              : null}
            <Form method="post" className="stack-form" aria-labelledby="create-title">
              <CsrfField />
              <FormError message={errors["form"]} />
              <fieldset disabled={full}>
                <legend className="visually-hidden">The new stack</legend>
                <Field name="name" label="Name" defaultValue={values?.name} error={errors["name"]} hint={`Up to ${stackLimits.name} characters.`} />
                <Field name="description" label="Description" required={false} defaultValue={values?.description} error={errors["description"]} />
                <Field name="team" label="Team" required={false} defaultValue={values?.team} error={errors["team"]} hint="The team that owns it, if any." />
                <div className="field">
                  <label htmlFor="field-visibility">Visibility</label>
                  <select id="field-visibility" name="visibility" defaultValue={values?.visibility || "private"}>
                    <option value="private">Private: members only</option>
                    <option value="public">Public: anyone with the share link</option>
                  </select>
                  {errors["visibility"] ? <p className="field-error">Visibility {errors["visibility"]}</p> : null}
                </div>
                <button type="submit" className="button">Create stack</button>
              </fieldset>
            </Form>
          </section>
        )
        : <p className="muted read-only">Your role can view these stacks but not change them.</p>}
    </>
  )
}
