import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { FrameAncestors, maxFrameAncestors, PlanId, Role } from "../Organization.ts"
import { Text } from "../Text.ts"
import { OrgAuth } from "./Auth.ts"
import { Forbidden, NotFound } from "./Errors.ts"
import { Page, PageQuery } from "./Paging.ts"

const Limit = Schema.Struct({
  limit: Schema.NullOr(Schema.Int).annotate({ description: "null: unlimited" }),
  used: Schema.Int
})

const frameAncestorsDescription =
  `The origins allowed to frame the organization's TV links and public share pages (their \`Content-Security-Policy: frame-ancestors\`), ` +
  `e.g. \`https://intranet.example.com\`: https origins, or http on localhost; at most ${maxFrameAncestors}. ` +
  "Empty (the default): framed nowhere. Every other page is never framed."

/** The caller's organization: plan, each plan limit with what is used of it, and its settings. */
export const Organization = Schema.Struct({
  id: Schema.String.annotate({ format: "uuid" }),
  slug: Schema.String,
  name: Schema.String,
  plan: PlanId,
  channel_types: Schema.Array(Schema.String),
  limits: Schema.Struct({
    max_stacks: Limit,
    max_components: Limit,
    max_monitors: Limit,
    max_users: Limit,
    max_rules: Limit,
    max_custom_sources: Limit,
    max_channels_per_rule: Schema.NullOr(Schema.Int)
  }),
  frame_ancestors: Schema.Array(Schema.String).annotate({ description: frameAncestorsDescription }),
  created_at: Schema.String.annotate({ format: "date-time" })
}).annotate({ identifier: "Organization" })
export type Organization = typeof Organization.Type

/** `PATCH /organization/settings`: the settings an Admin changes; a field left out stays as it is. */
export const OrganizationSettingsUpdate = Schema.Struct({
  frame_ancestors: Schema.optionalKey(FrameAncestors.annotate({ description: frameAncestorsDescription }))
}).annotate({ identifier: "OrganizationSettingsUpdate" })
export type OrganizationSettingsUpdate = typeof OrganizationSettingsUpdate.Type

export const AuditEntry = Schema.Struct({
  id: Schema.String,
  action: Schema.String,
  entity_type: Schema.String,
  entity_id: Schema.NullOr(Schema.String),
  actor: Schema.Struct({
    kind: Schema.Literals(["api_key", "user", "operator", "system"]).annotate({
      description: "operator: the installation's operator, through the `statusgrid org` commands (id: who ran it); system: the service itself"
    }),
    id: Schema.NullOr(Schema.String)
  }),
  before: Schema.Unknown,
  after: Schema.Unknown,
  ip: Schema.NullOr(Schema.String),
  created_at: Schema.String.annotate({ format: "date-time" })
}).annotate({ identifier: "AuditEntry" })
export type AuditEntry = typeof AuditEntry.Type

/** An API key as lists show it: never the key itself. */
export const ApiKey = Schema.Struct({
  id: Schema.String.annotate({ format: "uuid" }),
  name: Schema.String,
  role: Role,
  prefix: Schema.String.annotate({ description: "The key's first characters, to tell keys apart." }),
  created_at: Schema.String.annotate({ format: "date-time" }),
  last_used_at: Schema.NullOr(Schema.String.annotate({ format: "date-time" })),
  revoked_at: Schema.NullOr(Schema.String.annotate({ format: "date-time" }))
}).annotate({ identifier: "ApiKey" })
export type ApiKey = typeof ApiKey.Type

/** `POST /api-keys`: the created key, the only time `key` is shown. */
export const ApiKeyCreated = Schema.Struct({
  ...ApiKey.fields,
  key: Schema.String.annotate({ description: "The API key. Shown once; store it now." })
}).annotate({ identifier: "ApiKeyCreated" })

export const ApiKeyCreate = Schema.Struct({
  name: Text(200),
  role: Role
}).annotate({ identifier: "ApiKeyCreate" })

const IdParams = { id: Schema.String.check(Schema.isUUID(undefined, { message: "must be a UUID" })) }

const instantPattern = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2}))?$/u
const Instant = Schema.String.check(
  Schema.makeFilter((s: string) => (instantPattern.test(s) && !Number.isNaN(Date.parse(s))) || "must be an ISO 8601 date or instant")
)

/** `GET /audit-log`: a page, narrowed by actor, record type and time (Organizations.auditLog's filter, as the portal's audit page). */
export const AuditLogQuery = {
  ...PageQuery,
  actor: Schema.optional(Schema.String.check(Schema.isMaxLength(200)).annotate({ description: "A user's or API key's id, or the operator's name." })),
  entity_type: Schema.optional(Schema.String.check(Schema.isMaxLength(100)).annotate({ description: "The record type, e.g. `member`, `api_key`, `stack`." })),
  since: Schema.optional(Instant.annotate({ description: "Entries at or after this instant (a date: its midnight UTC)." })),
  until: Schema.optional(Instant.annotate({ description: "Entries before this instant." }))
}

/** The caller's organization, its plan and limits, its API keys and its audit log. */
export class OrganizationGroup extends HttpApiGroup.make("organization")
  .add(
    HttpApiEndpoint.get("get", "/organization", { success: Organization })
      .annotateMerge(OpenApi.annotations({
        summary: "The caller's organization, plan, limits and usage",
        description: "The plan is read-only here: the installation's operator changes it (`statusgrid org plan <slug> <plan>`)."
      })),
    HttpApiEndpoint.patch("updateSettings", "/organization/settings", { payload: OrganizationSettingsUpdate, success: Organization, error: Forbidden })
      .annotateMerge(OpenApi.annotations({
        summary: "Change the organization's settings (Admin): where its TV links and share pages may be framed",
        description: "`frame_ancestors` replaces the list; a bad origin is a 400 naming it (`frame_ancestors.<index>`). Audited as `organization.updated`."
      })),
    HttpApiEndpoint.get("listApiKeys", "/api-keys", { query: PageQuery, success: Page(ApiKey, "ApiKeyList"), error: Forbidden })
      .annotateMerge(OpenApi.annotations({ summary: "List API keys (Admin)" })),
    HttpApiEndpoint.post("createApiKey", "/api-keys", { payload: ApiKeyCreate, success: ApiKeyCreated.pipe(HttpApiSchema.status(201)), error: Forbidden })
      .annotateMerge(OpenApi.annotations({ summary: "Create an API key (Admin); the key is shown once" })),
    HttpApiEndpoint.delete("revokeApiKey", "/api-keys/:id", { params: IdParams, success: ApiKey, error: [Forbidden, NotFound] })
      .annotateMerge(OpenApi.annotations({ summary: "Revoke an API key (Admin)" })),
    HttpApiEndpoint.get("auditLog", "/audit-log", { query: AuditLogQuery, success: Page(AuditEntry, "AuditLog"), error: Forbidden })
      .annotateMerge(OpenApi.annotations({ summary: "The organization's audit log, oldest first (Admin)" }))
  )
  .middleware(OrgAuth)
  .annotateMerge(OpenApi.annotations({ title: "Organization", description: "The caller's organization, API keys and audit log." }))
{}

