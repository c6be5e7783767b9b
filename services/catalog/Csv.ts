/** RFC 4180 CSV: fields with commas, quotes or line breaks are quoted, quotes doubled. */
export const formatCsv = (rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  rows.map((row) => row.map((f) => (/[",\r\n]/.test(f) ? `"${f.replace(/"/g, "\"\"")}"` : f)).join(",")).join("\n") + "\n"

/** Parses RFC 4180 CSV into rows of fields. Throws on an unterminated quoted field. */
export const parseCsv = (text: string): Array<Array<string>> => {
  const rows: Array<Array<string>> = []
  let row: Array<string> = []
  let field = ""
  let quoted = false
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
    if (c === "\"" && field === "") quoted = true
    else if (c === ",") {
      row.push(field)
      field = ""
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++
      row.push(field)
      rows.push(row)
      row = []
      field = ""
    } else field += c
    i++
  }
  if (quoted) throw new Error("unterminated quoted field")
  if (field !== "" || row.length > 0) {
    row.push(field)
    rows.push(row)
  }
  return rows.filter((r) => !(r.length === 1 && r[0] === ""))
}
