import { describe, expect, it } from "vitest"
import { parseRetryAfter, resultOfStatus } from "./http.ts"

describe("parseRetryAfter", () => {
  const now = Date.parse("2026-03-01T10:00:00Z")
  it("reads delay-seconds, with decimals, and HTTP dates (past dates are 0)", () => {
    expect(parseRetryAfter("2", now)).toBe(2000)
    expect(parseRetryAfter(" 0.25 ", now)).toBe(250)
    expect(parseRetryAfter("Sun, 01 Mar 2026 10:00:30 GMT", now)).toBe(30_000)
    expect(parseRetryAfter("Sun, 01 Mar 2026 09:00:00 GMT", now)).toBe(0)
  })
  it("ignores absent and unreadable values, including numbers Date.parse would take as dates", () => {
    expect([undefined, "", "soon", "-1", "1.5.2", "2026"].map((v) => parseRetryAfter(v, now))).toEqual([
      undefined, undefined, undefined, undefined, undefined, 2_026_000
    ])
  })
})

describe("resultOfStatus", () => {
  it("maps 2xx to ok, 429/5xx to retryable with Retry-After, 3xx and other 4xx to final", () => {
    expect(resultOfStatus(202, undefined, "", 0)).toEqual({ ok: true, status: 202, retryable: false, error: "" })
    expect(resultOfStatus(429, "3", "slow down", 0)).toEqual({ ok: false, status: 429, retryable: true, retryAfterMs: 3000, error: "HTTP 429: slow down" })
    expect(resultOfStatus(503, undefined, "", 0)).toEqual({ ok: false, status: 503, retryable: true, error: "HTTP 503" })
    expect(resultOfStatus(404, "5", "no_service", 0)).toEqual({ ok: false, status: 404, retryable: false, error: "HTTP 404: no_service" })
    expect(resultOfStatus(301, undefined, "", 0)).toMatchObject({ ok: false, retryable: false, error: expect.stringContaining("redirects are not followed") })
  })
  it("keeps a short, one-line excerpt of the answer", () => {
    const r = resultOfStatus(400, undefined, `{"error":\n"${"x".repeat(1000)}"}`, 0)
    expect(r.error.startsWith("HTTP 400: {\"error\": \"xxx")).toBe(true)
    expect(r.error.length).toBeLessThanOrEqual(310)
  })
})
