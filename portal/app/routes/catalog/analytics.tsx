import { SourceHistories } from "#services/api/SourceHistory.ts"
import { Sources } from "#services/api/Sources.ts"
import { Clock, Effect } from "effect"
import { data, Link } from "react-router"
import type { Route } from "./+types/analytics.ts"
import { AnalyticsSummary, durationText, HourOfWeek, LevelTable, OutageTable, RangePicker } from "../../components/analytics/AnalyticsReport.tsx"
import analyticsCss from "../../components/analytics/analytics.css?url"
import { IncidentReport, RegionTable } from "../../components/analytics/IncidentReport.tsx"
import { ResponseTimeChart } from "../../components/analytics/ResponseTimeChart.tsx"
import catalogCss from "../../components/catalog/catalog.css?url"
import { runEffect } from "../../lib/effect.server.ts"
import { pageRange } from "../../lib/analyticsRange.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: catalogCss }, { rel: "stylesheet", href: analyticsCss }]

export const meta: Route.MetaFunction = ({ loaderData }) => [
  { title: loaderData ? `${loaderData.name} uptime and outages · statusgrid` : "Analytics · statusgrid" }
]

/**
 * A source's analytics (public, like its page): the API's
 * `GET /sources/{key}/analytics` through the same reader (`SourceHistories`),
 * for the range of the query (7, 30 or 90 days, or two dates).
 */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const url = new URL(request.url)
  const read = await runEffect(context, request, Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const { range, days, error } = pageRange(url, now)
    const source = yield* Sources.use((s) => s.get(params.key))
    const figures = yield* SourceHistories.use((h) => h.analytics(params.key, range)).pipe(
      Effect.catchTag("HistoryUnavailable", () => Effect.succeed(null))
    )
    return { name: source.name, key: source.key, range, days, error, figures }
  }).pipe(Effect.catchTag("SourceNotFound", () => Effect.succeed(null))))
  if (read === null) throw data({ message: `no source ${params.key}` }, { status: 404, statusText: "NotFound" })
  return {
    ...read,
    from: new Date(read.range.from).toISOString(),
    // The last day the range covers, for the date field.
    to: new Date(read.range.to - 1).toISOString()
  }
}

export default function SourceAnalyticsPage({ loaderData }: Route.ComponentProps) {
  const { name, key, figures, from, to, days, error } = loaderData
  return (
    <article className="source-page analytics-page">
      <p className="eyebrow"><Link to="/catalog">Catalog</Link> · <Link to={`/sources/${key}`}>{name}</Link></p>
      <h1>{name}: uptime and outages</h1>
      <section className="panel" aria-labelledby="range-title">
        <h2 id="range-title">Range</h2>
        <RangePicker base={`/sources/${key}/analytics`} from={from} to={to} days={days} error={error} />
        <p className="muted">
          From {from.slice(0, 16).replace("T", " ")} to {figures === null ? to.slice(0, 16).replace("T", " ") : figures.to.slice(0, 16).replace("T", " ")} UTC.
          Uptime counts time, not checks: maintenance and time nobody saw (before the first check, unreadable pages, hours without
          checks) are left out; degraded counts as up.
        </p>
      </section>
      {figures === null
        ? <section className="panel"><p className="muted">Analytics are unavailable right now (the results store did not answer).</p></section>
        : (
          <>
            <section className="panel" aria-labelledby="summary-title">
              <h2 id="summary-title">{name} as a whole</h2>
              <AnalyticsSummary analytics={figures.analytics} label={`${name} over the range`} />
              <LevelTable analytics={figures.analytics} />
              <OutageTable analytics={figures.analytics} />
              <HourOfWeek grid={figures.analytics.hour_of_week} />
            </section>
            {figures.components.length === 0 ? null : (
              <section className="panel" aria-labelledby="components-title">
                <h2 id="components-title">Components</h2>
                <div className="table-wrap">
                  <table className="data-table" data-testid="component-analytics">
                    <caption className="visually-hidden">Each component over the range</caption>
                    <thead>
                      <tr><th scope="col">Component</th><th scope="col">Uptime</th><th scope="col">Outages</th><th scope="col">Downtime</th><th scope="col">Mean time to resolution</th></tr>
                    </thead>
                    <tbody>
                      {figures.components.map((c) => (
                        <tr key={c.id}>
                          <th scope="row">{c.name}</th>
                          <td>{c.analytics.uptime === null ? "no data" : `${c.analytics.uptime.toFixed(3)} %`}</td>
                          <td>{c.analytics.outage_count}</td>
                          <td>{durationText(c.analytics.durations_ms.down)}</td>
                          <td>{durationText(c.analytics.mttr_ms)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              </section>
            )}
            <section className="panel" aria-labelledby="incidents-title">
              <h2 id="incidents-title">Incidents {name} published</h2>
              <IncidentReport incidents={figures.incidents} />
            </section>
            {figures.regions.length === 0 ? null : (
              <section className="panel" aria-labelledby="regions-title">
                <h2 id="regions-title">Regions</h2>
                <p className="muted">Uptime over the time of each region's components together; incidents that named the region.</p>
                <RegionTable regions={figures.regions} />
              </section>
            )}
            <section className="panel" aria-labelledby="response-title">
              <h2 id="response-title">Status page response time</h2>
              <p className="muted">How long statusgrid's fetches of {name}'s status page took: a sign of the provider's own load, not of its service.</p>
              <ResponseTimeChart times={figures.response_times} from={figures.from} to={figures.to} label={`Response time of ${name}'s status page`} />
            </section>
          </>
        )}
    </article>
  )
}
