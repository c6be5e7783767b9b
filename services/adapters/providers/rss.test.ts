import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { fetched, fixture, joinUrl, simulatedAll } from "../../../test/support/fetched.ts"
import { generateSource } from "../../simulator/generate.ts"
import type { SimSource } from "../../simulator/Model.ts"
import { rssRenderer } from "../../simulator/renderers/rss.ts"
import { parseFeedText } from "../feed.ts"
import { rss } from "./rss.ts"

const feedUrl = "https://status.example.com/history.atom"
const now = new Date("2026-03-16T12:00:00.000Z")

const parse = (documents: ReadonlyArray<ReturnType<typeof fetched>>, at = now) => rss.parse(documents, { url: feedUrl }, at)
const byId = <A extends { readonly id: string }>(items: ReadonlyArray<A>, id: string): A => {
  const item = items.find((i) => i.id === id)
  assert.isDefined(item, `no item ${id}`)
  return item!
}

/** A hand-made RSS 2.0 document; items are newest first, as feeds list them. */
const rssDoc = (items: ReadonlyArray<{ title: string; date?: string; link?: string; description?: string; categories?: Array<string> }>) =>
  fetched(
    feedUrl,
    `<?xml version="1.0"?><rss version="2.0"><channel><title>Acme Status</title><link>https://status.example.com</link>` +
      items.map((i, n) =>
        `<item><title>${i.title}</title><guid>item-${n}</guid>` +
        (i.link ? `<link>${i.link}</link>` : "") +
        (i.date ? `<pubDate>${i.date}</pubDate>` : "") +
        (i.description ? `<description>${i.description}</description>` : "") +
        (i.categories ?? []).map((c) => `<category>${c}</category>`).join("") +
        `</item>`
      ).join("") +
      `</channel></rss>`,
    { contentType: "application/rss+xml" }
  )

const hoursAgo = (h: number): string => new Date(now.getTime() - h * 3_600_000).toUTCString()
/** Statuspage's maintenance line, as escaped HTML in an RSS description. */
const event = (window: string) => `&lt;p&gt;&lt;strong&gt;THIS IS A SCHEDULED EVENT ${window}&lt;/strong&gt;&lt;/p&gt;`

describe("rss endpoints", () => {
  it("fetches the feed URL itself", () => {
    assert.deepStrictEqual(rss.endpoints({ url: feedUrl }), [feedUrl])
  })
})

describe("rss parse: samples", () => {
  it.effect("reads a Statuspage history.atom: open, resolved, stale and too-old incidents, a scheduled maintenance", () =>
    Effect.gen(function*() {
      const snapshot = yield* parse([fixture("rss", "statuspage-history.atom", feedUrl, { contentType: "application/atom+xml" })])
      assert.strictEqual(snapshot.provider, "rss")
      assert.deepStrictEqual(snapshot.components, [])
      // Newest first; "Login outage" resolved in January is older than 30 days and dropped.
      assert.deepStrictEqual(snapshot.incidents.map((i) => i.id.replace(/.*Incident\//, "")), ["28001", "27990", "27950", "27801"])

      const open = byId(snapshot.incidents, "tag:status.example.com,2005:Incident/28001")
      assert.deepStrictEqual(
        [open.title, open.status, open.impact, open.resolved_at, open.update_count],
        ["Elevated error rates on the API", "identified", "minor", null, 3]
      )
      assert.strictEqual(open.created_at, "2026-03-16T10:12:09.000Z")
      assert.strictEqual(open.updated_at, "2026-03-16T11:02:41.000Z")
      assert.strictEqual(open.url, "https://status.example.com/incidents/k7d0xq1bz2mc")

      // GitHub-style: the title says "investigating", the newest update says Resolved.
      const webhooks = byId(snapshot.incidents, "tag:status.example.com,2005:Incident/27990")
      assert.deepStrictEqual([webhooks.status, webhooks.resolved_at], ["resolved", "2026-03-12T15:20:12.000Z"])

      const upgrade = byId(snapshot.incidents, "tag:status.example.com,2005:Incident/27950")
      assert.deepStrictEqual([upgrade.status, upgrade.impact], ["resolved", "maintenance"])

      // Left at "Monitoring" two weeks ago: history, not an ongoing incident.
      const stale = byId(snapshot.incidents, "tag:status.example.com,2005:Incident/27801")
      assert.deepStrictEqual([stale.status, stale.resolved_at], ["resolved", "2026-03-02T09:10:27.000Z"])

      assert.deepStrictEqual(snapshot.maintenances, [{
        id: "tag:status.example.com,2005:Incident/28002",
        title: "Primary database maintenance",
        status: "scheduled",
        scheduled_for: "2026-03-18T02:00:00.000Z",
        scheduled_until: "2026-03-18T04:00:00.000Z",
        components: [],
        url: "https://status.example.com/incidents/p3c8v0n6hw1t"
      }])
      assert.strictEqual(snapshot.status, "degraded")
      assert.strictEqual(snapshot.reported_status, null)
      assert.strictEqual(snapshot.description, "Partial outage: Elevated error rates on the API")
      assert.deepStrictEqual(snapshot.warnings, [])
    }))

  it.effect("reads the Better Stack RSS sample: one resolved incident, nothing open", () =>
    Effect.gen(function*() {
      const snapshot = yield* rss.parse(
        [fixture("rss", "betterstack-feed.rss", "https://status.example.com/feed.rss", { contentType: "application/rss+xml" })],
        { url: "https://status.example.com/feed.rss" },
        new Date("2024-01-15T12:00:00.000Z")
      )
      assert.strictEqual(snapshot.incidents.length, 1)
      const incident = snapshot.incidents[0]!
      assert.deepStrictEqual(
        [incident.id, incident.title, incident.status, incident.resolved_at, incident.url],
        [
          "https://status.example.com/incidents/123456",
          "Database Connection Issues",
          "resolved",
          "2024-01-15T10:30:00.000Z",
          "https://status.example.com/incidents/123456"
        ]
      )
      assert.strictEqual(snapshot.status, "operational")
      assert.strictEqual(snapshot.description, "All Systems Operational")
    }))
})

describe("rss parse: grouping and state", () => {
  it.effect("groups per-update items by their title without status prefixes; the newest gives the state", () =>
    Effect.gen(function*() {
      const snapshot = yield* parse([rssDoc([
        { title: "Resolved - Search is slow", date: hoursAgo(1) },
        { title: "Update: Search is slow", date: hoursAgo(2), description: "We are monitoring the fix." },
        { title: "[Investigating] Search is slow", date: hoursAgo(3) }
      ])])
      assert.strictEqual(snapshot.incidents.length, 1)
      const incident = snapshot.incidents[0]!
      assert.deepStrictEqual(
        [incident.id, incident.title, incident.status, incident.update_count, incident.impact],
        ["item-2", "Search is slow", "resolved", 3, "minor"]
      )
      assert.strictEqual(incident.created_at, new Date(hoursAgo(3)).toISOString())
      assert.strictEqual(incident.resolved_at, new Date(hoursAgo(1)).toISOString())
      assert.strictEqual(snapshot.status, "operational")
    }))

  it.effect("an update trail in the summary outranks a status prefix the title kept from the first post", () =>
    Effect.gen(function*() {
      const snapshot = yield* parse([rssDoc([{
        title: "Investigating - Elevated API errors",
        date: hoursAgo(1),
        description: "&lt;strong&gt;Resolved&lt;/strong&gt; - All good. &lt;strong&gt;Investigating&lt;/strong&gt; - Looking into it."
      }])])
      assert.deepStrictEqual(snapshot.incidents.map((i) => [i.title, i.status, i.update_count]), [["Elevated API errors", "resolved", 2]])
    }))

  it.effect("the same title after a resolution is a new incident", () =>
    Effect.gen(function*() {
      const snapshot = yield* parse([rssDoc([
        { title: "[Investigating] Search is slow", date: hoursAgo(1) },
        { title: "[Resolved] Search is slow", date: hoursAgo(30) },
        { title: "[Investigating] Search is slow", date: hoursAgo(32) }
      ])])
      assert.deepStrictEqual(snapshot.incidents.map((i) => [i.status, i.update_count]), [["investigating", 1], ["resolved", 2]])
      assert.strictEqual(snapshot.status, "degraded")
    }))

  it.effect("groups items with different titles that link to the same incident page", () =>
    Effect.gen(function*() {
      const link = "https://status.example.com/incidents/42"
      const snapshot = yield* parse([rssDoc([
        { title: "API errors have been fixed", date: hoursAgo(1), link },
        { title: "Investigating elevated API errors", date: hoursAgo(2), link }
      ])])
      assert.strictEqual(snapshot.incidents.length, 1)
      assert.deepStrictEqual([snapshot.incidents[0]!.status, snapshot.incidents[0]!.update_count], ["resolved", 2])
    }))

  it.effect("does not merge items that all link to the page itself", () =>
    Effect.gen(function*() {
      const link = "https://status.example.com/"
      const snapshot = yield* parse([rssDoc([
        { title: "Login issues resolved", date: hoursAgo(1), link },
        { title: "Investigating slow builds", date: hoursAgo(2), link }
      ])])
      assert.deepStrictEqual(snapshot.incidents.map((i) => i.status), ["resolved", "investigating"])
    }))

  it.effect("reads impact from words: outage is critical, a partial outage is minor", () =>
    Effect.gen(function*() {
      const outage = yield* parse([rssDoc([{ title: "[Investigating] Checkout outage", date: hoursAgo(1) }])])
      assert.strictEqual(outage.incidents[0]!.impact, "critical")
      assert.strictEqual(outage.status, "down")
      assert.strictEqual(outage.description, "Major outage: Checkout outage")
      const partial = yield* parse([rssDoc([{ title: "[Identified] Partial outage of checkout", date: hoursAgo(1) }])])
      assert.deepStrictEqual([partial.incidents[0]!.impact, partial.incidents[0]!.status], ["minor", "identified"])
      assert.strictEqual(partial.status, "degraded")
    }))

  it.effect("makes flat components of item categories, affected ones taking their open incident's impact", () =>
    Effect.gen(function*() {
      const snapshot = yield* parse([rssDoc([
        { title: "[Investigating] API unavailable", date: hoursAgo(1), categories: ["API"] },
        { title: "[Monitoring] Delays on Webhooks", date: hoursAgo(2), categories: ["Webhooks"] },
        { title: "[Resolved] Dashboard errors", date: hoursAgo(50), categories: ["Dashboard"] }
      ])])
      assert.deepStrictEqual(
        snapshot.components.map((c) => [c.id, c.name, c.status, c.parent_id, c.is_group, c.position]),
        [["API", "API", "critical", null, false, 0], ["Webhooks", "Webhooks", "degraded", null, false, 1], [
          "Dashboard",
          "Dashboard",
          "operational",
          null,
          false,
          2
        ]]
      )
      assert.deepStrictEqual(snapshot.incidents.map((i) => i.components), [["API"], ["Webhooks"], ["Dashboard"]])
      assert.strictEqual(snapshot.status, "down")
    }))

  it.effect("a maintenance in its window is in progress; one without a window is a maintenance incident", () =>
    Effect.gen(function*() {
      const running = yield* parse([rssDoc([{
        title: "[In progress] Database upgrade",
        date: hoursAgo(1),
        description: `Window: ${new Date(now.getTime() - 3_600_000).toISOString()} to ${new Date(now.getTime() + 3_600_000).toISOString()}`
      }])])
      assert.deepStrictEqual(running.maintenances.map((m) => [m.status, m.scheduled_until]), [["in_progress", "2026-03-16T13:00:00.000Z"]])
      assert.deepStrictEqual(running.incidents, [])
      assert.strictEqual(running.status, "maintenance")

      const unbounded = yield* parse([rssDoc([{ title: "Scheduled maintenance of the billing system", date: hoursAgo(1) }])])
      assert.deepStrictEqual(unbounded.maintenances, [])
      assert.deepStrictEqual(unbounded.incidents.map((i) => [i.impact, i.resolved_at]), [["maintenance", null]])
      assert.strictEqual(unbounded.status, "maintenance")
    }))

  it.effect("reads Statuspage windows that cross midnight or the new year (the text has no year)", () =>
    Effect.gen(function*() {
      const newYearsEve = new Date("2025-12-31T00:00:00.000Z")
      const snapshot = yield* rss.parse([rssDoc([
        { title: "[Scheduled] Edge upgrade", date: "Tue, 30 Dec 2025 10:00:00 +0000", description: event("Jan 2, 01:00 - 03:00 UTC") },
        {
          title: "[Scheduled] Core switch swap",
          date: "Tue, 30 Dec 2025 09:00:00 +0000",
          description: event("Dec &lt;var data-var='date'&gt;31&lt;/var&gt;, &lt;var data-var='time'&gt;22:00&lt;/var&gt; - 02:00 UTC")
        },
        { title: "[Scheduled] Storage move", date: "Tue, 30 Dec 2025 08:00:00 +0000", description: event("Dec 31, 20:00 UTC - Jan 1, 04:00 UTC") }
      ])], { url: feedUrl }, newYearsEve)
      assert.deepStrictEqual(snapshot.maintenances.map((m) => [m.title, m.status, m.scheduled_for, m.scheduled_until]), [
        ["Storage move", "scheduled", "2025-12-31T20:00:00.000Z", "2026-01-01T04:00:00.000Z"],
        ["Core switch swap", "scheduled", "2025-12-31T22:00:00.000Z", "2026-01-01T02:00:00.000Z"],
        ["Edge upgrade", "scheduled", "2026-01-02T01:00:00.000Z", "2026-01-02T03:00:00.000Z"]
      ])
      assert.strictEqual(snapshot.status, "operational")
    }))

  it.effect("ignores undated items with a warning, and an empty feed is operational", () =>
    Effect.gen(function*() {
      const undated = yield* parse([rssDoc([{ title: "[Investigating] Something" }])])
      assert.deepStrictEqual(undated.incidents, [])
      assert.deepStrictEqual(undated.warnings, ["1 feed item(s) without a date ignored"])
      const empty = yield* parse([rssDoc([])])
      assert.deepStrictEqual([empty.status, empty.incidents.length, empty.description], ["operational", 0, "All Systems Operational"])
    }))
})

describe("rss parse: failures", () => {
  it.effect("a non-2xx feed is http_status", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(parse([fetched(feedUrl, "Bad Gateway", { status: 502, contentType: "text/plain" })]))
      assert.strictEqual(error.reason, "http_status")
      assert.include(error.message, "502")
    }))

  it.effect("a truncated feed, an HTML page or JSON at the feed URL is invalid_feed", () =>
    Effect.gen(function*() {
      const truncated = new TextDecoder().decode(fixture("rss", "statuspage-history.atom", feedUrl).body).slice(0, 900)
      for (const body of [truncated, "<!DOCTYPE html><html><body>Status</body></html>", `{"status":"ok"}`]) {
        const error = yield* Effect.flip(parse([fetched(feedUrl, body, { contentType: "text/html" })]))
        assert.strictEqual(error.reason, "invalid_feed", body.slice(0, 20))
        assert.strictEqual(error.provider, "rss")
      }
    }))

  it.effect("nothing fetched is invalid_shape", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(parse([]))
      assert.strictEqual(error.reason, "invalid_shape")
    }))
})

/** A model with a critical leaf under an open critical incident, a resolved incident and a running maintenance. */
const troubled = (): { source: SimSource; leaf: string; other: string } => {
  const source = generateSource({ key: "feedco", name: "FeedCo", provider: "rss", baseUrl: "http://127.0.0.1:4100/s/feedco", now })
  const [leaf, other] = source.components.filter((c) => !c.is_group)
  leaf!.status = "critical"
  other!.status = "maintenance"
  const at = (minutes: number) => new Date(now.getTime() - minutes * 60_000)
  source.incidents.push(
    {
      id: "inc-old",
      title: "Slow dashboard",
      status: "resolved",
      impact: "minor",
      created_at: at(300),
      updated_at: at(240),
      resolved_at: at(240),
      updates: [
        { id: "u-old-1", status: "investigating", body: "We are looking into slow page loads.", created_at: at(300) },
        { id: "u-old-2", status: "resolved", body: "Page loads are back to normal.", created_at: at(240) }
      ],
      components: [],
      region: null
    },
    {
      id: "inc-open",
      title: "API failures",
      status: "identified",
      impact: "critical",
      created_at: at(30),
      updated_at: at(10),
      resolved_at: null,
      updates: [
        { id: "u-open-1", status: "investigating", body: "We are investigating failing requests.", created_at: at(30) },
        { id: "u-open-2", status: "identified", body: "A bad deploy was identified; rolling back.", created_at: at(10) }
      ],
      components: [leaf!.id],
      region: null
    }
  )
  source.maintenances.push({
    id: "mnt-1",
    title: "Storage migration",
    status: "in_progress",
    scheduled_for: at(60),
    scheduled_until: new Date(now.getTime() + 60 * 60_000),
    components: [other!.id],
    created_at: at(24 * 60),
    updated_at: at(60)
  })
  return { source, leaf: leaf!.name, other: other!.name }
}

describe("rss round trip through the simulator", () => {
  it.effect("the Atom and RSS renderings both read back as the model", () =>
    Effect.gen(function*() {
      const { leaf, other, source } = troubled()
      const snapshots = []
      for (const path of ["/history.atom", "/feed.rss"]) {
        const url = joinUrl(source.baseUrl, path)
        const documents = simulatedAll(rss.endpoints({ url }), rssRenderer, source, now)
        assert.strictEqual(documents[0]!.status, 200)
        snapshots.push(yield* rss.parse(documents, { url }, now))
      }
      const [atom, rssSnapshot] = snapshots
      assert.deepStrictEqual(rssSnapshot, atom)

      const snapshot = atom!
      assert.deepStrictEqual(snapshot.incidents.map((i) => [i.title, i.status, i.impact, i.update_count]), [
        ["API failures", "identified", "critical", 2],
        ["Slow dashboard", "resolved", "minor", 2]
      ])
      const open = snapshot.incidents[0]!
      assert.deepStrictEqual([open.resolved_at, open.components], [null, [leaf]])
      assert.strictEqual(open.created_at, new Date(now.getTime() - 30 * 60_000).toISOString())
      assert.strictEqual(open.url, "http://127.0.0.1:4100/s/feedco/incidents/inc-open")
      assert.deepStrictEqual(snapshot.maintenances.map((m) => [m.title, m.status, m.components]), [["Storage migration", "in_progress", [other]]])
      assert.deepStrictEqual(
        snapshot.components.map((c) => [c.name, c.status]),
        [[leaf, "critical"], [other, "maintenance"]]
      )
      assert.strictEqual(snapshot.status, "down")

      // Resolving the incident in the model clears it from the state.
      const incident = source.incidents[1]!
      incident.status = "resolved"
      incident.resolved_at = new Date(now.getTime() - 60_000)
      incident.updates.push({ id: "u-open-3", status: "resolved", body: "Requests succeed again.", created_at: incident.resolved_at })
      const url = joinUrl(source.baseUrl, "/history.atom")
      const after = yield* rss.parse(simulatedAll([url], rssRenderer, source, now), { url }, now)
      assert.deepStrictEqual(after.incidents.map((i) => i.status), ["resolved", "resolved"])
      assert.strictEqual(after.status, "maintenance")
    }))

  it("the rendered page links its Atom feed, and the feed classifier accepts any feed", () => {
    const { source } = troubled()
    assert.include(
      rssRenderer.page(source, now),
      `<link rel="alternate" type="application/atom+xml" title="FeedCo Status History" href="http://127.0.0.1:4100/s/feedco/history.atom">`
    )
    const atom = rssRenderer.routes["/history.atom"]!(source, now)
    assert.isTrue(rss.detect.feed(parseFeedText(String(atom.body))))
  })
})
