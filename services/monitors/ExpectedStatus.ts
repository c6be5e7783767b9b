import { Result } from "effect"

/**
 * The accepted status codes of a monitor, from the text its owner entered:
 * `200-299`, `200,301`, `2xx`, `200`, or any comma-separated mix of them.
 */
export interface ExpectedStatus {
  readonly matches: (code: number) => boolean
  /** Sorted, merged form: whole hundreds as `2xx`, other runs as `200-204`, e.g. "2xx,301". */
  readonly canonical: string
  /** The entered text, trimmed: what messages quote ("expected 200-299, got 503"). */
  readonly text: string
}

const minCode = 100
const maxCode = 599

const single = /^[0-9]{3}$/
const range = /^([0-9]{3})\s*-\s*([0-9]{3})$/
const hundred = /^([0-9])xx$/i

const describe = (part: string): string => JSON.stringify(part.length > 30 ? `${part.slice(0, 30)}…` : part)

/** One comma-separated part as an inclusive range, or why it is not one. */
const parsePart = (part: string): readonly [number, number] | string => {
  if (part === "") return "has an empty part (two commas in a row, or a comma at an end)"
  if (single.test(part)) {
    const code = Number(part)
    return code < minCode || code > maxCode ? `${part} is not a status code (100 to 599)` : [code, code]
  }
  const r = range.exec(part)
  if (r) {
    const from = Number(r[1])
    const to = Number(r[2])
    if (from < minCode || from > maxCode) return `${r[1]} in ${describe(part)} is not a status code (100 to 599)`
    if (to < minCode || to > maxCode) return `${r[2]} in ${describe(part)} is not a status code (100 to 599)`
    if (from > to) return `${describe(part)} is a reversed range (write ${to}-${from})`
    return [from, to]
  }
  const h = hundred.exec(part)
  if (h) {
    const digit = Number(h[1])
    return digit < 1 || digit > 5 ? `${describe(part)} is not a status class (1xx to 5xx)` : [digit * 100, digit * 100 + 99]
  }
  return `${describe(part)} is not a status code, range (200-299) or class (2xx)`
}

const formatRun = (from: number, to: number): Array<string> => {
  const out: Array<string> = []
  let at = from
  // Split a run into whole hundreds (`3xx`) and the pieces around them.
  while (at <= to) {
    if (at % 100 === 0 && at + 99 <= to) {
      out.push(`${at / 100}xx`)
      at += 100
      continue
    }
    const end = nextHundredBoundary(at, to)
    out.push(end === at ? `${at}` : `${at}-${end}`)
    at = end + 1
  }
  return out
}

/** The end of the piece starting at `at`: up to the next whole hundred that fits entirely in the run, else the run's end. */
const nextHundredBoundary = (at: number, to: number): number => {
  const nextHundred = Math.floor(at / 100) * 100 + 100
  return nextHundred + 99 <= to ? nextHundred - 1 : to
}

/** Parses the expected-status text; the failure is a sentence naming what is wrong. */
export const parseExpectedStatus = (input: string): Result.Result<ExpectedStatus, string> => {
  const text = input.trim()
  if (text === "") return Result.fail("is empty (use e.g. 200-299)")
  const ranges: Array<readonly [number, number]> = []
  for (const raw of text.split(",")) {
    const part = parsePart(raw.trim())
    if (typeof part === "string") return Result.fail(part)
    ranges.push(part)
  }
  ranges.sort((a, b) => a[0] - b[0])
  const merged: Array<[number, number]> = []
  for (const [from, to] of ranges) {
    const last = merged[merged.length - 1]
    if (last && from <= last[1] + 1) last[1] = Math.max(last[1], to)
    else merged.push([from, to])
  }
  const canonical = merged.flatMap(([from, to]) => formatRun(from, to)).join(",")
  const first = merged[0]!
  // One range (the common case) compares two numbers; more use a 500-entry table.
  let matches: (code: number) => boolean
  if (merged.length === 1) {
    const [from, to] = first
    matches = (code) => code >= from && code <= to
  } else {
    const table = new Uint8Array(maxCode + 1)
    for (const [from, to] of merged) table.fill(1, from, to + 1)
    matches = (code) => table[code] === 1
  }
  return Result.succeed({ matches, canonical, text })
}
