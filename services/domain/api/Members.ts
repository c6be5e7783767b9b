import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Role } from "../Organization.ts"
import { noNul } from "../Text.ts"
import { OrgAuth } from "./Auth.ts"
import { Conflict, Forbidden, NotFound, PlanLimitReached } from "./Errors.ts"
import { Page, PageQuery } from "./Paging.ts"

/** The shape the `users` and `invitations` tables accept (their CHECK), at most 320 characters. */
export const emailPattern = /^[^@\s]+@[^@\s]+\.[^@\s]+$/u
export const maxEmailLength = 320

/** An e-mail address as the API takes it: trimmed; the services store it lower-cased. */
export const Email = Schema.Trim.check(
  Schema.isMaxLength(maxEmailLength, { message: `must be at most ${maxEmailLength} characters` }),
  Schema.isPattern(emailPattern, { message: "must be an e-mail address" }),
  noNul
).annotate({ format: "email" })

/** A member of the organization: a user and the role they hold in it. */
export const Member = Schema.Struct({
  user_id: Schema.String.annotate({ format: "uuid" }),
  email: Schema.String,
  name: Schema.String,
  role: Role,
  joined_at: Schema.String.annotate({ format: "date-time" })
}).annotate({ identifier: "Member" })
export type Member = typeof Member.Type

export const MemberUpdate = Schema.Struct({ role: Role }).annotate({ identifier: "MemberUpdate" })

/** An open invitation: neither accepted, revoked nor expired. */
export const Invitation = Schema.Struct({
  id: Schema.String.annotate({ format: "uuid" }),
  email: Schema.String,
  role: Role,
  invited_by: Schema.NullOr(Schema.String.annotate({ format: "uuid" })).annotate({
    description: "The user who invited; null when an API key did."
  }),
  expires_at: Schema.String.annotate({ format: "date-time" }),
  created_at: Schema.String.annotate({ format: "date-time" })
}).annotate({ identifier: "Invitation" })
export type Invitation = typeof Invitation.Type

/** `POST /invitations`: the invitation and, this once, the link that accepts it. */
export const InvitationCreated = Schema.Struct({
  ...Invitation.fields,
  accept_url: Schema.String.annotate({
    description: "`/invite/<token>`, relative to the portal. Shown once; the token is stored only as a hash."
  })
}).annotate({ identifier: "InvitationCreated" })
export type InvitationCreated = typeof InvitationCreated.Type

/**
 * What the invitation link's page shows before anyone signs in: the
 * organization, the role, the address it was sent to, and whether it can
 * still be accepted.
 */
export const InvitationView = Schema.Struct({
  organization_name: Schema.String,
  organization_slug: Schema.String,
  email: Schema.String,
  role: Role,
  invited_by_name: Schema.NullOr(Schema.String),
  expires_at: Schema.String.annotate({ format: "date-time" }),
  state: Schema.Literals(["open", "accepted", "revoked", "expired"])
}).annotate({ identifier: "InvitationView" })
export type InvitationView = typeof InvitationView.Type

export const InvitationCreate = Schema.Struct({ email: Email, role: Role }).annotate({ identifier: "InvitationCreate" })

const uuid = Schema.String.check(Schema.isUUID(undefined, { message: "must be a UUID" }))

/**
 * Members, invitations and roles. Every role lists them; changing them is
 * "Invite members" (`members.manage`, Admin). Accepting an invitation is done
 * by a signed-in user in the portal, not with an API key
 * (services/orgs/Members.ts `acceptInvitation`).
 */
export class MembersGroup extends HttpApiGroup.make("members")
  .add(
    HttpApiEndpoint.get("list", "/members", { query: PageQuery, success: Page(Member, "MemberList"), error: Forbidden })
      .annotateMerge(OpenApi.annotations({ summary: "List the organization's members, oldest first" })),
    HttpApiEndpoint.patch("update", "/members/:user_id", {
      params: { user_id: uuid },
      payload: MemberUpdate,
      success: Member,
      error: [Forbidden, NotFound, Conflict]
    }).annotateMerge(OpenApi.annotations({
      summary: "Change a member's role (Admin); the last admin cannot be demoted (409, field `role`)"
    })),
    HttpApiEndpoint.delete("remove", "/members/:user_id", {
      params: { user_id: uuid },
      success: HttpApiSchema.NoContent,
      error: [Forbidden, NotFound, Conflict]
    }).annotateMerge(OpenApi.annotations({
      summary: "Remove a member (Admin); the last admin cannot be removed (409, field `role`)"
    })),
    HttpApiEndpoint.get("listInvitations", "/invitations", {
      query: PageQuery,
      success: Page(Invitation, "InvitationList"),
      error: Forbidden
    }).annotateMerge(OpenApi.annotations({ summary: "List open invitations (not accepted, revoked or expired)" })),
    HttpApiEndpoint.post("invite", "/invitations", {
      payload: InvitationCreate,
      success: InvitationCreated.pipe(HttpApiSchema.status(201)),
      error: [Forbidden, Conflict, PlanLimitReached]
    }).annotateMerge(OpenApi.annotations({
      summary: "Invite an e-mail address with a role (Admin); members and open invitations count against `max_users`"
    })),
    HttpApiEndpoint.delete("revokeInvitation", "/invitations/:id", {
      params: { id: uuid },
      success: HttpApiSchema.NoContent,
      error: [Forbidden, NotFound, Conflict]
    }).annotateMerge(OpenApi.annotations({ summary: "Revoke an invitation (Admin)" }))
  )
  .middleware(OrgAuth)
  .annotateMerge(OpenApi.annotations({ title: "Members", description: "Members, invitations and roles." }))
{}
