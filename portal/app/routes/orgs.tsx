import { Link, redirect } from "react-router"
import type { Route } from "./+types/orgs.ts"
import { requireUser } from "../lib/session.server.ts"

export const meta: Route.MetaFunction = () => [{ title: "Choose an organization · statusgrid" }]

export async function loader({ request, context }: Route.LoaderArgs) {
  const viewer = await requireUser(context, request)
  if (viewer.organizations.length === 0) throw redirect("/orgs/new")
  return { organizations: viewer.organizations.map((o) => ({ slug: o.slug, name: o.name, role: o.role })) }
}

/** The chooser after sign-in for a person in several organizations. */
export default function Orgs({ loaderData }: Route.ComponentProps) {
  return (
    <section className="panel narrow">
      <h1>Choose an organization</h1>
      <ul className="choice-list">
        {loaderData.organizations.map((o) => (
          <li key={o.slug}>
            <Link to={`/dashboard/${o.slug}`}>{o.name}</Link>
            <span className="muted">{o.role}</span>
          </li>
        ))}
      </ul>
      <p><Link to="/orgs/new">Create another organization</Link></p>
    </section>
  )
}
