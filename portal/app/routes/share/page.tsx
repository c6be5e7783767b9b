import { data } from "react-router"
import type { Route } from "./+types/page.ts"
import type { ReportResult } from "../../components/catalog/CrowdReport.tsx"
import { ReportProblem } from "../../components/crowd/ReportProblem.tsx"
import { reportableSources, reportProblem } from "../../lib/crowdReport.server.ts"
import { HealthBanner } from "../../components/StatusBadge.tsx"
import { Incidents } from "../../components/tv/Incidents.tsx"
import { Items } from "../../components/tv/Items.tsx"
import { LiveState } from "../../components/tv/LiveState.tsx"
import { loadShare, noindex, pageHeaders, screenHeaders } from "../../components/tv/screen.server.ts"
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

export const headers: Route.HeadersFunction = ({ loaderHeaders }) => pageHeaders(loaderHeaders)

/** The page; framed only where the stack's organization allows (`screenHeaders`). */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { screen, links, sourceKeys, organizationId } = await loadShare(context, request, params.token)
  const [reportable, headers] = await Promise.all([reportableSources(context, request, sourceKeys), screenHeaders(context, request, organizationId)])
  return data({ screen, links, reportable }, { headers })
}

/**
 * A visitor's crowd report about one of the shared stack's services (anonymous: the address the
 * server saw). A revoked link is a 404 here too, and only the stack's own services are taken.
 */
export async function action({ request, context, params }: Route.ActionArgs) {
  const { sourceKeys } = await loadShare(context, request, params.token)
  const form = await request.formData()
  const source = form.get("source")
  if (form.get("intent") !== "report" || typeof source !== "string" || !sourceKeys.includes(source)) {
    return data<ReportResult>({ report: true, ok: false, error: "source must be one of the services this page shows" }, { status: 400, headers: noindex })
  }
  return reportProblem(context, request, form, source)
}

/** A public stack's live status: its banner, components and their sources' open incidents; nothing else of the organization. */
export default function SharePage({ loaderData, actionData }: Route.ComponentProps) {
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
      <ReportProblem sources={loaderData.reportable} result={actionData} />
      <p className="muted share-foot">A read-only page shared from statusgrid. It updates by itself.</p>
      <noscript>
        <meta httpEquiv="refresh" content="30" />
      </noscript>
    </article>
  )
}
