import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { scryptSync } from "node:crypto"
import { currentParams, decode, hash, needsRehash, verify } from "./Passwords.ts"

describe("Passwords", () => {
  it.effect("the right password verifies, a wrong one does not", () =>
    Effect.gen(function*() {
      const stored = yield* hash("correct horse battery staple")
      assert.isTrue(yield* verify("correct horse battery staple", stored))
      assert.isFalse(yield* verify("correct horse battery stapl", stored))
      assert.isFalse(yield* verify("Correct horse battery staple", stored))
      assert.isFalse(yield* verify("", stored))
    }))

  it.effect("stored as scrypt$N$r$p$salt$hash with the current parameters, a 16-byte salt and a 64-byte key", () =>
    Effect.gen(function*() {
      const stored = yield* hash("a long enough password")
      const parts = stored.split("$")
      assert.deepStrictEqual(parts.slice(0, 4), ["scrypt", "32768", "8", "1"])
      assert.strictEqual(Buffer.from(parts[4]!, "base64").length, 16)
      assert.strictEqual(Buffer.from(parts[5]!, "base64").length, 64)
      // It is scrypt with those parameters, not something else in that shape.
      const expected = scryptSync(Buffer.from("a long enough password"), Buffer.from(parts[4]!, "base64"), 64, {
        N: 32768,
        r: 8,
        p: 1,
        maxmem: 64 * 1024 * 1024
      })
      assert.strictEqual(parts[5], expected.toString("base64"))
      assert.notInclude(stored, "a long enough password")
    }))

  it.effect("the same password hashed twice gets different salts and hashes, and both verify", () =>
    Effect.gen(function*() {
      const a = yield* hash("same password twice")
      const b = yield* hash("same password twice")
      assert.notStrictEqual(a, b)
      assert.notStrictEqual(a.split("$")[4], b.split("$")[4])
      assert.notStrictEqual(a.split("$")[5], b.split("$")[5])
      assert.isTrue(yield* verify("same password twice", a))
      assert.isTrue(yield* verify("same password twice", b))
    }))

  it.effect("a tampered hash verifies nothing: changed key, changed salt, changed parameters, truncated, not a hash", () =>
    Effect.gen(function*() {
      const password = "tamper with me please"
      const stored = yield* hash(password)
      const [scheme, n, r, p, salt, key] = stored.split("$") as [string, string, string, string, string, string]
      const flipped = Buffer.from(key, "base64")
      flipped[0] = flipped[0]! ^ 1
      const otherSalt = Buffer.from(salt, "base64")
      otherSalt[15] = otherSalt[15]! ^ 0x80
      const tampered = [
        [scheme, n, r, p, salt, flipped.toString("base64")].join("$"),
        [scheme, n, r, p, otherSalt.toString("base64"), key].join("$"),
        [scheme, "16384", r, p, salt, key].join("$"),
        [scheme, n, "4", p, salt, key].join("$"),
        // A prefix of scrypt's output is scrypt's output for a shorter key: refused by length.
        [scheme, n, r, p, salt, Buffer.from(key, "base64").subarray(0, 32).toString("base64")].join("$"),
        ["bcrypt", n, r, p, salt, key].join("$"),
        stored.slice(0, -10),
        "",
        password
      ]
      for (const t of tampered) assert.isFalse(yield* verify(password, t), t)
      // The original still works.
      assert.isTrue(yield* verify(password, stored))
    }))

  it("a stored hash asking for absurd parameters is refused before any work", () => {
    const salt = Buffer.alloc(16).toString("base64")
    const key = Buffer.alloc(64).toString("base64")
    assert.isUndefined(decode(`scrypt$${2 ** 30}$8$1$${salt}$${key}`))
    assert.isUndefined(decode(`scrypt$1000$8$1$${salt}$${key}`), "N must be a power of two")
    assert.isUndefined(decode(`scrypt$32768$1000$1$${salt}$${key}`))
    assert.isUndefined(decode(`scrypt$32768$8$1$${salt}$${Buffer.alloc(32).toString("base64")}`), "the key is 64 bytes")
    assert.isUndefined(decode(`scrypt$32768$8$1$${Buffer.alloc(4).toString("base64")}$${key}`), "the salt is at least 16 bytes")
    assert.isDefined(decode(`scrypt$32768$8$1$${salt}$${key}`))
  })

  it.effect("needsRehash: false for a current hash, true when the parameters change or the hash is not ours", () =>
    Effect.gen(function*() {
      const weak = { ...currentParams, N: 2 ** 10 }
      const old = yield* hash("an older password hash", weak)
      assert.isTrue(yield* verify("an older password hash", old), "old parameters still verify")
      assert.isTrue(needsRehash(old))
      assert.isFalse(needsRehash(old, weak))
      const current = yield* hash("a current password hash")
      assert.isFalse(needsRehash(current))
      assert.isTrue(needsRehash(current, { ...currentParams, r: 16 }))
      assert.isTrue(needsRehash(current, { ...currentParams, saltLength: 32 }))
      assert.isTrue(needsRehash("not a hash"))
    }))

  it.effect("Unicode is normalized: a composed and a decomposed accent are the same password", () =>
    Effect.gen(function*() {
      const stored = yield* hash("caf\u00e9 au lait, bitte")
      assert.isTrue(yield* verify("cafe\u0301 au lait, bitte", stored))
    }))
})
