import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { fetched, fixture, fixtureBytes, simulatedAll } from "../../../test/support/fetched.ts"
import { parseFeedText } from "../feed.ts"
import { awsRegions } from "../../catalog/Synthetic.ts"
import { generateSource } from "../../simulator/generate.ts"
import type { SimSource } from "../../simulator/Model.ts"
import { awsRenderer, awsServiceId } from "../../simulator/renderers/aws.ts"
import { aws, parseAwsCurrentEvents } from "./aws.ts"

const feedUrl = "https://status.aws.amazon.com/rss/all.rss"
const eventsUrl = "https://health.aws.amazon.com/public/currentevents"
const rssType = { contentType: "application/rss+xml" }

const sampleFeed = () => fixture("aws", "aws-health-all.rss", feedUrl, rssType)
const sampleText = () => new TextDecoder().decode(fixtureBytes("aws", "aws-currentevents.json"))

/** Text as UTF-16LE bytes, with or without the FF FE byte-order mark. */
const utf16 = (text: string, bom: boolean) => {
  const bytes = Buffer.from(text, "utf16le")
  return new Uint8Array(bom ? Buffer.concat([Buffer.from([0xff, 0xfe]), bytes]) : bytes)
}

/** An RSS item as AWS writes it. */
const item = (service: string, at: string, title: string) => {
  const seconds = Date.parse(at) / 1000
  return `<item><title><![CDATA[${title}]]></title><link>http://status.aws.amazon.com/</link>` +
    `<pubDate>${new Date(at).toUTCString()}</pubDate>` +
    `<guid isPermaLink="false">http://status.aws.amazon.com/#${service}_${seconds}</guid>` +
    `<description><![CDATA[details]]></description></item>`
}
const rss = (...items: Array<string>) =>
  fetched(
    feedUrl,
    `<?xml version="1.0"?><rss version="2.0"><channel><title>Amazon Web Services Service Status</title>` +
      `<link>http://status.aws.amazon.com/</link>${items.join("")}</channel></rss>`,
    rssType
  )

describe("aws adapter, RSS", () => {
  it.effect("reads the shared sample: a resolved RDS event; items older than 3 days are ignored", () =>
    Effect.gen(function*() {
      const snapshot = yield* aws.parse([sampleFeed()], { url: feedUrl }, new Date("2023-02-11T00:00:00Z"))
      assert.deepStrictEqual(snapshot.incidents, [{
        id: "rds-us-east-1_1676072880",
        title: "Connectivity issues affecting some instances",
        status: "resolved",
        impact: "minor",
        created_at: "2023-02-10T23:48:00.000Z",
        updated_at: "2023-02-10T23:48:00.000Z",
        resolved_at: "2023-02-10T23:48:00.000Z",
        update_count: 1,
        components: ["rds-us-east-1"],
        url: "http://status.aws.amazon.com/",
        region: "us-east-1",
        updates: [{
          id: "1676072880",
          status: "resolved",
          body: "Between 11:18 AM and 2:44 PM PST, some Amazon Aurora PostgreSQL customers experienced issues accessing " +
            "their databases in the US-EAST-1 Region. The issue has been resolved and the service is operating normally.",
          created_at: "2023-02-10T23:48:00.000Z"
        }]
      }])
      assert.deepStrictEqual(snapshot.components.map((c) => [c.id, c.name, c.status, c.region, c.parent_id]), [
        ["rds-us-east-1", "Amazon RDS (us-east-1)", "operational", "us-east-1", null]
      ])
      assert.strictEqual(snapshot.status, "operational")
      assert.strictEqual(snapshot.description, "All Systems Operational")
      assert.deepStrictEqual(snapshot.regions, [{ region: "us-east-1", status: "operational" }])
      assert.deepStrictEqual(snapshot.warnings, [])
    }))

  it.effect("reads the shared sample's informational billing message as an open global degradation", () =>
    Effect.gen(function*() {
      const snapshot = yield* aws.parse([sampleFeed()], { url: feedUrl }, new Date("2023-02-04T00:00:00Z"))
      const billing = snapshot.incidents.find((i) => i.id === "billingconsole_1675376364")!
      assert.deepStrictEqual(
        [billing.status, billing.impact, billing.region, billing.resolved_at, billing.title],
        ["investigating", "minor", null, null, "Increased error rates when accessing Cost Explorer, Budgets, and Cost and Usage Reports"]
      )
      const component = snapshot.components.find((c) => c.id === "billingconsole")!
      assert.deepStrictEqual([component.name, component.status, component.region], ["AWS Billing Console (Global)", "degraded", null])
      assert.strictEqual(snapshot.status, "degraded")
    }))

  it.effect("groups items per service-region into runs; the newest item of a run decides", () =>
    Effect.gen(function*() {
      const feed = rss(
        item("s3-us-east-1", "2026-09-23T11:00:00Z", "Service disruption: Elevated errors"),
        item("ec2-us-east-1", "2026-09-23T10:30:00Z", "Service disruption: [RESOLVED] Instance launches failing"),
        item("ec2-us-east-1", "2026-09-23T10:00:00Z", "Performance issues: Instance launches failing"),
        item("s3-us-east-1", "2026-09-23T09:00:00Z", "Service is operating normally: [RESOLVED] Slow uploads"),
        item("s3-us-east-1", "2026-09-23T08:00:00Z", "Performance issues: Slow uploads"),
        item("lambda", "2026-09-23T07:00:00Z", "Mysterious omen: Something"),
        `<item><title>Not an AWS item</title><guid>urn:x</guid></item>`
      )
      const now = new Date("2026-09-23T12:00:00Z")
      const snapshot = yield* aws.parse([feed], { url: feedUrl }, now)
      assert.deepStrictEqual(snapshot.incidents.map((i) => [i.id, i.title, i.status, i.impact, i.update_count, i.created_at]), [
        ["s3-us-east-1_1790161200", "Elevated errors", "investigating", "critical", 1, "2026-09-23T11:00:00.000Z"],
        ["ec2-us-east-1_1790157600", "Instance launches failing", "investigating", "critical", 2, "2026-09-23T10:00:00.000Z"],
        ["s3-us-east-1_1790150400", "Slow uploads", "resolved", "minor", 2, "2026-09-23T08:00:00.000Z"],
        ["lambda_1790146800", "Something", "investigating", "minor", 1, "2026-09-23T07:00:00.000Z"]
      ])
      const status = Object.fromEntries(snapshot.components.map((c) => [c.name, c.status]))
      assert.deepStrictEqual(status, {
        "Amazon EC2 (us-east-1)": "critical",
        "Amazon S3 (us-east-1)": "critical",
        "AWS Lambda (Global)": "degraded"
      })
      assert.strictEqual(snapshot.status, "down")
      assert.deepStrictEqual(snapshot.regions, [{ region: "us-east-1", status: "down" }])
      assert.deepStrictEqual(snapshot.warnings, [
        'unknown AWS title prefix "Mysterious omen", read as minor',
        'AWS item without a service guid "urn:x", skipped'
      ])

      // Filtered to another region, only the global Lambda event counts.
      const elsewhere = yield* aws.parse([feed], { url: feedUrl, regions: ["eu-west-1"] }, now)
      assert.strictEqual(elsewhere.status, "degraded")
      assert.strictEqual(elsewhere.components.find((c) => c.id === "ec2-us-east-1")!.status, "operational")
      assert.deepStrictEqual(elsewhere.regions, [{ region: "eu-west-1", status: "operational" }, { region: "us-east-1", status: "down" }])
    }))

  it.effect("fails clearly on HTTP errors and non-feeds", () =>
    Effect.gen(function*() {
      const now = new Date("2026-09-23T12:00:00Z")
      const status = yield* Effect.flip(aws.parse([fetched(feedUrl, "busy", { status: 503 })], { url: feedUrl }, now))
      assert.strictEqual(status.reason, "http_status")
      const html = yield* Effect.flip(aws.parse([fetched(feedUrl, "<!DOCTYPE html><html></html>", rssType)], { url: feedUrl }, now))
      assert.strictEqual(html.reason, "invalid_feed")
    }))
})

describe("aws adapter, current events", () => {
  const now = new Date("2026-09-23T12:00:00Z")

  it.effect("reads the shared sample: a months-old regional event shows in regions but does not turn the source red", () =>
    Effect.gen(function*() {
      const source = { url: eventsUrl }
      assert.deepStrictEqual(aws.endpoints(source), [eventsUrl])
      const snapshot = yield* aws.parse([fixture("aws", "aws-currentevents.json", eventsUrl)], source, now)
      assert.strictEqual(snapshot.incidents.length, 1)
      const event = snapshot.incidents[0]!
      assert.deepStrictEqual(
        [event.id, event.title, event.status, event.impact, event.region, event.created_at, event.update_count, event.resolved_at],
        [
          "arn:aws:health:me-central-1::event/MULTIPLE_SERVICES/AWS_MULTIPLE_SERVICES_OPERATIONAL_ISSUE/xxxx",
          "Region Availability",
          "investigating",
          "critical",
          "me-central-1",
          "2026-03-01T12:51:25.000Z",
          1,
          null
        ]
      )
      assert.deepStrictEqual(event.components, ["multipleservices-me-central-1", "cloudwatchsynthetics-me-central-1", "acm-pca-me-central-1"])
      assert.deepStrictEqual(snapshot.components.map((c) => [c.name, c.status]), [
        ["Amazon CloudWatch Synthetics (me-central-1)", "operational"],
        ["AWS Private Certificate Authority (me-central-1)", "operational"],
        ["Multiple services (me-central-1)", "operational"]
      ])
      assert.strictEqual(snapshot.status, "operational")
      assert.deepStrictEqual(snapshot.regions, [{ region: "me-central-1", status: "down" }])

      const filtered = yield* aws.parse([fixture("aws", "aws-currentevents.json", eventsUrl)], { url: eventsUrl, regions: ["me-central-1"] }, now)
      assert.strictEqual(filtered.status, "down")
      assert.isTrue(filtered.components.every((c) => c.status === "critical"))
    }))

  it.effect("decodes UTF-16 with a byte-order mark, and without one when the charset says utf-16", () =>
    Effect.gen(function*() {
      const expected = yield* parseAwsCurrentEvents([fixture("aws", "aws-currentevents.json", eventsUrl)], { url: eventsUrl }, now)
      const withBom = fetched(eventsUrl, utf16(sampleText(), true), { contentType: "application/json" })
      assert.deepStrictEqual(yield* parseAwsCurrentEvents([withBom], { url: eventsUrl }, now), expected)
      const charsetOnly = fetched(eventsUrl, utf16(sampleText(), false), { contentType: "application/json;charset=utf-16" })
      assert.deepStrictEqual(yield* parseAwsCurrentEvents([charsetOnly], { url: eventsUrl }, now), expected)
    }))

  it.effect("an empty array is healthy; status 0 is resolved; an unknown code warns", () =>
    Effect.gen(function*() {
      const empty = yield* parseAwsCurrentEvents([fetched(eventsUrl, "[]")], { url: eventsUrl }, now)
      assert.deepStrictEqual([empty.status, empty.incidents, empty.components], ["operational", [], []])
      const base = { date: 1790157600, service: "ec2-us-east-1", service_name: "Amazon EC2", summary: "Launch failures" }
      const snapshot = yield* parseAwsCurrentEvents(
        [fetched(eventsUrl, JSON.stringify([{ ...base, status: "0" }, { ...base, service: "s3-eu-west-1", status: "7" }]))],
        { url: eventsUrl },
        now
      )
      assert.deepStrictEqual(snapshot.incidents.map((i) => [i.id, i.status, i.impact, i.region]), [
        ["ec2-us-east-1_1790157600", "resolved", "none", "us-east-1"],
        ["s3-eu-west-1_1790157600", "investigating", "minor", "eu-west-1"]
      ])
      assert.strictEqual(snapshot.status, "degraded")
      assert.include(snapshot.warnings[0]!, '"7"')
    }))

  it.effect("fails clearly on HTML, truncated bodies and foreign shapes", () =>
    Effect.gen(function*() {
      const html = yield* Effect.flip(aws.parse([fetched(eventsUrl, "<html><body>Health</body></html>")], { url: eventsUrl }, now))
      assert.strictEqual(html.reason, "html_catch_all")
      const truncated = yield* Effect.flip(aws.parse([fetched(eventsUrl, utf16(sampleText().slice(0, 200), true))], { url: eventsUrl }, now))
      assert.strictEqual(truncated.reason, "not_json")
      const shape = yield* Effect.flip(aws.parse([fetched(eventsUrl, '{"events":[]}')], { url: eventsUrl }, now))
      assert.strictEqual(shape.reason, "invalid_shape")
      const missing = yield* Effect.flip(aws.parse([fetched(eventsUrl, '[{"date":"1","status":"3"}]')], { url: eventsUrl }, now))
      assert.include(missing.message, "service")
    }))
})

describe("aws detection", () => {
  it("recognises AWS hosts by parsed hostname only", () => {
    const host = aws.detect.host
    assert.isTrue(host(new URL("https://health.aws.amazon.com/health/status")))
    assert.isTrue(host(new URL("http://status.aws.amazon.com/")))
    assert.isFalse(host(new URL("https://status.aws.amazon.com.example.net/")))
    assert.isFalse(host(new URL("https://example.net/?u=status.aws.amazon.com")))
  })

  it("classifies feeds by channel link or AWS guids, not other providers' feeds", () => {
    const classify = aws.detect.feed
    assert.isTrue(classify(parseFeedText(new TextDecoder().decode(sampleFeed().body))))
    const mirrored = parseFeedText(
      `<rss version="2.0"><channel><title>Mirror</title><link>https://mirror.example/</link>` +
        `<item><title>Performance issues: x</title><guid>https://mirror.example/#ec2-us-east-1_1790157600</guid></item></channel></rss>`
    )
    assert.isTrue(classify(mirrored))
    const azure = parseFeedText(
      `<rss version="2.0"><channel><title>Azure Status</title><link>https://azure.status.microsoft/en-us/status/</link>` +
        `<item><title>Outage</title><guid>abc</guid></item></channel></rss>`
    )
    assert.isFalse(classify(azure))
    const empty = parseFeedText(`<rss version="2.0"><channel><title>Blog</title><link>https://blog.example/</link></channel></rss>`)
    assert.isFalse(classify(empty))
  })
})

describe("aws renderer round trip", () => {
  const now = new Date("2026-09-23T12:00:00Z")
  const baseUrl = "http://127.0.0.1:4100/s/aws"
  const model = () => {
    const source: SimSource = generateSource({ key: "aws-sim", name: "AWS", provider: "aws", baseUrl, regions: awsRegions, now })
    const leaves = source.components.filter((c) => !c.is_group)
    const broken = leaves[0]!
    const recovered = leaves[1]!
    broken.status = "critical"
    source.incidents.push(
      {
        id: "sim-resolved",
        title: "Slow API responses",
        status: "resolved",
        impact: "minor",
        created_at: new Date("2026-09-22T08:00:00Z"),
        updated_at: new Date("2026-09-22T09:00:00Z"),
        resolved_at: new Date("2026-09-22T09:00:00Z"),
        updates: [
          { id: "u1", status: "investigating", body: "Investigating latency", created_at: new Date("2026-09-22T08:00:00Z") },
          { id: "u2", status: "resolved", body: "Latency is back to normal", created_at: new Date("2026-09-22T09:00:00Z") }
        ],
        components: [recovered.id],
        region: recovered.region
      },
      {
        id: "sim-open",
        title: "Increased error rates",
        status: "identified",
        impact: "critical",
        created_at: new Date("2026-09-23T10:00:00Z"),
        updated_at: new Date("2026-09-23T11:00:00Z"),
        resolved_at: null,
        updates: [
          { id: "u3", status: "investigating", body: "We are investigating", created_at: new Date("2026-09-23T10:00:00Z") },
          { id: "u4", status: "identified", body: "Root cause identified", created_at: new Date("2026-09-23T11:00:00Z") }
        ],
        components: [broken.id],
        region: broken.region
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
    return { source, broken, recovered }
  }

  it.effect("the RSS history reflects the model", () =>
    Effect.gen(function*() {
      const { broken, recovered, source } = model()
      const documents = simulatedAll(aws.endpoints({ url: baseUrl }), awsRenderer, source, now)
      const snapshot = yield* aws.parse(documents, { url: baseUrl }, now)
      const brokenId = awsServiceId(broken)
      assert.deepStrictEqual(snapshot.incidents.map((i) => [i.title, i.status, i.impact, i.region, i.update_count, i.components]), [
        ["Increased error rates", "investigating", "critical", broken.region, 2, [brokenId]],
        ["Slow API responses", "resolved", "minor", recovered.region, 2, [awsServiceId(recovered)]]
      ])
      assert.strictEqual(snapshot.incidents[0]!.created_at, "2026-09-23T10:00:00.000Z")
      assert.strictEqual(snapshot.incidents[1]!.resolved_at, "2026-09-22T09:00:00.000Z")
      const component = snapshot.components.find((c) => c.id === brokenId)!
      assert.deepStrictEqual([component.status, component.region, component.parent_id], ["critical", broken.region, null])
      assert.strictEqual(snapshot.components.find((c) => c.id === awsServiceId(recovered))!.status, "operational")
      assert.strictEqual(snapshot.status, "down")
      assert.deepStrictEqual(snapshot.regions.find((r) => r.region === broken.region), { region: broken.region!, status: "down" })
      assert.strictEqual(snapshot.regions.length, new Set([broken.region, recovered.region]).size)
      assert.deepStrictEqual(snapshot.maintenances, [])
    }))

  it.effect("the UTF-16 current events reflect the model's open incidents", () =>
    Effect.gen(function*() {
      const { broken, source } = model()
      const url = `${baseUrl}/public/currentevents`
      const [document] = simulatedAll(aws.endpoints({ url }), awsRenderer, source, now)
      assert.deepStrictEqual([...document!.body.subarray(0, 2)], [0xff, 0xfe])
      const snapshot = yield* aws.parse([document!], { url }, now)
      assert.deepStrictEqual(snapshot.incidents.map((i) => [i.title, i.status, i.impact, i.region, i.update_count, i.components]), [
        ["Increased error rates", "investigating", "critical", broken.region, 2, [awsServiceId(broken)]]
      ])
      assert.strictEqual(snapshot.components[0]!.status, "critical")
      assert.strictEqual(snapshot.status, "down")
    }))

  it("the page links the feed absolutely, the feed classifies as AWS, and rendering is deterministic", () => {
    const { source } = model()
    const page = awsRenderer.page(source, now)
    assert.include(page, `<link rel="alternate" type="application/rss+xml" title="All AWS services" href="${baseUrl}/rss/all.rss">`)
    const render = () => awsRenderer.routes["/rss/all.rss"]!(source, now).body as string
    assert.strictEqual(render(), render())
    const doc = parseFeedText(render())
    assert.isTrue(aws.detect.feed(doc))
    assert.match(doc.items[0]!.id, /^http:\/\/status\.aws\.amazon\.com\/#[a-z0-9]+-[a-z]+-[a-z]+-\d_\d{10}$/)
    assert.match(render(), /<pubDate>Wed, 23 Sep 2026 04:00:00 PDT<\/pubDate>/)
  })
})
