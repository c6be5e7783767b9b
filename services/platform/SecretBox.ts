import { Config, Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { createCipheriv, createDecipheriv, createHmac, createSecretKey, hkdfSync, type KeyObject, randomBytes, timingSafeEqual } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"

export class SecretBoxError extends Schema.TaggedError<SecretBoxError>()("SecretBoxError", {
  message: Schema.String
}) {}

/** What a sealed value is for: one purpose per table column that holds sealed values. */
export type SecretPurpose = "channel secrets" | "monitor auth" | "invitation mail"

/**
 * The record a sealed value belongs to, bound into it as GCM associated data
 * (format 2): a value copied into another row, another organization's row or
 * another column does not open there.
 */
export interface SecretBinding {
  readonly purpose: SecretPurpose
  readonly organizationId: string
  readonly recordId: string
}

/** The binding of a sealed value of `purpose` in the row `recordId` of organization `organizationId`. */
export const secretBinding = (purpose: SecretPurpose, organizationId: string, recordId: string): SecretBinding => ({
  purpose,
  organizationId,
  recordId
})

/** Format 1 (legacy, opened only): `1 | iv | tag | ciphertext`, no associated data, no key id. */
const legacyVersion = 1
/** Format 2: `2 | key id | iv | tag | ciphertext`, associated data = header + binding. */
const version = 2
const keyIdBytes = 4
const ivBytes = 12
const tagBytes = 16
const legacyHeaderBytes = 1
const headerBytes = 1 + keyIdBytes

/** 4 bytes naming a key: an HMAC under the key of a fixed label, so it tells nothing of the key. */
export const keyIdOf = (key: Uint8Array): Buffer => createHmac("sha256", key).update("statusgrid secrets key id v1").digest().subarray(0, keyIdBytes)

const field = (value: string) => {
  const bytes = Buffer.from(value, "utf8")
  const length = Buffer.alloc(2)
  length.writeUInt16BE(bytes.length)
  return [length, bytes]
}

/** The associated data of format 2: the header, then purpose, organization and record, each length-prefixed (ids lower-cased: uuids). */
const associatedData = (header: Uint8Array, binding: SecretBinding) =>
  Buffer.concat([
    header,
    ...field("statusgrid secret"),
    ...field(binding.purpose),
    ...field(binding.organizationId.toLowerCase()),
    ...field(binding.recordId.toLowerCase())
  ])

/** Decrypts or throws; the tag must be exactly 16 bytes (a truncated tag never verifies). */
const decrypt = (key: Uint8Array, iv: Uint8Array, tag: Uint8Array, body: Uint8Array, aad: Uint8Array | undefined) => {
  const decipher = createDecipheriv("aes-256-gcm", key, iv, { authTagLength: tagBytes })
  decipher.setAuthTag(tag)
  if (aad !== undefined) decipher.setAAD(aad)
  return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8")
}

/** Each key's MAC keys by purpose, derived once: a crowd report signs three values (services/crowd). */
const macKeys = new WeakMap<Uint8Array, Map<string, KeyObject>>()

/** The encryption key is never used as a MAC key: each purpose gets its own key, derived from it. */
const macKeyOf = (key: Uint8Array, purpose: string): KeyObject => {
  let byPurpose = macKeys.get(key)
  if (byPurpose === undefined) {
    byPurpose = new Map()
    macKeys.set(key, byPurpose)
  }
  let macKey = byPurpose.get(purpose)
  if (macKey === undefined) {
    macKey = createSecretKey(createHmac("sha256", key).update(`statusgrid mac v1 ${purpose}`).digest())
    byPurpose.set(purpose, macKey)
  }
  return macKey
}

const signWith = (key: Uint8Array, purpose: string, data: string) => createHmac("sha256", macKeyOf(key, purpose)).update(data).digest("base64url")

/** What a keyed hash is for: one purpose per column that holds such hashes. */
export type HashPurpose = "api key"

/**
 * The HMAC key of keyed hashes for `purpose`: HKDF-SHA-256 of the secrets key (no salt: the secrets
 * key is 32 random bytes), info `statusgrid keyed hash v1 <purpose>`. Exported for the tests, which
 * recompute a stored hash from the secrets key alone.
 */
export const hashKeyOf = (key: Uint8Array, purpose: HashPurpose): Buffer =>
  Buffer.from(hkdfSync("sha256", key, Buffer.alloc(0), `statusgrid keyed hash v1 ${purpose}`, 32))

const cannotOpen = (detail: string) => new SecretBoxError({ message: `cannot decrypt a stored secret: ${detail}` })

/**
 * Encrypts what statusgrid stores but must not show (monitor credentials,
 * channel secrets, queued invitation mails): AES-256-GCM, format 2
 * `2 | key id (4) | iv (12) | tag (16) | ciphertext`, the associated data
 * binding the value to its purpose, organization and record. Format 1
 * (`1 | iv | tag | ciphertext`, unbound) still opens; `statusgrid secrets
 * rotate` re-seals it. The key is `SECRETS_KEY` (32 bytes, base64), else a
 * key generated once in `DATA_DIR/secrets.key`; `SECRETS_KEY_PREVIOUS` (the
 * key before a rotation) also opens. Runners that share a database must
 * share the keys. services/platform/README.md, "Sealed secrets".
 */
export class SecretBox extends Context.Service<SecretBox, {
  /** The current key's id (hex): what new values are sealed under. */
  readonly keyId: string
  seal(plaintext: string, binding: SecretBinding): Uint8Array
  open(sealed: Uint8Array, binding: SecretBinding): Effect.Effect<string, SecretBoxError>
  /**
   * `sealed` as it should be stored: unchanged when it is format 2 under the
   * current key (and opens with `binding`), else opened and sealed again so.
   */
  reseal(sealed: Uint8Array, binding: SecretBinding): Effect.Effect<{ readonly sealed: Uint8Array; readonly changed: boolean }, SecretBoxError>
  /** A MAC of `data` for one purpose (signed links), base64url; keyed by a key derived from the current secrets key. */
  sign(purpose: string, data: string): string
  /** Whether `signature` is `sign(purpose, data)` under the current or the previous key, compared in constant time. */
  verify(purpose: string, data: string, signature: string): boolean
  /**
   * HMAC-SHA-256 of `data` (hex) under the key `hashKeyOf(secrets key, purpose)`, for each configured
   * secrets key: the current one first, then `SECRETS_KEY_PREVIOUS`'s, each with the id of the secrets
   * key it came from. For values stored only as a hash and looked up by it (API keys): a database dump
   * without the secrets key cannot test a guess.
   */
  keyedHashes(purpose: HashPurpose, data: string): ReadonlyArray<{ readonly keyId: string; readonly hash: string }>
}>()("statusgrid/platform/SecretBox") {
  /** A box sealing under `key`, opening under `key` and `previous` (rotation). */
  static readonly fromKey = (key: Uint8Array, previous?: Uint8Array) => {
    const keys = [key, ...(previous === undefined ? [] : [previous])].map((k) => ({ key: k, id: keyIdOf(k) }))
    const current = keys[0]!
    const hashKeys = new Map<HashPurpose, ReadonlyArray<{ readonly keyId: string; readonly key: Buffer }>>()
    const hashKeysFor = (purpose: HashPurpose) => {
      let derived = hashKeys.get(purpose)
      if (derived === undefined) {
        derived = keys.map((k) => ({ keyId: k.id.toString("hex"), key: hashKeyOf(k.key, purpose) }))
        hashKeys.set(purpose, derived)
      }
      return derived
    }
    const seal = (plaintext: string, binding: SecretBinding) => {
      const header = Buffer.concat([Buffer.from([version]), current.id])
      const iv = randomBytes(ivBytes)
      const cipher = createCipheriv("aes-256-gcm", current.key, iv, { authTagLength: tagBytes })
      cipher.setAAD(associatedData(header, binding))
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
      return Buffer.concat([header, iv, cipher.getAuthTag(), body])
    }
    /** The plaintext and whether `sealed` is format 2 under the current key. */
    const openDetailed = (sealed: Uint8Array, binding: SecretBinding): Effect.Effect<{ readonly plaintext: string; readonly current: boolean }, SecretBoxError> =>
      Effect.suspend(() => {
        const bytes = Buffer.from(sealed)
        const format = bytes[0]
        if (format !== version && format !== legacyVersion) {
          return Effect.fail(cannotOpen(format === undefined ? "the value is empty" : `unknown format ${format}`))
        }
        const header = format === version ? headerBytes : legacyHeaderBytes
        if (bytes.length < header + ivBytes + tagBytes) {
          return Effect.fail(cannotOpen(`${bytes.length} bytes is too short for format ${format} (its tag is ${tagBytes} bytes)`))
        }
        const iv = bytes.subarray(header, header + ivBytes)
        const tag = bytes.subarray(header + ivBytes, header + ivBytes + tagBytes)
        const body = bytes.subarray(header + ivBytes + tagBytes)
        const id = bytes.subarray(1, headerBytes)
        let candidates = keys
        let aad: Uint8Array | undefined
        if (format === version) {
          candidates = keys.filter((k) => k.id.equals(id))
          if (candidates.length === 0) {
            return Effect.fail(cannotOpen(
              `it was sealed under key ${id.toString("hex")}, which is none of the configured keys ` +
                `(SECRETS_KEY or DATA_DIR/secrets.key: ${current.id.toString("hex")}` +
                `${keys.length > 1 ? `, SECRETS_KEY_PREVIOUS: ${keys[1]!.id.toString("hex")}` : ""})`
            ))
          }
          aad = associatedData(bytes.subarray(0, headerBytes), binding)
        }
        for (const candidate of candidates) {
          try {
            return Effect.succeed({ plaintext: decrypt(candidate.key, iv, tag, body, aad), current: format === version && candidate === current })
          } catch {
            // the next key, if any
          }
        }
        return Effect.fail(cannotOpen(
          format === version
            ? `it does not verify under key ${id.toString("hex")} for ${binding.purpose} of record ${binding.recordId} (tampered with, or copied from another record)`
            : "a format 1 value that verifies under none of the configured keys (wrong SECRETS_KEY?)"
        ))
      })
    return SecretBox.of({
      keyId: current.id.toString("hex"),
      seal,
      open: (sealed, binding) => Effect.map(openDetailed(sealed, binding), (opened) => opened.plaintext),
      reseal: (sealed, binding) =>
        Effect.map(openDetailed(sealed, binding), (opened) =>
          opened.current ? { sealed, changed: false } : { sealed: seal(opened.plaintext, binding), changed: true }),
      sign: (purpose, data) => signWith(current.key, purpose, data),
      verify: (purpose, data, signature) => {
        const given = Buffer.from(signature)
        // Every key is tried (no early exit), so the time does not tell which one matched.
        let valid = false
        for (const k of keys) {
          const expected = Buffer.from(signWith(k.key, purpose, data))
          if (expected.length === given.length && timingSafeEqual(expected, given)) valid = true
        }
        return valid
      },
      keyedHashes: (purpose, data) =>
        hashKeysFor(purpose).map((k) => ({ keyId: k.keyId, hash: createHmac("sha256", k.key).update(data).digest("hex") }))
    })
  }

  static readonly layer = Layer.effect(
    SecretBox,
    Effect.gen(function*() {
      const previous = yield* Config.option(Config.Redacted("SECRETS_KEY_PREVIOUS"))
      let previousKey: Buffer | undefined
      if (Option.isSome(previous)) {
        previousKey = Buffer.from(Redacted.value(previous.value), "base64")
        if (previousKey.length !== 32) return yield* new SecretBoxError({ message: "SECRETS_KEY_PREVIOUS must be 32 bytes, base64-encoded" })
      }
      const configured = yield* Config.option(Config.Redacted("SECRETS_KEY"))
      if (Option.isSome(configured)) {
        const key = Buffer.from(Redacted.value(configured.value), "base64")
        if (key.length !== 32) return yield* new SecretBoxError({ message: "SECRETS_KEY must be 32 bytes, base64-encoded" })
        return SecretBox.fromKey(key, previousKey)
      }
      const dir = Path.resolve(yield* Config.String("DATA_DIR").pipe(Config.withDefault("./data")))
      const file = Path.join(dir, "secrets.key")
      const key = yield* Effect.try({
        try: () => {
          Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
          if (!Fs.existsSync(file)) {
            // "wx": two processes starting at once cannot both write a key.
            try {
              Fs.writeFileSync(file, randomBytes(32).toString("base64"), { mode: 0o600, flag: "wx" })
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
            }
          }
          return Buffer.from(Fs.readFileSync(file, "utf8").trim(), "base64")
        },
        catch: (cause) => new SecretBoxError({ message: `cannot read or create ${file}: ${String(cause)}` })
      })
      if (key.length !== 32) return yield* new SecretBoxError({ message: `${file} does not hold a 32-byte base64 key` })
      return SecretBox.fromKey(key, previousKey)
    })
  )
}
