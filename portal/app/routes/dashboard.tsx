import { Users } from "#services/identity/Users.ts"
import { Stacks } from "#services/orgs/Stacks.ts"
import { Effect } from "effect"
import { data, Link } from "react-router"
import type { Route } from "./+types/dashboard.ts"
import { RelativeTime } from "../components/RelativeTime.tsx"
import { runEffect } from "../lib/effect.server.ts"
import { requireUser } from "../lib/session.server.ts"

export const meta: Route.MetaFunction = ({ loaderData }) => [{ title: `${loaderData?.organization.name ?? "Dashboard"} · statusgrid` }]

/** The organization's stacks, through the same Stacks service as `GET /api/v1/stacks`, as the signed-in member. */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const viewer = await requireUser(context, request)
  const organization = viewer.organizations.find((o) => o.slug === params.org)
  if (organization === undefined) throw data({ message: `no organization ${params.org}` }, { status: 404 })
  const page = await runEffect(context, request, Effect.gen(function*() {
    const principal = yield* Users.use((u) => u.principalFor(viewer.user.id, organization.id))
    return yield* Stacks.use((s) => s.list(principal, { limit: 100 }))
  }))
  return {
    organization: { slug: organization.slug, name: organization.name, role: organization.role },
    stacks: page.data.map((s) => ({ slug: s.slug, name: s.name, items: s.items_count, updated_at: s.updated_at }))
  }
}

/** Placeholder dashboard: the stacks, each a link to its page. The live dashboard replaces it. */
export default function Dashboard({ loaderData }: Route.ComponentProps) {
  const { organization, stacks } = loaderData
  return (
    <section>
      <div className="page-head">
        <h1>{organization.name}</h1>
        <p className="muted">Your role: {organization.role}</p>
      </div>
      {stacks.length === 0
        ? (
          <div className="panel empty">
            <h2>No stacks yet</h2>
            <p>A stack is the set of services one product depends on: its cloud, payments, e-mail, your own sites. Build one from the catalog of status pages.</p>
          </div>
        )
        : (
          <ul className="card-list" aria-label="Stacks">
            {stacks.map((s) => (
              <li key={s.slug} className="card">
                <h2><Link to={`/dashboard/${organization.slug}/stacks/${s.slug}`}>{s.name}</Link></h2>
                <p className="muted">{s.items} {s.items === 1 ? "item" : "items"} · changed <RelativeTime date={s.updated_at} /></p>
              </li>
            ))}
          </ul>
        )}
    </section>
  )
}
