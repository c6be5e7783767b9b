import { Config, Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"

export class SecretBoxError extends Schema.TaggedError<SecretBoxError>()("SecretBoxError", {
  message: Schema.String
}) {}

const version = 1
const ivBytes = 12
const tagBytes = 16

/**
 * Encrypts what statusgrid stores but must not show (monitor credentials,
 * channel tokens): AES-256-GCM, as `version | iv | tag | ciphertext`.
 * The key is `SECRETS_KEY` (32 bytes, base64), else a key generated once in
 * `DATA_DIR/secrets.key`; runners that share a database must share the key.
 */
export class SecretBox extends Context.Service<SecretBox, {
  seal(plaintext: string): Uint8Array
  open(sealed: Uint8Array): Effect.Effect<string, SecretBoxError>
  /** A MAC of `data` for one purpose (signed links), base64url; keyed by a key derived from the secrets key. */
  sign(purpose: string, data: string): string
  /** Whether `signature` is `sign(purpose, data)`, compared in constant time. */
  verify(purpose: string, data: string, signature: string): boolean
}>()("statusgrid/platform/SecretBox") {
  static readonly fromKey = (key: Uint8Array) => {
    // The encryption key is never used as a MAC key: each purpose gets its own derived key.
    const macKey = (purpose: string) => createHmac("sha256", key).update(`statusgrid mac v1 ${purpose}`).digest()
    const sign = (purpose: string, data: string) => createHmac("sha256", macKey(purpose)).update(data).digest("base64url")
    return SecretBox.of({
      sign,
      verify: (purpose, data, signature) => {
        const expected = Buffer.from(sign(purpose, data))
        const given = Buffer.from(signature)
        return expected.length === given.length && timingSafeEqual(expected, given)
      },
      seal: (plaintext) => {
        const iv = randomBytes(ivBytes)
        const cipher = createCipheriv("aes-256-gcm", key, iv)
        const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
        return Buffer.concat([Buffer.from([version]), iv, cipher.getAuthTag(), body])
      },
      open: (sealed) =>
        Effect.try({
          try: () => {
            const bytes = Buffer.from(sealed)
            if (bytes[0] !== version) throw new Error(`unknown secret format ${bytes[0]}`)
            const iv = bytes.subarray(1, 1 + ivBytes)
            const tag = bytes.subarray(1 + ivBytes, 1 + ivBytes + tagBytes)
            const decipher = createDecipheriv("aes-256-gcm", key, iv)
            decipher.setAuthTag(tag)
            return Buffer.concat([decipher.update(bytes.subarray(1 + ivBytes + tagBytes)), decipher.final()]).toString("utf8")
          },
          catch: (cause) =>
            new SecretBoxError({ message: `cannot decrypt a stored secret (wrong SECRETS_KEY?): ${String(cause)}` })
        })
    })
  }

  static readonly layer = Layer.effect(
    SecretBox,
    Effect.gen(function*() {
      const configured = yield* Config.option(Config.Redacted("SECRETS_KEY"))
      if (Option.isSome(configured)) {
        const key = Buffer.from(Redacted.value(configured.value), "base64")
        if (key.length !== 32) return yield* new SecretBoxError({ message: "SECRETS_KEY must be 32 bytes, base64-encoded" })
        return SecretBox.fromKey(key)
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
      return SecretBox.fromKey(key)
    })
  )
}
