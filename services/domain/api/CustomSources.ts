import { HttpApiGroup, OpenApi } from "effect/http-api"
import { OrgAuth } from "./Auth.ts"

/** An organization's private sources: a status page URL (provider detected) or a status set by hand. */
export class CustomSourcesGroup extends HttpApiGroup.make("customSources")
  .middleware(OrgAuth)
  .annotateMerge(OpenApi.annotations({ title: "CustomSources", description: "An organization's private sources: a status page URL (provider detected) or a status set by hand." }))
{}
