import { RelativeTime } from "../RelativeTime.tsx"
import type { ScreenIncident } from "./screen.ts"

const statusWord: Record<string, string> = {
  investigating: "Investigating",
  identified: "Identified",
  monitoring: "Monitoring",
  resolved: "Resolved",
  postmortem: "Postmortem"
}

/** Incidents of the stacks' sources, open ones first, each with its latest update. */
export function Incidents({ incidents }: { readonly incidents: ReadonlyArray<ScreenIncident> }) {
  return (
    <ul className="screen-incidents">
      {incidents.map((incident) => (
        <li key={incident.id} className={`screen-incident impact-${incident.impact}${incident.resolved_at === null ? "" : " is-resolved"}`}>
          <p className="screen-incident-head">
            <strong>{incident.source}</strong>
            <span className="screen-incident-status">{statusWord[incident.status] ?? incident.status}</span>
          </p>
          <p className="screen-incident-title">{incident.title}</p>
          {incident.latest_update === null ? null : <p className="screen-incident-update">{incident.latest_update}</p>}
          <p className="screen-incident-time">
            {incident.resolved_at === null ? "updated " : "resolved "}
            <RelativeTime date={incident.resolved_at ?? incident.updated_at} />
          </p>
        </li>
      ))}
    </ul>
  )
}
