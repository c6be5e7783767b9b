import type { CellStatus } from "#services/domain/History.ts"

const cellWords = { operational: "operational", degraded: "degraded", down: "down", maintenance: "maintenance", no_data: "no data" } as const

/** Percent with one decimal, or a dash when no check counts. */
export const percentText = (percent: number | null): string => percent === null ? "—" : `${percent >= 99.995 ? "100" : percent.toFixed(2)} %`

/** A strip as the page carries it (plain values that survive the trip to the browser). */
export interface ShownStrip {
  readonly cell: "1h" | "1d"
  readonly cells: ReadonlyArray<{ readonly start: string; readonly status: CellStatus; readonly uptime: number | null }>
  readonly uptime: number | null
  readonly uptime_30d: number | null
}

/**
 * A status history strip: one cell per hour (24 h) or UTC day (90 d), oldest
 * first; each cell names its time and status for screen readers and on hover.
 */
export function HistoryStrip({ strip, label }: { readonly strip: ShownStrip; readonly label: string }) {
  const daily = strip.cell === "1d"
  return (
    <>
      <ul className="strip" aria-label={label}>
        {strip.cells.map((cell) => {
          const start = new Date(cell.start)
          const when = daily ? start.toISOString().slice(0, 10) : `${start.toISOString().slice(0, 13).replace("T", " ")}:00 UTC`
          const text = `${when}: ${cellWords[cell.status]}${cell.uptime === null ? "" : `, ${percentText(cell.uptime)} up`}`
          return <li key={cell.start} className={`cell-${cell.status}`} title={text}><span className="visually-hidden">{text}</span></li>
        })}
      </ul>
      <p className="strip-legend" aria-hidden="true">
        <span>{daily ? "90 days ago" : "24 h ago"}</span>
        <span>{strip.uptime === null ? "no data in this window" : `${percentText(strip.uptime)} over the window`}</span>
        <span>{daily ? "today" : "now"}</span>
      </p>
    </>
  )
}
