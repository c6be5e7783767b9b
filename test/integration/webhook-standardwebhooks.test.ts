import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { createHmac } from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { Webhook } from "standardwebhooks"
import { vi } from "vitest"
import { makeWebhookSender } from "../../services/notifier/channels/webhook.ts"
import { sampleMessage } from "../../services/notifier/channels/sample.ts"
import type { Destination } from "../../services/notifier/Sender.ts"
import { apiServer, call, newTenant } from "../support/api.ts"
import { type Delivered, failingFirstReceiver, FailingFirstReceiver, fastDeliveryWorker } from "../support/deliveryHarness.ts"
import { eventually } from "../support/eventually.ts"
import { webhookSignatureProblem } from "../support/receivers.ts"

/**
 * Real deliveries (API → outbox → webhook sender → a local receiver keeping
 * the raw bytes and headers), verified with the official Standard Webhooks
 * library the way a receiver does: `new Webhook(secret).verify(rawBody, headers)`.
 */

type Received = Delivered

const config = { NOTIFIER_POLL_MS: "50", NOTIFIER_BACKOFF_BASE_MS: "50", NOTIFIER_BACKOFF_MAX_MS: "200" }
const worker = fastDeliveryWorker(200)

const webhookTo = (settings: Record<string, unknown>): Destination<"webhook"> =>
  ({ type: "webhook", name: "webhook test", settings: settings as Destination["settings"] })

/** Verifies like a receiver, at `atMs` (now by default): the parsed payload, or the library's error message. */
const libraryVerify = (secret: string, r: Received, options: { atMs?: number; format?: "raw" } = {}): unknown => {
  const at = options.atMs
  if (at !== undefined) vi.spyOn(Date, "now").mockReturnValue(at)
  try {
    return new Webhook(secret, options.format === undefined ? undefined : { format: options.format }).verify(r.body, r.headers)
  } catch (e) {
    return `refused: ${(e as Error).message}`
  } finally {
    vi.restoreAllMocks()
  }
}

/** The receiver-side recipe of the project's README ("Verifying webhooks"), loaded from the README itself. */
const readmeVerifier = Effect.promise(async () => {
  const readme = Fs.readFileSync(Path.join(import.meta.dirname, "../../README.md"), "utf8")
  const code = /### Verifying webhooks[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)?.[1]
  assert.isDefined(code, "README has the verification snippet")
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sg-readme-"))
  const file = Path.join(dir, "verify.mjs")
  Fs.writeFileSync(file, `${code}\nexport { verify }\n`)
  const mod = (await import(pathToFileURL(file).href)) as { verify: (b: Buffer, h: Record<string, string>, s: string) => boolean }
  Fs.rmSync(dir, { recursive: true, force: true })
  return mod.verify
})

/** A webhook channel through the API, a test notification sent through the outbox; what the receiver got for it. */
const deliverTest = (settings: Record<string, unknown>) =>
  Effect.gen(function*() {
    const hook = yield* FailingFirstReceiver
    const tenant = yield* newTenant("pro")
    const path = `/hook-${Math.random().toString(36).slice(2, 8)}`
    const created = yield* call("POST", "/channels", {
      key: tenant.keys.admin,
      body: { type: "webhook", name: "Receiver", settings: { url: `${hook.url}${path}`, ...settings } }
    })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const sent = yield* call("POST", `/channels/${created.body.id}/test`, { key: tenant.keys.member })
    assert.strictEqual(sent.status, 202)
    const sql = yield* SqlClient
    yield* eventually(20_000, sql<{ status: string }>`
      SELECT status FROM deliveries WHERE id = ${sent.body.id}::uuid AND status = 'delivered'`.pipe(Effect.map((rows) => rows[0])))
    return { channel: created.body as { id: string; signing_secret?: string }, requests: hook.received.filter((r) => r.path === path), tenant }
  })

describe("webhook deliveries verified by the Standard Webhooks library", () => {
  layer(Layer.mergeAll(worker, failingFirstReceiver).pipe(Layer.provideMerge(apiServer(config))), { timeout: 60_000, excludeTestServices: true })(
    "API, outbox, sender, a local receiver",
    (it) => {
      it.effect("a generated secret pasted as it is verifies every attempt (retried after 500s); tampered or late copies are refused", () =>
        Effect.gen(function*() {
          const hook = yield* FailingFirstReceiver
          hook.received.length = 0
          hook.failFirst.n = 2
          const readme = yield* readmeVerifier
          const { channel, requests } = yield* deliverTest({})
          const secret = channel.signing_secret!
          assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/, "the API generates a Standard Webhooks secret, shown once")
          assert.deepStrictEqual(requests.map((r) => r.answered), [500, 500, 200])
          for (const r of requests) {
            const payload = libraryVerify(secret, r)
            assert.deepStrictEqual(payload, JSON.parse(r.body.toString("utf8")))
            assert.strictEqual((payload as { event: string }).event, "test")
            // X-Service-Signature: keyed by the secret exactly as shown.
            assert.strictEqual(r.headers["x-service-signature"], createHmac("sha256", secret).update(r.body).digest("hex"))
            // Receivers using the secret's UTF-8 bytes as key (the README's recipe) verify too.
            assert.isUndefined(webhookSignatureProblem(r, secret))
            assert.isTrue(readme(r.body, r.headers, secret))
          }
          assert.strictEqual(new Set(requests.map((r) => r.headers["webhook-id"])).size, 1, "one webhook-id for every attempt")

          const last = requests.at(-1)!
          const sentAtMs = Number(last.headers["webhook-timestamp"]) * 1000
          assert.match(String(libraryVerify(secret, { ...last, body: Buffer.from(last.body.toString("utf8").replace("\"test\"", "\"incident.resolved\"")) })),
            /^refused: No matching signature found/)
          assert.match(String(libraryVerify(secret, { ...last, headers: { ...last.headers, "webhook-id": "another-delivery" } })), /^refused: No matching signature found/)
          assert.match(String(libraryVerify(secret, { ...last, headers: { ...last.headers, "webhook-timestamp": String(sentAtMs / 1000 + 60) } })),
            /^refused: No matching signature found/)
          // The same request, unchanged, arriving (or replayed) 4 and then 6 minutes later.
          assert.deepStrictEqual(libraryVerify(secret, last, { atMs: sentAtMs + 240_000 }), JSON.parse(last.body.toString("utf8")))
          assert.strictEqual(libraryVerify(secret, last, { atMs: sentAtMs + 360_000 }), "refused: Message timestamp too old")
          assert.match(String(libraryVerify(`whsec_${Buffer.alloc(32, 7).toString("base64")}`, last)), /^refused: No matching signature found/)
        }))

      it.effect("a channel whose secret predates whsec_ (hex) keeps verifying as before; the library takes it with format raw, not as it is", () =>
        Effect.gen(function*() {
          const hook = yield* FailingFirstReceiver
          hook.failFirst.n = 0
          const hex = "3f1c0a9be47d52e6a18c03f5b7d9e2a4c6f8091b2d3e4f5a6b7c8d9e0f1a2b3c"
          const { channel, requests } = yield* deliverTest({ signing_secret: hex })
          assert.isUndefined(channel.signing_secret, "a secret given is not shown back")
          assert.strictEqual(requests.length, 1)
          const [r] = requests
          assert.strictEqual(r!.headers["webhook-signature"]!.split(" ").length, 1, "one signature, as before")
          assert.isUndefined(webhookSignatureProblem(r!, hex))
          assert.strictEqual(libraryVerify(hex, r!), "refused: No matching signature found", "the library reads a bare secret as base64")
          assert.deepStrictEqual(libraryVerify(hex, r!, { format: "raw" }), JSON.parse(r!.body.toString("utf8")))
          assert.deepStrictEqual(libraryVerify(`whsec_${Buffer.from(hex).toString("base64")}`, r!), JSON.parse(r!.body.toString("utf8")))
        }))

      it.effect("a whsec_ secret chosen by the organization (say, copied from another webhook provider) works as it is, and the old way", () =>
        Effect.gen(function*() {
          const chosen = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
          const { requests } = yield* deliverTest({ signing_secret: chosen })
          const [r] = requests
          assert.deepStrictEqual(libraryVerify(chosen, r!), JSON.parse(r!.body.toString("utf8")))
          assert.isUndefined(webhookSignatureProblem(r!, chosen))
          assert.deepStrictEqual(libraryVerify(`whsec_${Buffer.from(chosen).toString("base64")}`, r!), JSON.parse(r!.body.toString("utf8")))
        }))

      it.effect("the sender's own requests: PUT with a unicode body, GET and DELETE over the empty string; an old timestamp refused", () =>
        Effect.gen(function*() {
          const hook = yield* FailingFirstReceiver
          hook.failFirst.n = 0
          const secret = `whsec_${Buffer.alloc(32, 0xa5).toString("base64")}`
          const sample = sampleMessage()
          const component = { ...sample.payload.component, name: "🔴 Zürich — 東京 — القاهرة — naïve café \ud800" }
          const message = sampleMessage({ payload: { ...sample.payload, component } })
          const context = { idempotencyKey: "evt-9:chan-9", timeoutMs: 5000 }
          for (const method of ["PUT", "GET", "DELETE"] as const) {
            const result = yield* Effect.promise(() =>
              makeWebhookSender()(webhookTo({ url: `${hook.url}/m-${method}`, method, signing_secret: secret }), message, context))
            assert.isTrue(result.ok, result.error)
            const r = hook.received.findLast((x) => x.path === `/m-${method}`)!
            assert.strictEqual(r.method, method)
            if (method === "PUT") assert.deepStrictEqual(libraryVerify(secret, r), message.payload)
            else assert.isUndefined(libraryVerify(secret, r), "an empty body verifies and parses to nothing")
          }
          // A sender whose clock says 6 minutes ago: headers of a delivery that old.
          const sixMinutesAgo = makeWebhookSender({ now: () => Date.now() - 360_000 })
          const result = yield* Effect.promise(() =>
            sixMinutesAgo(webhookTo({ url: `${hook.url}/old`, signing_secret: secret }), message, context))
          assert.isTrue(result.ok)
          const old = hook.received.findLast((x) => x.path === "/old")!
          assert.strictEqual(libraryVerify(secret, old), "refused: Message timestamp too old")
        }))
    }
  )
})
