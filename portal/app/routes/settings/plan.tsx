import { Organizations } from "#services/orgs/Organizations.ts"
import type { Route } from "./+types/plan.ts"
import stylesheet from "../../components/settings/team.css?url"
import { runEffect } from "../../lib/effect.server.ts"
import { requireMember } from "../../lib/member.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: stylesheet }]

export const meta: Route.MetaFunction = ({ loaderData }) => [{ title: `Plan · ${loaderData?.organization ?? "Settings"} · statusgrid` }]

/** What each plan limit counts (services/orgs/Limits.ts), in the page's words. */
const limitWords = {
  max_stacks: "Stacks",
  max_components: "Components in stacks",
  max_monitors: "Website monitors",
  max_custom_sources: "Custom sources",
  max_rules: "Notification rules",
  max_users: "Members and open invitations"
} as const

/**
 * The organization's plan, its limits and what is used of each: the numbers
 * of `GET /api/v1/organization` (Organizations.get). The plan is changed by
 * the operator (`statusgrid org plan`).
 */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, principal } = await requireMember(context, request, params.org)
  const org = await runEffect(context, request, Organizations.use((o) => o.get(principal)))
  return {
    organization: organization.name,
    plan: org.plan,
    channelTypes: org.channel_types,
    maxChannelsPerRule: org.limits.max_channels_per_rule,
    usage: (Object.keys(limitWords) as Array<keyof typeof limitWords>).map((k) => ({ key: k, label: limitWords[k], ...org.limits[k] }))
  }
}

export default function Plan({ loaderData }: Route.ComponentProps) {
  return (
    <section className="panel">
      <h1>Plan and usage</h1>
      <p>
        {loaderData.organization} is on the <strong className="plan-name">{loaderData.plan}</strong> plan. The installation's operator changes plans.
      </p>
      <table className="team-table usage-table">
        <thead>
          <tr><th scope="col">What</th><th scope="col">Used</th><th scope="col">Limit</th><th scope="col"><span className="visually-hidden">Share used</span></th></tr>
        </thead>
        <tbody>
          {loaderData.usage.map((u) => (
            <tr key={u.key} data-limit={u.key}>
              <th scope="row">{u.label}</th>
              <td data-used>{u.used}</td>
              <td data-max>{u.limit === null ? "Unlimited" : u.limit}</td>
              <td>
                {u.limit === null ? null : (
                  <div className="usage-bar" role="img" aria-label={`${u.used} of ${u.limit} used`}>
                    <span style={{ width: `${Math.min(100, Math.round((u.used / Math.max(u.limit, 1)) * 100))}%` }} />
                  </div>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="muted">
        Notification channels: {loaderData.channelTypes.join(", ") || "none"}
        {loaderData.maxChannelsPerRule === null ? "; any number per rule." : `; at most ${loaderData.maxChannelsPerRule} per rule.`}
      </p>
    </section>
  )
}
