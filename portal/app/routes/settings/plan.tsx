import type { Route } from "./+types/plan.ts"
import { requireMember } from "../../lib/member.server.ts"

export const meta: Route.MetaFunction = ({ loaderData }) => [{ title: `Plan · ${loaderData?.organization ?? "Settings"} · statusgrid` }]

/** The organization's plan (changed by the operator: `statusgrid org plan`). */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, principal } = await requireMember(context, request, params.org)
  return { organization: organization.name, plan: principal.plan }
}

export default function Plan({ loaderData }: Route.ComponentProps) {
  return (
    <section className="panel">
      <h1>Plan and usage</h1>
      <p>
        {loaderData.organization} is on the <strong>{loaderData.plan}</strong> plan.
      </p>
    </section>
  )
}
