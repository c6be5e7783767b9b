import { Effect } from "effect"
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"

/**
 * Password hashing with scrypt, memory-hard: N = 2^15, r = 8 takes 32 MiB and
 * about 0.1 s per hash, so a stolen table costs an attacker the same per guess.
 * Stored as `scrypt$N$r$p$salt$hash` (salt and hash in base64), so the
 * parameters can be raised later: `needsRehash` says when a stored hash
 * predates them, and `verify` still accepts it.
 */
export interface ScryptParams {
  readonly N: number
  readonly r: number
  readonly p: number
  readonly saltLength: number
}

export const currentParams: ScryptParams = { N: 2 ** 15, r: 8, p: 1, saltLength: 16 }

/**
 * The key is always 64 bytes: scrypt's output for a shorter length is a prefix
 * of the longer one, so accepting other lengths would accept a truncated hash.
 */
export const keyLength = 64

/** scrypt needs 128·N·r bytes; node refuses above `maxmem` (32 MiB by default, exactly what N = 2^15, r = 8 needs). */
const maxmem = 64 * 1024 * 1024

/** Bounds on parameters read back from storage, so a corrupt or planted hash cannot ask for gigabytes. */
const limits = { maxLogN: 20, maxR: 32, maxP: 16, minSalt: 16, maxSalt: 64 }

/** NFKC, so the same password typed on different keyboards (composed or decomposed accents) is the same bytes. */
const normalize = (password: string) => Buffer.from(password.normalize("NFKC"), "utf8")

const derive = (password: string, salt: Buffer, params: Omit<ScryptParams, "saltLength">) =>
  Effect.callback<Buffer>((resume) => {
    scrypt(normalize(password), salt, keyLength, { N: params.N, r: params.r, p: params.p, maxmem }, (error, key) => {
      resume(error === null ? Effect.succeed(key) : Effect.die(error))
    })
  })

interface Decoded {
  readonly N: number
  readonly r: number
  readonly p: number
  readonly salt: Buffer
  readonly hash: Buffer
}

const base64 = /^[A-Za-z0-9+/]+={0,2}$/
const positiveInt = /^[1-9][0-9]{0,8}$/

/** The parts of a stored hash, or undefined when it is not one this module wrote (or has been altered out of shape). */
export const decode = (encoded: string): Decoded | undefined => {
  const parts = encoded.split("$")
  if (parts.length !== 6 || parts[0] !== "scrypt") return undefined
  const [, n, r, p, salt, hash] = parts as [string, string, string, string, string, string]
  if (!positiveInt.test(n) || !positiveInt.test(r) || !positiveInt.test(p) || !base64.test(salt) || !base64.test(hash)) return undefined
  const N = Number(n)
  const decoded = { N, r: Number(r), p: Number(p), salt: Buffer.from(salt, "base64"), hash: Buffer.from(hash, "base64") }
  const powerOfTwo = N > 1 && (N & (N - 1)) === 0 && N <= 2 ** limits.maxLogN
  const inRange = decoded.r <= limits.maxR && decoded.p <= limits.maxP &&
    decoded.hash.length === keyLength &&
    decoded.salt.length >= limits.minSalt && decoded.salt.length <= limits.maxSalt
  return powerOfTwo && inRange ? decoded : undefined
}

/** Hashes a password with a new random salt and the current parameters. */
export const hash = Effect.fn("Passwords.hash")(function*(password: string, params: ScryptParams = currentParams): Effect.fn.Return<string> {
  const salt = randomBytes(params.saltLength)
  const key = yield* derive(password, salt, params)
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString("base64")}$${key.toString("base64")}`
})

/** Whether `password` is the one `encoded` was made from; false for anything that is not a well-formed hash. */
export const verify = Effect.fn("Passwords.verify")(function*(password: string, encoded: string): Effect.fn.Return<boolean> {
  const stored = decode(encoded)
  if (stored === undefined) return false
  const key = yield* derive(password, stored.salt, stored)
  return timingSafeEqual(key, stored.hash)
})

/** True when the stored hash was made with other parameters than `params` (rehash it after the next successful sign-in). */
export const needsRehash = (encoded: string, params: ScryptParams = currentParams): boolean => {
  const stored = decode(encoded)
  return stored === undefined || stored.N !== params.N || stored.r !== params.r || stored.p !== params.p ||
    stored.salt.length !== params.saltLength
}
