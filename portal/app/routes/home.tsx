import { Link } from "react-router"
import type { Route } from "./+types/home.ts"
import { StatusBadge } from "../components/StatusBadge.tsx"
import { afterSignIn, optionalUser } from "../lib/session.server.ts"

export const meta: Route.MetaFunction = () => [
  { title: "statusgrid · is it us or them?" },
  { name: "description", content: "One live page for the status of every service your product depends on." }
]

export async function loader({ request, context }: Route.LoaderArgs) {
  const viewer = await optionalUser(context, request)
  return { continueTo: viewer === null ? null : afterSignIn(viewer.organizations, undefined) }
}

/** The landing page: what statusgrid is, sign up or sign in; a signed-in person gets a way to their dashboard. */
export default function Home({ loaderData }: Route.ComponentProps) {
  return (
    <section className="hero">
      <h1>Is it us, or is it them?</h1>
      <p className="lead">
        statusgrid watches the official status pages of the services your product depends on, and your own sites, on one live page.
        When something breaks at 3 a.m. you see at once who else is affected.
      </p>
      <p className="actions">
        {loaderData.continueTo
          ? <Link to={loaderData.continueTo} className="button">Go to your dashboard</Link>
          : (
            <>
              <Link to="/signup" className="button">Create an account</Link>
              <Link to="/signin">Sign in</Link>
            </>
          )}
      </p>
      <ul className="legend" aria-label="What the statuses mean">
        <li><StatusBadge status="operational" /></li>
        <li><StatusBadge status="degraded" /></li>
        <li><StatusBadge status="partial_outage" /></li>
        <li><StatusBadge status="major_outage" /></li>
        <li><StatusBadge status="maintenance" /></li>
      </ul>
    </section>
  )
}
