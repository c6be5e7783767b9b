import type { ResponseTimes } from "#services/domain/Analytics.ts"
import { scaleLinear, scaleUtc } from "d3-scale"
import { line } from "d3-shape"

/**
 * Response times over a range (p50, p95 and p99 per hour or per day) as an
 * SVG drawn on the server: d3-scale places the points and d3-shape writes
 * the paths (pure functions, no DOM, so the chart is in the page's HTML and
 * needs no JavaScript; services/decisions/0012-analytics-charts.md). Honest
 * by construction: the y axis starts at 0 ms, the x axis spans the whole
 * range asked (not just the hours with data), a line breaks where a bucket
 * has no check rather than joining across the gap, and the exact figures are
 * in the table under the chart.
 */

type Point = ResponseTimes["hourly"][number]

const series = [
  ["p50_ms", "p50 (median)", "rt-p50"],
  ["p95_ms", "p95", "rt-p95"],
  ["p99_ms", "p99", "rt-p99"]
] as const

const hourMs = 3_600_000
const dayMs = 24 * hourMs

const width = 720
const height = 200
const pad = { left: 52, right: 12, top: 12, bottom: 26 }

const stamp = (iso: string, bucket: "hour" | "day") => (bucket === "day" ? iso.slice(0, 10) : `${iso.slice(0, 13).replace("T", " ")}:00`)

/** A round upper bound for the y axis: 1, 2 or 5 × a power of ten. */
const niceTop = (max: number) => {
  const power = 10 ** Math.floor(Math.log10(Math.max(1, max)))
  return [1, 2, 5, 10].map((m) => m * power).find((v) => v >= max) ?? 10 * power
}

export function ResponseTimeChart(props: {
  readonly times: ResponseTimes
  /** The range shown, ISO instants. */
  readonly from: string
  readonly to: string
  readonly label: string
}) {
  const bucket: "hour" | "day" = props.times.hourly.length > 0 ? "hour" : "day"
  const points = bucket === "hour" ? props.times.hourly : props.times.daily
  const step = bucket === "hour" ? hourMs : dayMs
  if (points.length === 0) return <p className="muted">No response time recorded in this range.</p>
  const from = Date.parse(props.from)
  const to = Math.max(Date.parse(props.to), from + step)
  const x = scaleUtc().domain([new Date(from), new Date(to)]).range([pad.left, width - pad.right])
  const top = niceTop(Math.max(...points.map((p) => p.p99_ms)))
  const y = scaleLinear().domain([0, top]).range([height - pad.bottom, pad.top])
  // One point per bucket at its middle; a bucket missing between two present ones breaks the line.
  const at = (p: Point) => Date.parse(p.at) + step / 2
  const withGaps: Array<Point | null> = []
  for (const [i, p] of points.entries()) {
    const previous = points[i - 1]
    if (previous !== undefined && Date.parse(p.at) - Date.parse(previous.at) > step) withGaps.push(null)
    withGaps.push(p)
  }
  const path = (key: typeof series[number][0]) =>
    line<Point | null>()
      .defined((p) => p !== null)
      .x((p) => x(new Date(at(p!))))
      .y((p) => y(p![key]))(withGaps) ?? ""
  const ticks = x.ticks(6)
  const worst = Math.max(...points.map((p) => p.p99_ms))
  const summary = `${props.label}: ${points.length} ${bucket === "hour" ? "hours" : "days"} with checks; highest p99 ${Math.round(worst)} ms`
  return (
    <figure className="chart rt-chart">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={summary}>
        {[0, top / 2, top].map((v) => (
          <g key={v}>
            <line x1={pad.left} x2={width - pad.right} y1={y(v)} y2={y(v)} className={v === 0 ? "axis" : "grid"} />
            <text x={pad.left - 6} y={y(v) + 4} textAnchor="end">{`${v} ms`}</text>
          </g>
        ))}
        {ticks.map((t) => (
          <text key={t.getTime()} x={x(t)} y={height - 8} textAnchor={x(t) > width - pad.right - 20 ? "end" : "middle"}>
            {bucket === "hour" && to - from <= 2 * dayMs ? t.toISOString().slice(11, 16) : t.toISOString().slice(5, 10)}
          </text>
        ))}
        {series.map(([key, , className]) => <path key={key} d={path(key)} className={className} fill="none" />)}
        {/* A lone point between gaps draws no segment: mark every point. */}
        {points.map((p) => <circle key={p.at} cx={x(new Date(at(p)))} cy={y(p.p50_ms)} r={1.6} className="rt-p50-dot" />)}
      </svg>
      <figcaption className="muted small">
        <span className="legend">
          {series.map(([key, word, className]) => <span key={key} className={`legend-item ${className}`}>{word}</span>)}
        </span>
        <br />
        Milliseconds per {bucket} (UTC), {stamp(props.from, "hour")} to {stamp(props.to, "hour")}; breaks in a line are
        {bucket === "hour" ? " hours" : " days"} without checks. Percentiles are t-digest estimates.
      </figcaption>
      <details className="chart-table">
        <summary>Figures as a table</summary>
        <div className="table-wrap">
          <table className="data-table" data-testid="response-times">
            <caption className="visually-hidden">{props.label} per {bucket}</caption>
            <thead>
              <tr>
                <th scope="col">{bucket === "hour" ? "Hour (UTC)" : "Day (UTC)"}</th>
                <th scope="col">Checks</th>
                <th scope="col">Mean</th>
                <th scope="col">p50</th>
                <th scope="col">p95</th>
                <th scope="col">p99</th>
                <th scope="col">Max</th>
              </tr>
            </thead>
            <tbody>
              {points.map((p) => (
                <tr key={p.at}>
                  <th scope="row">{stamp(p.at, bucket)}</th>
                  <td>{p.checks}</td>
                  <td>{Math.round(p.mean_ms)} ms</td>
                  <td>{Math.round(p.p50_ms)} ms</td>
                  <td>{Math.round(p.p95_ms)} ms</td>
                  <td>{Math.round(p.p99_ms)} ms</td>
                  <td>{p.max_ms} ms</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  )
}
