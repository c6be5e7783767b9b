import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { noNul } from "../Text.ts"
import { OrgAuth } from "./Auth.ts"
import { Forbidden, NotFound, PlanLimitReached } from "./Errors.ts"

const Uuid = Schema.String.annotate({ format: "uuid" })
const Timestamp = Schema.String.annotate({ format: "date-time" })
const UuidInput = Schema.String.check(Schema.isUUID(undefined, { message: "must be a UUID" }))

/** The plan feature (plans.features) TV links need: the spec's "TV dashboard", a Pro-plan feature. */
export const tvFeature = "tv_dashboard"

export const tvLinkLimits = { name: 200, stacks: 50, rotationMin: 2, rotationMax: 3600, rotationDefault: 20 } as const

/** A TV link's token: `tv_` and 32 base64url characters. It has a `_`, so it is never an organization's slug. */
export const tvTokenPattern = /^tv_[A-Za-z0-9_-]{32}$/

/** A wall screen's link: some of the organization's stacks, shown one after another at `/tv/<token>` without signing in. */
export const TvLink = Schema.Struct({
  id: Uuid,
  name: Schema.String,
  token: Schema.String.annotate({ description: "The link's credential; anyone with it sees the chosen stacks." }),
  url: Schema.String.annotate({ description: "Path of the TV page, `/tv/<token>`." }),
  rotation_s: Schema.Int.annotate({ description: "Seconds each stack stays on screen." }),
  stack_ids: Schema.Array(Uuid).annotate({ description: "The stacks shown, in rotation order." }),
  created_at: Timestamp
}).annotate({ identifier: "TvLink" })
export type TvLink = typeof TvLink.Type

export const TvLinkCreate = Schema.Struct({
  name: Schema.Trim.check(
    Schema.isBetweenLength(1, tvLinkLimits.name, { message: `must be 1 to ${tvLinkLimits.name} characters` }),
    noNul
  ),
  stack_ids: Schema.Array(UuidInput).check(
    Schema.isBetweenLength(1, tvLinkLimits.stacks, { message: `must list 1 to ${tvLinkLimits.stacks} stacks` })
  ).annotate({ description: "The organization's stacks to show, in rotation order." }),
  rotation_s: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: tvLinkLimits.rotationMin, maximum: tvLinkLimits.rotationMax }, {
      message: `must be an integer from ${tvLinkLimits.rotationMin} to ${tvLinkLimits.rotationMax}`
    }))
  ).annotate({ description: `Seconds each stack stays on screen; default ${tvLinkLimits.rotationDefault}.` })
}).annotate({ identifier: "TvLinkCreate" })
export type TvLinkCreate = typeof TvLinkCreate.Type

export const TvLinkList = Schema.Struct({ data: Schema.Array(TvLink) }).annotate({ identifier: "TvLinkList" })
export type TvLinkList = typeof TvLinkList.Type

/** The organization's TV links (a Pro-plan feature). */
export class TvLinksGroup extends HttpApiGroup.make("tvLinks")
  .add(
    HttpApiEndpoint.get("list", "/tv-links", { success: TvLinkList, error: Forbidden })
      .annotateMerge(OpenApi.annotations({ summary: "List the organization's TV links that are not revoked, oldest first" })),
    HttpApiEndpoint.post("create", "/tv-links", {
      payload: TvLinkCreate,
      success: TvLink.pipe(HttpApiSchema.status(201)),
      error: [Forbidden, NotFound, PlanLimitReached]
    }).annotateMerge(OpenApi.annotations({ summary: "Create a TV link (Admin, Member; Pro plan)" })),
    HttpApiEndpoint.delete("revoke", "/tv-links/:id", {
      params: { id: UuidInput },
      success: HttpApiSchema.NoContent,
      error: [Forbidden, NotFound]
    }).annotateMerge(OpenApi.annotations({ summary: "Revoke a TV link: its page answers 404 at once (Admin, Member)" }))
  )
  .middleware(OrgAuth)
  .annotateMerge(OpenApi.annotations({
    title: "TV links",
    description: "Wall-screen links to some of the organization's stacks, rotated, at `/tv/<token>`."
  }))
{}
