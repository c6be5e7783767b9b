import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { fetched } from "../../test/support/fetched.ts"
import { feed, parseFeedText } from "./feed.ts"

const url = "https://status.example.com/feed.rss"
const rssItem = (item: string, declaration = `<?xml version="1.0" encoding="UTF-8"?>`) =>
  `${declaration}<rss version="2.0"><channel><title>Status</title><link>https://status.example.com/</link><item>${item}</item></channel></rss>`

/** Text as windows-1252 bytes: ASCII as is, and the few other characters these tests use. */
const cp1252 = (text: string): Uint8Array => {
  const bytes: Record<string, number> = { "’": 0x92, "é": 0xe9, "–": 0x96, "ü": 0xfc }
  return new Uint8Array([...text].map((c) => c.charCodeAt(0) < 0x80 ? c.charCodeAt(0) : bytes[c]!))
}

describe("feed text: HTML entities are decoded after the tags are stripped", () => {
  it("shows escaped markup as text and strips real markup", () => {
    // The description's HTML is `<p>Use &lt;b&gt; &amp; &lt;i&gt;</p>`, escaped once more for XML.
    const item = parseFeedText(rssItem(`<description>&lt;p&gt;Use &amp;lt;b&amp;gt; &amp;amp; &amp;lt;i&amp;gt;&lt;/p&gt;</description>`)).items[0]!
    assert.strictEqual(item.summary, "Use <b> & <i>")
  })

  it("decodes numeric, hexadecimal and common named entities, in CDATA too", () => {
    const item = parseFeedText(rssItem(
      `<description><![CDATA[<p>We&#8217;re on it &ndash; caf&eacute; &#x2019;s &copy; &nbsp;done&hellip; &bogus; &#0; &#150;</p>]]></description>`
    )).items[0]!
    assert.strictEqual(item.summary, "We’re on it – café ’s © done… &bogus; \ufffd –")
  })

  it("decodes entities once: an escaped entity reads as the entity's text", () => {
    const item = parseFeedText(rssItem(`<description>&lt;p&gt;Write &amp;amp;lt; for &amp;lt;&lt;/p&gt;</description>`)).items[0]!
    assert.strictEqual(item.summary, "Write &lt; for <")
  })

  it("keeps a less-than sign that starts no tag", () => {
    const item = parseFeedText(rssItem(`<description>latency &lt; 200 ms and &gt; 5 s, 1 &lt;2</description>`)).items[0]!
    assert.strictEqual(item.summary, "latency < 200 ms and > 5 s, 1 <2")
  })

  it("reads Atom HTML titles and summaries the same way", () => {
    const [entry] = parseFeedText(
      `<feed xmlns="http://www.w3.org/2005/Atom"><title>S</title><entry><id>1</id>` +
        `<title type="html">Errors on &amp;lt;select&amp;gt; &amp;mdash; &lt;em&gt;fixed&lt;/em&gt;</title>` +
        `<summary type="html">&lt;p&gt;It&amp;#39;s fine&lt;/p&gt;</summary></entry></feed>`
    ).items
    assert.deepStrictEqual([entry!.title, entry!.summary], ["Errors on <select> — fixed", "It's fine"])
  })

  it("keeps RSS titles, guids and categories as plain text, numbers included", () => {
    const item = parseFeedText(rssItem(`<title>Release 1.10</title><guid>007</guid><category>1e5</category><category>true</category>`)).items[0]!
    assert.deepStrictEqual([item.title, item.id, item.categories], ["Release 1.10", "007", ["1e5", "true"]])
  })
})

describe("feed charsets", () => {
  const item = `<title>We’re investigating – café</title><description>Zürich é</description>`

  it.effect("reads a windows-1252 feed by its XML declaration", () =>
    Effect.gen(function*() {
      const body = cp1252(rssItem(item, `<?xml version="1.0" encoding="windows-1252"?>`))
      assert.strictEqual(body[body.indexOf(0x92)], 0x92)
      const doc = yield* feed("rss", fetched(url, body, { contentType: "application/rss+xml" }))
      assert.deepStrictEqual([doc.items[0]!.title, doc.items[0]!.summary], ["We’re investigating – café", "Zürich é"])
    }))

  it.effect("reads an ISO-8859-1 declaration as windows-1252, as browsers do (0x92 is ’)", () =>
    Effect.gen(function*() {
      const doc = yield* feed("rss", fetched(url, cp1252(rssItem(item, `<?xml version='1.0' encoding='ISO-8859-1'?>`)), { contentType: "text/xml" }))
      assert.strictEqual(doc.items[0]!.title, "We’re investigating – café")
    }))

  it.effect("reads the Content-Type charset, which wins over the declaration (RFC 7303)", () =>
    Effect.gen(function*() {
      const body = cp1252(rssItem(item, `<?xml version="1.0" encoding="UTF-8"?>`))
      const doc = yield* feed("rss", fetched(url, body, { contentType: "application/rss+xml; charset=\"windows-1252\"" }))
      assert.strictEqual(doc.items[0]!.title, "We’re investigating – café")
    }))

  it.effect("reads UTF-8 when nothing is declared, and an unknown charset as UTF-8", () =>
    Effect.gen(function*() {
      const body = new TextEncoder().encode(rssItem(item, ""))
      for (const contentType of ["application/rss+xml", "application/rss+xml; charset=no-such-charset"]) {
        const doc = yield* feed("rss", fetched(url, body, { contentType }))
        assert.strictEqual(doc.items[0]!.title, "We’re investigating – café")
      }
    }))
})
