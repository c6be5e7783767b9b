import type { ReactNode } from "react"
import type { BoardIncident, BoardMaintenance } from "#services/orgs/StackBoard.ts"
import { IncidentList, MaintenanceList } from "./Board.tsx"

/**
 * The side column of a board (the organization's dashboard, one stack's page):
 * open incidents, then maintenance. `quietMaintenance` leaves the maintenance
 * panel out while none is announced (the dashboard, where stack cards come first).
 */
export function SidePanels(props: {
  readonly incidents: ReadonlyArray<BoardIncident>
  readonly maintenances: ReadonlyArray<BoardMaintenance>
  readonly quietMaintenance?: boolean
  /** More panels below (a stack page's report form). */
  readonly children?: ReactNode
}) {
  return (
    <aside className="board-side">
      <section className="panel side-panel" aria-labelledby="incidents-heading">
        <h2 id="incidents-heading">Open incidents</h2>
        <IncidentList incidents={props.incidents} headingId="incidents-heading" />
      </section>
      {props.quietMaintenance === true && props.maintenances.length === 0 ? null : (
        <section className="panel side-panel" aria-labelledby="maintenance-heading">
          <h2 id="maintenance-heading">Maintenance</h2>
          <MaintenanceList maintenances={props.maintenances} headingId="maintenance-heading" />
        </section>
      )}
      {props.children}
    </aside>
  )
}
