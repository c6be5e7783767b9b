import type { SubjectAnalytics } from "#services/domain/Analytics.ts"
import { durationText, uptimeText } from "#services/domain/FigureText.ts"
import { Form, Link } from "react-router"

export { durationText, uptimeText }

/**
 * A subject's figures from status durations (services/domain/Analytics.ts):
 * uptime, downtime, outages and their mean time to resolution, the time at
 * each level, the outages one by one and when they start in the week.
 * Tables, not charts: exact figures that read without JavaScript and to a
 * screen reader; the range's unknown time is always shown beside the uptime.
 */

const levelRows = [
  ["down", "Down", "tone-down"],
  ["degraded", "Degraded", "tone-warn"],
  ["maintenance", "Maintenance", "tone-maint"],
  ["operational", "Operational", "tone-ok"],
  ["unknown", "Unknown (not seen)", "tone-unknown"]
] as const

export const when = (iso: string) => `${iso.slice(0, 16).replace("T", " ")} UTC`
const days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"] as const

/** The range: 7, 30 or 90 days up to now, or two UTC dates (a GET form: works without JavaScript). */
export function RangePicker(props: { readonly base: string; readonly from: string; readonly to: string; readonly days: number | null; readonly error?: string | undefined }) {
  return (
    <nav className="range-picker" aria-label="Range">
      <ul>
        {[7, 30, 90].map((d) => (
          <li key={d}><Link to={`${props.base}?days=${d}`} aria-current={props.days === d ? "page" : undefined}>Last {d} days</Link></li>
        ))}
      </ul>
      <Form method="get" className="inline-form">
        <div className="field">
          <label htmlFor="range-from">From (UTC)</label>
          <input id="range-from" name="from" type="date" defaultValue={props.from.slice(0, 10)} aria-invalid={props.error ? true : undefined} aria-describedby={props.error ? "range-error" : undefined} />
        </div>
        <div className="field">
          <label htmlFor="range-to">To (UTC, included)</label>
          <input id="range-to" name="to" type="date" defaultValue={props.to.slice(0, 10)} />
        </div>
        <div className="field"><button type="submit" className="button small">Show</button></div>
      </Form>
      {props.error ? <p className="field-error" id="range-error" role="alert">{props.error}</p> : null}
    </nav>
  )
}

export function AnalyticsSummary({ analytics, label }: { readonly analytics: SubjectAnalytics; readonly label: string }) {
  const d = analytics.durations_ms
  return (
    <dl className="figures" aria-label={label}>
      <div><dt>Uptime</dt><dd data-testid="uptime">{uptimeText(analytics.uptime)}</dd></div>
      <div><dt>Downtime</dt><dd>{durationText(d.down)}</dd></div>
      <div><dt>Outages</dt><dd data-testid="outage-count">{analytics.outage_count}</dd></div>
      <div><dt>Mean time to resolution</dt><dd data-testid="mttr">{durationText(analytics.mttr_ms)}</dd></div>
      <div><dt>Not seen</dt><dd>{durationText(d.unknown)}</dd></div>
    </dl>
  )
}

export function LevelTable({ analytics }: { readonly analytics: SubjectAnalytics }) {
  const d = analytics.durations_ms
  const total = d.down + d.degraded + d.maintenance + d.operational + d.unknown
  return (
    <div className="table-wrap">
      <table className="data-table">
        <caption>Time at each status</caption>
        <thead><tr><th scope="col">Status</th><th scope="col">Time</th><th scope="col">Share of the range</th></tr></thead>
        <tbody>
          {levelRows.map(([level, word, tone]) => (
            <tr key={level}>
              <th scope="row"><span className={`badge ${tone}`}>{word}</span></th>
              <td>{durationText(d[level])}</td>
              <td>{total === 0 ? "—" : `${((d[level] / total) * 100).toFixed(2)} %`}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

export function OutageTable({ analytics }: { readonly analytics: SubjectAnalytics }) {
  if (analytics.outages.length === 0) return <p className="muted">No outage in this range.</p>
  return (
    <div className="table-wrap">
      <table className="data-table" data-testid="outages">
        <caption>Outages</caption>
        <thead><tr><th scope="col">Began</th><th scope="col">Ended</th><th scope="col">Lasted</th></tr></thead>
        <tbody>
          {analytics.outages.map((o) => (
            <tr key={o.start}>
              <td>{when(o.start)}{o.cut ? <span className="muted"> (before the range)</span> : null}</td>
              <td>{o.end === null ? <span className="badge tone-down">still down</span> : when(o.end)}</td>
              <td>{durationText(o.duration_ms)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

/** Starts (of outages, or of incidents) by weekday and hour (UTC): a table whose cells darken with the count. */
export function HourOfWeek({ grid, caption = "When outages began (UTC hour of the week)" }: {
  readonly grid: ReadonlyArray<ReadonlyArray<number>>
  readonly caption?: string
}) {
  const max = Math.max(0, ...grid.flat())
  if (max === 0) return null
  return (
    <div className="heatmap-wrap">
      <table className="heatmap">
        <caption>{caption}</caption>
        <thead>
          <tr><td />{Array.from({ length: 24 }, (_, h) => <th key={h} scope="col">{h % 3 === 0 ? String(h).padStart(2, "0") : <span className="visually-hidden">{h}</span>}</th>)}</tr>
        </thead>
        <tbody>
          {grid.map((row, day) => (
            <tr key={days[day]}>
              <th scope="row">{days[day]}</th>
              {row.map((n, h) => (
                <td key={h} className={n === 0 ? "heat-0" : `heat-${Math.min(4, Math.ceil((n / max) * 4))}`}>
                  <span className="visually-hidden">{`${days[day]} ${String(h).padStart(2, "0")}:00: `}</span>{n === 0 ? "" : n}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
