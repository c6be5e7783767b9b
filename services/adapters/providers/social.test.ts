import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { fetched, fixture, fixtureBytes, joinUrl, simulatedAll } from "../../../test/support/fetched.ts"
import { generateSource } from "../../simulator/generate.ts"
import { socialRenderer } from "../../simulator/renderers/social.ts"
import type { SourceConfig } from "../Adapter.ts"
import { parseFeedText } from "../feed.ts"
import { social } from "./social.ts"

const mastodonUrl = "https://mastodon.social/@examplestatus.rss"
const blueskyUrl = "https://bsky.app/profile/status.example.com/rss"
const now = new Date("2026-03-16T12:00:00.000Z")

const parse = (documents: ReadonlyArray<ReturnType<typeof fetched>>, source: SourceConfig = { url: mastodonUrl }, at = now) =>
  social.parse(documents, source, at)
const sampleText = (file: string): string => new TextDecoder().decode(fixtureBytes("social", file))

/** A hand-made Mastodon account feed: title-less items with HTML descriptions, newest first. */
const mastodon = (posts: ReadonlyArray<{ text: string; hoursAgo: number }>) =>
  fetched(
    mastodonUrl,
    `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Acme (@acme@mastodon.social)</title>` +
      `<link>https://mastodon.social/@acme</link>` +
      posts.map((p, n) =>
        `<item><guid isPermaLink="true">https://mastodon.social/@acme/${1000 + n}</guid><link>https://mastodon.social/@acme/${1000 + n}</link>` +
        `<pubDate>${new Date(now.getTime() - p.hoursAgo * 3_600_000).toUTCString()}</pubDate>` +
        `<description>&lt;p&gt;${p.text}&lt;/p&gt;</description></item>`
      ).join("") +
      `</channel></rss>`,
    { contentType: "application/rss+xml; charset=utf-8" }
  )

describe("social endpoints", () => {
  it("fetches the account feed itself", () => {
    assert.deepStrictEqual(social.endpoints({ url: blueskyUrl }), [blueskyUrl])
  })
})

describe("social parse: samples", () => {
  it.effect("reads a Mastodon account feed: an open outage, a resolved API incident, an expired signal, chatter ignored", () =>
    Effect.gen(function*() {
      const snapshot = yield* parse([fixture("social", "mastodon-status.rss", mastodonUrl, { contentType: "application/rss+xml" })])
      assert.strictEqual(snapshot.provider, "social")
      assert.strictEqual(snapshot.incidents.length, 2)
      const [open, resolved] = snapshot.incidents
      assert.strictEqual(open!.id, "https://mastodon.social/@examplestatus/116237154086731266")
      assert.isTrue(open!.title.startsWith("We're investigating an outage affecting logins on web and mobile."), open!.title)
      assert.isAtMost(open!.title.length, 120)
      assert.deepStrictEqual(
        [open!.status, open!.impact, open!.resolved_at, open!.update_count, open!.created_at],
        ["investigating", "critical", null, 1, "2026-03-16T11:30:12.000Z"]
      )
      assert.strictEqual(open!.url, "https://mastodon.social/@examplestatus/116237154086731266")
      // Investigating → update → resolved, one signal.
      assert.deepStrictEqual(
        [resolved!.title, resolved!.status, resolved!.impact, resolved!.update_count, resolved!.resolved_at],
        ["We are investigating elevated errors on the API. Some requests may fail.", "resolved", "minor", 3, "2026-03-12T15:10:40.000Z"]
      )
      // The latency post of Mar 14 was never resolved and has expired.
      assert.isFalse(snapshot.incidents.some((i) => i.title.includes("latency")))
      assert.deepStrictEqual([snapshot.status, snapshot.reported_status], ["down", null])
      assert.deepStrictEqual(snapshot.components, [])
    }))

  it.effect("reads a Bluesky profile feed: one open issue; a resolution with nothing open is ignored", () =>
    Effect.gen(function*() {
      const snapshot = yield* parse(
        [fixture("social", "bluesky-status.rss", blueskyUrl, { contentType: "application/rss+xml" })],
        { url: blueskyUrl }
      )
      assert.deepStrictEqual(snapshot.incidents.map((i) => [i.id, i.status, i.impact, i.created_at, i.url]), [[
        "at://did:plc:x4tmv6rcq2ouhz3gwjkbl5fe/app.bsky.feed.post/3mfz7ylqbbk2x",
        "investigating",
        "minor",
        "2026-03-16T10:41:00.000Z",
        "https://bsky.app/profile/status.example.com/post/3mfz7ylqbbk2x"
      ]])
      assert.strictEqual(snapshot.status, "degraded")
      assert.strictEqual(
        snapshot.description,
        "Partial outage: Some users are experiencing issues loading feeds. We are investigating and will share updates here."
      )
    }))
})

describe("social parse: signals", () => {
  it.effect("a signal unresolved for more than 24 hours expires", () =>
    Effect.gen(function*() {
      const fresh = yield* parse([mastodon([{ text: "Investigating degraded search.", hoursAgo: 23 }])])
      assert.deepStrictEqual(fresh.incidents.map((i) => i.status), ["investigating"])
      const expired = yield* parse([mastodon([{ text: "Investigating degraded search.", hoursAgo: 25 }])])
      assert.deepStrictEqual(expired.incidents, [])
      assert.strictEqual(expired.status, "operational")
      assert.strictEqual(expired.description, "All Systems Operational")
    }))

  it.effect("\"back up\" and \"fixed\" close a signal; \"down\" makes it critical", () =>
    Effect.gen(function*() {
      const snapshot = yield* parse([mastodon([
        { text: "Everything is back up. Sorry for the trouble!", hoursAgo: 1 },
        { text: "Our API is down for some customers.", hoursAgo: 2 },
        { text: "Fixed: the checkout issues are behind us.", hoursAgo: 5 },
        { text: "We see checkout issues.", hoursAgo: 6 }
      ])])
      assert.deepStrictEqual(snapshot.incidents.map((i) => [i.impact, i.status, i.update_count]), [
        ["critical", "resolved", 2],
        ["minor", "resolved", 2]
      ])
      assert.strictEqual(snapshot.status, "operational")
    }))

  it.effect("a maintenance announcement is a maintenance signal; long posts make 120-character titles", () =>
    Effect.gen(function*() {
      const long = `Planned maintenance tonight from 22:00 UTC: ${"the database cluster moves to new hardware and ".repeat(4)}`
      const snapshot = yield* parse([mastodon([{ text: long, hoursAgo: 1 }])])
      const incident = snapshot.incidents[0]!
      assert.strictEqual(incident.impact, "maintenance")
      assert.strictEqual(incident.title, long.slice(0, 120).trim())
      assert.strictEqual(snapshot.status, "maintenance")
    }))

  it.effect("options.keywords replaces the default keywords", () =>
    Effect.gen(function*() {
      const posts = [{ text: "Heads up: the mobile app crashes on launch for some users.", hoursAgo: 1 }]
      const defaults = yield* parse([mastodon(posts)])
      assert.deepStrictEqual(defaults.incidents, [])
      const custom = yield* parse([mastodon(posts)], { url: mastodonUrl, options: { keywords: "crash, freeze" } })
      assert.deepStrictEqual(custom.incidents.map((i) => [i.status, i.impact]), [["investigating", "minor"]])
      // Replaced, not added to: "outage" no longer opens a signal.
      const outage = yield* parse([mastodon([{ text: "Major outage of the API.", hoursAgo: 1 }])], {
        url: mastodonUrl,
        options: { keywords: "crash" }
      })
      assert.deepStrictEqual(outage.incidents, [])
    }))
})

describe("social parse: failures", () => {
  it.effect("a non-2xx feed is http_status, a broken one invalid_feed", () =>
    Effect.gen(function*() {
      const gone = yield* Effect.flip(parse([fetched(mastodonUrl, "Not Found", { status: 404, contentType: "text/plain" })]))
      assert.strictEqual(gone.reason, "http_status")
      const truncated = sampleText("mastodon-status.rss").slice(0, 1200)
      const broken = yield* Effect.flip(parse([fetched(mastodonUrl, truncated, { contentType: "application/rss+xml" })]))
      assert.strictEqual(broken.reason, "invalid_feed")
    }))
})

const host = (u: string): boolean => social.detect.host(new URL(u))

describe("social detect", () => {
  it("knows Bluesky profile feeds by parsed host and path", () => {
    assert.isTrue(host(blueskyUrl))
    assert.isTrue(host("https://bsky.app/profile/did:plc:x4tmv6rcq2ouhz3gwjkbl5fe/rss"))
    assert.isFalse(host("https://bsky.app/profile/status.example.com"))
    assert.isFalse(host("https://bsky.app.evil.example/profile/x/rss"))
    assert.isFalse(host("https://evil.example/bsky.app/profile/x/rss"))
  })

  it("classifies feeds whose channel links to a Mastodon or Bluesky profile, not status-page feeds", () => {
    assert.isTrue(social.detect.feed(parseFeedText(sampleText("mastodon-status.rss"))))
    assert.isTrue(social.detect.feed(parseFeedText(sampleText("bluesky-status.rss"))))
    const statusFeed = new TextDecoder().decode(fixtureBytes("rss", "betterstack-feed.rss"))
    assert.isFalse(social.detect.feed(parseFeedText(statusFeed)))
    assert.isFalse(social.detect.feed(parseFeedText(new TextDecoder().decode(fixtureBytes("rss", "statuspage-history.atom")))))
  })
})

describe("social round trip through the simulator", () => {
  it.effect("incident updates rendered as Mastodon posts read back as signals", () =>
    Effect.gen(function*() {
      const source = generateSource({ key: "chatco", name: "ChatCo", provider: "social", baseUrl: "http://127.0.0.1:4100/s/chatco", now })
      const at = (minutes: number) => new Date(now.getTime() - minutes * 60_000)
      source.incidents.push(
        {
          id: "inc-old",
          title: "Message delivery delays",
          status: "resolved",
          impact: "minor",
          created_at: at(300),
          updated_at: at(200),
          resolved_at: at(200),
          updates: [
            { id: "u1", status: "investigating", body: "We are looking into it.", created_at: at(300) },
            { id: "u2", status: "resolved", body: "Messages are flowing normally.", created_at: at(200) }
          ],
          components: [],
          region: null
        },
        {
          id: "inc-open",
          title: "Login failures",
          status: "identified",
          impact: "critical",
          created_at: at(40),
          updated_at: at(15),
          resolved_at: null,
          updates: [
            { id: "u3", status: "investigating", body: "Users cannot sign in.", created_at: at(40) },
            { id: "u4", status: "identified", body: "A certificate expired; renewing it.", created_at: at(15) }
          ],
          components: [source.components.find((c) => !c.is_group)!.id],
          region: null
        }
      )
      const url = joinUrl(source.baseUrl, "/@status.rss")
      const documents = simulatedAll(social.endpoints({ url }), socialRenderer, source, now)
      assert.strictEqual(documents[0]!.status, 200)
      const snapshot = yield* social.parse(documents, { url }, now)
      assert.deepStrictEqual(snapshot.incidents.map((i) => [i.status, i.impact, i.update_count]), [
        ["investigating", "critical", 2],
        ["resolved", "minor", 2]
      ])
      const open = snapshot.incidents[0]!
      assert.include(open.title, "Login failures")
      assert.strictEqual(open.created_at, at(40).toISOString())
      assert.match(open.url ?? "", /^https:\/\/mastodon\.social\/@chatcostatus\/\d+$/)
      assert.strictEqual(snapshot.incidents[1]!.resolved_at, at(200).toISOString())
      assert.strictEqual(snapshot.status, "down")

      const feedDoc = parseFeedText(String(socialRenderer.routes["/@status.rss"]!(source, now).body))
      assert.strictEqual(feedDoc.link, "https://mastodon.social/@chatcostatus")
      assert.isTrue(feedDoc.items.every((i) => i.title === ""))
      assert.isTrue(social.detect.feed(feedDoc))
      assert.include(
        socialRenderer.page(source, now),
        `<link rel="alternate" type="application/rss+xml" href="http://127.0.0.1:4100/s/chatco/@status.rss">`
      )
    }))
})
