import { ReportSchedules } from "#services/reports/ReportSchedules.ts"
import { durationText, periodText, reportTitle, slaText, uptimeText } from "#services/reports/ReportFormats.ts"
import { data, Link } from "react-router"
import type { Route } from "./+types/report.ts"
import analyticsCss from "../../../components/analytics/analytics.css?url"
import { runEffect } from "../../../lib/effect.server.ts"
import { requireMember } from "../../../lib/member.server.ts"
import { isUuid } from "../stacks/stacks.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: analyticsCss }]

export const meta: Route.MetaFunction = ({ loaderData }) => [
  { title: loaderData?.report.content ? `${reportTitle(loaderData.report.content)} · statusgrid` : "Report · statusgrid" }
]

/** One report (the API's `GET /reports/{id}`): the figures its e-mail carried, and its CSV and PDF. Report e-mails link here. */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, principal } = await requireMember(context, request, params.org)
  if (!isUuid(params.id)) throw data({ message: `no report ${params.id}` }, { status: 404 })
  const report = await runEffect(context, request, ReportSchedules.use((r) => r.getReport(principal, params.id)))
  return { organization: { slug: organization.slug }, report }
}

export default function ReportPage({ loaderData }: Route.ComponentProps) {
  const { organization, report } = loaderData
  const base = `/settings/${organization.slug}/reports`
  const content = report.content
  return (
    <div className="analytics-page">
      <p className="eyebrow"><Link to={base}>Reports</Link> · {report.schedule_name}</p>
      {content === null
        ? (
          <section className="panel">
            <h1>{report.schedule_name}: {report.from.slice(0, 10)} to {report.to.slice(0, 10)}</h1>
            <p className="muted">Not generated yet: the report worker generates it when its period has ended.</p>
          </section>
        )
        : (
          <>
            <section className="panel" aria-labelledby="report-title">
              <h1 id="report-title">{report.schedule_name}</h1>
              <p>{periodText(content)} · uptime target {content.schedule.sla_target} % · {report.status === "sent" ? `e-mailed ${report.sent_at?.slice(0, 16).replace("T", " ")} UTC` : report.status}</p>
              <p><a href={`${base}/${report.id}/csv`} download>Download CSV</a> · <a href={`${base}/${report.id}/pdf`} download>Download PDF</a></p>
              <div className="table-wrap">
                <table className="data-table" data-testid="report-stacks">
                  <caption>Stacks</caption>
                  <thead>
                    <tr>
                      <th scope="col">Stack</th>
                      <th scope="col">Uptime</th>
                      <th scope="col">Target</th>
                      <th scope="col">Downtime</th>
                      <th scope="col">Outages</th>
                      <th scope="col">MTTR</th>
                      <th scope="col">Incidents</th>
                    </tr>
                  </thead>
                  <tbody>
                    {content.stacks.map((s) => (
                      <tr key={s.id}>
                        <th scope="row">{s.name}</th>
                        <td>{uptimeText(s.uptime)}</td>
                        <td><span className={`badge ${s.sla_met === false ? "tone-down" : s.sla_met ? "tone-ok" : "tone-unknown"}`}>{slaText(s.sla_met)}</span></td>
                        <td>{durationText(s.downtime_ms)}</td>
                        <td>{s.outage_count}</td>
                        <td>{durationText(s.mttr_ms)}</td>
                        <td>{s.incidents.count}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              {content.stacks.length === 0 ? <p className="muted">No stack to report on.</p> : null}
            </section>
            {content.stacks.map((s) => (
              <section key={s.id} className="panel" aria-labelledby={`stack-${s.id}`}>
                <h2 id={`stack-${s.id}`}>{s.name}</h2>
                <p className="muted">Allowed downtime at the target: {durationText(s.allowed_downtime_ms)}; used: {durationText(s.downtime_ms)}.</p>
                <div className="table-wrap">
                  <table className="data-table">
                    <caption className="visually-hidden">Items of {s.name}</caption>
                    <thead><tr><th scope="col">Item</th><th scope="col">Uptime</th><th scope="col">Downtime</th><th scope="col">Outages</th></tr></thead>
                    <tbody>
                      {s.items.map((i, n) => (
                        <tr key={n}><th scope="row">{i.name}</th><td>{uptimeText(i.uptime)}</td><td>{durationText(i.downtime_ms)}</td><td>{i.outage_count}</td></tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              </section>
            ))}
            {content.slowest_monitors.length === 0 ? null : (
              <section className="panel" aria-labelledby="slow-title">
                <h2 id="slow-title">Slowest monitors</h2>
                <div className="table-wrap">
                  <table className="data-table">
                    <caption className="visually-hidden">Monitors by mean response time</caption>
                    <thead><tr><th scope="col">Monitor</th><th scope="col">Mean</th><th scope="col">p95</th><th scope="col">Checks</th></tr></thead>
                    <tbody>
                      {content.slowest_monitors.map((m) => (
                        <tr key={m.id}><th scope="row">{m.name}</th><td>{Math.round(m.mean_ms)} ms</td><td>{Math.round(m.p95_ms)} ms</td><td>{m.checks}</td></tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              </section>
            )}
          </>
        )}
    </div>
  )
}
