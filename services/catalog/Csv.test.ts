import { assert, describe, it } from "@effect/vitest"
import { formatCsv, parseCsv } from "./Csv.ts"

describe("CSV", () => {
  it("round-trips fields with commas, quotes and line breaks", () => {
    const rows = [["key", "name"], ["a", "Acme, Inc."], ["b", "The \"Best\"\nService"], ["c", ""]]
    assert.deepStrictEqual(parseCsv(formatCsv(rows)), rows)
  })

  it("reads CRLF line ends and skips blank lines", () => {
    assert.deepStrictEqual(parseCsv("a,b\r\n1,2\r\n\r\n"), [["a", "b"], ["1", "2"]])
  })

  it("refuses an unterminated quote", () => {
    assert.throws(() => parseCsv("a,\"b\n"), /unterminated/)
  })
})
