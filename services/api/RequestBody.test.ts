import { assert, describe, it } from "@effect/vitest"
import { mediaTypeOf, nulPath } from "./RequestBody.ts"

describe("RequestBody", () => {
  it("mediaTypeOf compares media types as the API builder does; absent is JSON", () => {
    assert.strictEqual(mediaTypeOf(undefined), "application/json")
    assert.strictEqual(mediaTypeOf(" Application/JSON; charset=utf-8"), "application/json")
    assert.strictEqual(mediaTypeOf("text/plain;charset=UTF-8"), "text/plain")
    assert.strictEqual(mediaTypeOf(""), "")
  })

  it("nulPath names the first string or key holding NUL by its dotted path", () => {
    assert.isUndefined(nulPath({ name: "ok", list: ["a", { b: 1 }], n: null }))
    assert.strictEqual(nulPath({ name: "a\u0000b" }), "name")
    assert.strictEqual(nulPath({ settings: { headers: { "X-Token": "\u0000" } } }), "settings.headers.X-Token")
    assert.strictEqual(nulPath({ triggers: ["ok", "x\u0000"] }), "triggers.1")
    assert.strictEqual(nulPath({ headers: { "bad\u0000name": "v" } }), "headers.bad\u0000name")
    assert.strictEqual(nulPath("\u0000"), "body")
    assert.strictEqual(nulPath(JSON.parse("{\"__proto__\":{\"x\":\"\\u0000\"}}")), "__proto__.x")
  })
})
