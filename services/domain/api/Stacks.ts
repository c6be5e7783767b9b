import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { StackHealth } from "../StackHealthSchema.ts"
import { ComponentStatus, MonitorState, SourceStatus } from "../Status.ts"
import { noNul } from "../Text.ts"
import { OrgAuth } from "./Auth.ts"
import { Conflict, Forbidden, InvalidParameter, NotFound, PlanLimitReached } from "./Errors.ts"
import { AnalyticsQuery, StackAnalytics } from "../Analytics.ts"
import { Page, PageQuery } from "./Paging.ts"

const Uuid = Schema.String.annotate({ format: "uuid" })
const Timestamp = Schema.String.annotate({ format: "date-time" })
const UuidInput = Schema.String.check(Schema.isUUID(undefined, { message: "must be a UUID" }))


export const stackLimits = { name: 200, description: 2000, team: 200, slug: 100 } as const

/** A stack's slug: lower-case letters, digits and inner hyphens, unique in the organization. */
export const slugPattern = /^[a-z0-9](?:[a-z0-9-]{0,98}[a-z0-9])?$/

export const StackVisibility = Schema.Literals(["public", "private"]).annotate({
  description: "public: shareable through `share_url`; private: the organization's members only."
})
export type StackVisibility = typeof StackVisibility.Type

export const StackItemKind = Schema.Literals(["component", "source", "monitor"])
export type StackItemKind = typeof StackItemKind.Type

/** One thing a stack shows, with its current status; exactly one of `component`, `source`, `monitor` is present, as `kind` says. */
export const StackItem = Schema.Struct({
  id: Uuid,
  kind: StackItemKind,
  position: Schema.Int.annotate({ description: "Order in the stack, ascending." }),
  component: Schema.optionalKey(Schema.Struct({
    id: Uuid,
    name: Schema.String,
    status: ComponentStatus,
    source_key: Schema.String
  })),
  source: Schema.optionalKey(Schema.Struct({ key: Schema.String, name: Schema.String, status: SourceStatus })),
  monitor: Schema.optionalKey(Schema.Struct({ id: Uuid, name: Schema.String, state: MonitorState })),
  added_at: Timestamp
}).annotate({ identifier: "StackItem" })
export type StackItem = typeof StackItem.Type

const stackFields = {
  id: Uuid,
  name: Schema.String,
  slug: Schema.String,
  description: Schema.String,
  team: Schema.String.annotate({ description: "The owning team, free text; empty when not set." }),
  visibility: StackVisibility,
  share_token: Schema.NullOr(Schema.String).annotate({ description: "Unguessable token of the public link; null while private." }),
  share_url: Schema.NullOr(Schema.String).annotate({ description: "Path of the public link, `/share/<token>`; null while private." }),
  created_at: Timestamp,
  updated_at: Timestamp,
  health: StackHealth
}

/** A stack with its items, ordered by position. */
export const Stack = Schema.Struct({ ...stackFields, items: Schema.Array(StackItem) }).annotate({ identifier: "Stack" })
export type Stack = typeof Stack.Type

/** A stack as lists show it: the number of items instead of the items. */
export const StackSummary = Schema.Struct({ ...stackFields, items_count: Schema.Int }).annotate({ identifier: "StackSummary" })
export type StackSummary = typeof StackSummary.Type

const Name = Schema.Trim.check(
  Schema.isBetweenLength(1, stackLimits.name, { message: `must be 1 to ${stackLimits.name} characters` }),
  noNul
)
const Description = Schema.String.check(
  Schema.isMaxLength(stackLimits.description, { message: `must be at most ${stackLimits.description} characters` }),
  noNul
)
const Team = Schema.Trim.check(Schema.isMaxLength(stackLimits.team, { message: `must be at most ${stackLimits.team} characters` }), noNul)
const Slug = Schema.String.check(Schema.isPattern(slugPattern, { message: "must be 1-100 lower-case letters, digits or inner hyphens" }))

export const StackCreate = Schema.Struct({
  name: Name,
  description: Schema.optionalKey(Description),
  team: Schema.optionalKey(Team),
  visibility: Schema.optionalKey(StackVisibility.annotate({ description: "private when absent" })),
  slug: Schema.optionalKey(Slug.annotate({ description: "Generated from the name when absent (suffixed -2, -3... on a clash)." }))
}).annotate({ identifier: "StackCreate" })
export type StackCreate = typeof StackCreate.Type

/** Only the fields given change; renaming keeps the slug unless `slug` is given too. */
export const StackUpdate = Schema.Struct({
  name: Schema.optionalKey(Name),
  description: Schema.optionalKey(Description),
  team: Schema.optionalKey(Team),
  visibility: Schema.optionalKey(StackVisibility),
  slug: Schema.optionalKey(Slug)
}).annotate({ identifier: "StackUpdate" })
export type StackUpdate = typeof StackUpdate.Type

const SourceKeyInput = Schema.String.check(Schema.isPattern(/^[a-z0-9](?:[a-z0-9-]{0,126}[a-z0-9])?$/, {
  message: "a source key is 1-128 lower-case letters, digits or inner hyphens"
}))

const targetField = { component: "component_id", source: "source_key", monitor: "monitor_id" } as const

/**
 * What to add to a stack: a source's component, a whole source (catalog or
 * the organization's own), or a monitor; `kind` says which one field is
 * given. One struct rather than a union so that an unknown `kind` or a
 * misplaced field is reported by name.
 */
export const StackItemAdd = Schema.Struct({
  kind: StackItemKind,
  component_id: Schema.optionalKey(UuidInput.annotate({ description: "With kind component: the component's id." })),
  source_key: Schema.optionalKey(SourceKeyInput.annotate({ description: "With kind source: the source's key." })),
  monitor_id: Schema.optionalKey(UuidInput.annotate({ description: "With kind monitor: the monitor's id." }))
}).check(Schema.makeFilter((input) => {
  const wanted = targetField[input.kind]
  const issues = Object.values(targetField).flatMap((field) =>
    field === wanted
      ? input[field] === undefined ? [{ path: [field], issue: `required when kind is ${input.kind}` }] : []
      : input[field] !== undefined ? [{ path: [field], issue: `not used when kind is ${input.kind}` }] : []
  )
  return issues.length === 0 ? undefined : issues
})).annotate({ identifier: "StackItemAdd" })
export type StackItemAdd = typeof StackItemAdd.Type

/** Moves an item one place earlier (`up`) or later (`down`) in its stack; at either end it stays. */
export const StackItemMove = Schema.Struct({
  direction: Schema.Literals(["up", "down"])
}).annotate({ identifier: "StackItemMove" })
export type StackItemMove = typeof StackItemMove.Type

/** A stack's items in their new order. */
export const StackItemList = Schema.Struct({ data: Schema.Array(StackItem) }).annotate({ identifier: "StackItemList" })

const IdParams = { id: UuidInput }
const ItemParams = { id: UuidInput, item_id: UuidInput }

/** Stacks: components grouped for a dashboard, public or private. */
export class StacksGroup extends HttpApiGroup.make("stacks")
  .add(
    HttpApiEndpoint.get("list", "/stacks", { query: PageQuery, success: Page(StackSummary, "StackList"), error: Forbidden })
      .annotateMerge(OpenApi.annotations({ summary: "List stacks, oldest first" })),
    HttpApiEndpoint.post("create", "/stacks", {
      payload: StackCreate,
      success: Stack.pipe(HttpApiSchema.status(201)),
      error: [Forbidden, Conflict, PlanLimitReached]
    }).annotateMerge(OpenApi.annotations({ summary: "Create a stack (Admin, Member); 402 past the plan's max_stacks" })),
    HttpApiEndpoint.get("get", "/stacks/:id", { params: IdParams, success: Stack, error: [Forbidden, NotFound] })
      .annotateMerge(OpenApi.annotations({ summary: "One stack with its items and their current status" })),
    HttpApiEndpoint.patch("update", "/stacks/:id", {
      params: IdParams,
      payload: StackUpdate,
      success: Stack,
      error: [Forbidden, NotFound, Conflict]
    }).annotateMerge(OpenApi.annotations({
      summary: "Change a stack (Admin, Member)",
      description: "Making a stack public gives it a new share token; making it private removes the token."
    })),
    HttpApiEndpoint.delete("delete", "/stacks/:id", { params: IdParams, success: HttpApiSchema.NoContent, error: [Forbidden, NotFound] })
      .annotateMerge(OpenApi.annotations({ summary: "Delete a stack, its items and its maintenance windows (Admin)" })),
    HttpApiEndpoint.post("addItem", "/stacks/:id/items", {
      params: IdParams,
      payload: StackItemAdd,
      success: StackItem.pipe(HttpApiSchema.status(201)),
      error: [Forbidden, NotFound, Conflict, PlanLimitReached]
    }).annotateMerge(OpenApi.annotations({
      summary: "Add a component, source or monitor to a stack (Admin, Member); 402 past the plan's max_components"
    })),
    HttpApiEndpoint.delete("removeItem", "/stacks/:id/items/:item_id", {
      params: ItemParams,
      success: HttpApiSchema.NoContent,
      error: [Forbidden, NotFound]
    }).annotateMerge(OpenApi.annotations({ summary: "Remove an item from a stack (Admin, Member)" })),
    HttpApiEndpoint.get("analytics", "/stacks/:id/analytics", {
      params: IdParams,
      query: AnalyticsQuery,
      success: StackAnalytics,
      error: [Forbidden, NotFound, InvalidParameter]
    }).annotateMerge(OpenApi.annotations({
      summary: "Analytics of a stack over a range",
      description: "The stack as a whole (down while its banner showed an outage, partial or major, by the banner's rule " +
        "applied to its items at each instant; time at each banner), each item's figures as `GET /sources/{key}/analytics` " +
        "gives them, and the incidents of its sources and components. `?from=&to=` as the other analytics (default 30 days)."
    })),
    HttpApiEndpoint.post("moveItem", "/stacks/:id/items/:item_id/move", {
      params: ItemParams,
      payload: StackItemMove,
      success: StackItemList,
      error: [Forbidden, NotFound]
    }).annotateMerge(OpenApi.annotations({ summary: "Move an item one place up or down in its stack (Admin, Member)" }))
  )
  .middleware(OrgAuth)
  .annotateMerge(OpenApi.annotations({ title: "Stacks", description: "Stacks: components grouped for a dashboard, public or private." }))
{}
