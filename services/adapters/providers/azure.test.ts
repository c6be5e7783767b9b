import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { fetched, fixture, simulatedAll } from "../../../test/support/fetched.ts"
import { parseFeedText } from "../feed.ts"
import { generateSource } from "../../simulator/generate.ts"
import { azureRenderer } from "../../simulator/renderers/azure.ts"
import { azure } from "./azure.ts"

const url = "https://azure.status.microsoft/en-us/status/feed/"
const rssType = { contentType: "application/rss+xml" }
const now = new Date("2026-09-23T16:00:00Z")

const channel = (items: string) =>
  fetched(
    url,
    `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Azure Status</title>` +
      `<link>https://azure.status.microsoft/en-us/status/</link>${items}</channel></rss>`,
    rssType
  )
const item = (guid: string, title: string, description: string, pubDate: string, category = "") =>
  `<item><title>${title}</title><description>${description}</description><pubDate>${pubDate}</pubDate>` +
  `${category ? `<category>${category}</category>` : ""}<guid isPermaLink="false">${guid}</guid></item>`

describe("azure adapter", () => {
  it.effect("reads the shared sample: one issue in North Central US", () =>
    Effect.gen(function*() {
      const snapshot = yield* azure.parse([fixture("azure", "azure-status-feed.xml", url, rssType)], { url }, now)
      assert.deepStrictEqual(snapshot.incidents, [{
        id: "illustrative-guid-0001",
        title: "Azure Databricks - North Central US - Investigating",
        status: "investigating",
        impact: "minor",
        created_at: "2026-09-23T15:30:00.000Z",
        updated_at: "2026-09-23T15:30:00.000Z",
        resolved_at: null,
        update_count: 1,
        components: ["northcentralus"],
        url: "https://azure.status.microsoft/en-us/status/",
        region: "northcentralus"
      }])
      assert.deepStrictEqual(snapshot.components.map((c) => [c.id, c.name, c.status, c.region, c.parent_id]), [
        ["northcentralus", "North Central US", "degraded", "northcentralus", null]
      ])
      assert.strictEqual(snapshot.status, "degraded")
      assert.strictEqual(snapshot.reported_status, null)
      assert.deepStrictEqual(snapshot.regions, [{ region: "northcentralus", status: "degraded" }])
    }))

  it.effect("an empty channel is healthy: one operational Azure component", () =>
    Effect.gen(function*() {
      const snapshot = yield* azure.parse([channel("")], { url }, now)
      assert.deepStrictEqual(snapshot.incidents, [])
      assert.deepStrictEqual(snapshot.components.map((c) => [c.id, c.name, c.status, c.region]), [["azure", "Azure", "operational", null]])
      assert.strictEqual(snapshot.status, "operational")
      assert.strictEqual(snapshot.description, "All Systems Operational")
      assert.deepStrictEqual(snapshot.regions, [])
    }))

  it.effect("finds regions in categories, titles or descriptions; ignores stale items", () =>
    Effect.gen(function*() {
      const feed = channel(
        item("vm", "Virtual Machines - East US 2 - Investigating", "Some customers", "Wed, 23 Sep 2026 15:00:00 Z") +
          item("storage", "Storage - Investigating", "&lt;p&gt;Customers in West Europe may see errors&lt;/p&gt;", "Wed, 23 Sep 2026 14:00:00 Z") +
          item("portal", "Azure Portal - Investigating", "Sign-in may fail", "Wed, 23 Sep 2026 13:00:00 Z") +
          item("old", "Cosmos DB - Japan East - Investigating", "Old", "Fri, 18 Sep 2026 13:00:00 Z", "Japan East")
      )
      const snapshot = yield* azure.parse([feed], { url }, now)
      assert.deepStrictEqual(snapshot.incidents.map((i) => [i.id, i.region, i.components]), [
        ["vm", "eastus2", ["eastus2"]],
        ["storage", "westeurope", ["westeurope"]],
        ["portal", null, ["azure"]]
      ])
      assert.deepStrictEqual(snapshot.components.map((c) => [c.id, c.name, c.status]), [
        ["eastus2", "East US 2", "degraded"],
        ["westeurope", "West Europe", "degraded"],
        ["azure", "Azure", "degraded"]
      ])
      assert.strictEqual(snapshot.status, "degraded")

      // Filtered to one region: its component is listed, other regions' issues don't count, global ones do.
      const filtered = yield* azure.parse([feed], { url, regions: ["northeurope"] }, now)
      assert.deepStrictEqual(filtered.components.map((c) => [c.id, c.status]), [
        ["northeurope", "operational"],
        ["eastus2", "operational"],
        ["westeurope", "operational"],
        ["azure", "degraded"]
      ])
      assert.strictEqual(filtered.status, "degraded")
      assert.deepStrictEqual(filtered.regions, [
        { region: "eastus2", status: "degraded" },
        { region: "northeurope", status: "operational" },
        { region: "westeurope", status: "degraded" }
      ])
    }))

  it.effect("fails clearly on HTTP errors and non-feeds", () =>
    Effect.gen(function*() {
      const status = yield* Effect.flip(azure.parse([fetched(url, "gone", { status: 404 })], { url }, now))
      assert.strictEqual(status.reason, "http_status")
      const html = yield* Effect.flip(azure.parse([fetched(url, "<!DOCTYPE html><html><body></body></html>", rssType)], { url }, now))
      assert.strictEqual(html.reason, "invalid_feed")
    }))

  it("fetches the feed of a status page URL, or the feed URL itself", () => {
    assert.deepStrictEqual(azure.endpoints({ url: "https://azure.status.microsoft/en-us/status" }), [url])
    assert.deepStrictEqual(azure.endpoints({ url }), [url])
    assert.deepStrictEqual(azure.endpoints({ url: "https://status.azure.com/" }), ["https://status.azure.com/en-us/status/feed/"])
  })

  it("detects Azure by parsed hostname and by the feed's channel link", () => {
    assert.isTrue(azure.detect.host(new URL("https://azure.status.microsoft/en-us/status")))
    assert.isTrue(azure.detect.host(new URL("https://azurestatuscdn.azureedge.net/en-us/status/feed/")))
    assert.isFalse(azure.detect.host(new URL("https://status.azure.com.example.org/")))
    assert.isFalse(azure.detect.host(new URL("https://example.org/azure.status.microsoft")))
    const classify = azure.detect.feed
    assert.isTrue(classify(parseFeedText(new TextDecoder().decode(fixture("azure", "azure-status-feed.xml", url).body))))
    assert.isTrue(classify(parseFeedText(`<rss version="2.0"><channel><link>https://status.azure.com/en-us/status/</link></channel></rss>`)))
    assert.isFalse(classify(parseFeedText(
      `<rss version="2.0"><channel><title>Amazon Web Services Service Status</title><link>http://status.aws.amazon.com/</link></channel></rss>`
    )))
  })
})

describe("azure renderer round trip", () => {
  const baseUrl = "http://127.0.0.1:4100/s/azure"
  const model = () => {
    const source = generateSource({ key: "azure-sim", name: "Azure", provider: "azure", baseUrl, regions: ["eastus", "westeurope"], now })
    const leaves = source.components.filter((c) => !c.is_group)
    const broken = leaves.find((c) => c.region === "eastus")!
    broken.status = "critical"
    source.incidents.push(
      {
        id: "sim-resolved",
        title: "Old trouble",
        status: "resolved",
        impact: "minor",
        created_at: new Date("2026-09-22T08:00:00Z"),
        updated_at: new Date("2026-09-22T09:00:00Z"),
        resolved_at: new Date("2026-09-22T09:00:00Z"),
        updates: [],
        components: [leaves[1]!.id],
        region: leaves[1]!.region
      },
      {
        id: "sim-open",
        title: "Connectivity failures",
        status: "identified",
        impact: "critical",
        created_at: new Date("2026-09-23T14:00:00Z"),
        updated_at: new Date("2026-09-23T15:00:00Z"),
        resolved_at: null,
        updates: [{ id: "u1", status: "identified", body: "Mitigation is under way.", created_at: new Date("2026-09-23T15:00:00Z") }],
        components: [broken.id],
        region: "eastus"
      }
    )
    source.maintenances.push({
      id: "sim-maint",
      title: "Planned work",
      status: "scheduled",
      scheduled_for: new Date("2026-09-30T00:00:00Z"),
      scheduled_until: null,
      components: [broken.id],
      created_at: now,
      updated_at: now
    })
    return source
  }

  it.effect("the feed lists the open issue, degraded in its region (the feed carries no severity)", () =>
    Effect.gen(function*() {
      const source = model()
      const snapshot = yield* azure.parse(simulatedAll(azure.endpoints({ url: baseUrl }), azureRenderer, source, now), { url: baseUrl }, now)
      assert.deepStrictEqual(snapshot.incidents.map((i) => [i.id, i.status, i.impact, i.region, i.components, i.created_at]), [
        ["sim-open", "investigating", "minor", "eastus", ["eastus"], "2026-09-23T15:00:00.000Z"]
      ])
      assert.include(snapshot.incidents[0]!.title, "East US - Mitigation in progress")
      assert.deepStrictEqual(snapshot.components.map((c) => [c.id, c.name, c.status, c.parent_id]), [["eastus", "East US", "degraded", null]])
      assert.strictEqual(snapshot.status, "degraded")
      assert.deepStrictEqual(snapshot.regions, [{ region: "eastus", status: "degraded" }])
    }))

  it.effect("a healthy model renders an empty channel; the page links the feed absolutely", () =>
    Effect.gen(function*() {
      const source = generateSource({ key: "azure-sim", name: "Azure", provider: "azure", baseUrl, regions: ["eastus"], now })
      const [document] = simulatedAll(azure.endpoints({ url: baseUrl }), azureRenderer, source, now)
      const doc = parseFeedText(new TextDecoder().decode(document!.body))
      assert.deepStrictEqual(doc.items, [])
      assert.isTrue(azure.detect.feed(doc))
      assert.strictEqual((yield* azure.parse([document!], { url: baseUrl }, now)).status, "operational")
      const page = azureRenderer.page(source, now)
      assert.include(page, `<link rel="alternate" type="application/rss+xml" title="Azure Status" href="${baseUrl}/en-us/status/feed/">`)
      assert.strictEqual(azureRenderer.routes["/en-us/status/feed/"]!(model(), now).body, azureRenderer.routes["/en-us/status/feed/"]!(model(), now).body)
    }))
})
