import { afterAll, assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { request } from "undici"
import webPush from "web-push"
import * as Deliverer from "../../services/notifier/Deliverer.ts"
import { Outbox } from "../../services/notifier/Outbox.ts"
import { Wakeup } from "../../services/notifier/Wakeup.ts"
import { SecretBox } from "../../services/platform/SecretBox.ts"
import { apiServer, call, newTenant } from "../support/api.ts"
import { eventually } from "../support/eventually.ts"
import { type PushService, startPushService } from "../support/pushService.ts"
import { withConfig } from "../support/stores.ts"
import { trustedTestCerts } from "../support/tls.ts"

/**
 * The Web Push channel end to end: a channel holding a browser's subscription,
 * a test send through the API and the outbox, and a local push service that
 * verifies the VAPID signature and decrypts the message (test/support/pushService.ts).
 * The VAPID keys are not configured: the server generates a pair in DATA_DIR.
 */

class Push extends Context.Service<Push, PushService>()("test/notifier-webpush/Push") {}

/** The push service over HTTPS (push endpoints are https), and undici's global dispatcher trusting its CA, restored on release. */
const push = Layer.effect(Push, Effect.gen(function*() {
  const certs = yield* trustedTestCerts
  return yield* Effect.acquireRelease(Effect.promise(() => startPushService(certs)), (s) => Effect.promise(s.close))
}))

/** Its own DATA_DIR: the VAPID pair is generated there, and no other test file holds its locks. */
const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-webpush-"))
afterAll(() => Fs.rmSync(dataDir, { recursive: true, force: true }))
const config = {
  DATA_DIR: dataDir,
  NOTIFIER_POLL_MS: "50",
  NOTIFIER_BACKOFF_BASE_MS: "50",
  NOTIFIER_BACKOFF_MAX_MS: "400",
  // The push service listens on loopback, which the address guard refuses by default.
  NOTIFIER_ALLOW_PRIVATE: "true",
  PUBLIC_URL: "https://status.example.test"
}
/** The delivery worker with the real senders, configured from the environment as `serve` does (the API's DATA_DIR: one secrets key). */
const worker = Deliverer.layer.pipe(
  Layer.provide(Layer.mergeAll(Outbox.layer.pipe(Layer.provide(SecretBox.layer)), Deliverer.Senders.layer, Wakeup.layer)),
  Layer.provide(withConfig(config))
)

const deliveryOf = (id: string, status: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    return yield* eventually(20_000, sql<{ status: string; attempts: number; last_error: string | null }>`
      SELECT status, attempts, last_error FROM deliveries WHERE id = ${id}::uuid AND status = ${status}`.pipe(Effect.map((rows) => rows[0])))
  })

/** POSTs a message the way a push sender would, with `authorization` instead of its own when given. */
const post = (details: webPush.RequestDetails, authorization?: string) =>
  Effect.promise(async () => {
    const headers = { ...details.headers, ...(authorization === undefined ? {} : { Authorization: authorization }) } as Record<string, string>
    const answer = await request(details.endpoint, { method: "POST", headers, body: details.body })
    return { status: answer.statusCode, body: await answer.body.text() }
  })

describe("notifier: Web Push", () => {
  layer(Layer.mergeAll(worker, push).pipe(Layer.provideMerge(apiServer(config))), { timeout: 60_000, excludeTestServices: true })(
    "through the outbox to a push service",
    (it) => {
      it.effect("a channel test reaches the push service once: VAPID signed by the key kept in DATA_DIR, the alert's JSON decrypted", () =>
        Effect.gen(function*() {
          const service = yield* Push
          const tenant = yield* newTenant("pro")
          const sub = service.subscribe()
          const created = yield* call("POST", "/channels", {
            key: tenant.keys.admin,
            body: { type: "webpush", name: "Ops phone", settings: sub.json }
          })
          assert.strictEqual(created.status, 201, JSON.stringify(created.body))
          // The subscription is a secret: shown masked, never in clear.
          assert.deepStrictEqual(created.body.settings, { endpoint: `${service.url}/…/${sub.json.endpoint.slice(-4)}`, keys: "…" })
          const sent = yield* call("POST", `/channels/${created.body.id}/test`, { key: tenant.keys.member })
          assert.strictEqual(sent.status, 202, JSON.stringify(sent.body))

          assert.deepStrictEqual(yield* deliveryOf(sent.body.id, "delivered"), { status: "delivered", attempts: 1, last_error: null })
          assert.deepStrictEqual(service.problems, [])
          const mine = service.received.filter((m) => m.subscription === sub.id)
          assert.strictEqual(mine.length, 1)
          const message = mine[0]!
          assert.deepStrictEqual(JSON.parse(message.plaintext), {
            title: "Test notification from statusgrid: Example component is degraded",
            body: "Example component in Example stack: operational → degraded.",
            url: `https://status.example.test/dashboard/${tenant.slug}`
          })
          const kept = JSON.parse(Fs.readFileSync(Path.join(dataDir, "vapid.json"), "utf8")) as { publicKey: string }
          assert.strictEqual(message.vapidKey, kept.publicKey)
          assert.strictEqual(message.claims.aud, service.url)
          assert.strictEqual(message.claims.sub, "https://status.example.test")
          assert.strictEqual(message.headers["urgency"], "normal")
          assert.match(String(message.headers["topic"]), /^[A-Za-z0-9_-]{32}$/)
        }))

      it.effect("a push service answering 503 twice: retried by the outbox, delivered on the third attempt with the same Topic", () =>
        Effect.gen(function*() {
          const service = yield* Push
          const tenant = yield* newTenant("pro")
          const sub = service.subscribe()
          service.busy.set(sub.id, 2)
          const created = yield* call("POST", "/channels", { key: tenant.keys.admin, body: { type: "webpush", name: "Busy", settings: sub.json } })
          assert.strictEqual(created.status, 201, JSON.stringify(created.body))
          const sent = yield* call("POST", `/channels/${created.body.id}/test`, { key: tenant.keys.admin })
          assert.strictEqual(sent.status, 202)
          assert.deepStrictEqual(yield* deliveryOf(sent.body.id, "delivered"), { status: "delivered", attempts: 3, last_error: null })
          const attempts = service.receiver.requests.filter((r) => r.path === `/push/${sub.id}`)
          assert.strictEqual(attempts.length, 3)
          assert.strictEqual(new Set(attempts.map((r) => r.headers["topic"])).size, 1)
          assert.strictEqual(service.received.filter((m) => m.subscription === sub.id).length, 1)
        }))

      it.effect("a push service answering 410 Gone fails the delivery at once, saying the subscription is gone", () =>
        Effect.gen(function*() {
          const service = yield* Push
          const tenant = yield* newTenant("pro")
          const sub = service.subscribe()
          service.gone.add(sub.id)
          const created = yield* call("POST", "/channels", { key: tenant.keys.admin, body: { type: "webpush", name: "Old phone", settings: sub.json } })
          assert.strictEqual(created.status, 201, JSON.stringify(created.body))
          const sent = yield* call("POST", `/channels/${created.body.id}/test`, { key: tenant.keys.admin })
          assert.strictEqual(sent.status, 202)
          const failed = yield* deliveryOf(sent.body.id, "failed")
          assert.strictEqual(failed?.attempts, 1)
          assert.match(String(failed?.last_error), /^HTTP 410: the push subscription is gone/)
          assert.strictEqual(service.receiver.requests.filter((r) => r.path === `/push/${sub.id}`).length, 1)
          assert.isFalse(service.received.some((m) => m.subscription === sub.id))
        }))

      it.effect("the push service stand-in refuses a wrong VAPID signature, another audience, and a message encrypted for another subscription", () =>
        Effect.gen(function*() {
          const service = yield* Push
          const [a, b] = [service.subscribe(), service.subscribe()]
          const mine = webPush.generateVAPIDKeys()
          const other = webPush.generateVAPIDKeys()
          const vapid = { subject: "mailto:ops@example.test", publicKey: mine.publicKey, privateKey: mine.privateKey }
          const details = (sub: typeof a.json, keys = vapid) =>
            webPush.generateRequestDetails(sub, "{\"title\":\"t\"}", { vapidDetails: keys, contentEncoding: "aes128gcm", TTL: 60 })

          const good = yield* post(details(a.json))
          assert.strictEqual(good.status, 201, good.body)
          assert.strictEqual(service.received.at(-1)?.plaintext, "{\"title\":\"t\"}")
          const forged = yield* post(details(a.json, { ...vapid, privateKey: other.privateKey }))
          assert.deepStrictEqual(forged, { status: 401, body: "JWT signature does not verify with k" })
          const elsewhere = webPush.getVapidHeaders("https://push.other.example", vapid.subject, vapid.publicKey, vapid.privateKey, "aes128gcm")
          const audience = yield* post(details(a.json), elsewhere.Authorization)
          assert.strictEqual(audience.status, 401)
          assert.match(audience.body, /^JWT aud https:\/\/push\.other\.example, not the endpoint's origin/)
          const misdirected = yield* post(details({ endpoint: a.json.endpoint, keys: b.json.keys }))
          assert.strictEqual(misdirected.status, 400)
          assert.match(misdirected.body, /^cannot decrypt/)
          assert.strictEqual(service.problems.length, 3)
          service.problems.length = 0
        }))

      it.effect("plans and settings: Free refuses the type (402); a malformed subscription is a 400 naming the field", () =>
        Effect.gen(function*() {
          const service = yield* Push
          const sub = service.subscribe()
          const free = yield* newTenant("free")
          const refused = yield* call("POST", "/channels", { key: free.keys.admin, body: { type: "webpush", name: "Phone", settings: sub.json } })
          assert.strictEqual(refused.status, 402, JSON.stringify(refused.body))
          const pro = yield* newTenant("pro")
          const bad = yield* call("POST", "/channels", {
            key: pro.keys.admin,
            body: { type: "webpush", name: "Phone", settings: { ...sub.json, keys: { ...sub.json.keys, p256dh: "not-a-key" } } }
          })
          assert.strictEqual(bad.status, 400, JSON.stringify(bad.body))
          assert.strictEqual(bad.body.field, "settings.keys.p256dh")
          const http = yield* call("POST", "/channels", {
            key: pro.keys.admin,
            body: { type: "webpush", name: "Phone", settings: { ...sub.json, endpoint: sub.json.endpoint.replace("https:", "http:") } }
          })
          assert.strictEqual(http.status, 400, JSON.stringify(http.body))
          assert.strictEqual(http.body.field, "settings.endpoint")
        }))
    }
  )
})
