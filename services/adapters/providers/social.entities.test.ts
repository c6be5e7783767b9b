import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { fetched } from "../../../test/support/fetched.ts"
import { social } from "./social.ts"

const url = "https://mastodon.social/@examplestatus.rss"
const now = new Date("2026-03-16T12:00:00.000Z")

/** A Mastodon feed of one post whose HTML is `html`, escaped for XML as Mastodon does. */
const post = (html: string) =>
  fetched(
    url,
    `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Acme</title><link>https://mastodon.social/@acme</link>` +
      `<item><guid>https://mastodon.social/@acme/1</guid><pubDate>${new Date(now.getTime() - 3_600_000).toUTCString()}</pubDate>` +
      `<description>${html.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")}</description></item></channel></rss>`,
    { contentType: "application/rss+xml; charset=utf-8" }
  )

describe("social posts' text", () => {
  it.effect("is the post's HTML as text, its entities decoded once", () =>
    Effect.gen(function*() {
      // The author wrote `<select>` and `&lt;`: Mastodon's HTML escapes both once.
      const snapshot = yield* social.parse([post("<p>Outage: the &lt;select&gt; menu shows &amp;lt; &amp; it&#39;s down</p>")], { url }, now)
      assert.strictEqual(snapshot.incidents[0]!.title, "Outage: the <select> menu shows &lt; & it's down")
    }))
})
