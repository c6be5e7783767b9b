import type { MonitorCheckLogEntry, MonitorCheckResult } from "#services/domain/api/Monitors.ts"
import { RelativeTime } from "../../RelativeTime.tsx"

const ms = (n: number) => `${Math.round(n * 10) / 10} ms`

const statusWord: Record<string, { readonly word: string; readonly tone: string; readonly icon: string }> = {
  up: { word: "up", tone: "ok", icon: "✓" },
  degraded: { word: "degraded", tone: "warn", icon: "!" },
  down: { word: "down", tone: "down", icon: "✕" }
}

/** A check's outcome as icon + word + colour. */
export function CheckStatus({ status }: { readonly status: string }) {
  const look = statusWord[status] ?? { word: status, tone: "unknown", icon: "?" }
  return (
    <span className={`badge tone-${look.tone}`}>
      <span className="badge-icon" aria-hidden="true">{look.icon}</span>
      {look.word}
    </span>
  )
}

/** "Check now": the outcome, its phases as a stacked bar and a list, and the certificate. */
export function CheckResultView({ result }: { readonly result: MonitorCheckResult }) {
  const p = result.phases
  const phases = [
    ["DNS", p.dns_ms, "dns"],
    ["Connect", p.connect_ms, "connect"],
    ["TLS", p.tls_ms, "tls"],
    ["First byte", p.first_byte_ms, "ttfb"]
  ] as const
  const rest = Math.max(0, p.total_ms - phases.reduce((sum, [, v]) => sum + v, 0))
  const total = Math.max(p.total_ms, 0.1)
  return (
    <div className="check-result" id="check-result" role="status">
      <p className="check-line">
        <CheckStatus status={result.status} />{" "}
        <strong>{result.http_status === 0 ? "no response" : `HTTP ${result.http_status}`}</strong>
        {" in "}<strong>{ms(p.total_ms)}</strong>
        {result.reused ? <span className="muted"> · kept-alive connection (no DNS, connect or TLS)</span> : null}
        {result.redirects > 0 ? <span className="muted"> · {result.redirects} redirect(s) to {result.final_url}</span> : null}
      </p>
      {result.error !== "" ? <p className="form-error">{result.error}</p> : null}
      <div className="phase-bar" aria-hidden="true">
        {phases.map(([label, v, cls]) => v > 0 ? <span key={label} className={`phase-${cls}`} style={{ width: `${(v / total) * 100}%` }} /> : null)}
        {rest > 0 ? <span className="phase-rest" style={{ width: `${(rest / total) * 100}%` }} /> : null}
      </div>
      <dl className="phases">
        {phases.map(([label, v, cls]) => (
          <div key={label}>
            <dt><span className={`swatch phase-${cls}`} aria-hidden="true" />{label}</dt>
            <dd>{ms(v)}</dd>
          </div>
        ))}
        <div>
          <dt><span className="swatch phase-rest" aria-hidden="true" />Body and rest</dt>
          <dd>{ms(rest)}</dd>
        </div>
        <div>
          <dt>Total</dt>
          <dd>{ms(p.total_ms)}</dd>
        </div>
      </dl>
      {result.tls !== null
        ? (
          <div className="certificate">
            <h3>Certificate</h3>
            <dl>
              <div><dt>Subject</dt><dd>{result.tls.subject}</dd></div>
              <div><dt>Issuer</dt><dd>{result.tls.issuer}</dd></div>
              <div><dt>Valid until</dt><dd>{result.tls.valid_to.slice(0, 10)} ({result.tls.days_left} days left)</dd></div>
              <div><dt>Trusted</dt><dd>{result.tls.authorized ? "yes" : `no: ${result.tls.authorization_error}`}</dd></div>
            </dl>
          </div>
        )
        : <p className="muted">No certificate: the endpoint is plain http.</p>}
      <p className="muted small">A trial check: the monitor's state, alerts and check log stay the scheduled checks'.</p>
    </div>
  )
}

/** The response time of the latest checks (oldest on the left), a server-rendered SVG; failed checks marked. */
export function ResponseChart({ checks }: { readonly checks: ReadonlyArray<MonitorCheckLogEntry> }) {
  if (checks.length === 0) return <p className="muted">No checks recorded yet.</p>
  const points = checks.toReversed()
  const width = 640
  const height = 140
  const pad = { left: 44, right: 8, top: 10, bottom: 18 }
  const max = Math.max(10, ...points.map((c) => c.latency_ms))
  const top = Math.ceil(max / 10) * 10
  const x = (i: number) => pad.left + (points.length === 1 ? (width - pad.left - pad.right) / 2 : (i / (points.length - 1)) * (width - pad.left - pad.right))
  const y = (v: number) => pad.top + (1 - v / top) * (height - pad.top - pad.bottom)
  const line = points.map((c, i) => `${x(i).toFixed(1)},${y(c.latency_ms).toFixed(1)}`).join(" ")
  const avg = Math.round(points.reduce((s, c) => s + c.latency_ms, 0) / points.length)
  const label = `Response time of the last ${points.length === 1 ? "check" : `${points.length} checks`}: average ${avg} ms, highest ${max} ms`
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={label} preserveAspectRatio="none">
        <line x1={pad.left} x2={width - pad.right} y1={y(0)} y2={y(0)} className="axis" />
        <line x1={pad.left} x2={width - pad.right} y1={y(top)} y2={y(top)} className="grid" />
        <line x1={pad.left} x2={width - pad.right} y1={y(top / 2)} y2={y(top / 2)} className="grid" />
        <text x={pad.left - 6} y={y(top) + 4} textAnchor="end">{top}</text>
        <text x={pad.left - 6} y={y(top / 2) + 4} textAnchor="end">{top / 2}</text>
        <text x={pad.left - 6} y={y(0) + 4} textAnchor="end">0</text>
        <polyline points={line} className="latency" />
        {points.map((c, i) => (
          <circle key={i} cx={x(i)} cy={y(c.latency_ms)} r={c.status === "down" ? 4 : 2.5} className={`dot-${c.status}`} />
        ))}
      </svg>
      <figcaption className="muted small">{label} (ms; larger red dots: failed checks).</figcaption>
    </figure>
  )
}

/** The check log: the latest scheduled checks, newest first. */
export function CheckLog({ checks }: { readonly checks: ReadonlyArray<MonitorCheckLogEntry> }) {
  if (checks.length === 0) return null
  return (
    <div className="table-wrap">
      <table className="data-table" id="check-log">
        <caption className="visually-hidden">Latest checks, newest first</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Result</th>
            <th scope="col">HTTP</th>
            <th scope="col">Response</th>
            <th scope="col">DNS / connect / TLS / first byte</th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {checks.map((c, i) => (
            <tr key={`${c.checked_at}-${i}`}>
              <td><RelativeTime date={c.checked_at} /></td>
              <td><CheckStatus status={c.status} /></td>
              <td>{c.http_status === 0 ? "—" : c.http_status}</td>
              <td>{c.latency_ms} ms</td>
              <td className="small">{[c.dns_ms, c.connect_ms, c.tls_ms, c.first_byte_ms].map((v) => Math.round(v)).join(" / ")} ms</td>
              <td className="small">{c.error || "—"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
