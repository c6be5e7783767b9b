import type { IncidentAnalytics, RegionAnalytics } from "#services/domain/Analytics.ts"
import { durationText, HourOfWeek, uptimeText } from "./AnalyticsReport.tsx"

/**
 * The incidents a provider published over the range (services/domain/IncidentFigures.ts):
 * how many and how often, by impact, how long they took to resolve, the
 * components and regions they named, and when they began. Tables: exact
 * figures without JavaScript.
 */
export function IncidentReport({ incidents }: { readonly incidents: IncidentAnalytics }) {
  if (incidents.count === 0) return <p className="muted">No incident began in this range.</p>
  const i = incidents
  return (
    <>
      <dl className="figures" aria-label="Incidents over the range" data-testid="incident-figures">
        <div><dt>Incidents</dt><dd data-testid="incident-count">{i.count}</dd></div>
        <div><dt>Per week</dt><dd>{i.per_week.toFixed(1)}</dd></div>
        <div><dt>Mean time to resolution</dt><dd data-testid="incident-mttr">{durationText(i.mttr_ms)}</dd></div>
        <div><dt>Longest</dt><dd>{durationText(i.longest_ms)}</dd></div>
        <div><dt>Still open</dt><dd>{i.open}</dd></div>
        <div><dt>Components affected</dt><dd>{i.components_affected}</dd></div>
      </dl>
      <div className="table-wrap">
        <table className="data-table" data-testid="incident-impact">
          <caption>Incidents by impact</caption>
          <thead><tr><th scope="col">Impact</th><th scope="col">Incidents</th></tr></thead>
          <tbody>
            {([["critical", "Critical", "tone-down"], ["major", "Major", "tone-down"], ["minor", "Minor", "tone-warn"], ["none", "None stated", "tone-unknown"]] as const).map(([key, word, tone]) => (
              <tr key={key}><th scope="row"><span className={`badge ${tone}`}>{word}</span></th><td>{i.by_impact[key]}</td></tr>
            ))}
          </tbody>
        </table>
      </div>
      {i.components.length === 0 ? null : (
        <div className="table-wrap">
          <table className="data-table" data-testid="incident-components">
            <caption>Components named most often</caption>
            <thead><tr><th scope="col">Component</th><th scope="col">Incidents</th></tr></thead>
            <tbody>{i.components.map((c) => <tr key={c.id}><th scope="row">{c.name}</th><td>{c.incidents}</td></tr>)}</tbody>
          </table>
        </div>
      )}
      <HourOfWeek grid={i.hour_of_week} caption="When incidents began (UTC hour of the week)" />
    </>
  )
}

/** Each region the provider reports: its components' uptime (component-time), outages and incidents. */
export function RegionTable({ regions }: { readonly regions: ReadonlyArray<RegionAnalytics> }) {
  if (regions.length === 0) return null
  return (
    <div className="table-wrap">
      <table className="data-table" data-testid="regions">
        <caption className="visually-hidden">Each region over the range</caption>
        <thead>
          <tr>
            <th scope="col">Region</th>
            <th scope="col">Components</th>
            <th scope="col">Uptime</th>
            <th scope="col">Downtime</th>
            <th scope="col">Outages</th>
            <th scope="col">Incidents</th>
          </tr>
        </thead>
        <tbody>
          {regions.map((r) => (
            <tr key={r.region}>
              <th scope="row">{r.region}</th>
              <td>{r.components}</td>
              <td>{uptimeText(r.uptime)}</td>
              <td>{durationText(r.durations_ms.down)}</td>
              <td>{r.outage_count}</td>
              <td>{r.incidents}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
