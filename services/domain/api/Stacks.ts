import { HttpApiGroup, OpenApi } from "effect/http-api"
import { OrgAuth } from "./Auth.ts"

/** Stacks: components grouped for a dashboard, public or private. */
export class StacksGroup extends HttpApiGroup.make("stacks")
  .middleware(OrgAuth)
  .annotateMerge(OpenApi.annotations({ title: "Stacks", description: "Stacks: components grouped for a dashboard, public or private." }))
{}
