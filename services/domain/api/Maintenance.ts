import { HttpApiGroup, OpenApi } from "effect/http-api"
import { OrgAuth } from "./Auth.ts"

/** The organization's own maintenance windows. */
export class MaintenanceGroup extends HttpApiGroup.make("maintenance")
  .middleware(OrgAuth)
  .annotateMerge(OpenApi.annotations({ title: "Maintenance", description: "The organization's own maintenance windows." }))
{}
