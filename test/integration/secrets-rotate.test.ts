import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer, Result } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { createCipheriv, randomBytes } from "node:crypto"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { MonitorAgents } from "../../services/monitors/MonitorAgents.ts"
import { sendDueInvitationMails } from "../../services/notifier/InvitationMailer.ts"
import { Outbox } from "../../services/notifier/Outbox.ts"
import type { Mail } from "../../services/notifier/channels/email.ts"
import { ApiKeys } from "../../services/orgs/ApiKeys.ts"
import { Channels } from "../../services/orgs/Channels.ts"
import { Members } from "../../services/orgs/Members.ts"
import { Monitors } from "../../services/orgs/Monitors.ts"
import { Organizations } from "../../services/orgs/Organizations.ts"
import type { RotationReport } from "../../services/orgs/SecretRotation.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { keyIdOf, SecretBox } from "../../services/platform/SecretBox.ts"
import { MonitorStore } from "../../services/poller/MonitorStore.ts"
import { childEnv, runCli } from "../support/process.ts"
import { freshDatabase, testRedisUrl, withConfig } from "../support/stores.ts"

class Database extends Context.Service<Database, string>()("test/secrets-rotate/Database") {}

/** A fresh database on the test PostgreSQL, migrated; the test's own organizations and API keys. */
const database = Layer.unwrap(Effect.gen(function*() {
  return Postgres.layerServer(yield* Database, { maxConnections: 4 })
})).pipe(Layer.provideMerge(Layer.effect(Database, freshDatabase)))
const k1 = randomBytes(32)
const k2 = randomBytes(32)

const TestLayer = Layer.mergeAll(
  Organizations.layer,
  ApiKeys.layer.pipe(Layer.provide(Layer.succeed(SecretBox, SecretBox.fromKey(k1)))),
  Layer.effectDiscard(Migrations.migratePostgres())
).pipe(
  Layer.provideMerge(database)
)

/** The services that seal and open, with this box (keys); the database is the test's. */
const withBox = (box: SecretBox["Service"]) =>
  Layer.mergeAll(Channels.layer, Monitors.layer, Members.layer, MonitorStore.layer, Outbox.layer).pipe(
    Layer.provideMerge(Layer.mergeAll(
      Layer.succeed(SecretBox, box),
      // The monitors' targets are the test's own servers on 127.0.0.1.
      MonitorAgents.layer.pipe(Layer.provide(withConfig({ MONITOR_ALLOW_PRIVATE: "true" })))
    ))
  )

/** A format 1 value, as statusgrid sealed them before format 2: `1 | iv | tag | ciphertext`, no binding, no key id. */
const sealVersion1 = (key: Uint8Array, plaintext: string) => {
  const iv = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", key, iv)
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
  return Buffer.concat([Buffer.from([1]), iv, cipher.getAuthTag(), body])
}

/** An organization on `plan` and an admin principal of it, as an API key resolves. */
const newOrganization = Effect.gen(function*() {
  const slug = `s-${Math.random().toString(36).slice(2, 10)}`
  const { id } = yield* Organizations.use((o) => o.create({ name: `Secrets ${slug}`, slug, plan: "pro" }))
  const key = yield* ApiKeys.use((k) => k.issue(id, "secrets test", "admin"))
  const principal = yield* ApiKeys.use((k) => k.authenticate(key, null))
  return principal!
})

/** `statusgrid secrets rotate` in its own process, with these keys; its JSON line. */
const rotate = (secretsKey: Buffer, previous: Buffer | undefined) =>
  Effect.gen(function*() {
    const url = yield* Database
    const { code, stderr, stdout } = yield* Effect.promise(() =>
      runCli(["secrets", "rotate", "--batch", "2"], childEnv({
        DATABASE_URL: url,
        REDIS_URL: testRedisUrl,
        SECRETS_KEY: secretsKey.toString("base64"),
        ...(previous === undefined ? {} : { SECRETS_KEY_PREVIOUS: previous.toString("base64") })
      }))
    )
    assert.strictEqual(code, 0, stderr)
    const lines = stdout.trim().split("\n")
    return JSON.parse(lines[lines.length - 1]!) as RotationReport
  })

/** Every sealed value of the database: table, row, format and key id. */
const sealedValues = Effect.gen(function*() {
  const sql = yield* SqlClient
  const rows = yield* sql<{ tbl: string; id: string; sealed: Uint8Array }>`
    SELECT 'channels' AS tbl, id::text, secrets AS sealed FROM channels WHERE secrets IS NOT NULL
    UNION ALL SELECT 'monitors', id::text, auth_secret FROM monitors WHERE auth_secret IS NOT NULL
    UNION ALL SELECT 'invitation_mails', invitation_id::text, sealed FROM invitation_mails WHERE sealed IS NOT NULL`
  return rows.map((r) => ({
    table: r.tbl,
    id: r.id,
    format: Buffer.from(r.sealed)[0],
    keyId: Buffer.from(r.sealed).subarray(1, 5).toString("hex")
  }))
})

/** A local HTTP endpoint that records the Authorization header of each request. */
const target = Effect.acquireRelease(
  Effect.callback<{ readonly url: string; readonly seen: Array<string | undefined>; readonly server: Http.Server }>((resume) => {
    const seen: Array<string | undefined> = []
    const server = Http.createServer((req, res) => {
      seen.push(req.headers.authorization)
      res.writeHead(200, { "content-type": "text/plain" }).end("fine")
    })
    server.listen(0, "127.0.0.1", () =>
      resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/health`, seen, server })))
  }),
  ({ server }) => Effect.callback<void>((resume) => {
    server.closeAllConnections()
    server.close(() => resume(Effect.void))
  })
)

const slack = (name: string, secret: string) => ({
  name,
  type: "slack" as const,
  settings: { channel: "#ops", webhook_url: `https://hooks.slack.com/services/T0/B0/${secret}` }
})

const basicOf = (username: string, password: string) => `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`

describe("statusgrid secrets rotate", () => {
  layer(TestLayer, { timeout: 120_000, excludeTestServices: true })("a fresh PostgreSQL database", (it) => {
    it.effect("re-seals every sealed value under the new key, bound to its row; the new key alone then opens them all; a second run re-seals nothing", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const http = yield* target
        const a = yield* newOrganization
        const b = yield* newOrganization
        const oldKey = SecretBox.fromKey(k1)

        // Before: everything sealed under K1 (format 2), through the services.
        const made = yield* Effect.gen(function*() {
          const channels = yield* Channels
          const hook = yield* channels.create(a, {
            name: "Hook",
            type: "webhook",
            settings: { url: "https://hooks.example.com/statusgrid", headers: { "X-Api-Key": "header-secret" } }
          })
          const chat = yield* channels.create(a, slack("Chat", "chat-secret"))
          const legacy = yield* channels.create(a, slack("Legacy", "legacy-secret"))
          const lost = yield* channels.create(b, slack("Lost", "lost-secret"))
          const monitor = yield* Monitors.use((m) =>
            m.add(a, { name: "Private API", url: http.url, auth: { type: "basic", username: "probe", password: "pa55word" } }))
          const invitation = yield* Members.use((m) => m.invite(a, { email: "new.person@example.com", role: "member" }))
          return { hook, chat, legacy, lost, monitor, invitation }
        }).pipe(Effect.provide(withBox(oldKey)))
        const signingSecret = (made.hook as { signing_secret?: string }).signing_secret!
        assert.match(signingSecret, /^whsec_/)

        // A format 1 value (before row binding), written as statusgrid wrote them; and one under a key nobody has any more.
        yield* sql`UPDATE channels SET secrets = ${sealVersion1(k1, JSON.stringify({ webhook_url: "https://hooks.slack.com/services/T0/B0/legacy-secret" }))}
          WHERE id = ${made.legacy.id}::uuid`
        const stranger = SecretBox.fromKey(randomBytes(32))
        yield* sql`UPDATE channels SET secrets = ${stranger.seal(JSON.stringify({ webhook_url: "x" }), { purpose: "channel secrets", organizationId: b.organization_id, recordId: made.lost.id })}
          WHERE id = ${made.lost.id}::uuid`

        // Processes restarted with SECRETS_KEY=K2, SECRETS_KEY_PREVIOUS=K1 open the old values and seal new ones under K2.
        const rotating = SecretBox.fromKey(k2, k1)
        const fresh = yield* Channels.use((c) => c.create(a, slack("Fresh", "fresh-secret"))).pipe(Effect.provide(withBox(rotating)))

        const before = yield* sealedValues
        assert.deepStrictEqual(
          before.map((v) => `${v.table} ${v.format} ${v.format === 1 ? "-" : v.keyId}`).toSorted(),
          [
            `channels 1 -`,
            `channels 2 ${keyIdOf(k1).toString("hex")}`,
            `channels 2 ${keyIdOf(k1).toString("hex")}`,
            `channels 2 ${keyIdOf(k2).toString("hex")}`,
            `channels 2 ${stranger.keyId}`,
            `invitation_mails 2 ${keyIdOf(k1).toString("hex")}`,
            `monitors 2 ${keyIdOf(k1).toString("hex")}`
          ].toSorted()
        )

        const first = yield* rotate(k2, k1)
        assert.deepStrictEqual(first.tables, {
          channels: { resealed: 3, current: 1, unreadable: 1 },
          monitors: { resealed: 1, current: 0, unreadable: 0 },
          invitation_mails: { resealed: 1, current: 0, unreadable: 0 }
        })
        assert.strictEqual(first.key_id, keyIdOf(k2).toString("hex"))
        assert.strictEqual(first.unreadable.length, 1)
        assert.deepInclude(first.unreadable[0], { table: "channels", id: made.lost.id })
        assert.include(first.unreadable[0]!.error, `sealed under key ${stranger.keyId}`)

        // Every readable value is now format 2 under K2; the unreadable one is left as it was.
        for (const value of yield* sealedValues) {
          const expected = value.id === made.lost.id ? stranger.keyId : keyIdOf(k2).toString("hex")
          assert.deepStrictEqual(value, { ...value, format: 2, keyId: expected })
        }

        // Idempotent: a second run finds everything current.
        const second = yield* rotate(k2, k1)
        assert.deepStrictEqual(second.tables, {
          channels: { resealed: 0, current: 4, unreadable: 1 },
          monitors: { resealed: 0, current: 1, unreadable: 0 },
          invitation_mails: { resealed: 0, current: 1, unreadable: 0 }
        })

        // Services with SECRETS_KEY=K2 alone (SECRETS_KEY_PREVIOUS dropped): every value opens, for its own row.
        const after = yield* Effect.gen(function*() {
          const channels = yield* Channels
          for (const [principal, channel] of [[a, made.hook], [a, made.chat], [a, made.legacy], [a, fresh], [b, made.lost]] as const) {
            yield* channels.sendTest(principal, channel.id)
          }
          const claimed = yield* Outbox.use((o) => o.claim)
          const polled = yield* MonitorStore.use((s) => s.loadByIds([made.monitor.id]))
          const check = yield* Monitors.use((m) => m.checkNow(a, made.monitor.id))
          const mails: Array<Mail> = []
          const sent = yield* sendDueInvitationMails((mail) => {
            mails.push(mail)
            return Promise.resolve({ ok: true, status: 250, retryable: false, error: "" })
          })
          return { claimed, polled, check, mails, sent }
        }).pipe(Effect.provide(withBox(SecretBox.fromKey(k2))))

        const destination = (id: string) => {
          const claimed = after.claimed.find((c) => c.channel_id === id)
          assert.isDefined(claimed, `no delivery claimed for channel ${id}`)
          return claimed!
        }
        assert.deepInclude(destination(made.hook.id).destination!.settings, {
          url: "https://hooks.example.com/statusgrid",
          headers: { "X-Api-Key": "header-secret" },
          signing_secret: signingSecret
        })
        assert.deepInclude(destination(made.chat.id).destination!.settings, { webhook_url: "https://hooks.slack.com/services/T0/B0/chat-secret" })
        assert.deepInclude(destination(made.legacy.id).destination!.settings, { webhook_url: "https://hooks.slack.com/services/T0/B0/legacy-secret" })
        assert.deepInclude(destination(fresh.id).destination!.settings, { webhook_url: "https://hooks.slack.com/services/T0/B0/fresh-secret" })
        // The value no configured key opens: the delivery says why, nothing crashes.
        assert.isUndefined(destination(made.lost.id).destination)
        assert.include(destination(made.lost.id).unusable, "cannot decrypt a stored secret")

        assert.strictEqual(after.polled.length, 1)
        assert.deepStrictEqual(after.polled[0]!.settings.auth, { type: "basic", username: "probe", password: "pa55word" })
        assert.strictEqual(after.check.status, "up", after.check.error)
        assert.strictEqual(http.seen[http.seen.length - 1], basicOf("probe", "pa55word"))

        assert.strictEqual(after.sent, 1)
        assert.deepStrictEqual(after.mails.map((m) => m.to), [["new.person@example.com"]])
        assert.include(after.mails[0]!.text, made.invitation.accept_url)
      }))

    it.effect("a sealed value copied into another row, or another organization's row, does not open there: a clear error, not a crash", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const http = yield* target
        const c = yield* newOrganization
        const d = yield* newOrganization
        yield* Effect.gen(function*() {
          const channels = yield* Channels
          const source = yield* channels.create(c, slack("Source", "source-secret"))
          const sameOrg = yield* channels.create(c, slack("Same organization", "same-secret"))
          const otherOrg = yield* channels.create(d, slack("Other organization", "other-secret"))
          yield* sql`UPDATE channels SET secrets = (SELECT secrets FROM channels WHERE id = ${source.id}::uuid)
            WHERE id IN (${sameOrg.id}::uuid, ${otherOrg.id}::uuid)`
          yield* channels.sendTest(c, source.id)
          yield* channels.sendTest(c, sameOrg.id)
          yield* channels.sendTest(d, otherOrg.id)
          const claimed = yield* Outbox.use((o) => o.claim)
          const of = (id: string) => claimed.find((x) => x.channel_id === id)!
          assert.deepInclude(of(source.id).destination!.settings, { webhook_url: "https://hooks.slack.com/services/T0/B0/source-secret" })
          for (const copy of [sameOrg, otherOrg]) {
            assert.isUndefined(of(copy.id).destination)
            assert.include(of(copy.id).unusable, "cannot decrypt a stored secret")
            assert.include(of(copy.id).unusable, "copied from another record")
          }
          yield* Outbox.use((o) => o.release(claimed))

          // Editing the channel: a 400 that says the secrets must be given again (never a 500); given, they are sealed for this row.
          const refused = yield* Effect.result(channels.update(c, sameOrg.id, { settings: { channel: "#renamed" } }))
          assert.isTrue(Result.isFailure(refused))
          if (Result.isFailure(refused)) {
            assert.strictEqual(refused.failure._tag, "InvalidParameter")
            assert.include(refused.failure.message, "cannot be opened")
          }
          const masked = (yield* channels.get(c, sameOrg.id)).settings as Record<string, unknown>
          const stillRefused = yield* Effect.result(channels.update(c, sameOrg.id, { settings: { webhook_url: masked["webhook_url"] } }))
          assert.isTrue(Result.isFailure(stillRefused), "a masked value sent back stands for no secret when the stored one cannot be opened")
          yield* channels.update(c, sameOrg.id, { settings: { webhook_url: "https://hooks.slack.com/services/T0/B0/given-again" } })
          const again = yield* Outbox.use((o) => o.claim)
          const retried = again.find((x) => x.channel_id === sameOrg.id)
          assert.deepInclude(retried!.destination!.settings, { webhook_url: "https://hooks.slack.com/services/T0/B0/given-again" })

          // A monitor's credentials copied into another monitor: its trial check says so and sends nothing; the poller skips it.
          const m1 = yield* Monitors.use((m) => m.add(c, { name: "One", url: http.url, auth: { type: "basic", username: "one", password: "pw-one" } }))
          const m2 = yield* Monitors.use((m) => m.add(c, { name: "Two", url: http.url, auth: { type: "bearer", token: "token-two" } }))
          yield* sql`UPDATE monitors SET auth_secret = (SELECT auth_secret FROM monitors WHERE id = ${m1.id}::uuid) WHERE id = ${m2.id}::uuid`
          const seen = http.seen.length
          const check = yield* Monitors.use((m) => m.checkNow(c, m2.id))
          assert.strictEqual(check.status, "down")
          assert.strictEqual(check.error_code, "credentials")
          assert.include(check.error, "copied from another record")
          assert.strictEqual(http.seen.length, seen)
          const polled = yield* MonitorStore.use((s) => s.loadByIds([m1.id, m2.id]))
          assert.deepStrictEqual(polled.map((m) => m.id), [m1.id])
        }).pipe(Effect.provide(withBox(SecretBox.fromKey(k2))))
      }))
  })
})
