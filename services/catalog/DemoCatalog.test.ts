import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import { keyFromName } from "../domain/Source.ts"
import * as DemoCatalog from "./DemoCatalog.ts"

describe("keyFromName", () => {
  it("makes lower-case slugs", () => {
    assert.strictEqual(keyFromName("Circle CI"), "circle-ci")
    assert.strictEqual(keyFromName("  AT&T Business "), "at-and-t-business")
    assert.strictEqual(keyFromName("Zürich Café (EU)"), "zurich-cafe-eu")
    assert.strictEqual(keyFromName("!!!"), "source")
  })
})

describe("parseTsv", () => {
  it("skips the header and bad rows, and makes repeated names unique", () => {
    const entries = DemoCatalog.parseTsv(
      "name\tstatus_page_url\nGitHub\thttps://www.githubstatus.com\nGitHub\thttps://eu.githubstatus.com\n" +
        "No URL\t\nBad URL\tftp://x\n\t https://nameless.example\n"
    )
    assert.deepStrictEqual(entries, [
      { key: "github", name: "GitHub", status_page_url: "https://www.githubstatus.com" },
      { key: "github-2", name: "GitHub", status_page_url: "https://eu.githubstatus.com" }
    ])
  })

  it("gives every entry of the shipped list a unique, valid key", () => {
    const entries = DemoCatalog.parseTsv(Fs.readFileSync(DemoCatalog.seedFile, "utf8"))
    assert.strictEqual(entries.length, 1143)
    assert.strictEqual(new Set(entries.map((e) => e.key)).size, entries.length)
    for (const e of entries) assert.match(e.key, /^[a-z0-9](?:[a-z0-9-]{0,126}[a-z0-9])?$/)
  })
})
