import type { CellStatus } from "#services/domain/History.ts"

/** A history strip as the page draws it: each cell's start (ISO, UTC) and status, and the window's uptime. */
export interface Strip {
  readonly cells: ReadonlyArray<readonly [start: string, status: CellStatus]>
  readonly uptime: number | null
}

const words: Record<CellStatus, string> = {
  operational: "operational",
  degraded: "degraded",
  down: "outage",
  maintenance: "maintenance",
  no_data: "no data"
}

const cellWidth = 4
const gap = 1

/** "98.72 %" (two decimals, never rounded up to 100 when something was down); "no data". */
export const uptimeText = (percent: number | null) =>
  percent === null ? "no data" : `${percent >= 99.995 && percent < 100 ? "99.99" : percent.toFixed(2)} %`

/**
 * A status history strip as server-rendered SVG: one bar per hour (24 h) or
 * day (90 d), coloured and titled by its most significant status, no chart
 * library. The label sums it up for screen readers.
 */
export function HistoryStrip({ strip, window, name }: { readonly strip: Strip; readonly window: "24h" | "90d"; readonly name: string }) {
  const counts = new Map<CellStatus, number>()
  for (const [, status] of strip.cells) counts.set(status, (counts.get(status) ?? 0) + 1)
  const unit = window === "24h" ? "hour" : "day"
  const summary = [...counts].map(([status, n]) => `${n} ${unit}${n === 1 ? "" : "s"} ${words[status]}`).join(", ")
  const width = strip.cells.length * (cellWidth + gap) - gap
  return (
    <span className="strip">
      <svg
        className="strip-bars"
        viewBox={`0 0 ${width} 20`}
        preserveAspectRatio="none"
        role="img"
        aria-label={`${name}, last ${window === "24h" ? "24 hours" : "90 days"}: ${summary}`}
      >
        {strip.cells.map(([start, status], i) => (
          <rect key={start} x={i * (cellWidth + gap)} y={0} width={cellWidth} height={20} rx={1} className={`cell-${status}`}>
            <title>{`${start.slice(0, window === "24h" ? 16 : 10).replace("T", " ")} UTC: ${words[status]}`}</title>
          </rect>
        ))}
      </svg>
      <span className="strip-uptime">{uptimeText(strip.uptime)}</span>
    </span>
  )
}

/** The strip's place while its data is on the way (the 90-day read can take a second). */
export function StripSkeleton() {
  return <span className="strip strip-skeleton" aria-hidden="true"><span className="strip-bars" /></span>
}
