import { Effect, Exit, ManagedRuntime, Scope } from "effect"
import type { Browser, Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { ApiKeys } from "../../services/orgs/ApiKeys.ts"
import { ClickHouse } from "../../services/platform/ClickHouse.ts"
import { api } from "../support/alertWorld.ts"
import { expectAccessible, launchBrowser, screenshot } from "../support/browser.ts"
import { clickHouseHttp } from "../support/clickhouseHttp.ts"
import { checksEvery15, historyWriters, statusChange } from "../support/history.ts"
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
  monitorId = String((await api(world.server.url, key, "POST", "/monitors", { name: "Checkout", url: "http://127.0.0.1:9/checkout" }))["id"])

  // Day 1: the source down 09:00–10:30 and in maintenance 14:00–16:00; component c0 critical 09:00–10:30;
  // day 2: down again 22:00–22:20. The monitor down 03:00–03:45 on day 2. No check 06:00–08:00 on day 1 (a gap).
  const down = (t: number) => (t >= first + 9 * hour && t < first + 10.5 * hour) || (t >= first + day + 22 * hour && t < first + day + 22 * hour + 20 * minute)
  const gap = (t: number) => t >= first + 6 * hour && t < first + 8 * hour
  const sourceStatus = (t: number) => down(t) ? "down" : t >= first + 14 * hour && t < first + 16 * hour ? "maintenance" : "operational"
  const rows = [
    ...checksEvery15("source", source.key, "", first - hour, today, sourceStatus),
    ...checksEvery15("source", source.key, "c0", first - hour, today, (t) => t >= first + 9 * hour && t < first + 10.5 * hour ? "critical" : "operational"),
    ...checksEvery15("source", source.key, "c1", first - hour, today, () => "operational"),
    ...checksEvery15("monitor", monitorId, "", first - hour, today, (t) => t >= first + day + 3 * hour && t < first + day + 3.75 * hour ? "down" : "up")
  ].filter((r) => !gap(Date.parse(r.checked_at)))
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
    await expectAccessible(page)
    await screenshot(page, "analytics-source")

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
})
