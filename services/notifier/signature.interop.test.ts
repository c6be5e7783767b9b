import * as fc from "fast-check"
import { createHmac, randomBytes } from "node:crypto"
import { Webhook, WebhookVerificationError } from "standardwebhooks"
import { afterEach, describe, expect, it, vi } from "vitest"
import { signatureHeaders, signTimestamped, standardKey, verifyTimestamped } from "./signature.ts"

/**
 * Our signatures checked by the official Standard Webhooks library
 * (`standardwebhooks` on npm, the specification's own TypeScript code), the
 * way a receiver uses it: `new Webhook(secret).verify(rawBody, headers)`.
 */

/** What the API generates for a new webhook channel (services/orgs/Channels.ts). */
const generatedSecret = () => `whsec_${randomBytes(32).toString("base64")}`
/** What it generated before: 32 random bytes, hex; such channels keep their secret. */
const legacySecret = "3f1c0a9be47d52e6a18c03f5b7d9e2a4c6f8091b2d3e4f5a6b7c8d9e0f1a2b3c"

const nowSeconds = () => Math.floor(Date.now() / 1000)

/** The headers the webhook sender puts on a request (channels/webhook.ts), for `body` sent now. */
const requestHeaders = (secret: string, body: string, id = "evt-1:chan-1", timestamp = nowSeconds()): Record<string, string> => ({
  "content-type": "application/json",
  "webhook-id": id,
  "idempotency-key": id,
  "webhook-timestamp": String(timestamp),
  ...signatureHeaders(secret, id, timestamp, body)
})

const payloads: ReadonlyArray<readonly [string, unknown]> = [
  ["the sample alert", { event: "component.status_changed", component: { id: "c-1", name: "API", previous_status: "operational", current_status: "critical" } }],
  ["unicode: accents, CJK, right-to-left, emoji, a combining mark", { title: "🔴 Zürich — 東京 — القاهرة — e\u0301 👩🏽‍💻", text: "naïve café ✓" }],
  ["a lone surrogate (JSON.stringify escapes it)", { text: "broken \ud800 pair" }],
  ["the empty object", {}],
  ["a large payload (~1 MiB)", { changes: Array.from({ length: 8000 }, (_, i) => ({ id: `component-${i}`, name: `Component ${i} ✓`, status: "degraded" })) }]
]

afterEach(() => {
  vi.restoreAllMocks()
})

describe("Standard Webhooks library verifies our deliveries", () => {
  for (const [what, payload] of payloads) {
    it(`with a generated secret as it is: ${what}`, () => {
      const secret = generatedSecret()
      const body = JSON.stringify(payload)
      const headers = requestHeaders(secret, body)
      // As a receiver has it: the raw body bytes, or the text.
      expect(new Webhook(secret).verify(Buffer.from(body, "utf8"), headers)).toEqual(JSON.parse(body))
      expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body))
      expect(verifyTimestamped(secret, { id: headers["webhook-id"], timestamp: headers["webhook-timestamp"], signature: headers["webhook-signature"] }, body, nowSeconds())).toBe(true)
    })
  }

  it("the body of GET and DELETE (none) is signed over the empty string, which the library accepts", () => {
    const secret = generatedSecret()
    expect(new Webhook(secret).verify("", requestHeaders(secret, ""))).toBeUndefined()
  })

  it("the specification's example: its secret and message give its signature, as the first of ours", () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    const id = "msg_p5jXN8AQM9LWM0D4loKWxJek"
    const body = "{\"test\": 2432232314}"
    const expected = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    expect(new Webhook(secret).sign(id, new Date(1614265330 * 1000), body)).toBe(expected)
    expect(signatureHeaders(secret, id, 1614265330, body)["webhook-signature"]!.split(" ")[0]).toBe(expected)
  })

  it("rejects a tampered body, another secret, another id, a missing header", () => {
    const secret = generatedSecret()
    const body = JSON.stringify(payloads[0]![1])
    const headers = requestHeaders(secret, body)
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow(WebhookVerificationError)
    expect(() => new Webhook(secret).verify(body.replace("critical", "operational"), headers)).toThrow(/No matching signature found/)
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow(/No matching signature found/)
    expect(() => new Webhook(generatedSecret()).verify(body, headers)).toThrow(/No matching signature found/)
    expect(() => new Webhook(secret).verify(body, { ...headers, "webhook-id": "evt-2:chan-1" })).toThrow(/No matching signature found/)
    const { ["webhook-signature"]: _signature, ...unsigned } = headers
    expect(() => new Webhook(secret).verify(body, unsigned)).toThrow(/Missing required headers/)
  })

  it("rejects our headers more than 5 minutes old (or ahead), and a timestamp changed to look fresh", () => {
    const secret = generatedSecret()
    const body = JSON.stringify(payloads[0]![1])
    const sixMinutesAgo = nowSeconds() - 360
    const old = requestHeaders(secret, body, "evt-1:chan-1", sixMinutesAgo)
    expect(() => new Webhook(secret).verify(body, old)).toThrow(/Message timestamp too old/)
    expect(() => new Webhook(secret).verify(body, requestHeaders(secret, body, "evt-1:chan-1", nowSeconds() + 360))).toThrow(/Message timestamp too new/)
    // A replay with the timestamp moved forward: fresh, but no longer what was signed.
    expect(() => new Webhook(secret).verify(body, { ...old, "webhook-timestamp": String(nowSeconds()) })).toThrow(/No matching signature found/)
    // The same request verified at the time it was sent, and 4 minutes later, is fine.
    const sent = requestHeaders(secret, body)
    vi.spyOn(Date, "now").mockReturnValue(Date.now() + 240_000)
    expect(new Webhook(secret).verify(body, sent)).toEqual(JSON.parse(body))
    vi.spyOn(Date, "now").mockReturnValue(Date.now() + 120_000)
    expect(() => new Webhook(secret).verify(body, sent)).toThrow(/Message timestamp too old/)
  })
})

describe("secrets: the spec's whsec_ form, and the hex secrets made before", () => {
  const body = JSON.stringify(payloads[1]![1])

  it("a hex secret given to the library as it is does not verify: the library reads it as base64 (the mismatch this fixed for new secrets)", () => {
    const headers = requestHeaders(legacySecret, body)
    expect(() => new Webhook(legacySecret).verify(body, headers)).toThrow(/No matching signature found/)
    // Such a secret keeps its key (its UTF-8 bytes), which the library takes with format "raw", or as whsec_ + base64 of it.
    expect(new Webhook(legacySecret, { format: "raw" }).verify(body, headers)).toEqual(JSON.parse(body))
    expect(new Webhook(`whsec_${Buffer.from(legacySecret).toString("base64")}`).verify(body, headers)).toEqual(JSON.parse(body))
  })

  it("a secret not in whsec_ form is signed exactly as before this change: one signature, keyed by its UTF-8 bytes", () => {
    for (const secret of [legacySecret, "whsec-test-secret-0123456789abcdef", "my p@ss~phrase-without-spaces!", "whsec_not*base64*at-all"]) {
      const headers = requestHeaders(secret, body, "d-1", 1_700_000_000)
      expect(standardKey(secret)).toBe(secret)
      expect(headers["webhook-signature"]).toBe(`v1,${createHmac("sha256", secret).update(`d-1.1700000000.${body}`).digest("base64")}`)
      expect(headers["x-service-signature"]).toBe(createHmac("sha256", secret).update(body).digest("hex"))
    }
  })

  it("a whsec_ secret: X-Service-Signature keyed by the secret as shown; webhook-signature under the decoded key, then under the secret as shown", () => {
    const secret = generatedSecret()
    const headers = requestHeaders(secret, body, "d-1", 1_700_000_000)
    const decoded = Buffer.from(secret.slice("whsec_".length), "base64")
    expect(decoded).toHaveLength(32)
    expect(headers["x-service-signature"]).toBe(createHmac("sha256", secret).update(body).digest("hex"))
    expect(headers["webhook-signature"]!.split(" ")).toEqual([
      signTimestamped(decoded, "d-1", 1_700_000_000, body),
      // Receivers set up before (the README's recipe, the secret's UTF-8 bytes as key) keep verifying.
      signTimestamped(secret, "d-1", 1_700_000_000, body)
    ])
  })

  it("whsec_ + base64 of any bytes: its key is those bytes, and the library verifies with the secret as it is", () => {
    fc.assert(fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.jsonValue(), (bytes, payload) => {
      const secret = `whsec_${Buffer.from(bytes).toString("base64")}`
      expect(Buffer.from(standardKey(secret) as Uint8Array)).toEqual(Buffer.from(bytes))
      const text = JSON.stringify(payload) ?? "null"
      expect(new Webhook(secret).verify(text, requestHeaders(secret, text), { jsonParse: false })).toBeUndefined()
    }), { numRuns: 300 })
  })

  it("any secret the settings accept: the library verifies with format raw; as it is, exactly when it is whsec_ + padded base64", () => {
    // Printable ASCII without spaces, 16 to 256 characters (domain/Channel/Settings.ts), and whsec_ + base64-ish text.
    const printable = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 16, maxLength: 256 })
    const nearlyStandard = fc.string({ unit: fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_"), minLength: 10, maxLength: 80 })
      .map((rest) => `whsec_${rest}`)
    fc.assert(fc.property(fc.oneof(printable, nearlyStandard), fc.jsonValue(), (secret, payload) => {
      const text = JSON.stringify(payload) ?? "null"
      const headers = requestHeaders(secret, text)
      expect(new Webhook(secret, { format: "raw" }).verify(text, headers, { jsonParse: false })).toBeUndefined()
      const asIs = (() => {
        try {
          new Webhook(secret).verify(text, headers, { jsonParse: false })
          return "verified"
        } catch (e) {
          return (e as Error).message
        }
      })()
      // Not the spec's form (hex, a passphrase, unpadded or broken base64): the library refuses the secret, or reads other bytes than ours.
      expect(asIs).toMatch(standardKey(secret) !== secret ? /^verified$/ : /^(No matching signature found|Base64Coder: .*|Secret can't be empty\.)$/)
    }), { numRuns: 500 })
  })
})
