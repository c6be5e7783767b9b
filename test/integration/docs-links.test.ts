import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

/**
 * Every relative link in the repository's markdown resolves: the file or folder exists, and an
 * `#anchor` into a markdown file names one of its headings (GitHub's slugs) or an HTML id.
 * Links with a scheme (https:, mailto:) are not followed. Pure file reading: it sits with the
 * integration tests only because the unit project holds `services/` and `bench/`.
 */

const skipped = new Set(["node_modules", ".tools", "data", ".git"])

const markdownFiles = (root: string): Array<string> => {
  const found: Array<string> = []
  const walk = (dir: string) => {
    for (const entry of Fs.readdirSync(dir, { withFileTypes: true })) {
      if (skipped.has(entry.name)) continue
      const full = Path.join(dir, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (entry.isFile() && entry.name.endsWith(".md")) found.push(full)
    }
  }
  walk(root)
  return found.toSorted()
}

/** The text outside fenced code blocks, line by line (code spans are removed by `prose`). */
const proseLines = (text: string): Array<string> => {
  const lines: Array<string> = []
  let fence: string | undefined
  for (const line of text.split("\n")) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined
      lines.push("")
    } else if (marker !== undefined) {
      fence = marker
      lines.push("")
    } else lines.push(line)
  }
  return lines
}

const withoutCodeSpans = (line: string): string => line.replace(/(`+)[\s\S]*?\1/g, "")

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
const slug = (heading: string): string =>
  heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-")

const anchorsOf = (text: string): Set<string> => {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const line of proseLines(text)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1]
    if (heading !== undefined) {
      const base = slug(heading)
      const n = seen.get(base) ?? 0
      seen.set(base, n + 1)
      anchors.add(n === 0 ? base : `${base}-${n}`)
    }
    for (const m of line.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!)
  }
  return anchors
}

const linksOf = (text: string): Array<{ line: number; target: string }> => {
  const links: Array<{ line: number; target: string }> = []
  proseLines(text).forEach((raw, i) => {
    const line = withoutCodeSpans(raw)
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ line: i + 1, target: m[1]! })
    const reference = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(line)?.[1]
    if (reference !== undefined) links.push({ line: i + 1, target: reference })
  })
  return links
}

/** `file:line: target (why)` for each relative link under `root` that does not resolve. */
const brokenLinks = (root: string): Array<string> => {
  const anchorCache = new Map<string, Set<string>>()
  const anchorsIn = (file: string) => {
    let anchors = anchorCache.get(file)
    if (anchors === undefined) {
      anchors = anchorsOf(Fs.readFileSync(file, "utf8"))
      anchorCache.set(file, anchors)
    }
    return anchors
  }
  const broken: Array<string> = []
  for (const file of markdownFiles(root)) {
    for (const { line, target } of linksOf(Fs.readFileSync(file, "utf8"))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) continue
      const hash = target.indexOf("#")
      const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash))
      const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1))
      const resolved =
        pathPart === "" ? file : pathPart.startsWith("/") ? Path.join(root, pathPart) : Path.resolve(Path.dirname(file), pathPart)
      const where = `${Path.relative(root, file)}:${line}: ${target}`
      if (!Fs.existsSync(resolved)) broken.push(`${where} (no such file)`)
      else if (anchor !== undefined && anchor !== "" && resolved.endsWith(".md") && !anchorsIn(resolved).has(anchor)) {
        broken.push(`${where} (no heading #${anchor})`)
      }
    }
  }
  return broken
}

describe("documentation links", () => {
  it("finds a missing file, a missing folder and a missing heading, and ignores code and absolute URLs", () => {
    const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-docs-links-"))
    try {
      Fs.mkdirSync(Path.join(root, "sub"))
      Fs.writeFileSync(
        Path.join(root, "README.md"),
        [
          "# Title",
          "## Stores are Layers: `Bus` (and more)",
          "## Stores are Layers: `Bus` (and more)",
          "See [sub](sub/), [guide](sub/GUIDE.md#the-part), [self](#stores-are-layers-bus-and-more-1),",
          "[home](https://example.com/x.md), [gone](sub/MISSING.md), [bad anchor](#nowhere), `[code](nope.md)`.",
          "```",
          "[fenced](fenced.md)",
          "```",
          "[ref]: sub/OTHER.md"
        ].join("\n")
      )
      Fs.writeFileSync(Path.join(root, "sub", "GUIDE.md"), "# Guide\n\n### The part\n\n[up](../README.md#title) [folder](../gone/)\n")
      assert.deepStrictEqual(brokenLinks(root), [
        "README.md:5: sub/MISSING.md (no such file)",
        "README.md:5: #nowhere (no heading #nowhere)",
        "README.md:9: sub/OTHER.md (no such file)",
        "sub/GUIDE.md:5: ../gone/ (no such file)"
      ])
    } finally {
      Fs.rmSync(root, { recursive: true, force: true })
    }
  })

  it("every relative link in the repository's markdown resolves", () => {
    const root = Path.resolve(import.meta.dirname, "../..")
    assert.isAbove(markdownFiles(root).length, 10)
    assert.deepStrictEqual(brokenLinks(root), [])
  })
})
