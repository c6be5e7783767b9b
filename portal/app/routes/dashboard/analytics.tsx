import { StackAnalyticsReader } from "#services/reports/StackAnalytics.ts"
import { healthLabel } from "#services/domain/StackHealth.ts"
import { Clock, Effect } from "effect"
import { Link } from "react-router"
import type { Route } from "./+types/analytics.ts"
import { AnalyticsSummary, durationText, HourOfWeek, OutageTable, RangePicker, uptimeText } from "../../components/analytics/AnalyticsReport.tsx"
import analyticsCss from "../../components/analytics/analytics.css?url"
import { IncidentReport } from "../../components/analytics/IncidentReport.tsx"
import { runEffect } from "../../lib/effect.server.ts"
import { pageRange } from "../../lib/analyticsRange.server.ts"
import { requireMember } from "../../lib/member.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: analyticsCss }]

export const meta: Route.MetaFunction = ({ loaderData }) => [{ title: `${loaderData?.name ?? "Stack"} uptime and outages · statusgrid` }]

/**
 * A stack's analytics: the API's `GET /stacks/{id}/analytics` through the
 * same reader (`StackAnalyticsReader`), with the member's access, over the
 * range of the query (7, 30 or 90 days, or two dates).
 */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, principal } = await requireMember(context, request, params.org)
  const url = new URL(request.url)
  const read = await runEffect(context, request, Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const { range, days, error } = pageRange(url, now)
    const figures = yield* StackAnalyticsReader.use((r) => r.readBySlug(principal, params.slug, range)).pipe(
      Effect.catchTag("HistoryUnavailable", () => Effect.succeed(null))
    )
    return { range, days, error, figures }
  }))
  return {
    ...read,
    name: read.figures?.name ?? params.slug,
    organization: { slug: organization.slug, name: organization.name },
    slug: params.slug,
    from: new Date(read.range.from).toISOString(),
    to: new Date(read.range.to - 1).toISOString()
  }
}

const healthRows = [
  ["major_outage", "tone-down"],
  ["partial_outage", "tone-partial"],
  ["degraded", "tone-warn"],
  ["maintenance", "tone-maint"],
  ["operational", "tone-ok"],
  ["unknown", "tone-unknown"]
] as const

export default function StackAnalyticsPage({ loaderData }: Route.ComponentProps) {
  const { name, figures, from, to, days, error, organization, slug } = loaderData
  const base = `/dashboard/${organization.slug}/stacks/${slug}`
  const total = figures === null ? 0 : Object.values(figures.health_ms).reduce((a, b) => a + b, 0)
  return (
    <div className="analytics-page">
      <nav aria-label="Breadcrumb" className="breadcrumb">
        <Link to={`/dashboard/${organization.slug}`}>{organization.name}</Link> <span aria-hidden="true">›</span>{" "}
        <Link to={base}>{name}</Link> <span aria-hidden="true">›</span> <span>Analytics</span>
      </nav>
      <section className="panel" aria-labelledby="range-title">
        <h1 id="range-title">{name}: uptime and outages</h1>
        <RangePicker base={`${base}/analytics`} from={from} to={to} days={days} error={error} />
        <p className="muted">
          The stack counts as down while its banner showed an outage, partial or major: it is up only while every item it
          shows that was seen is up. Maintenance and time when none of its items was seen are left out; degraded counts as up.
        </p>
      </section>
      {figures === null
        ? <section className="panel"><p className="muted">Analytics are unavailable right now (the results store did not answer).</p></section>
        : (
          <>
            <section className="panel" aria-labelledby="summary-title">
              <h2 id="summary-title">The stack as a whole</h2>
              <AnalyticsSummary analytics={figures.analytics} label={`${name} over the range`} />
              <div className="table-wrap">
                <table className="data-table" data-testid="health-durations">
                  <caption>Time at each banner</caption>
                  <thead><tr><th scope="col">Banner</th><th scope="col">Time</th><th scope="col">Share of the range</th></tr></thead>
                  <tbody>
                    {healthRows.map(([health, tone]) => (
                      <tr key={health}>
                        <th scope="row"><span className={`badge ${tone}`}>{health === "unknown" ? "Not seen" : healthLabel[health]}</span></th>
                        <td>{durationText(figures.health_ms[health])}</td>
                        <td>{total === 0 ? "—" : `${((figures.health_ms[health] / total) * 100).toFixed(2)} %`}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <OutageTable analytics={figures.analytics} />
              <HourOfWeek grid={figures.analytics.hour_of_week} />
            </section>
            <section className="panel" aria-labelledby="items-title">
              <h2 id="items-title">Items</h2>
              {figures.items.length === 0 ? <p className="muted">This stack is empty.</p> : (
                <div className="table-wrap">
                  <table className="data-table" data-testid="item-analytics">
                    <caption className="visually-hidden">Each item of the stack over the range</caption>
                    <thead>
                      <tr>
                        <th scope="col">Item</th>
                        <th scope="col">Uptime</th>
                        <th scope="col">Outages</th>
                        <th scope="col">Downtime</th>
                        <th scope="col">Mean time to resolution</th>
                      </tr>
                    </thead>
                    <tbody>
                      {figures.items.map((item, i) => (
                        <tr key={i}>
                          <th scope="row">
                            {item.name}
                            <span className="muted small">
                              {item.kind === "monitor" ? " · monitor" : item.kind === "source" ? " · whole source" : ` · ${item.source_key}`}
                            </span>
                          </th>
                          <td>{uptimeText(item.analytics.uptime)}</td>
                          <td>{item.analytics.outage_count}</td>
                          <td>{durationText(item.analytics.durations_ms.down)}</td>
                          <td>{durationText(item.analytics.mttr_ms)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </section>
            <section className="panel" aria-labelledby="incidents-title">
              <h2 id="incidents-title">Incidents of its sources</h2>
              <p className="muted">Incidents the providers published for the stack's whole sources, and those naming one of its components.</p>
              <IncidentReport incidents={figures.incidents} />
            </section>
          </>
        )}
    </div>
  )
}
