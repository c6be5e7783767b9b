import type { Adapter } from "../Adapter.ts"
import { hostIs } from "../hosts.ts"
import { hasStatuspageMarkers, isProbeSummary, parseStatuspageSummary, summaryEndpoints } from "./statuspage.ts"

/**
 * incident.io pages serve the Statuspage v2 contract, with null for empty
 * lists, flat components, no incident components and `full_outage`; the
 * shared Statuspage parser reads all of that.
 */

/** incident.io ids are ULIDs; Statuspage's are 12 lower-case characters. */
const ulid = /^[0-9A-HJKMNP-TV-Z]{26}$/

export const incidentIo = {
  id: "incident_io",
  name: "incident.io",
  endpoints: summaryEndpoints,
  parse: (fetched, source, now) => parseStatuspageSummary("incident_io", fetched, source, now),
  detect: {
    host: (url) => url.hostname.endsWith(".incident.io") || hostIs(url.hostname, "incidentio.com"),
    // Both serve the same path, so accept only a summary showing incident.io's traits.
    probe: {
      path: "/api/v2/summary.json",
      accepts: (body) =>
        isProbeSummary(body) &&
        (body.components === null || body.incidents === null || body.scheduled_maintenances === null ||
          body.components.some((c) => ulid.test(c.id)))
    },
    // A Statuspage page that merely mentions incident.io (say, in an incident text) stays Statuspage's.
    html: (html) => html.includes("incident.io") && !hasStatuspageMarkers(html)
  }
} as const satisfies Adapter
