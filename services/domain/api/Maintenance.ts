import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { noNul } from "../Text.ts"
import { OrgAuth } from "./Auth.ts"
import { Forbidden, InvalidParameter, NotFound } from "./Errors.ts"
import { Page, PageQuery } from "./Paging.ts"

const Uuid = Schema.String.annotate({ format: "uuid" })
const Timestamp = Schema.String.annotate({ format: "date-time" })
const UuidInput = Schema.String.check(Schema.isUUID(undefined, { message: "must be a UUID" }))

export const maintenanceLimits = { title: 200, description: 2000 } as const

const instantPattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-](\d{2}):(\d{2}))$/i

/**
 * An ISO 8601 date-time with a time zone as a Date, or undefined. Stricter
 * than Date.parse, which takes February 31 for March 3.
 */
export const parseInstant = (text: string): Date | undefined => {
  const m = instantPattern.exec(text)
  if (m === null) return undefined
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? "0"].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number
  ]
  const date = new Date(Date.UTC(year, month - 1, day))
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined
  if (hour > 23 || minute > 59 || second > 59) return undefined
  if (m[8] !== undefined && (Number(m[8]) > 23 || Number(m[9]) > 59)) return undefined
  const at = new Date(text)
  return Number.isNaN(at.getTime()) ? undefined : at
}

const Instant = Schema.String.check(Schema.makeFilter((s: string) =>
  parseInstant(s) !== undefined || "must be an ISO 8601 date-time with a time zone, e.g. 2026-01-02T03:04:05Z"
)).annotate({ format: "date-time" })

/** A period during which the organization's own alerts (of one stack, or all) are held. */
export const MaintenanceWindow = Schema.Struct({
  id: Uuid,
  title: Schema.String,
  description: Schema.String,
  stack_id: Schema.NullOr(Uuid).annotate({ description: "The stack it covers; null: the whole organization." }),
  starts_at: Timestamp,
  ends_at: Timestamp,
  active: Schema.Boolean.annotate({ description: "Whether the window covers the present moment." }),
  created_at: Timestamp
}).annotate({ identifier: "MaintenanceWindow" })
export type MaintenanceWindow = typeof MaintenanceWindow.Type

const Title = Schema.Trim.check(
  Schema.isBetweenLength(1, maintenanceLimits.title, { message: `must be 1 to ${maintenanceLimits.title} characters` }),
  noNul
)
const Description = Schema.String.check(
  Schema.isMaxLength(maintenanceLimits.description, { message: `must be at most ${maintenanceLimits.description} characters` }),
  noNul
)
const StackRef = Schema.NullOr(UuidInput).annotate({ description: "One of the organization's stacks; null or absent: the whole organization." })

export const MaintenanceWindowCreate = Schema.Struct({
  title: Title,
  description: Schema.optionalKey(Description),
  stack_id: Schema.optionalKey(StackRef),
  starts_at: Instant,
  ends_at: Instant.annotate({ description: "After starts_at." })
}).annotate({ identifier: "MaintenanceWindowCreate" })
export type MaintenanceWindowCreate = typeof MaintenanceWindowCreate.Type

/** Only the fields given change; the resulting window must still end after it starts. */
export const MaintenanceWindowUpdate = Schema.Struct({
  title: Schema.optionalKey(Title),
  description: Schema.optionalKey(Description),
  stack_id: Schema.optionalKey(StackRef),
  starts_at: Schema.optionalKey(Instant),
  ends_at: Schema.optionalKey(Instant)
}).annotate({ identifier: "MaintenanceWindowUpdate" })
export type MaintenanceWindowUpdate = typeof MaintenanceWindowUpdate.Type

export const MaintenanceListQuery = {
  ...PageQuery,
  active: Schema.optional(Schema.Literals(["true", "false"]).annotate({
    description: "true: only windows covering now; false: only those that do not."
  }))
}

const IdParams = { id: UuidInput }

/** The organization's own maintenance windows. */
export class MaintenanceGroup extends HttpApiGroup.make("maintenance")
  .add(
    HttpApiEndpoint.get("list", "/maintenance-windows", {
      query: MaintenanceListQuery,
      success: Page(MaintenanceWindow, "MaintenanceWindowList"),
      error: Forbidden
    }).annotateMerge(OpenApi.annotations({ summary: "List maintenance windows, oldest first" })),
    HttpApiEndpoint.post("create", "/maintenance-windows", {
      payload: MaintenanceWindowCreate,
      success: MaintenanceWindow.pipe(HttpApiSchema.status(201)),
      error: [Forbidden, NotFound, InvalidParameter]
    }).annotateMerge(OpenApi.annotations({ summary: "Create a maintenance window (Admin, Member)" })),
    HttpApiEndpoint.get("get", "/maintenance-windows/:id", { params: IdParams, success: MaintenanceWindow, error: [Forbidden, NotFound] })
      .annotateMerge(OpenApi.annotations({ summary: "One maintenance window" })),
    HttpApiEndpoint.patch("update", "/maintenance-windows/:id", {
      params: IdParams,
      payload: MaintenanceWindowUpdate,
      success: MaintenanceWindow,
      error: [Forbidden, NotFound, InvalidParameter]
    }).annotateMerge(OpenApi.annotations({ summary: "Change a maintenance window (Admin, Member)" })),
    HttpApiEndpoint.delete("delete", "/maintenance-windows/:id", {
      params: IdParams,
      success: HttpApiSchema.NoContent,
      error: [Forbidden, NotFound]
    }).annotateMerge(OpenApi.annotations({ summary: "Delete a maintenance window (Admin)" }))
  )
  .middleware(OrgAuth)
  .annotateMerge(OpenApi.annotations({ title: "Maintenance", description: "The organization's own maintenance windows." }))
{}
