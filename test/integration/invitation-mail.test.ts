import { assert, describe, layer } from "@effect/vitest"
import { Context, Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as InvitationMailer from "../../services/notifier/InvitationMailer.ts"
import { apiServer, call, newTenant } from "../support/api.ts"
import { decodeWords, mailHeaders, mailPart, type SmtpReceiver, startSmtpReceiver } from "../support/receivers.ts"
import { withConfig } from "../support/stores.ts"
import { eventually } from "../support/eventually.ts"

class Smtp extends Context.Service<Smtp, SmtpReceiver>()("test/invitation-mail/Smtp") {}

const smtp = Layer.effect(Smtp, Effect.acquireRelease(Effect.promise(() => startSmtpReceiver()), (s) => Effect.promise(() => s.close())))

/** The mail worker against a real SMTP server, with the API's secrets key (same DATA_DIR). */
const mailer = Layer.unwrap(Effect.gen(function*() {
  const { port } = yield* Smtp
  return InvitationMailer.layer.pipe(Layer.provide(withConfig({
    SMTP_URL: `smtp://127.0.0.1:${port}`,
    SMTP_FROM: "statusgrid <alerts@example.com>",
    NOTIFIER_POLL_MS: "50",
    DATA_DIR: "/tmp/statusgrid-api-test"
  })))
}))


describe("invitation e-mails", () => {
  layer(
    mailer.pipe(Layer.provideMerge(smtp), Layer.provideMerge(apiServer({ PUBLIC_URL: "https://status.example.com" }))),
    { timeout: 60_000, excludeTestServices: true }
  )("the notifier's mail worker and a real SMTP server", (it) => {
    it.effect("an invitation mails its link to the invited address once; the token is kept only sealed, then cleared", () =>
      Effect.gen(function*() {
        const server = yield* Smtp
        const sql = yield* SqlClient
        const tenant = yield* newTenant("pro")
        const invited = yield* call("POST", "/invitations", { key: tenant.keys.admin, body: { email: "New.Person@example.com", role: "member" } })
        assert.strictEqual(invited.status, 201, JSON.stringify(invited.body))
        const acceptUrl = invited.body.accept_url as string
        const token = acceptUrl.slice("/invite/".length)

        const mail = yield* eventually(10_000, Effect.sync(() => server.mails.find((m) => m.to.includes("new.person@example.com"))))
        assert.deepStrictEqual(mail.to, ["new.person@example.com"])
        assert.strictEqual(mail.from, "alerts@example.com")
        const headers = mailHeaders(mail.raw)
        assert.include(decodeWords(headers.get("subject") ?? ""), `Tenant ${tenant.slug}`)
        const body = mailPart(mail.raw, "text/plain")
        // A single-part mail: its transfer-encoding header may precede the content type, so soft line breaks can remain.
        assert.include(body.replace(/=\r?\n/g, ""), `https://status.example.com${acceptUrl}`)
        assert.include(body, "Member")

        const [row] = yield* eventually(5_000, sql<{ status: string; sealed: Uint8Array | null; attempts: number }>`
          SELECT status, sealed, attempts FROM invitation_mails WHERE invitation_id = ${invited.body.id}::uuid AND status = 'sent'`
          .pipe(Effect.map((rows) => (rows.length > 0 ? rows : undefined))))
        assert.deepStrictEqual({ ...row, sealed: row!.sealed === null ? null : "kept" }, { status: "sent", sealed: null, attempts: 1 })
        // Nowhere in the database in clear: not in the invitation (a hash), not in the mail queue.
        const [clear] = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM invitations i LEFT JOIN invitation_mails m ON m.invitation_id = i.id
          WHERE i.token_hash = ${token} OR encode(m.sealed, 'escape') LIKE ${`%${token}%`}`
        assert.strictEqual(clear!.n, 0)
        yield* Effect.sleep(Duration.millis(500))
        assert.strictEqual(server.mails.filter((m) => m.to.includes("new.person@example.com")).length, 1)
      }))
  })
})
