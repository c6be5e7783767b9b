import { Organizations } from "#services/orgs/Organizations.ts"
import { Rules } from "#services/orgs/Rules.ts"
import { Effect } from "effect"
import { Link } from "react-router"
import type { Route } from "./+types/list.ts"
import stacksStylesheet from "../../../components/settings/stacks.css?url"
import { runEffect } from "../../../lib/effect.server.ts"
import { requireMember } from "../../../lib/member.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: stacksStylesheet }]

export const meta: Route.MetaFunction = ({ loaderData }) => [{ title: `Rules · ${loaderData?.organization.name ?? "Settings"} · statusgrid` }]

/** The organization's notification rules (the API's `GET /rules`) with the plan's limit. */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, principal, allowed } = await requireMember(context, request, params.org)
  const { rules, org } = await runEffect(context, request, Effect.all({
    rules: Rules.use((r) => r.list(principal, { limit: 200 })),
    org: Organizations.use((o) => o.get(principal))
  }, { concurrency: 2 }))
  return {
    organization: { slug: organization.slug, name: organization.name },
    canWrite: allowed["notifications.manage"],
    limit: org.limits.max_rules,
    rules: rules.data.map((r) => ({
      id: r.id,
      name: r.name,
      active: r.active,
      triggers: r.triggers,
      channels: r.channel_ids.length,
      scheduled: r.schedule !== null,
      escalates: r.escalation !== null
    }))
  }
}

export default function RulesPage({ loaderData }: Route.ComponentProps) {
  const { organization, canWrite, limit, rules } = loaderData
  const base = `/settings/${organization.slug}/rules`
  const full = limit.limit !== null && limit.used >= limit.limit
  return (
    <section className="panel" aria-labelledby="rules-title">
      <div className="section-head">
        <h1 id="rules-title">Notification rules</h1>
        {canWrite && !full ? <Link to={`${base}/new`} className="button">New rule</Link> : null}
      </div>
      <p className="usage">{limit.used} of {limit.limit ?? "unlimited"} rules on your plan</p>
      {full ? <p className="limit-note">Your plan's rules are all used: delete one or change plans to add another.</p> : null}
      {rules.length === 0
        ? <p>No rule yet: nothing is sent until a rule says when and where.</p>
        : (
          <ul className="stack-rows">
            {rules.map((r) => (
              <li key={r.id} className="stack-row">
                <div>
                  <h2><Link to={`${base}/${r.id}`}>{r.name}</Link></h2>
                  <p className="muted">
                    {r.active ? "active" : "paused"} · {r.triggers.join(", ")} · {r.channels} channel{r.channels === 1 ? "" : "s"}
                    {r.scheduled ? " · certain hours" : ""}{r.escalates ? " · escalates" : ""}
                  </p>
                </div>
              </li>
            ))}
          </ul>
        )}
    </section>
  )
}
