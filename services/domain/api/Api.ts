import { HttpApi, OpenApi } from "effect/http-api"
import { AlertLinksGroup, AlertsGroup } from "./Alerts.ts"
import { ApiErrors } from "./Errors.ts"
import { CrowdGroup } from "./Crowd.ts"
import { CustomSourcesGroup } from "./CustomSources.ts"
import { MaintenanceGroup } from "./Maintenance.ts"
import { MembersGroup } from "./Members.ts"
import { MonitorsGroup } from "./Monitors.ts"
import { NotificationsGroup } from "./Notifications.ts"
import { OrganizationGroup } from "./Organization.ts"
import { StacksGroup } from "./Stacks.ts"
import { SourcesGroup } from "./Sources.ts"
import { ReportsGroup } from "./Reports.ts"
import { TvLinksGroup } from "./TvLinks.ts"

/**
 * Error classes keep their `_tag` in process but never send it (Errors.ts);
 * the generated schemas still list it as an optional property, so drop it
 * from the document to describe the wire as it is.
 */
const withoutErrorTags = (spec: Record<string, unknown>): Record<string, unknown> => {
  const components = spec["components"]
  const schemas = isRecord(components) ? components["schemas"] : undefined
  for (const schema of isRecord(schemas) ? Object.values(schemas) : []) {
    const properties = isRecord(schema) ? schema["properties"] : undefined
    if (isRecord(properties) && "code" in properties) delete properties["_tag"]
  }
  return spec
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

/**
 * The public HTTP API, `/api/v1`. Add new groups before `.middleware(ApiErrors)`:
 * middleware only applies to the groups added before it, and every endpoint
 * must carry it so that all errors have the one body (see Errors.ts).
 */
export class Api extends HttpApi.make("statusgrid")
  .add(SourcesGroup)
  .add(CrowdGroup)
  .add(OrganizationGroup)
  .add(MembersGroup)
  .add(StacksGroup)
  .add(MonitorsGroup)
  .add(CustomSourcesGroup)
  .add(MaintenanceGroup)
  .add(NotificationsGroup)
  .add(AlertsGroup)
  .add(AlertLinksGroup)
  .add(TvLinksGroup)
  .add(ReportsGroup)
  .middleware(ApiErrors)
  // A body field the endpoint does not know is an error naming it, not silently dropped.
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" })
  .prefix("/api/v1")
  .annotateMerge(OpenApi.annotations({
    title: "statusgrid API",
    version: "1",
    description: "Status of the external services statusgrid watches. Errors are `{ code, message, field? }`.",
    transform: withoutErrorTags
  }))
{}
