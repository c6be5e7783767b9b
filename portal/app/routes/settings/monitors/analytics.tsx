import { monitorAnalytics } from "#services/history/Analytics.ts"
import { Monitors } from "#services/orgs/Monitors.ts"
import { Clock, Effect, Schema } from "effect"
import { data, Link } from "react-router"
import type { Route } from "./+types/analytics.ts"
import { AnalyticsSummary, HourOfWeek, LevelTable, OutageTable, RangePicker } from "../../../components/analytics/AnalyticsReport.tsx"
import analyticsCss from "../../../components/analytics/analytics.css?url"
import { ResponseTimeChart } from "../../../components/analytics/ResponseTimeChart.tsx"
import { runEffect } from "../../../lib/effect.server.ts"
import { pageRange } from "../../../lib/analyticsRange.server.ts"
import { requireMember } from "../../../lib/member.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: analyticsCss }]

export const meta: Route.MetaFunction = ({ loaderData }) => [{ title: `${loaderData?.name ?? "Monitor"} uptime and outages · statusgrid` }]

const isUuid = Schema.is(Schema.String.check(Schema.isUUID()))

/** A website monitor's analytics: the API's `GET /monitors/{id}/analytics` (the monitor read with the member's access first). */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, principal } = await requireMember(context, request, params.org)
  if (!isUuid(params.id)) throw data({ message: `no monitor ${params.id}` }, { status: 404 })
  const url = new URL(request.url)
  const read = await runEffect(context, request, Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const { range, days, error } = pageRange(url, now)
    const monitor = yield* Monitors.use((m) => m.get(principal, params.id))
    const figures = yield* monitorAnalytics(monitor.id, range).pipe(
      Effect.catchTag("HistoryUnavailable", () => Effect.succeed(null))
    )
    return { name: monitor.name, id: monitor.id, range, days, error, figures }
  }))
  return {
    ...read,
    organization: { slug: organization.slug },
    from: new Date(read.range.from).toISOString(),
    to: new Date(read.range.to - 1).toISOString()
  }
}

export default function MonitorAnalyticsPage({ loaderData }: Route.ComponentProps) {
  const { name, id, figures, from, to, days, error, organization } = loaderData
  const base = `/settings/${organization.slug}/monitors/${id}`
  return (
    <div className="analytics-page">
      <p className="eyebrow"><Link to={`/settings/${organization.slug}/monitors`}>Website monitors</Link> · <Link to={base}>{name}</Link></p>
      <section className="panel" aria-labelledby="analytics-title">
        <h1 id="analytics-title">{name}: uptime and outages</h1>
        <RangePicker base={`${base}/analytics`} from={from} to={to} days={days} error={error} />
        <p className="muted">Uptime counts time: paused, pending and hours without checks are left out as not seen; degraded counts as up.</p>
      </section>
      {figures === null
        ? <section className="panel"><p className="muted">Analytics are unavailable right now (the results store did not answer).</p></section>
        : (
          <>
            <section className="panel" aria-labelledby="figures-title">
              <h2 id="figures-title">Over the range</h2>
              <AnalyticsSummary analytics={figures.analytics} label={`${name} over the range`} />
              <LevelTable analytics={figures.analytics} />
              <OutageTable analytics={figures.analytics} />
              <HourOfWeek grid={figures.analytics.hour_of_week} />
            </section>
            <section className="panel" aria-labelledby="response-title">
              <h2 id="response-title">Response time</h2>
              <ResponseTimeChart times={figures.response_times} from={figures.from} to={figures.to} label={`Response time of ${name}`} />
            </section>
          </>
        )}
    </div>
  )
}
