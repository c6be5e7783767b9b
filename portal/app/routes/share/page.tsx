import type { Route } from "./+types/page.ts"
import { HealthBanner } from "../../components/StatusBadge.tsx"
import { Incidents } from "../../components/tv/Incidents.tsx"
import { Items } from "../../components/tv/Items.tsx"
import { LiveState } from "../../components/tv/LiveState.tsx"
import { loadShare, noindex } from "../../components/tv/screen.server.ts"
import { useLiveScreen } from "../../components/tv/useLiveScreen.ts"
import screenStyles from "../../components/tv/screen.css?url"
import stylesheet from "../../components/tv/share.css?url"

export const links: Route.LinksFunction = () => [
  { rel: "stylesheet", href: screenStyles },
  { rel: "stylesheet", href: stylesheet }
]

export const meta: Route.MetaFunction = ({ loaderData }) => [
  { title: `${loaderData?.screen.title ?? "Status"} · status · statusgrid` },
  { name: "robots", content: "noindex, nofollow" }
]

export const headers: Route.HeadersFunction = () => noindex

export async function loader({ request, context, params }: Route.LoaderArgs) {
  return loadShare(context, request, params.token)
}

/** A public stack's live status: its banner, components and their sources' open incidents; nothing else of the organization. */
export default function SharePage({ loaderData }: Route.ComponentProps) {
  const { screen, connection, updatedAt } = useLiveScreen(loaderData.screen, loaderData.links)
  const stack = screen.stacks[0]!
  return (
    <article className="share-page">
      <div className="share-head">
        <div>
          <p className="eyebrow">Live status</p>
          <h1>{stack.name}</h1>
          {stack.description === "" ? null : <p className="muted share-description">{stack.description}</p>}
        </div>
        <LiveState connection={connection} updatedAt={updatedAt} />
      </div>
      <HealthBanner banner={stack.banner} />
      {stack.unknown > 0 ? <p className="muted share-note">{stack.unknown} not checked yet</p> : null}
      <section className="panel share-section" aria-labelledby="share-components">
        <h2 id="share-components">Components</h2>
        <Items items={stack.items} label={`Components of ${stack.name}`} />
      </section>
      <section className="panel share-section" aria-labelledby="share-incidents">
        <h2 id="share-incidents">Open incidents</h2>
        {screen.incidents.length === 0
          ? <p className="muted">No open incidents at the providers of this stack.</p>
          : <Incidents incidents={screen.incidents} />}
      </section>
      <p className="muted share-foot">A read-only page shared from statusgrid. It updates by itself.</p>
      <noscript>
        <meta httpEquiv="refresh" content="30" />
      </noscript>
    </article>
  )
}
