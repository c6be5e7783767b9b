import { Effect, Exit, ManagedRuntime, Scope } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { Browser, Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { ApiKeys } from "../../services/orgs/ApiKeys.ts"
import { ClickHouse } from "../../services/platform/ClickHouse.ts"
import { api } from "../support/alertWorld.ts"
import { expectAccessible, launchBrowser, screenshot } from "../support/browser.ts"
import { clickHouseHttp } from "../support/clickhouseHttp.ts"
import { checksEvery, checksEvery15, historyWriters, statusChange } from "../support/history.ts"
import { people, type SettingsWorld, signIn, startSettingsWorld } from "../support/monitorsWorld.ts"
import { catalogSource } from "../support/orgRecords.ts"
import { tempDir } from "../support/stores.ts"

/**
 * The analytics pages in Chromium against a real `statusgrid start` whose
 * results store is a ClickHouse HTTP server (test/support/clickhouseHttp.ts
 * over chDB) that the test also writes to: two past UTC days of checks and
 * status changes for a catalog source, its components and a website
 * monitor, through the poller's writers. Each page's figures are compared
 * with the API's for the same range.
 */

const minute = 60_000
const hour = 60 * minute
const day = 24 * hour
/** Two whole past UTC days: the day before yesterday and yesterday. */
const today = Math.floor(Date.now() / day) * day
const first = today - 2 * day
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)
const iso = (ms: number) => new Date(ms).toISOString()

let world: SettingsWorld
let browser: Browser
let page: Page
let key: string
let source: { key: string; components: ReadonlyArray<string> }
let monitorId: string
let stack: { id: string; slug: string }
const scope = Scope.makeUnsafe()


beforeAll(async () => {
  const front = await Effect.runPromise(Scope.provide(scope)(Effect.flatMap(tempDir("analytics-browser-ch"), clickHouseHttp)))
  const database = "statusgrid_analytics_pages"
  ;[world, browser] = await Promise.all([
    startSettingsWorld({ CLICKHOUSE_URL: front.url, CLICKHOUSE_DATABASE: database }),
    launchBrowser()
  ])
  key = await world.run(ApiKeys.use((k) => k.issue(world.org.id, "analytics test", "admin")).pipe(Effect.provide(ApiKeys.layer)))
  const catalog = await world.run(catalogSource(2))
  source = { key: catalog.key, components: ["c0", "c1"] }
  // Paused: its history is the one written below; a live check (down, the port is closed) would add today's.
  monitorId = String((await api(world.server.url, key, "POST", "/monitors", { name: "Checkout", url: "http://127.0.0.1:9/checkout", paused: true }))["id"])

  // Day 1: the source down 09:00–10:30 and in maintenance 14:00–16:00; component c0 critical 09:00–10:30;
  // day 2: down again 22:00–22:20. The monitor down 03:00–03:45 on day 2. No check 06:00–08:00 on day 1 (a gap).
  const down = (t: number) => (t >= first + 9 * hour && t < first + 10.5 * hour) || (t >= first + day + 22 * hour && t < first + day + 22 * hour + 20 * minute)
  const gap = (t: number) => t >= first + 6 * hour && t < first + 8 * hour
  const sourceStatus = (t: number) => down(t) ? "down" : t >= first + 14 * hour && t < first + 16 * hour ? "maintenance" : "operational"
  // The status page's response time rises and falls over each day (40 to 160 ms).
  const latencyAt = (t: number) => Math.round(100 + 60 * Math.sin((2 * Math.PI * (t % day)) / day))
  const rows = [
    ...checksEvery(15 * minute, "source", source.key, "", first - hour, today, sourceStatus, latencyAt),
    ...checksEvery15("source", source.key, "c0", first - hour, today, (t) => t >= first + 9 * hour && t < first + 10.5 * hour ? "critical" : "operational"),
    ...checksEvery15("source", source.key, "c1", first - hour, today, () => "operational"),
    ...checksEvery15("monitor", monitorId, "", first - hour, today, (t) => t >= first + day + 3 * hour && t < first + day + 3.75 * hour ? "down" : "up")
  ].filter((r) => !gap(new Date(r.checked_at).getTime()))
  const transitions = [
    statusChange("source", source.key, "", first + 9 * hour, "operational", "down"),
    statusChange("source", source.key, "", first + 10.5 * hour, "down", "operational"),
    statusChange("source", source.key, "", first + 14 * hour, "operational", "maintenance"),
    statusChange("source", source.key, "", first + 16 * hour, "maintenance", "operational"),
    statusChange("source", source.key, "", first + day + 22 * hour, "operational", "down"),
    statusChange("source", source.key, "", first + day + 22 * hour + 20 * minute, "down", "operational"),
    statusChange("source", source.key, "c0", first + 9 * hour, "operational", "critical"),
    statusChange("source", source.key, "c0", first + 10.5 * hour, "critical", "operational"),
    statusChange("monitor", monitorId, "", first - hour, "pending", "up"),
    statusChange("monitor", monitorId, "", first + day + 3 * hour, "up", "down"),
    statusChange("monitor", monitorId, "", first + day + 3.75 * hour, "down", "up")
  ]
  const spill = await Effect.runPromise(Scope.provide(scope)(tempDir("analytics-browser-spill")))
  const writers = ManagedRuntime.make(ClickHouse.layerServer(front.url, database))
  await writers.runPromise(Effect.scoped(Effect.flatMap(historyWriters(spill), (w) => w.write(rows, transitions))))
  await writers.dispose()
  // Its provider published two incidents on day 1 (one naming c0, in us-east-1, 2 h; one open), and c0 is in us-east-1.
  await world.run(Effect.gen(function*() {
    const sql = yield* SqlClient
    yield* sql`UPDATE components SET region = 'us-east-1' WHERE id = ${catalog.components[0]!}::uuid`
    const [major] = yield* sql<{ id: string }>`
      INSERT INTO incidents (source_id, external_id, title, status, impact, region, started_at, updated_at, resolved_at)
      VALUES (${catalog.id}::uuid, 'inc-1', 'Elevated errors', 'resolved', 'major', 'us-east-1',
        ${iso(first + 9 * hour)}::timestamptz, ${iso(first + 11 * hour)}::timestamptz, ${iso(first + 11 * hour)}::timestamptz)
      RETURNING id`
    yield* sql`INSERT INTO incident_components (incident_id, component_id) VALUES (${major!.id}::uuid, ${catalog.components[0]!}::uuid)`
    yield* sql`
      INSERT INTO incidents (source_id, external_id, title, status, impact, started_at, updated_at)
      VALUES (${catalog.id}::uuid, 'inc-2', 'Slow dashboard', 'investigating', 'minor', ${iso(first + day + 5 * hour)}::timestamptz, ${iso(first + day + 5 * hour)}::timestamptz)`
  }))
  // A stack of component c0 and the monitor.
  const created = await api(world.server.url, key, "POST", "/stacks", { name: "Checkout flow" })
  stack = { id: String(created["id"]), slug: String(created["slug"]) }
  await api(world.server.url, key, "POST", `/stacks/${stack.id}/items`, { kind: "component", component_id: catalog.components[0] })
  await api(world.server.url, key, "POST", `/stacks/${stack.id}/items`, { kind: "monitor", monitor_id: monitorId })
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage()
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await world?.close()
  await Effect.runPromise(Scope.close(scope, Exit.void))
}, 120_000)

/** "88.750 %" for 88.75, as the pages write it. */
const shown = (uptime: number | null) => (uptime === null ? "no data" : `${uptime >= 99.9995 ? "100" : uptime.toFixed(3)} %`)

interface Figures {
  readonly uptime: number | null
  readonly outage_count: number
  readonly mttr_ms: number | null
}

describe("analytics pages in Chromium", () => {
  it("a source's page shows the API's figures for the same two days, its outages and its components", async () => {
    const range = `from=${isoDay(first)}&to=${isoDay(first + day)}`
    await page.goto(`${world.server.url}/sources/${source.key}`)
    await page.getByRole("link", { name: "Uptime and outages over any range" }).click()
    await page.waitForURL(`**/sources/${source.key}/analytics`)
    await page.getByLabel("From (UTC)").fill(isoDay(first))
    await page.getByLabel("To (UTC, included)").fill(isoDay(first + day))
    await page.getByRole("button", { name: "Show" }).click()
    await page.waitForURL((url) => url.search === `?${range}`)
    // The URL changes as the navigation starts: wait for the page of the new range.
    await page.getByText(`From ${isoDay(first)} 00:00 to ${isoDay(today)} 00:00 UTC`).waitFor()
    const fromApi = await api(world.server.url, key, "GET", `/sources/${source.key}/analytics?from=${iso(first)}&to=${iso(today)}`) as unknown as {
      analytics: Figures & { outages: ReadonlyArray<unknown> }
      components: ReadonlyArray<{ name: string; analytics: Figures }>
    }
    // Worked out: 48 h − 2 h maintenance − 2 h not seen = 44 h counted, 1 h 50 min down.
    assert.closeTo(fromApi.analytics.uptime!, ((44 * 60 - 110) / (44 * 60)) * 100, 1e-9)
    const summary = page.getByRole("region", { name: /as a whole/ })
    assert.strictEqual(await summary.getByTestId("uptime").innerText(), shown(fromApi.analytics.uptime))
    assert.strictEqual(await summary.getByTestId("outage-count").innerText(), String(fromApi.analytics.outage_count))
    assert.strictEqual(await summary.getByTestId("mttr").innerText(), "55 min")
    assert.strictEqual(await page.getByTestId("outages").locator("tbody tr").count(), fromApi.analytics.outages.length)
    const componentRows = page.getByTestId("component-analytics").locator("tbody tr")
    assert.strictEqual(await componentRows.count(), fromApi.components.length)
    for (const [i, c] of fromApi.components.entries()) {
      assert.include(await componentRows.nth(i).innerText(), c.name)
      assert.include(await componentRows.nth(i).innerText(), `${c.analytics.uptime!.toFixed(3)} %`)
    }
    // Incidents, regions and the status page's response times, as the API counts them.
    const more = await api(world.server.url, key, "GET", `/sources/${source.key}/analytics?from=${iso(first)}&to=${iso(today)}`) as unknown as {
      incidents: { count: number; mttr_ms: number }
      regions: ReadonlyArray<{ region: string; uptime: number }>
      response_times: { hourly: ReadonlyArray<{ at: string; p50_ms: number }> }
    }
    assert.strictEqual(more.incidents.count, 2)
    assert.strictEqual(more.incidents.mttr_ms, 2 * hour)
    assert.strictEqual(await page.getByTestId("incident-count").innerText(), "2")
    assert.strictEqual(await page.getByTestId("incident-mttr").innerText(), "2 h 00 min")
    assert.deepStrictEqual(more.regions.map((r) => r.region), ["us-east-1"])
    assert.include(await page.getByTestId("regions").locator("tbody tr").first().innerText(), `${more.regions[0]!.uptime.toFixed(3)} %`)
    // 48 hours of checks, less the 2-hour gap.
    assert.strictEqual(more.response_times.hourly.length, 46)
    const chart = page.getByRole("img", { name: /Response time of .* status page: 46 hours with checks/ })
    await chart.waitFor()
    assert.strictEqual(await page.getByTestId("response-times").locator("tbody tr").count(), 46)
    // The chart breaks its lines at the gap: each series is two runs of points.
    const runs = await page.locator(".rt-chart path.rt-p50").getAttribute("d")
    assert.strictEqual(runs!.match(/M/g)!.length, 2)
    await expectAccessible(page)
    await screenshot(page, "analytics-source")

    // On a 360-pixel phone the page fits its width (tables scroll inside their own box).
    const phone = await (await browser.newContext({ viewport: { width: 360, height: 780 }, isMobile: true })).newPage()
    await phone.goto(`${world.server.url}/sources/${source.key}/analytics?${range}`)
    const wide = await phone.evaluate(`[...document.querySelectorAll("*")].filter((e) => e.scrollWidth > 362).slice(0, 6).map((e) => e.tagName + "." + e.className + " " + e.scrollWidth + "/" + e.clientWidth).join(", ")`)
    assert.isAtMost(await phone.evaluate("document.documentElement.scrollWidth"), 360, String(wide))
    await screenshot(phone, "analytics-source-360")
    await phone.context().close()

    // A bad date is named beside the range, and the page shows the default range instead of failing.
    await page.goto(`${world.server.url}/sources/${source.key}/analytics?from=2026-02-31`)
    await page.getByRole("alert").filter({ hasText: "From must be a date" }).waitFor()
  })

  it("a monitor's page, for a member, shows the API's figures", async () => {
    await signIn(page, world.server, people.member, `/settings/${world.org.slug}/monitors/${monitorId}`)
    await page.getByRole("link", { name: "Uptime and outages" }).click()
    await page.waitForURL("**/analytics")
    await page.goto(`${world.server.url}/settings/${world.org.slug}/monitors/${monitorId}/analytics?from=${isoDay(first)}&to=${isoDay(first + day)}`)
    const fromApi = (await api(world.server.url, key, "GET", `/monitors/${monitorId}/analytics?from=${iso(first)}&to=${iso(today)}`))["analytics"] as Figures
    assert.strictEqual(fromApi.outage_count, 1)
    assert.strictEqual(fromApi.mttr_ms, 45 * minute)
    assert.strictEqual(await page.getByTestId("uptime").innerText(), shown(fromApi.uptime))
    assert.strictEqual(await page.getByTestId("mttr").innerText(), "45 min")
    await expectAccessible(page)
    await screenshot(page, "analytics-monitor")
  })

  it("a stack's page, for a member, shows the API's figures: the stack as a whole, its items and its incidents", async () => {
    // The stack page's own strip (90 days): each day by the banner's rule over its items' days, and its uptime by time.
    await page.goto(`${world.server.url}/dashboard/${world.org.slug}/stacks/${stack.slug}?window=90d`)
    const own = page.getByRole("region", { name: "The stack as a whole" })
    await own.locator("svg.strip-bars").waitFor()
    assert.strictEqual(await own.locator("rect").count(), 90)
    // Day 1: c0 critical; day 2: the monitor down; the day before, an hour of checks, operational.
    assert.strictEqual(await own.locator("rect.cell-down").count(), 2)
    assert.strictEqual(await own.locator("rect.cell-operational").count(), 1)
    assert.include(await page.locator(`[data-monitor="${monitorId}"]`).innerText(), "paused: not checked until resumed")
    const ninety = await api(world.server.url, key, "GET", `/stacks/${stack.id}/analytics?from=${iso(Date.now() - 90 * day)}`) as unknown as { analytics: Figures }
    assert.strictEqual(await own.locator(".strip-uptime").innerText(), `${ninety.analytics.uptime!.toFixed(2)} %`)
    await screenshot(page, "stack-page-90d")
    await page.goto(`${world.server.url}/dashboard/${world.org.slug}/stacks/${stack.slug}`)
    await page.getByRole("link", { name: "Uptime and outages" }).click()
    await page.waitForURL("**/analytics")
    await page.goto(`${world.server.url}/dashboard/${world.org.slug}/stacks/${stack.slug}/analytics?from=${isoDay(first)}&to=${isoDay(first + day)}`)
    const fromApi = await api(world.server.url, key, "GET", `/stacks/${stack.id}/analytics?from=${iso(first)}&to=${iso(today)}`) as unknown as {
      analytics: Figures & { outages: ReadonlyArray<unknown> }
      health_ms: Record<string, number>
      items: ReadonlyArray<{ name: string; analytics: Figures }>
      incidents: { count: number }
    }
    // c0 critical 09:00–10:30 on day 1, the monitor down 03:00–03:45 on day 2:
    // two outages, 90 and 45 minutes.
    assert.strictEqual(fromApi.analytics.outage_count, 2)
    assert.strictEqual(fromApi.analytics.mttr_ms, (90 + 45) / 2 * minute)
    // One of two items out is half of them: the banner's major outage.
    assert.strictEqual(fromApi.health_ms["major_outage"], 135 * minute)
    // Day 1 06:00–08:00 nothing was checked: neither item was seen, so the stack was not either.
    assert.strictEqual(fromApi.health_ms["unknown"], 2 * hour)
    assert.strictEqual(await page.getByTestId("uptime").innerText(), shown(fromApi.analytics.uptime))
    assert.strictEqual(await page.getByTestId("outage-count").innerText(), "2")
    assert.strictEqual(await page.getByTestId("mttr").innerText(), "1 h 07 min")
    const items = page.getByTestId("item-analytics").locator("tbody tr")
    assert.strictEqual(await items.count(), 2)
    for (const [i, item] of fromApi.items.entries()) {
      assert.include(await items.nth(i).innerText(), item.name)
      assert.include(await items.nth(i).innerText(), shown(item.analytics.uptime))
    }
    // The incident naming c0 is the stack's; the open one named no component of it.
    assert.strictEqual(fromApi.incidents.count, 1)
    assert.strictEqual(await page.getByTestId("incident-count").innerText(), "1")
    await expectAccessible(page)
    await screenshot(page, "analytics-stack")
  })
})
