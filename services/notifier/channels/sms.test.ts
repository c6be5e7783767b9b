import { assert, describe, it } from "@effect/vitest"
import type { Destination, Message } from "../Sender.ts"
import { smsCost, smsSegments } from "./sms.ts"

const destination = (numbers: ReadonlyArray<string>): Destination => ({
  type: "sms",
  name: "On call",
  settings: { account_sid: `AC${"0".repeat(32)}`, auth_token: "secret", from_number: "+15550000000", phone_numbers: numbers } as unknown as Destination["settings"]
})

describe("SMS segments", () => {
  it("GSM-7 bodies: 160 septets in one message, 153 per segment beyond; extension characters count two", () => {
    assert.strictEqual(smsSegments(""), 1)
    assert.strictEqual(smsSegments("a".repeat(160)), 1)
    assert.strictEqual(smsSegments("a".repeat(161)), 2)
    assert.strictEqual(smsSegments("a".repeat(306)), 2)
    assert.strictEqual(smsSegments("a".repeat(307)), 3)
    assert.strictEqual(smsSegments(`${"a".repeat(158)}€`), 1, "158 + 2 septets")
    assert.strictEqual(smsSegments(`${"a".repeat(159)}€`), 2, "159 + 2 septets")
    assert.strictEqual(smsSegments("Ünïcode? No: GSM has é, ñ, ü, Ä, £ and Δ"), 1)
  })

  it("UCS-2 bodies (any character outside GSM-7): 70 UTF-16 units in one message, 67 per segment beyond", () => {
    assert.strictEqual(smsSegments("ç".repeat(70)), 1, "ç is not in the GSM alphabet (only Ç is)")
    assert.strictEqual(smsSegments("ç".repeat(71)), 2)
    assert.strictEqual(smsSegments("ç".repeat(134)), 2)
    assert.strictEqual(smsSegments("ç".repeat(135)), 3)
    // An emoji is two UTF-16 units and turns a 160-character body into UCS-2: 3 segments.
    assert.strictEqual(smsSegments(`🔴${"a".repeat(159)}`), 3)
  })

  it("a delivery costs its body's segments for each number", () => {
    const message: Message = {
      event: "component.status_changed",
      title: "🔴 API is critical (was operational)",
      text: "API in Checkout: operational → critical. ".repeat(5),
      url: "https://status.example.com/dashboard/acme",
      level: "critical",
      payload: {} as Message["payload"]
    }
    const one = smsCost(destination(["+15551111111"]), message)!
    assert.strictEqual(one, 3, "160 characters with an emoji")
    assert.strictEqual(smsCost(destination(["+15551111111", "+15552222222"]), message), 2 * one)
    assert.isUndefined(smsCost({ ...destination([]), settings: {} as never }, message))
  })
})
