import { assert, describe, it } from "@effect/vitest"
import { keyFromName } from "./Source.ts"
import { slugOf } from "./Text.ts"

describe("slugOf", () => {
  it("spells a display name as a slug", () => {
    assert.strictEqual(slugOf("Payments & Billing", 64, "x"), "payments-and-billing")
    assert.strictEqual(slugOf("  Café   Zürich!! ", 64, "x"), "cafe-zurich")
    assert.strictEqual(keyFromName("Circle CI"), "circle-ci")
  })

  it("cuts at the length without a trailing hyphen, and falls back when nothing is left", () => {
    assert.strictEqual(slugOf("abc def", 4, "x"), "abc")
    assert.strictEqual(slugOf("!!!", 10, "stack"), "stack")
    assert.strictEqual(keyFromName("a".repeat(200)).length, 128)
  })
})
