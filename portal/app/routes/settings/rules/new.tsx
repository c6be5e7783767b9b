import { Rules } from "#services/orgs/Rules.ts"
import { Effect } from "effect"
import { data, redirect } from "react-router"
import type { Route } from "./+types/new.ts"
import { RuleForm } from "../../../components/settings/rules/RuleForm.tsx"
import stylesheet from "../../../components/settings/rules/rules.css?url"
import maintenanceStylesheet from "../../../components/settings/maintenance/maintenance.css?url"
import stacksStylesheet from "../../../components/settings/stacks.css?url"
import { runEffect } from "../../../lib/effect.server.ts"
import type { FieldErrors } from "../../../lib/forms.server.ts"
import { requireMember, requireMemberAction } from "../../../lib/member.server.ts"
import { ruleBodyFromForm } from "./ruleForm.server.ts"
import { ruleBounds, ruleEditorData, ruleErrors } from "./rules.server.ts"

export const links: Route.LinksFunction = () => [
  { rel: "stylesheet", href: stacksStylesheet },
  { rel: "stylesheet", href: maintenanceStylesheet },
  { rel: "stylesheet", href: stylesheet }
]

export const meta: Route.MetaFunction = ({ loaderData }) => [{ title: `New rule · ${loaderData?.organization.name ?? "Settings"} · statusgrid` }]

export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, principal } = await requireMember(context, request, params.org)
  const editor = await runEffect(context, request, ruleEditorData(principal))
  return { organization: { slug: organization.slug, name: organization.name }, origin: new URL(request.url).origin, bounds: ruleBounds, ...editor }
}

interface ActionResult {
  readonly errors: FieldErrors
  readonly body: Record<string, unknown>
}

/** Creates the rule through the API's service (`POST /rules`: validateRule, plan limits, audit). */
export async function action({ request, context, params }: Route.ActionArgs) {
  const form = await request.formData()
  const { organization, principal } = await requireMemberAction(context, request, form, params.org)
  const body = ruleBodyFromForm(form)
  const outcome = await runEffect(context, request, Rules.use((r) => r.create(principal, body as never)).pipe(
    Effect.map((rule) => ({ ok: true as const, id: rule.id })),
    Effect.catchTags({
      InvalidParameter: (e) => Effect.succeed({ ok: false as const, errors: ruleErrors(e) }),
      NotFound: (e) => Effect.succeed({ ok: false as const, errors: ruleErrors(e) }),
      PlanLimitReached: (e) => Effect.succeed({ ok: false as const, errors: ruleErrors(e) })
    })
  ))
  if (!outcome.ok) return data<ActionResult>({ errors: outcome.errors, body }, { status: 400 })
  return redirect(`/settings/${organization.slug}/rules/${outcome.id}?created`)
}

export default function NewRulePage({ loaderData, actionData }: Route.ComponentProps) {
  const { options, limits, canEscalate, origin, bounds } = loaderData
  const result = actionData as ActionResult | undefined
  const body = result?.body ?? { active: true, scope: "all", triggers: ["component.critical"] }
  return (
    <section className="panel" aria-labelledby="rule-title">
      <h1 id="rule-title">New rule</h1>
      <RuleForm
        body={body}
        errors={result?.errors ?? {}}
        options={options}
        limits={limits}
        bounds={bounds}
        canEscalate={canEscalate}
        origin={origin}
        submitLabel="Create rule"
      />
    </section>
  )
}
