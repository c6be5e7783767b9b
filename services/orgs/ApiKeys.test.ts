import { assert, describe, it } from "vitest"
import { createHash, createHmac, randomBytes } from "node:crypto"
import { hashKeyOf, keyIdOf, SecretBox } from "../platform/SecretBox.ts"
import { keyHashesOf, legacyKeyHash } from "./ApiKeys.ts"

/** HKDF-SHA-256 (RFC 5869) written out, no salt, one block: what `hashKeyOf` must be. */
const hkdf = (ikm: Uint8Array, info: string) => {
  const prk = createHmac("sha256", Buffer.alloc(32)).update(ikm).digest()
  return createHmac("sha256", prk).update(Buffer.concat([Buffer.from(info), Buffer.from([1])])).digest()
}

const hmacHex = (key: Uint8Array, data: string) => createHmac("sha256", key).update(data).digest("hex")

describe("API key hashes", () => {
  const k1 = randomBytes(32)
  const k2 = randomBytes(32)
  const key = `sg_${randomBytes(32).toString("base64url")}`

  it("a key is stored as HMAC-SHA-256 under a key derived from the secrets key with HKDF, not as its SHA-256", () => {
    const { current, previous, legacy } = keyHashesOf(SecretBox.fromKey(k1), key)
    const derived = hkdf(k1, "statusgrid keyed hash v1 api key")
    assert.deepStrictEqual(hashKeyOf(k1, "api key"), derived)
    assert.strictEqual(current.hash, hmacHex(derived, key))
    assert.strictEqual(current.keyId, keyIdOf(k1).toString("hex"))
    assert.deepStrictEqual(previous, [])
    // What a database dump alone lets one test a guess against is not what is stored.
    const sha256 = createHash("sha256").update(key).digest("hex")
    assert.strictEqual(legacy, sha256)
    assert.strictEqual(legacyKeyHash(key), sha256)
    assert.notStrictEqual(current.hash, sha256)
    // Neither is the HMAC key the secrets key itself (the encryption key), nor the key of signed links.
    assert.notStrictEqual(current.hash, hmacHex(k1, key))
    assert.notDeepEqual(derived, k1)
    assert.notDeepEqual(derived, createHmac("sha256", k1).update("statusgrid mac v1 api key").digest())
    assert.match(current.hash, /^[0-9a-f]{64}$/)
  })

  it("depends on the secrets key and on the key; during a rotation, the hash under the previous secrets key comes second", () => {
    const under1 = keyHashesOf(SecretBox.fromKey(k1), key).current
    const under2 = keyHashesOf(SecretBox.fromKey(k2), key).current
    assert.notStrictEqual(under1.hash, under2.hash)
    assert.notStrictEqual(under1.keyId, under2.keyId)
    assert.notStrictEqual(keyHashesOf(SecretBox.fromKey(k1), `${key}x`).current.hash, under1.hash)
    const rotating = keyHashesOf(SecretBox.fromKey(k2, k1), key)
    assert.deepStrictEqual(rotating.current, under2)
    assert.deepStrictEqual(rotating.previous, [under1])
    // The same box gives the same hashes every time (lookups depend on it).
    assert.deepStrictEqual(keyHashesOf(SecretBox.fromKey(k2, k1), key), rotating)
  })
})
