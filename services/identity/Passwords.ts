import { Config, Effect, Schema, Semaphore } from "effect"
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"

/**
 * Password hashing with scrypt, memory-hard. The default is OWASP's minimum
 * (Password Storage Cheat Sheet): N = 2^17, r = 8, p = 1, which takes
 * 128 MiB and about 0.35 s per hash on a 2-core machine, so a stolen table
 * costs an attacker the same per guess.
 * Stored as `scrypt$N$r$p$salt$hash` (salt and hash in base64), so the
 * parameters can be raised later: `needsRehash` says when a stored hash
 * predates them, and `verify` still accepts it (Users.signIn rehashes it).
 *
 * scrypt runs on libuv's threadpool (4 threads by default), which DNS
 * lookups (`dns.lookup`, every monitor check and delivery) and file I/O
 * share. So at most `PASSWORD_HASH_CONCURRENCY` (default 1) hashes run at
 * once in a process, the others wait their turn: a burst of sign-ins cannot
 * take every thread, nor 128 MiB per hash.
 */
export interface ScryptParams {
  readonly N: number
  readonly r: number
  readonly p: number
  readonly saltLength: number
}

/** OWASP's minimum for scrypt: N = 2^17 (log2 17, `PASSWORD_SCRYPT_COST`), r = 8, p = 1; a 16-byte salt. */
export const defaultParams: ScryptParams = { N: 2 ** 17, r: 8, p: 1, saltLength: 16 }

/** The parameters new hashes get when `PASSWORD_SCRYPT_COST` is not set (`defaultParams`). */
export const currentParams: ScryptParams = defaultParams

/** The cost `PASSWORD_SCRYPT_COST` may set, as log2 N: 10 (tests only) to 20 (1 GiB with r = 8). */
export const costRange = { min: 10, max: 20, default: 17 } as const

/** Hashes at once per process (`PASSWORD_HASH_CONCURRENCY`): each takes 128·N·r bytes and a threadpool thread. */
export const concurrencyRange = { min: 1, max: 8, default: 1 } as const

/**
 * The key is always 64 bytes: scrypt's output for a shorter length is a prefix
 * of the longer one, so accepting other lengths would accept a truncated hash.
 */
export const keyLength = 64

/** Bytes scrypt allocates for these parameters (its V array, 128·N·r, dominates). */
const memoryOf = (params: { readonly N: number; readonly r: number; readonly p: number }) => 128 * params.r * (params.N + params.p + 2)

/** Bounds on parameters read back from storage, so a corrupt or planted hash cannot ask for gigabytes. */
const limits = { maxLogN: 20, maxR: 32, maxP: 16, minSalt: 16, maxSalt: 64, maxMemory: 1024 * 1024 * 1024 + 1024 * 1024 }

/**
 * Node refuses to run scrypt above `maxmem` (32 MiB by default, less than N = 2^17, r = 8 needs):
 * what these parameters need and some room, 160 MiB for the default.
 */
const maxmemFor = (params: { readonly N: number; readonly r: number; readonly p: number }) => memoryOf(params) + 32 * 1024 * 1024

/** NFKC, so the same password typed on different keyboards (composed or decomposed accents) is the same bytes. */
const normalize = (password: string) => Buffer.from(password.normalize("NFKC"), "utf8")

/**
 * The process's gate around scrypt: one permit by default, resized by `fromConfig`.
 * One per process because the threadpool and the memory are the process's.
 */
export const gate: Semaphore.Semaphore = Semaphore.makeUnsafe(concurrencyRange.default)

/**
 * One scrypt under a permit of `gate`. Waiting for the permit can be
 * interrupted; the computation cannot (the thread would go on without us), so
 * the permit is held until the thread is free again.
 */
const derive = (password: string, salt: Buffer, params: Omit<ScryptParams, "saltLength">, through: Semaphore.Semaphore) =>
  through.withPermit(
    Effect.callback<Buffer>((resume) => {
      scrypt(normalize(password), salt, keyLength, { N: params.N, r: params.r, p: params.p, maxmem: maxmemFor(params) }, (error, key) => {
        resume(error === null ? Effect.succeed(key) : Effect.die(error))
      })
    }).pipe(Effect.withSpan("Passwords.scrypt", { attributes: { N: params.N, r: params.r, p: params.p } }), Effect.uninterruptible)
  )

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
    memoryOf(decoded) <= limits.maxMemory &&
    decoded.hash.length === keyLength &&
    decoded.salt.length >= limits.minSalt && decoded.salt.length <= limits.maxSalt
  return powerOfTwo && inRange ? decoded : undefined
}

/** Hashes a password with a new random salt and `params` (the defaults when not given), through `through` (the process's gate). */
export const hash = Effect.fn("Passwords.hash")(function*(
  password: string,
  params: ScryptParams = currentParams,
  through: Semaphore.Semaphore = gate
): Effect.fn.Return<string> {
  const salt = randomBytes(params.saltLength)
  const key = yield* derive(password, salt, params, through)
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString("base64")}$${key.toString("base64")}`
})

/** Whether `password` is the one `encoded` was made from; false for anything that is not a well-formed hash. */
export const verify = Effect.fn("Passwords.verify")(function*(
  password: string,
  encoded: string,
  through: Semaphore.Semaphore = gate
): Effect.fn.Return<boolean> {
  const stored = decode(encoded)
  if (stored === undefined) return false
  const key = yield* derive(password, stored.salt, stored, through)
  return timingSafeEqual(key, stored.hash)
})

/** True when the stored hash was made with other parameters than `params` (rehash it after the next successful sign-in). */
export const needsRehash = (encoded: string, params: ScryptParams = currentParams): boolean => {
  const stored = decode(encoded)
  return stored === undefined || stored.N !== params.N || stored.r !== params.r || stored.p !== params.p ||
    stored.salt.length !== params.saltLength
}

const intIn = (name: string, range: { readonly min: number; readonly max: number; readonly default: number }) =>
  Config.schema(Schema.Int.check(Schema.isBetween({ minimum: range.min, maximum: range.max })), name).pipe(
    Config.withDefault(range.default)
  )

/**
 * `PASSWORD_SCRYPT_COST`: log2 of scrypt's N, 17 (OWASP's minimum) by default; lower only in tests.
 * `PASSWORD_HASH_CONCURRENCY`: hashes at once per process, 1 by default.
 */
export const config = Config.all({
  cost: intIn("PASSWORD_SCRYPT_COST", costRange),
  concurrency: intIn("PASSWORD_HASH_CONCURRENCY", concurrencyRange)
})

/** The password functions with the configured parameters. */
export interface Hasher {
  readonly params: ScryptParams
  readonly hash: (password: string) => Effect.Effect<string>
  readonly verify: (password: string, encoded: string) => Effect.Effect<boolean>
  /** Whether a stored hash predates the configured parameters (or is not one), to rehash after a successful sign-in. */
  readonly needsRehash: (encoded: string) => boolean
}

/** A `Hasher` with the parameters of `config`; sizes the process's gate to its concurrency. A bad value is a defect (the start stops). */
export const fromConfig: Effect.Effect<Hasher> = Effect.gen(function*() {
  const { concurrency, cost } = yield* Effect.orDie(config)
  yield* gate.resize(concurrency)
  const params: ScryptParams = { ...defaultParams, N: 2 ** cost }
  return {
    params,
    hash: (password) => hash(password, params),
    verify: (password, encoded) => verify(password, encoded),
    needsRehash: (encoded) => needsRehash(encoded, params)
  }
})
