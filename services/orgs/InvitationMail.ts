import { Schema } from "effect"
import type { Role } from "../domain/Organization.ts"

/** The e-mail of an invitation: to the invited address, with the link that accepts it (stored sealed, as JSON). */
export const InvitationMail = Schema.Struct({
  to: Schema.String,
  subject: Schema.String,
  text: Schema.String
})
export type InvitationMail = typeof InvitationMail.Type

const roleWords: Readonly<Record<Role, string>> = {
  admin: "an Admin (everything, members and billing included)",
  member: "a Member (stacks, monitors and notifications)",
  viewer: "a Viewer (dashboards, read only)"
}

/** The words of an invitation e-mail (plain text: the link must survive every mail client). */
export const invitationMail = (invitation: {
  readonly organization: string
  readonly email: string
  readonly role: Role
  readonly link: string
  readonly expiresAt: string
}): InvitationMail => ({
  to: invitation.email,
  subject: `You are invited to ${invitation.organization} on statusgrid`,
  text: [
    `You are invited to join ${invitation.organization} on statusgrid as ${roleWords[invitation.role]}.`,
    "",
    `Accept the invitation: ${invitation.link}`,
    "",
    `The link works once and until ${invitation.expiresAt}. If you did not expect this invitation, ignore this e-mail.`
  ].join("\n")
})
