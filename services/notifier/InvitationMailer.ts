import { Config, Effect, Layer, Option, Redacted, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { claimDue } from "../platform/ClaimDue.ts"
import { InvitationMail } from "../domain/InvitationMail.ts"
import { SecretBox, secretBinding } from "../platform/SecretBox.ts"
import { type Mailer, makeMailer } from "./channels/email.ts"
import { nextDelayMs, OutboxConfig } from "./Outbox.ts"
import { recordOf, rowsOf } from "../platform/Rows.ts"

/** The rows of the queries below, decoded by Schemas compiled once (services/platform/Rows.ts). */
const dueMailRows = rowsOf("invitation_mails", Schema.Struct({
  invitation_id: Schema.String,
  organization_id: Schema.String,
  sealed: Schema.Uint8Array,
  attempts: Schema.Number
}))

/** The sealed mail's JSON, decoded once by its Schema (compiled once). */
const decodeMail = recordOf("invitation_mails", Schema.fromJsonString(InvitationMail))

const attemptTimeoutMs = 10_000

/**
 * Sends the invitation e-mails that `Members.invite` queues (`invitation_mails`):
 * claims due ones (SKIP LOCKED, leased like deliveries), opens the sealed
 * mail, sends it through the operator's SMTP server (`SMTP_URL`,
 * `SMTP_FROM`), and records the outcome: sent, retried with the outbox's
 * backoff, or failed (final SMTP refusals, e-mail not configured). The
 * sealed mail, which holds the link's token, is cleared once it is settled.
 * Returns how many it handled.
 */
export const sendDueInvitationMails = Effect.fn("InvitationMailer.sendDueInvitationMails")(function*(mailer: Mailer) {
  const sql = yield* SqlClient
  const box = yield* SecretBox
  const config = yield* Effect.orDie(OutboxConfig)
  const due = yield* claimDue(sql, {
    table: "invitation_mails",
    alias: "m",
    key: "invitation_id",
    limit: 20,
    leaseMs: config.leaseMs,
    orderBy: "next_attempt_at",
    join: sql`, invitations i`,
    joinOn: sql`AND i.id = m.invitation_id`,
    returning: sql`m.invitation_id, i.organization_id, m.sealed, m.attempts`
  }).pipe(Effect.flatMap(dueMailRows))
  for (const row of due) {
    const opened = yield* Effect.result(box.open(row.sealed, secretBinding("invitation mail", row.organization_id, row.invitation_id)))
    const result = opened._tag === "Failure"
      ? { ok: false, status: 0, retryable: false, error: opened.failure.message }
      : yield* Effect.promise(() => {
        const mail = decodeMail(opened.success)
        return mailer({
          to: [mail.to],
          subject: mail.subject,
          text: mail.text,
          idempotencyKey: `invitation-${row.invitation_id}`,
          timeoutMs: attemptTimeoutMs
        })
      })
    const retry = !result.ok && result.retryable && row.attempts < config.maxAttempts
    const delay = retry ? Math.round(nextDelayMs(row.attempts, result, config.backoffBaseMs, config.backoffMaxMs)) : 0
    const status = result.ok ? "sent" : retry ? "pending" : "failed"
    yield* sql`
        UPDATE invitation_mails SET status = ${status}, last_error = ${result.ok ? null : result.error},
          sent_at = CASE WHEN ${status} = 'sent' THEN now() END,
          sealed = CASE WHEN ${status} IN ('sent', 'failed') THEN NULL ELSE sealed END,
          next_attempt_at = now() + ${`${delay} milliseconds`}::interval
        WHERE invitation_id = ${row.invitation_id}::uuid`
  }
  return due.length
}, Effect.orDie)

/** The mail worker of a serving process (needs SqlClient). */
export const layer = Layer.effectDiscard(Effect.gen(function*() {
  const smtpUrl = yield* Config.option(Config.Redacted("SMTP_URL"))
  const smtpFrom = yield* Config.option(Config.String("SMTP_FROM"))
  const config = yield* OutboxConfig
  const mailer = makeMailer({
    ...(Option.isSome(smtpUrl) ? { smtpUrl: Redacted.value(smtpUrl.value) } : {}),
    ...(Option.isSome(smtpFrom) ? { smtpFrom: smtpFrom.value } : {})
  })
  const round = sendDueInvitationMails(mailer).pipe(
    Effect.andThen(Effect.sleep(config.pollMs)),
    Effect.catchCause((cause) => Effect.logWarning("invitation mails failed; retrying", cause).pipe(Effect.andThen(Effect.sleep("1 second"))))
  )
  yield* round.pipe(Effect.forever, Effect.forkScoped)
}).pipe(Effect.orDie)).pipe(Layer.provide(SecretBox.layer))
