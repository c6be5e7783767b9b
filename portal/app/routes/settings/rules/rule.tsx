import { Rules } from "#services/orgs/Rules.ts"
import { Effect } from "effect"
import { data, Form, Link, redirect } from "react-router"
import type { Route } from "./+types/rule.ts"
import { CsrfField } from "../../../components/Forms.tsx"
import { RuleForm } from "../../../components/settings/rules/RuleForm.tsx"
import stylesheet from "../../../components/settings/rules/rules.css?url"
import maintenanceStylesheet from "../../../components/settings/maintenance/maintenance.css?url"
import stacksStylesheet from "../../../components/settings/stacks.css?url"
import { runEffect } from "../../../lib/effect.server.ts"
import type { FieldErrors } from "../../../lib/forms.server.ts"
import { requireMember, requireMemberAction } from "../../../lib/member.server.ts"
import { isUuid } from "../stacks/stacks.server.ts"
import { ruleBodyFromForm, ruleBodyOf } from "./ruleForm.server.ts"
import { ruleBounds, ruleEditorData, ruleErrors } from "./rules.server.ts"

export const links: Route.LinksFunction = () => [
  { rel: "stylesheet", href: stacksStylesheet },
  { rel: "stylesheet", href: maintenanceStylesheet },
  { rel: "stylesheet", href: stylesheet }
]

export const meta: Route.MetaFunction = ({ loaderData }) => [
  { title: `${loaderData?.name ?? "Rule"} · ${loaderData?.organization.name ?? "Settings"} · statusgrid` }
]

const notFound = () => data({ message: "no such rule" }, { status: 404, statusText: "Not Found" })

/** One rule (the API's `GET /rules/{id}`) in the editor. */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, principal, allowed } = await requireMember(context, request, params.org)
  if (!isUuid(params.id)) throw notFound()
  const loaded = await runEffect(context, request, Effect.all({
    rule: Rules.use((r) => r.get(principal, params.id)).pipe(Effect.catchTag("NotFound", () => Effect.succeed(undefined))),
    editor: ruleEditorData(principal)
  }, { concurrency: 2 }))
  if (loaded.rule === undefined) throw notFound()
  const url = new URL(request.url)
  return {
    organization: { slug: organization.slug, name: organization.name },
    canWrite: allowed["notifications.manage"],
    name: loaded.rule.name,
    body: ruleBodyOf(loaded.rule),
    origin: url.origin,
    bounds: ruleBounds,
    created: url.searchParams.has("created"),
    ...loaded.editor
  }
}

interface ActionResult {
  readonly errors: FieldErrors
  readonly body?: Record<string, unknown>
  readonly saved?: boolean
}

/** Save (the API's PATCH with every field: lists replace) or delete (`DELETE /rules/{id}`). */
export async function action({ request, context, params }: Route.ActionArgs) {
  const form = await request.formData()
  const { organization, principal } = await requireMemberAction(context, request, form, params.org)
  if (!isUuid(params.id)) throw notFound()
  if (form.get("intent") === "delete") {
    await runEffect(context, request, Rules.use((r) => r.remove(principal, params.id)).pipe(Effect.catchTag("NotFound", () => Effect.void)))
    return redirect(`/settings/${organization.slug}/rules`)
  }
  const body = ruleBodyFromForm(form)
  const outcome = await runEffect(context, request, Rules.use((r) => r.update(principal, params.id, body as never)).pipe(
    Effect.map(() => ({ ok: true as const })),
    Effect.catchTags({
      InvalidParameter: (e) => Effect.succeed({ ok: false as const, errors: ruleErrors(e) }),
      NotFound: (e) => Effect.succeed({ ok: false as const, errors: ruleErrors(e) }),
      PlanLimitReached: (e) => Effect.succeed({ ok: false as const, errors: ruleErrors(e) })
    })
  ))
  if (!outcome.ok) return data<ActionResult>({ errors: outcome.errors, body }, { status: 400 })
  return { errors: {}, saved: true } satisfies ActionResult
}

export default function RulePage({ loaderData, actionData }: Route.ComponentProps) {
  const { organization, canWrite, name, body: stored, options, limits, canEscalate, origin, bounds, created } = loaderData
  const result = actionData as ActionResult | undefined
  const body = result?.body ?? stored
  return (
    <>
      <section className="panel" aria-labelledby="rule-title">
        <p className="muted"><Link to={`/settings/${organization.slug}/rules`}>Rules</Link> ›</p>
        <h1 id="rule-title">{name}</h1>
        {created ? <p className="form-success" role="status">Created {name}.</p> : null}
        {result?.saved ? <p className="form-success" role="status">Saved.</p> : null}
        {canWrite
          ? (
            <RuleForm
              key={result?.saved ? "saved" : "form"}
              body={body}
              errors={result?.errors ?? {}}
              options={options}
              limits={limits}
              bounds={bounds}
              canEscalate={canEscalate}
              origin={origin}
              submitLabel="Save rule"
            />
          )
          : <p className="muted read-only">Your role can view this rule but not change it.</p>}
      </section>
      {canWrite
        ? (
          <section className="panel" aria-labelledby="rule-delete-title">
            <h2 id="rule-delete-title">Delete</h2>
            <Form method="post">
              <CsrfField />
              <button type="submit" name="intent" value="delete" className="button danger">Delete {name}</button>
            </Form>
          </section>
        )
        : null}
    </>
  )
}
