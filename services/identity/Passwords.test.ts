import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Fiber, Semaphore, Tracer } from "effect"
import { scryptSync } from "node:crypto"
import { lookup } from "node:dns/promises"
import {
  currentParams,
  decode,
  defaultParams,
  fromConfig,
  gate,
  hash,
  needsRehash,
  verify,
  type ScryptParams
} from "./Passwords.ts"

/** Cheap parameters for the tests that are not about the cost (the format and checks are the same). */
const fast: ScryptParams = { ...defaultParams, N: 2 ** 12 }

const withConfig = <A, E, R>(values: Record<string, string>, effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(values))

/** How many permits the process's gate has (none taken at the moment). */
const gatePermits = Effect.gen(function*() {
  let n = 0
  while (yield* gate.takeIfAvailable(n + 1)) {
    yield* gate.release(n + 1)
    n++
  }
  return n
})

/** A tracer keeping every span, to see when each scrypt ran (the `Passwords.scrypt` span is the time holding a permit). */
const recordingTracer = () => {
  const spans: Array<Tracer.NativeSpan> = []
  const tracer = Tracer.make({
    span(options) {
      const span = new Tracer.NativeSpan(options)
      spans.push(span)
      return span
    }
  })
  const scrypts = () =>
    spans.filter((s) => s.name === "Passwords.scrypt").map((s) => {
      assert.strictEqual(s.status._tag, "Ended")
      return { start: s.status.startTime, end: s.status._tag === "Ended" ? s.status.endTime : 0n }
    })
  return { spans, tracer, scrypts }
}

/** The most intervals [start, end) open at one moment. */
const maxOverlap = (intervals: ReadonlyArray<{ readonly start: bigint; readonly end: bigint }>) => {
  // Ends sort before starts at the same instant: one released permit taken at once is no overlap.
  const events = intervals.flatMap((i) => [{ at: i.start, delta: 1 }, { at: i.end, delta: -1 }])
    .toSorted((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.delta - b.delta))
  let open = 0
  let most = 0
  for (const e of events) {
    open += e.delta
    most = Math.max(most, open)
  }
  return most
}

describe("Passwords", () => {
  it.effect("the right password verifies, a wrong one does not", () =>
    Effect.gen(function*() {
      const stored = yield* hash("correct horse battery staple", fast)
      assert.isTrue(yield* verify("correct horse battery staple", stored))
      assert.isFalse(yield* verify("correct horse battery stapl", stored))
      assert.isFalse(yield* verify("Correct horse battery staple", stored))
      assert.isFalse(yield* verify("", stored))
    }))

  it("the default parameters are at least OWASP's minimum for scrypt (N = 2^17, r = 8, p = 1)", () => {
    assert.strictEqual(currentParams, defaultParams)
    assert.isAtLeast(defaultParams.N, 2 ** 17)
    assert.isAtLeast(defaultParams.r, 8)
    assert.isAtLeast(defaultParams.p, 1)
    assert.isAtLeast(defaultParams.saltLength, 16)
  })

  it.effect("stored as scrypt$N$r$p$salt$hash with the default parameters (128 MiB: above node's default maxmem), a 16-byte salt and a 64-byte key", () =>
    Effect.gen(function*() {
      const stored = yield* hash("a long enough password")
      const parts = stored.split("$")
      assert.deepStrictEqual(parts.slice(0, 4), ["scrypt", "131072", "8", "1"])
      assert.strictEqual(Buffer.from(parts[4]!, "base64").length, 16)
      assert.strictEqual(Buffer.from(parts[5]!, "base64").length, 64)
      // It is scrypt with those parameters, not something else in that shape.
      const expected = scryptSync(Buffer.from("a long enough password"), Buffer.from(parts[4]!, "base64"), 64, {
        N: 131072,
        r: 8,
        p: 1,
        maxmem: 160 * 1024 * 1024
      })
      assert.strictEqual(parts[5], expected.toString("base64"))
      assert.notInclude(stored, "a long enough password")
      assert.isTrue(yield* verify("a long enough password", stored))
      assert.isFalse(needsRehash(stored))
    }))

  it.effect("a hash made with the previous default (N = 2^15) still verifies, and needs a rehash", () =>
    Effect.gen(function*() {
      const salt = Buffer.from("0123456789abcdef")
      const key = scryptSync(Buffer.from("an existing user's password"), salt, 64, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 })
      const stored = `scrypt$32768$8$1$${salt.toString("base64")}$${key.toString("base64")}`
      assert.isTrue(yield* verify("an existing user's password", stored))
      assert.isFalse(yield* verify("another password entirely", stored))
      assert.isTrue(needsRehash(stored))
    }))

  it.effect("the same password hashed twice gets different salts and hashes, and both verify", () =>
    Effect.gen(function*() {
      const a = yield* hash("same password twice", fast)
      const b = yield* hash("same password twice", fast)
      assert.notStrictEqual(a, b)
      assert.notStrictEqual(a.split("$")[4], b.split("$")[4])
      assert.notStrictEqual(a.split("$")[5], b.split("$")[5])
      assert.isTrue(yield* verify("same password twice", a))
      assert.isTrue(yield* verify("same password twice", b))
    }))

  it.effect("a tampered hash verifies nothing: changed key, changed salt, changed parameters, truncated, not a hash", () =>
    Effect.gen(function*() {
      const password = "tamper with me please"
      const stored = yield* hash(password, fast)
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
    assert.isUndefined(decode(`scrypt$${2 ** 20}$16$1$${salt}$${key}`), "more than 1 GiB (128·N·r)")
    assert.isUndefined(decode(`scrypt$32768$8$1$${salt}$${Buffer.alloc(32).toString("base64")}`), "the key is 64 bytes")
    assert.isUndefined(decode(`scrypt$32768$8$1$${Buffer.alloc(4).toString("base64")}$${key}`), "the salt is at least 16 bytes")
    assert.isDefined(decode(`scrypt$32768$8$1$${salt}$${key}`))
    assert.isDefined(decode(`scrypt$${2 ** 20}$8$1$${salt}$${key}`), "the highest PASSWORD_SCRYPT_COST")
  })

  it.effect("needsRehash: false for a current hash, true when the parameters change or the hash is not ours", () =>
    Effect.gen(function*() {
      const weak = { ...fast, N: 2 ** 10 }
      const old = yield* hash("an older password hash", weak)
      assert.isTrue(yield* verify("an older password hash", old), "old parameters still verify")
      assert.isTrue(needsRehash(old, fast))
      assert.isTrue(needsRehash(old))
      assert.isFalse(needsRehash(old, weak))
      const current = yield* hash("a current password hash", fast)
      assert.isFalse(needsRehash(current, fast))
      assert.isTrue(needsRehash(current, { ...fast, r: 16 }))
      assert.isTrue(needsRehash(current, { ...fast, saltLength: 32 }))
      assert.isTrue(needsRehash("not a hash", fast))
    }))

  it.effect("Unicode is normalized: a composed and a decomposed accent are the same password", () =>
    Effect.gen(function*() {
      const stored = yield* hash("caf\u00e9 au lait, bitte", fast)
      assert.isTrue(yield* verify("cafe\u0301 au lait, bitte", stored))
    }))
})

describe("Passwords.fromConfig", () => {
  it.effect("without settings: OWASP's minimum and one hash at a time", () =>
    Effect.gen(function*() {
      const hasher = yield* withConfig({}, fromConfig)
      assert.deepStrictEqual(hasher.params, defaultParams)
      assert.strictEqual(yield* gatePermits, 1)
    }))

  it.effect("PASSWORD_SCRYPT_COST sets N = 2^cost: hashes get it, others need a rehash; PASSWORD_HASH_CONCURRENCY sizes the gate", () =>
    Effect.gen(function*() {
      const hasher = yield* withConfig({ PASSWORD_SCRYPT_COST: "12", PASSWORD_HASH_CONCURRENCY: "3" }, fromConfig)
      assert.deepStrictEqual(hasher.params, { ...defaultParams, N: 4096 })
      assert.strictEqual(yield* gatePermits, 3)
      const stored = yield* hasher.hash("configured cost password")
      assert.isTrue(stored.startsWith("scrypt$4096$8$1$"))
      assert.isFalse(hasher.needsRehash(stored))
      assert.isTrue(yield* hasher.verify("configured cost password", stored))
      // A hash at another cost (the default, say) verifies and is moved to the configured one at the next sign-in.
      const other = yield* hash("configured cost password", { ...defaultParams, N: 2 ** 11 })
      assert.isTrue(yield* hasher.verify("configured cost password", other))
      assert.isTrue(hasher.needsRehash(other))
      yield* withConfig({}, fromConfig)
      assert.strictEqual(yield* gatePermits, 1)
    }))

  it.effect("a bad value stops the start: cost outside 10-20, not a number, concurrency outside 1-8", () =>
    Effect.gen(function*() {
      for (const values of [
        { PASSWORD_SCRYPT_COST: "9" },
        { PASSWORD_SCRYPT_COST: "21" },
        { PASSWORD_SCRYPT_COST: "131072" },
        { PASSWORD_SCRYPT_COST: "seventeen" },
        { PASSWORD_HASH_CONCURRENCY: "0" },
        { PASSWORD_HASH_CONCURRENCY: "9" }
      ]) {
        const exit = yield* Effect.exit(withConfig(values, fromConfig))
        assert.isTrue(Exit.hasDies(exit), JSON.stringify(values))
      }
      assert.strictEqual(yield* gatePermits, 1)
    }))
})

describe("Passwords: bounded concurrency (libuv's threadpool is shared with DNS lookups)", () => {
  it.live("concurrent hashes and verifications run one at a time through the process's gate", () =>
    Effect.gen(function*() {
      const { scrypts, tracer } = recordingTracer()
      const stored = yield* hash("verify me while others hash", fast)
      const work = [
        ...Array.from({ length: 6 }, (_, i) => hash(`password number ${i}`, fast)),
        ...Array.from({ length: 2 }, () => verify("verify me while others hash", stored))
      ]
      yield* Effect.all(work, { concurrency: "unbounded" }).pipe(Effect.withTracer(tracer))
      const runs = scrypts()
      assert.strictEqual(runs.length, 8)
      assert.strictEqual(maxOverlap(runs), 1)
    }))

  it.live("with more permits, never more than the permits at once (and the measure does see overlap)", () =>
    Effect.gen(function*() {
      const { scrypts, tracer } = recordingTracer()
      const three = Semaphore.makeUnsafe(3)
      yield* Effect.all(Array.from({ length: 9 }, (_, i) => hash(`password number ${i}`, fast, three)), { concurrency: "unbounded" })
        .pipe(Effect.withTracer(tracer))
      const overlap = maxOverlap(scrypts())
      assert.isAtMost(overlap, 3)
      assert.isAtLeast(overlap, 2)
    }))

  it.live("a DNS lookup issued while 8 hashes are queued is answered before the first of them is done", () =>
    Effect.gen(function*() {
      const { scrypts, spans, tracer } = recordingTracer()
      // 32 MiB and tens of ms each: long enough to hold a threadpool thread while the lookup runs.
      const costly = { ...defaultParams, N: 2 ** 15 }
      const ends: Array<bigint> = []
      const hashes = yield* Effect.forkChild(
        Effect.all(
          Array.from({ length: 8 }, (_, i) => hash(`queued password ${i}`, costly).pipe(Effect.tap(() => Effect.sync(() => ends.push(process.hrtime.bigint()))))),
          { concurrency: "unbounded" }
        ).pipe(Effect.withTracer(tracer))
      )
      // The first scrypt is running, the other 7 wait for the permit.
      while (!spans.some((s) => s.name === "Passwords.scrypt")) yield* Effect.sleep("1 millis")
      const answer = yield* Effect.promise(() => lookup("localhost"))
      const answeredAt = process.hrtime.bigint()
      assert.include(["127.0.0.1", "::1"], answer.address)
      yield* Fiber.join(hashes)
      assert.strictEqual(ends.length, 8)
      assert.isTrue(answeredAt < ends.reduce((a, b) => (a < b ? a : b)), "the lookup found a free thread")
      assert.strictEqual(maxOverlap(scrypts()), 1)
    }))

  it.live("an interrupted hash keeps its permit until its scrypt is done (the thread runs on regardless)", () =>
    Effect.gen(function*() {
      const { scrypts, spans, tracer } = recordingTracer()
      const costly = { ...defaultParams, N: 2 ** 14 }
      const first = yield* Effect.forkChild(hash("given up on", costly).pipe(Effect.withTracer(tracer)))
      while (!spans.some((s) => s.name === "Passwords.scrypt")) yield* Effect.sleep("1 millis")
      const second = yield* Effect.forkChild(hash("the next one", costly).pipe(Effect.withTracer(tracer)))
      yield* Fiber.interrupt(first)
      yield* Fiber.join(second)
      const runs = scrypts()
      assert.strictEqual(runs.length, 2)
      assert.strictEqual(maxOverlap(runs), 1)
    }))
})
