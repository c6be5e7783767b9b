import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { type ExpectedStatus, parseExpectedStatus } from "./ExpectedStatus.ts"

const ok = (text: string): ExpectedStatus => {
  const r = parseExpectedStatus(text)
  if (Result.isFailure(r)) throw new Error(`${text}: ${r.failure}`)
  return r.success
}
const error = (text: string): string => {
  const r = parseExpectedStatus(text)
  if (Result.isSuccess(r)) throw new Error(`${text} parsed as ${r.success.canonical}`)
  return r.failure
}
const accepted = (s: ExpectedStatus) => {
  const codes: Array<number> = []
  for (let c = 0; c < 700; c++) if (s.matches(c)) codes.push(c)
  return codes
}

describe("parseExpectedStatus", () => {
  it("a range accepts its ends and nothing outside", () => {
    const s = ok("200-299")
    assert.isTrue(s.matches(200))
    assert.isTrue(s.matches(299))
    assert.isFalse(s.matches(199))
    assert.isFalse(s.matches(300))
    assert.strictEqual(s.canonical, "2xx")
    assert.strictEqual(s.text, "200-299")
  })

  it("a single code and a list", () => {
    assert.deepStrictEqual(accepted(ok("200")), [200])
    assert.deepStrictEqual(accepted(ok("200,301")), [200, 301])
    assert.strictEqual(ok("200,301").canonical, "200,301")
  })

  it("a class is its hundred", () => {
    const s = ok("2xx")
    assert.strictEqual(accepted(s).length, 100)
    assert.isTrue(s.matches(204))
    assert.isFalse(s.matches(304))
    assert.strictEqual(ok("5XX").canonical, "5xx")
  })

  it("combinations with spaces around commas and dashes, merged in the canonical form", () => {
    const s = ok(" 200-204 , 301,3xx ")
    assert.deepStrictEqual(accepted(s), [200, 201, 202, 203, 204, ...Array.from({ length: 100 }, (_, i) => 300 + i)])
    assert.strictEqual(s.canonical, "200-204,3xx")
    assert.strictEqual(s.text, "200-204 , 301,3xx")
    assert.strictEqual(ok("200 - 201").canonical, "200-201")
  })

  it("adjacent and overlapping parts merge; runs over hundreds keep whole hundreds as classes", () => {
    assert.strictEqual(ok("200-250,251-299").canonical, "2xx")
    assert.strictEqual(ok("250-420").canonical, "250-299,3xx,400-420")
    assert.strictEqual(ok("250-320").canonical, "250-320")
    assert.strictEqual(ok("2xx,3xx,404").canonical, "2xx,3xx,404")
    assert.strictEqual(ok("100-599").canonical, "1xx,2xx,3xx,4xx,5xx")
  })

  it("rejects empty text and empty parts", () => {
    assert.include(error(""), "empty")
    assert.include(error("   "), "empty")
    assert.include(error("200,,301"), "empty part")
    assert.include(error("200,"), "empty part")
  })

  it("rejects codes outside 100-599 naming the code", () => {
    assert.include(error("600"), "600 is not a status code")
    assert.include(error("099"), "099 is not a status code")
    assert.include(error("200-600"), "600 in \"200-600\"")
    assert.include(error("6xx"), "\"6xx\" is not a status class")
    assert.include(error("0xx"), "not a status class")
  })

  it("rejects reversed ranges, suggesting the right order", () => {
    assert.include(error("299-200"), "reversed range (write 200-299)")
  })

  it("rejects garbage naming the part", () => {
    assert.include(error("ok"), "\"ok\" is not a status code")
    assert.include(error("200;301"), "\"200;301\"")
    assert.include(error("2000"), "\"2000\"")
    assert.include(error("20x"), "\"20x\"")
    assert.include(error("200-"), "\"200-\"")
    assert.include(error("-5"), "\"-5\"")
  })
})
