import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { SecretBox } from "./SecretBox.ts"

describe("SecretBox", () => {
  const box = SecretBox.fromKey(randomBytes(32))

  it.effect("opens what it sealed, and every seal differs (random IV)", () =>
    Effect.gen(function*() {
      const a = box.seal("s3cret: ünïcode")
      const b = box.seal("s3cret: ünïcode")
      assert.notStrictEqual(Buffer.from(a).toString("hex"), Buffer.from(b).toString("hex"))
      assert.isFalse(Buffer.from(a).includes("s3cret"))
      assert.strictEqual(yield* box.open(a), "s3cret: ünïcode")
    }))

  it.effect("refuses a tampered secret and a secret sealed with another key", () =>
    Effect.gen(function*() {
      const sealed = Buffer.from(box.seal("token"))
      sealed[sealed.length - 1]! ^= 1
      const tampered = yield* Effect.result(box.open(sealed))
      assert.strictEqual(tampered._tag, "Failure")
      const other = yield* Effect.result(SecretBox.fromKey(randomBytes(32)).open(box.seal("token")))
      assert.strictEqual(other._tag, "Failure")
      if (other._tag === "Failure") assert.match(other.failure.message, /cannot decrypt/)
    }))
})
