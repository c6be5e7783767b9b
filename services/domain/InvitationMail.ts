import { Schema } from "effect"

/**
 * The e-mail of an invitation: to the invited address, with the link that
 * accepts it. orgs/InvitationMail.ts writes it (sealed into
 * `invitation_mails`, as JSON), notifier/InvitationMailer.ts opens and sends it.
 */
export const InvitationMail = Schema.Struct({
  to: Schema.String,
  subject: Schema.String,
  text: Schema.String
})
export type InvitationMail = typeof InvitationMail.Type
