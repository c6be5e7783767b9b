import { assert, describe, it } from "@effect/vitest"
import { testPayload } from "../domain/Channel.ts"
import { messageOf, nextDelayMs } from "./Outbox.ts"

const failed = { ok: false, status: 503, retryable: true, error: "HTTP 503" }

describe("nextDelayMs", () => {
  it("doubles per attempt, jittered within the upper half, capped", () => {
    assert.strictEqual(nextDelayMs(1, failed, 1000, 60_000, () => 0), 500)
    assert.strictEqual(nextDelayMs(1, failed, 1000, 60_000, () => 1), 1000)
    assert.strictEqual(nextDelayMs(4, failed, 1000, 60_000, () => 1), 8000)
    assert.strictEqual(nextDelayMs(20, failed, 1000, 60_000, () => 1), 60_000)
  })

  it("waits at least what Retry-After asked, within the cap", () => {
    assert.strictEqual(nextDelayMs(1, { ...failed, status: 429, retryAfterMs: 5000 }, 1000, 60_000, () => 1), 5000)
    assert.strictEqual(nextDelayMs(1, { ...failed, status: 429, retryAfterMs: 3_600_000 }, 1000, 60_000, () => 1), 60_000)
  })
})

describe("messageOf", () => {
  it("words a status change for people and keeps the payload as stored", () => {
    const payload = { ...testPayload(new Date("2026-11-22T00:00:00Z")), event: "component.status_changed" }
    const critical = { ...payload, component: { ...payload.component, previous_status: "operational", current_status: "critical" } }
    const message = messageOf(critical, "component.status_changed", "https://status.example/dashboard/acme")
    assert.strictEqual(message.title, "🔴 Example component is critical (was operational)")
    assert.strictEqual(message.level, "critical")
    assert.strictEqual(message.url, "https://status.example/dashboard/acme")
    assert.deepStrictEqual(message.payload, critical)
    assert.strictEqual(messageOf(payload, "test", "u").level, "degraded")
    assert.match(messageOf(payload, "test", "u").title, /^Test notification from statusgrid/)
  })
})
