import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { formatCsv, parseCsv } from "./Csv.ts"

/** Issue #19: the catalog's CSV import and export. Fixed seed, bounded runs. */
const runs = { seed: 19, numRuns: 300 }

/** Any text, and text made of what CSV and spreadsheets treat specially. */
const cell = fc.oneof(
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.array(fc.constantFrom("'", "=", "+", "-", "@", "\t", "\r", "\n", "\r\n", "\"", ",", "\ufeff", " ", "a", "1"), { maxLength: 6 })
    .map((parts) => parts.join(""))
)
// A CSV row has at least one field: a line with none is a blank line.
const rows = fc.array(fc.array(cell, { minLength: 1, maxLength: 5 }), { maxLength: 6 })

const formulaStart = ["=", "+", "-", "@", "\t", "\r"]

describe("CSV (fuzzed)", () => {
  it("parse(format(rows)) gives the rows back", () => {
    fc.assert(fc.property(rows, (table) => assert.deepStrictEqual(parseCsv(formatCsv(table)), table)), runs)
  })

  it("a leading UTF-8 BOM, as spreadsheets write it, is not part of the first cell", () => {
    fc.assert(fc.property(rows, (table) => assert.deepStrictEqual(parseCsv(`\ufeff${formatCsv(table)}`), table)), runs)
  })

  it("no exported cell starts like a formula", () => {
    fc.assert(
      fc.property(cell, (value) => {
        // A cell's first character as a spreadsheet sees it: inside the quotes when quoted.
        const line = formatCsv([[value, "x"]])
        const first = line.startsWith("\"") ? line[1] : line[0]
        assert.notInclude(formulaStart, first, JSON.stringify(line))
      }),
      runs
    )
  })

  it("any text parses to rows or fails as an unterminated quote", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        try {
          assert.isArray(parseCsv(text))
        } catch (error) {
          assert.match((error as Error).message, /unterminated quoted field/)
        }
      }),
      runs
    )
  })
})

describe("CSV formula guard and BOM", () => {
  it("writes formula-like cells behind a single quote, and reads them back as written", () => {
    const table = [["=HYPERLINK(\"http://x\")", "+1", "-", "@SUM(A1)", "\tx", "'=1", "'hello", "a=b"]]
    const text = formatCsv(table)
    assert.strictEqual(text, `"'=HYPERLINK(""http://x"")",'+1,'-,'@SUM(A1),'\tx,''=1,'hello,a=b\n`)
    assert.deepStrictEqual(parseCsv(text), table)
  })

  it("reads a guarded cell as a spreadsheet user means it, and other quotes as text", () => {
    assert.deepStrictEqual(parseCsv("\ufeffkey,name\r\nacme,'=cmd\r\nbeta,'quoted\r\n"), [["key", "name"], ["acme", "=cmd"], ["beta", "'quoted"]])
  })

  it("keeps a row whose only field is empty when it was written quoted, and still skips blank lines", () => {
    assert.strictEqual(formatCsv([[""], ["a"]]), "\"\"\na\n")
    assert.deepStrictEqual(parseCsv("\"\"\n\na\n"), [[""], ["a"]])
  })
})
