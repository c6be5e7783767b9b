import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { createCipheriv, createHmac, randomBytes, randomUUID } from "node:crypto"
import { keyIdOf, SecretBox, secretBinding, SecretBoxError } from "./SecretBox.ts"

/** A format 1 value, as statusgrid sealed them before format 2: `1 | iv | tag | ciphertext`, no associated data. */
const sealVersion1 = (key: Uint8Array, plaintext: string) => {
  const iv = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", key, iv)
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
  return Buffer.concat([Buffer.from([1]), iv, cipher.getAuthTag(), body])
}

/** The failure's message, or fails the test when it opened. */
const failureOf = <A>(effect: Effect.Effect<A, SecretBoxError>) =>
  Effect.gen(function*() {
    const result = yield* Effect.result(effect)
    if (result._tag === "Success") return assert.fail(`expected a SecretBoxError, it opened: ${String(result.success)}`)
    assert.instanceOf(result.failure, SecretBoxError)
    return result.failure.message
  })

describe("SecretBox", () => {
  const k1 = randomBytes(32)
  const k2 = randomBytes(32)
  const box = SecretBox.fromKey(k1)
  const org = randomUUID()
  const record = randomUUID()
  const binding = secretBinding("channel secrets", org, record)

  it.effect("opens what it sealed, and every seal differs (random IV)", () =>
    Effect.gen(function*() {
      const a = box.seal("s3cret: ünïcode", binding)
      const b = box.seal("s3cret: ünïcode", binding)
      assert.notStrictEqual(Buffer.from(a).toString("hex"), Buffer.from(b).toString("hex"))
      assert.isFalse(Buffer.from(a).includes("s3cret"))
      assert.strictEqual(yield* box.open(a, binding), "s3cret: ünïcode")
      assert.strictEqual(yield* box.open(box.seal("", binding), binding), "")
    }))

  it("format 2: version, the key's id (not the key), iv, a 16-byte tag, ciphertext", () => {
    const sealed = Buffer.from(box.seal("token", binding))
    assert.strictEqual(sealed[0], 2)
    assert.strictEqual(sealed.subarray(1, 5).toString("hex"), keyIdOf(k1).toString("hex"))
    assert.strictEqual(box.keyId, keyIdOf(k1).toString("hex"))
    assert.strictEqual(sealed.length, 1 + 4 + 12 + 16 + "token".length)
    assert.isFalse(sealed.includes(k1.subarray(0, 4)))
  })

  it.effect("a value sealed for one record does not open as another record, organization or purpose", () =>
    Effect.gen(function*() {
      const sealed = box.seal("the same plaintext", binding)
      const elsewhere = [
        secretBinding("channel secrets", org, randomUUID()),
        secretBinding("channel secrets", randomUUID(), record),
        secretBinding("monitor auth", org, record),
        secretBinding("invitation mail", org, record)
      ]
      for (const other of elsewhere) {
        const message = yield* failureOf(box.open(sealed, other))
        assert.match(message, /cannot decrypt a stored secret/)
        assert.match(message, /copied from another record/)
      }
      // Ids are uuids: their case does not matter.
      assert.strictEqual(yield* box.open(sealed, secretBinding("channel secrets", org.toUpperCase(), record.toUpperCase())), "the same plaintext")
    }))

  it.effect("refuses a tampered secret and a secret sealed with another key", () =>
    Effect.gen(function*() {
      const sealed = Buffer.from(box.seal("token", binding))
      sealed[sealed.length - 1]! ^= 1
      yield* failureOf(box.open(sealed, binding))
      const message = yield* failureOf(SecretBox.fromKey(k2).open(box.seal("token", binding), binding))
      assert.match(message, /cannot decrypt/)
      assert.include(message, keyIdOf(k1).toString("hex"))
    }))

  it.effect("a tag that is not exactly 16 bytes is refused: truncated or extended", () =>
    Effect.gen(function*() {
      // GCM verifies a truncated tag against the prefix of the full one: an empty secret with its tag cut
      // to 4 bytes would verify if short tags were accepted (a 2^32 forgery).
      const legacy = sealVersion1(k1, "")
      assert.strictEqual(yield* box.open(legacy, binding), "")
      for (const length of [1 + 12 + 4, 1 + 12 + 12, 1 + 12 + 15]) {
        assert.match(yield* failureOf(box.open(legacy.subarray(0, length), binding)), /too short/)
      }
      const empty = Buffer.from(box.seal("", binding))
      assert.match(yield* failureOf(box.open(empty.subarray(0, 1 + 4 + 12 + 4), binding)), /too short/)
      assert.match(yield* failureOf(box.open(empty.subarray(0, empty.length - 1), binding)), /too short/)
      // Extended: the extra bytes are ciphertext the tag does not cover.
      yield* failureOf(box.open(Buffer.concat([empty, Buffer.from([0])]), binding))
      yield* failureOf(box.open(Buffer.concat([legacy, Buffer.from([0, 0, 0, 0])]), binding))
      const sealed = Buffer.from(box.seal("token", binding))
      yield* failureOf(box.open(sealed.subarray(0, sealed.length - 1), binding))
    }))

  it.effect("format 1 values (no binding, no key id) still open, under the current or the previous key", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* box.open(sealVersion1(k1, "legacy"), binding), "legacy")
      const rotated = SecretBox.fromKey(k2, k1)
      assert.strictEqual(yield* rotated.open(sealVersion1(k1, "legacy under the previous key"), binding), "legacy under the previous key")
      assert.strictEqual(yield* rotated.open(sealVersion1(k2, "legacy under the current key"), binding), "legacy under the current key")
      assert.match(yield* failureOf(SecretBox.fromKey(k2).open(sealVersion1(k1, "legacy"), binding)), /format 1 .*none of the configured keys/)
    }))

  it.effect("the key id picks the key: the previous key opens its values, new values are sealed under the current key", () =>
    Effect.gen(function*() {
      const rotated = SecretBox.fromKey(k2, k1)
      assert.strictEqual(rotated.keyId, keyIdOf(k2).toString("hex"))
      assert.strictEqual(yield* rotated.open(box.seal("under k1", binding), binding), "under k1")
      const fresh = rotated.seal("under k2", binding)
      assert.strictEqual(Buffer.from(fresh).subarray(1, 5).toString("hex"), keyIdOf(k2).toString("hex"))
      assert.strictEqual(yield* rotated.open(fresh, binding), "under k2")
      assert.strictEqual(yield* SecretBox.fromKey(k2).open(fresh, binding), "under k2")
      // A key id changed to the other key's: that key is tried, and the value does not verify.
      const relabelled = Buffer.from(fresh)
      keyIdOf(k1).copy(relabelled, 1)
      yield* failureOf(rotated.open(relabelled, binding))
    }))

  it.effect("a value under no configured key, or not a sealed value at all, is a SecretBoxError naming the key", () =>
    Effect.gen(function*() {
      const stranger = SecretBox.fromKey(randomBytes(32))
      const message = yield* failureOf(SecretBox.fromKey(k2, k1).open(stranger.seal("x", binding), binding))
      assert.include(message, `sealed under key ${stranger.keyId}`)
      assert.include(message, keyIdOf(k2).toString("hex"))
      assert.include(message, keyIdOf(k1).toString("hex"))
      assert.match(yield* failureOf(box.open(new Uint8Array(0), binding)), /empty/)
      assert.match(yield* failureOf(box.open(Buffer.from("{\"token\":\"x\"}"), binding)), /unknown format/)
      assert.match(yield* failureOf(box.open(Buffer.from([2, 1, 2]), binding)), /too short/)
    }))

  it.effect("reseal: format 1 and previous-key values are sealed again under the current key, current ones are kept", () =>
    Effect.gen(function*() {
      const rotated = SecretBox.fromKey(k2, k1)
      for (const old of [sealVersion1(k1, "v1"), box.seal("v1", binding)]) {
        const { changed, sealed } = yield* rotated.reseal(old, binding)
        assert.isTrue(changed)
        assert.strictEqual(Buffer.from(sealed).subarray(1, 5).toString("hex"), rotated.keyId)
        assert.strictEqual(yield* SecretBox.fromKey(k2).open(sealed, binding), "v1")
        const again = yield* rotated.reseal(sealed, binding)
        assert.isFalse(again.changed)
        assert.strictEqual(again.sealed, sealed)
      }
      // A current value that does not open for its row is not "current": it is an error.
      yield* failureOf(rotated.reseal(rotated.seal("x", binding), secretBinding("channel secrets", org, randomUUID())))
    }))

  it("signs under the current key and verifies signatures of the current and the previous key", () => {
    const rotated = SecretBox.fromKey(k2, k1)
    const old = box.sign("ack", "alert-1")
    assert.isTrue(box.verify("ack", "alert-1", old))
    assert.isTrue(rotated.verify("ack", "alert-1", old))
    assert.isTrue(rotated.verify("ack", "alert-1", rotated.sign("ack", "alert-1")))
    assert.notStrictEqual(rotated.sign("ack", "alert-1"), old)
    assert.isFalse(SecretBox.fromKey(k2).verify("ack", "alert-1", old))
    assert.isFalse(rotated.verify("ack", "alert-2", old))
    assert.isFalse(rotated.verify("other purpose", "alert-1", old))
  })

  it("signs as HMAC-SHA-256 under the purpose's key, HMAC(key, \"statusgrid mac v1 <purpose>\"), the same on every call", () => {
    const macKey = createHmac("sha256", k1).update("statusgrid mac v1 crowd reporter").digest()
    const expected = createHmac("sha256", macKey).update("ip:192.0.2.7").digest("base64url")
    for (let i = 0; i < 3; i++) assert.strictEqual(box.sign("crowd reporter", "ip:192.0.2.7"), expected)
    assert.notStrictEqual(box.sign("crowd network", "ip:192.0.2.7"), expected)
    assert.strictEqual(SecretBox.fromKey(Buffer.from(k1)).sign("crowd reporter", "ip:192.0.2.7"), expected)
  })
})
