import { HttpApiGroup, OpenApi } from "effect/http-api"
import { OrgAuth } from "./Auth.ts"

/** Members, invitations and roles. */
export class MembersGroup extends HttpApiGroup.make("members")
  .middleware(OrgAuth)
  .annotateMerge(OpenApi.annotations({ title: "Members", description: "Members, invitations and roles." }))
{}
