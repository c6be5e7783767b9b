import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import * as fc from "fast-check"
import { fetched } from "../../test/support/fetched.ts"
import { AdapterError } from "./Adapter.ts"
import { feed, parseFeedText } from "./feed.ts"
import { decodeEntities } from "./text.ts"

/** Issue #19: the feed reader on any input, and the text it reads back. Fixed seed, bounded runs. */
const runs = { seed: 19, numRuns: 300 }
const url = "https://status.example.com/feed.rss"

const escapeXml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")
const escapeHtml = escapeXml
const rss = (item: string) => `<?xml version="1.0"?><rss version="2.0"><channel><title>S</title><item>${item}</item></channel></rss>`
const atom = (entry: string) => `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>S</title><entry>${entry}</entry></feed>`
const onlyItem = (xml: string) => {
  const items = parseFeedText(xml).items
  assert.strictEqual(items.length, 1)
  return items[0]!
}
/** What a reader shows of HTML text: runs of whitespace as one space, trimmed. */
const collapsed = (s: string) => s.replace(/\s+/g, " ").trim()

/**
 * Text a feed can carry: XML 1.0 allows no C0 control but tab, newline and carriage return, no lone
 * surrogate and no U+FFFE/U+FFFF; a parser normalizes CR and CRLF to LF. Anything else must round-trip.
 */
const isXmlChar = (c: string): boolean => {
  const n = c.codePointAt(0)!
  return (n >= 0x20 || n === 0x9 || n === 0xa || n === 0xd) && !(n >= 0xd800 && n <= 0xdfff) && n !== 0xfffe && n !== 0xffff
}
const xmlText = fc.string({ unit: "binary", maxLength: 60 }).map((s) => [...s].filter(isXmlChar).join("").replace(/\r\n?/g, "\n"))
/** Feed text, and text that looks like a number, a boolean or an entity to a parser with opinions. */
const feedText = fc.oneof(xmlText, fc.stringMatching(/^ ?[-+]?(?:0x)?[0-9a-fA-F.eE]{1,8} ?$/), fc.constantFrom("true", "null", "&amp;", "&#39;"))

describe("feed reader on any input (fuzzed)", () => {
  it("any bytes or text give a feed or an AdapterError, never a defect", () => {
    const xmlish = fc.array(
      fc.oneof(
        fc.constantFrom("<rss>", "</rss>", "<channel>", "<item>", "</item>", "<feed>", "<entry>", "<title>", "</title>", "<link href='x'/>",
          "<![CDATA[", "]]>", "&amp;", "&#0;", "&bogus;", "<!DOCTYPE r [<!ENTITY e \"ee\">]>", "&e;", "<?xml version=\"1.0\"?>", "<a b=\"", "\""),
        fc.string({ unit: "binary", maxLength: 10 })
      ),
      { maxLength: 30 }
    ).map((parts) => parts.join(""))
    const body = fc.oneof(fc.uint8Array({ maxLength: 200 }), fc.oneof(fc.string({ unit: "binary" }), xmlish).map((s) => new TextEncoder().encode(s)))
    fc.assert(
      fc.property(body, fc.constantFrom("", "application/rss+xml", "text/xml; charset=windows-1252", "text/xml; charset=bogus"), (bytes, contentType) => {
        const exit = Effect.runSync(Effect.exit(feed("rss", { url, status: 200, contentType, body: bytes })))
        if (Exit.isFailure(exit)) {
          assert.isFalse(Cause.hasDies(exit.cause), Cause.pretty(exit.cause))
          const error = Cause.findErrorOption(exit.cause)
          assert.isTrue(error._tag === "Some" && error.value instanceof AdapterError && error.value.reason === "invalid_feed")
        }
      }),
      runs
    )
  })

  it("plain-text fields (RSS title, guid, link, category) read back as written", () => {
    fc.assert(
      fc.property(feedText, feedText, feedText, (title, guid, category) => {
        const item = onlyItem(rss(
          `<title>${escapeXml(title)}</title><guid>${escapeXml(guid)}</guid><link>${escapeXml(guid)}</link><category>${escapeXml(category)}</category>`
        ))
        assert.strictEqual(item.title, title.trim())
        assert.strictEqual(item.id, guid.trim())
        assert.strictEqual(item.link, guid.trim())
        assert.deepStrictEqual(item.categories, category.trim() === "" ? [] : [category.trim()])
      }),
      runs
    )
  })

  it("HTML fields (RSS description, Atom title and summary) read back as the text that was HTML-escaped", () => {
    fc.assert(
      fc.property(feedText, (text) => {
        const html = `<p>${escapeHtml(text)}</p>`
        assert.strictEqual(onlyItem(rss(`<description>${escapeXml(html)}</description>`)).summary, collapsed(text))
        if (!html.includes("]]>")) {
          assert.strictEqual(onlyItem(rss(`<description><![CDATA[${html}]]></description>`)).summary, collapsed(text))
        }
        const entry = onlyItem(atom(`<title type="html">${escapeXml(html)}</title><summary type="html">${escapeXml(html)}</summary>`))
        assert.deepStrictEqual([entry.title, entry.summary], [collapsed(text), collapsed(text)])
      }),
      runs
    )
  })

  it("decimal and hexadecimal character references decode to their character", () => {
    // NUL, surrogates and C1 controls have their own HTML rules (U+FFFD, windows-1252): see feed.test.ts.
    const scalar = fc.integer({ min: 1, max: 0x10ffff }).filter((n) => !(n >= 0xd800 && n <= 0xdfff) && !(n >= 0x80 && n <= 0x9f))
    fc.assert(
      fc.property(scalar, fc.boolean(), (n, upper) => {
        const hex = n.toString(16)
        assert.strictEqual(decodeEntities(`&#${n};`), String.fromCodePoint(n))
        assert.strictEqual(decodeEntities(`&#x${upper ? hex.toUpperCase() : hex};`), String.fromCodePoint(n))
      }),
      runs
    )
  })

  it("text with no character reference is left alone by entity decoding, and decoding is one pass", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        assert.strictEqual(decodeEntities(text.replace(/&/g, "")), text.replace(/&/g, ""))
        // Escaping then decoding gives the text back, whatever entities it already spells.
        assert.strictEqual(decodeEntities(escapeHtml(text)), text)
      }),
      runs
    )
  })
})

/** The characters windows-1252 encodes, and the byte of each. */
const cp1252 = new Map<string, number>()
{
  const decoder = new TextDecoder("windows-1252")
  for (let b = 0x20; b <= 0xff; b++) {
    const c = decoder.decode(new Uint8Array([b]))
    if (c !== "\ufffd" && b !== 0x7f && !(b >= 0x80 && b <= 0x9f && c.charCodeAt(0) === b)) cp1252.set(c, b)
  }
}
const toCp1252 = (text: string) => new Uint8Array([...text].map((c) => cp1252.get(c)!))

describe("feed charsets (fuzzed)", () => {
  it("a windows-1252 or ISO-8859-1 feed reads as its text, whether the XML declaration or the Content-Type says so", () => {
    const text = fc.array(fc.constantFrom(...[...cp1252.keys()].filter((c) => !"<>&".includes(c))), { maxLength: 40 }).map((cs) => cs.join("").trim())
    fc.assert(
      fc.property(text, fc.constantFrom("windows-1252", "ISO-8859-1", "latin1", "cp1252"), fc.boolean(), (title, label, inHeader) => {
        const declaration = inHeader ? `<?xml version="1.0"?>` : `<?xml version="1.0" encoding="${label}"?>`
        const body = toCp1252(`${declaration}<rss version="2.0"><channel><title>S</title><item><title>${title}</title></item></channel></rss>`)
        const contentType = inHeader ? `application/rss+xml; charset=${label}` : "application/rss+xml"
        const parsed = Effect.runSync(feed("rss", fetched(url, body, { contentType })))
        assert.strictEqual(parsed.items[0]!.title, title)
      }),
      runs
    )
  })
})
