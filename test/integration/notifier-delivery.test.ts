import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { createHmac } from "node:crypto"
import { apiServer, call, newTenant } from "../support/api.ts"
import { failingFirstReceiver, FailingFirstReceiver, fastDeliveryWorker } from "../support/deliveryHarness.ts"
import { eventually } from "../support/eventually.ts"

const config = { NOTIFIER_POLL_MS: "50", NOTIFIER_BACKOFF_BASE_MS: "50", NOTIFIER_BACKOFF_MAX_MS: "400" }
const worker = fastDeliveryWorker(400)

describe("notifier: the outbox delivers", () => {
  layer(Layer.mergeAll(worker, failingFirstReceiver).pipe(Layer.provideMerge(apiServer(config))), { timeout: 60_000, excludeTestServices: true })(
    "a signed webhook test send",
    (it) => {
      it.effect("a receiver failing 3 times then succeeding gets one successful delivery, every attempt recorded, one idempotency key", () =>
        Effect.gen(function*() {
          const hook = yield* FailingFirstReceiver
          hook.failFirst.n = 3
          const tenant = yield* newTenant("pro")
          const created = yield* call("POST", "/channels", {
            key: tenant.keys.admin,
            body: { type: "webhook", name: "Receiver", settings: { url: `${hook.url}/hook` } }
          })
          assert.strictEqual(created.status, 201, JSON.stringify(created.body))
          const secret = created.body.signing_secret as string
          const sent = yield* call("POST", `/channels/${created.body.id}/test`, { key: tenant.keys.member })
          assert.strictEqual(sent.status, 202)

          const sql = yield* SqlClient
          const delivery = yield* eventually(20_000, sql<{ status: string; attempts: number; last_error: string | null }>`
            SELECT status, attempts, last_error FROM deliveries WHERE id = ${sent.body.id}::uuid AND status = 'delivered'`
            .pipe(Effect.map((rows) => rows[0])))
          assert.deepStrictEqual(delivery, { status: "delivered", attempts: 4, last_error: null })
          const attempts = yield* sql<{ http_status: number | null }>`
            SELECT http_status FROM delivery_attempts WHERE delivery_id = ${sent.body.id}::uuid ORDER BY attempted_at, id`
          assert.deepStrictEqual(attempts.map((a) => a.http_status), [500, 500, 500, 200])

          assert.deepStrictEqual(hook.received.map((r) => r.answered), [500, 500, 500, 200])
          // Every copy carries the same id, so the receiver can drop repeats; each is signed over its exact bytes.
          assert.strictEqual(new Set(hook.received.map((r) => r.headers["webhook-id"])).size, 1)
          for (const r of hook.received) {
            const expected = createHmac("sha256", secret).update(r.body).digest("hex")
            assert.strictEqual(r.headers["x-service-signature"], expected)
            assert.strictEqual(JSON.parse(r.body.toString("utf8")).event, "test")
          }
          const center = yield* call("GET", "/deliveries", { key: tenant.keys.viewer })
          assert.strictEqual(center.body.data[0].status, "delivered")
          assert.strictEqual(center.body.data[0].attempts, 4)
        }))

      it.effect("a channel receives its deliveries in order: a later one waits while an earlier one is retried", () =>
        Effect.gen(function*() {
          const hook = yield* FailingFirstReceiver
          hook.received.length = 0
          hook.failFirst.n = 2
          const tenant = yield* newTenant("pro")
          const created = yield* call("POST", "/channels", {
            key: tenant.keys.admin,
            body: { type: "webhook", name: "Ordered", settings: { url: `${hook.url}/hook` } }
          })
          const first = yield* call("POST", `/channels/${created.body.id}/test`, { key: tenant.keys.member })
          const second = yield* call("POST", `/channels/${created.body.id}/test`, { key: tenant.keys.member })
          const sql = yield* SqlClient
          yield* eventually(20_000, sql<{ n: number }>`
            SELECT count(*)::int AS n FROM deliveries WHERE id IN (${first.body.id}::uuid, ${second.body.id}::uuid) AND status = 'delivered'`
            .pipe(Effect.map((rows) => (rows[0]!.n === 2 ? rows : undefined))))
          const keys = yield* sql<{ id: string; idempotency_key: string }>`
            SELECT id, idempotency_key FROM deliveries WHERE id IN (${first.body.id}::uuid, ${second.body.id}::uuid)`
          const keyOf = new Map(keys.map((k) => [k.idempotency_key, k.id === first.body.id ? "first" : "second"]))
          // Without the order, the second would arrive while the first waits for its retry: first 500, second 200, ...
          assert.deepStrictEqual(
            hook.received.map((r) => `${keyOf.get(String(r.headers["webhook-id"]))} ${r.answered}`),
            ["first 500", "first 500", "first 200", "second 200"]
          )
        }))
    }
  )
})
