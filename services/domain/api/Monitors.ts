import { HttpApiGroup, OpenApi } from "effect/http-api"
import { OrgAuth } from "./Auth.ts"

/** Website monitors: an organization's own HTTP(S) endpoints. */
export class MonitorsGroup extends HttpApiGroup.make("monitors")
  .middleware(OrgAuth)
  .annotateMerge(OpenApi.annotations({ title: "Monitors", description: "Website monitors: an organization's own HTTP(S) endpoints." }))
{}
