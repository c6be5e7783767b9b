/**
 * A cell a spreadsheet would evaluate as a formula (OWASP "CSV injection"): it starts with `=`,
 * `+`, `-`, `@`, a tab or a carriage return, maybe behind single quotes that escape it already.
 */
const formulaLike = /^'*[=+\-@\t\r]/

/** A byte-order mark: spreadsheets write one before UTF-8 CSV. */
const bom = "\ufeff"

/**
 * A field as written: a formula-like cell behind a single quote (`=1+1` → `'=1+1`, and `'=1+1` →
 * `''=1+1` so that the importer can tell them apart); quoted when it holds a comma, a quote or a
 * line break, starts with a BOM (the importer would strip it), or is a row's only field and empty
 * (else it is a blank line).
 */
const formatField = (field: string, alone: boolean): string => {
  const cell = formulaLike.test(field) ? `'${field}` : field
  return /[",\r\n]/.test(cell) || cell.startsWith(bom) || (alone && cell === "") ? `"${cell.replace(/"/g, "\"\"")}"` : cell
}

/**
 * RFC 4180 CSV: fields with commas, quotes or line breaks are quoted, quotes doubled. Cells that
 * start like a formula get a leading single quote, so spreadsheets show them as text (`parseCsv`
 * removes it again). A row needs at least one field.
 */
export const formatCsv = (rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  rows.map((row) => row.map((f) => formatField(f, row.length === 1)).join(",")).join("\n") + "\n"

/** A cell as `formatCsv` meant it: one guarding single quote removed from a formula-like cell. */
const unguard = (field: string): string => (field.startsWith("'") && formulaLike.test(field) ? field.slice(1) : field)

/**
 * Parses RFC 4180 CSV into rows of fields: a leading BOM is skipped, blank lines are skipped, and a
 * formula-like cell's guarding single quote (`'=1+1`, as `formatCsv` and spreadsheets write it) is
 * removed. Throws on an unterminated quoted field.
 */
export const parseCsv = (input: string): Array<Array<string>> => {
  const text = input.startsWith(bom) ? input.slice(1) : input
  const rows: Array<Array<string>> = []
  let row: Array<string> = []
  let field = ""
  let quoted = false
  // A row with a quoted field is data, even when it reads as one empty field (`""`).
  let rowQuoted = false
  const endRow = () => {
    row.push(field)
    if (rowQuoted || !(row.length === 1 && row[0] === "")) rows.push(row.map(unguard))
    row = []
    field = ""
    rowQuoted = false
  }
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    if (quoted) {
      if (c === "\"" && text[i + 1] === "\"") {
        field += "\""
        i += 2
        continue
      }
      if (c === "\"") quoted = false
      else field += c
      i++
      continue
    }
    if (c === "\"" && field === "") {
      quoted = true
      rowQuoted = true
    } else if (c === ",") {
      row.push(field)
      field = ""
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++
      endRow()
    } else field += c
    i++
  }
  if (quoted) throw new Error("unterminated quoted field")
  if (field !== "" || row.length > 0 || rowQuoted) endRow()
  return rows
}
