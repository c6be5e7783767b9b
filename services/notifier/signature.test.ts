import { describe, expect, it } from "vitest"
import { signBody, signTimestamped, signatureHeaders, verifyBody, verifyTimestamped } from "./signature.ts"

describe("signBody", () => {
  it("is the hex HMAC-SHA256 of the body (RFC 4231-style known vector)", () => {
    expect(signBody("key", "The quick brown fox jumps over the lazy dog"))
      .toBe("f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8")
  })

  it("signs bytes and the same text alike, and changes with one byte", () => {
    const body = JSON.stringify({ event: "test", name: "Zürich 🔴" })
    expect(signBody("s3cret-s3cret-s3", Buffer.from(body))).toBe(signBody("s3cret-s3cret-s3", body))
    expect(signBody("s3cret-s3cret-s3", `${body} `)).not.toBe(signBody("s3cret-s3cret-s3", body))
  })

  it("verifies in any hex case and rejects another body, secret or a missing header", () => {
    const sig = signBody("secret-secret-16", "{}")
    expect(verifyBody("secret-secret-16", "{}", sig.toUpperCase())).toBe(true)
    expect(verifyBody("secret-secret-16", "{ }", sig)).toBe(false)
    expect(verifyBody("secret-secret-17", "{}", sig)).toBe(false)
    expect(verifyBody("secret-secret-16", "{}", undefined)).toBe(false)
  })
})

describe("signTimestamped (Standard Webhooks)", () => {
  // The Standard Webhooks / Svix published example: key = base64-decoded part of the whsec_ secret.
  const key = Buffer.from("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "base64")
  const id = "msg_p5jXN8AQM9LWM0D4loKWxJek"
  const body = "{\"test\": 2432232314}"

  it("matches the specification's example signature", () => {
    expect(signTimestamped(key, id, 1614265330, body)).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
  })

  it("verifies within the tolerance, among several signatures, and rejects replays and tampering", () => {
    const headers = { id, timestamp: "1614265330", signature: `v1,bm90LWl0 ${signTimestamped(key, id, 1614265330, body)}` }
    expect(verifyTimestamped(key, headers, body, 1614265330 + 299)).toBe(true)
    expect(verifyTimestamped(key, headers, body, 1614265330 + 301)).toBe(false)
    expect(verifyTimestamped(key, headers, `${body} `, 1614265330)).toBe(false)
    expect(verifyTimestamped(key, { ...headers, id: "msg_other" }, body, 1614265330)).toBe(false)
    expect(verifyTimestamped(key, { ...headers, timestamp: "1614265331" }, body, 1614265330)).toBe(false)
    expect(verifyTimestamped(key, { ...headers, timestamp: "1e9" }, body, 1614265330)).toBe(false)
    expect(verifyTimestamped(key, { ...headers, signature: undefined }, body, 1614265330)).toBe(false)
  })
})

it("signatureHeaders gives both headers in lower case", () => {
  const headers = signatureHeaders("secret-secret-16", "d-1", 1_700_000_000, "{}")
  expect(Object.keys(headers).toSorted()).toEqual(["webhook-signature", "x-service-signature"])
  expect(headers["x-service-signature"]).toBe(signBody("secret-secret-16", "{}"))
  expect(headers["webhook-signature"]).toBe(signTimestamped("secret-secret-16", "d-1", 1_700_000_000, "{}"))
})
