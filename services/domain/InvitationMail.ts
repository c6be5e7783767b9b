/**
 * The e-mail of an invitation: to the invited address, with the link that
 * accepts it. orgs/InvitationMail.ts writes it (sealed into
 * `invitation_mails`), notifier/InvitationMailer.ts sends it.
 */
export interface InvitationMail {
  readonly to: string
  readonly subject: string
  readonly text: string
}
