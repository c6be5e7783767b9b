import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import type { Browser, Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { expectAccessible, launchBrowser, screenshot } from "../support/browser.ts"
import { forgePost, people, type SettingsWorld, sidewaysScroll, signIn, startSettingsWorld } from "../support/monitorsWorld.ts"

/**
 * The website monitors' settings pages in Chromium against a real `statusgrid start`
 * (its poller checks the monitors) and a local HTTP target started here, which
 * records the Authorization header each check sends.
 */

let world: SettingsWorld
let browser: Browser
let target: Http.Server
let targetUrl: string
const authorizations: Array<string> = []

beforeAll(async () => {
  target = Http.createServer((req, res) => {
    authorizations.push(req.headers.authorization ?? "")
    res.writeHead(200, { "content-type": "text/plain" })
    res.end("all systems go")
  })
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve))
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/health`
  ;[world, browser] = await Promise.all([startSettingsWorld(), launchBrowser()])
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await world?.close()
  await new Promise((resolve) => target?.close(resolve))
}, 120_000)

const monitorCount = () =>
  world.run(Effect.gen(function*() {
    const sql = yield* SqlClient
    const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM monitors`
    return row!.n
  }).pipe(Effect.orDie))

const monitorState = (id: string) =>
  world.run(Effect.gen(function*() {
    const sql = yield* SqlClient
    const [row] = yield* sql<{ state: string }>`SELECT state FROM monitors WHERE id = ${id}::uuid`
    return row!.state
  }).pipe(Effect.orDie))

/** Reloads until the monitor's first scheduled check shows its response time. */
const waitForFirstCheck = async (page: Page) => {
  const deadline = Date.now() + 90_000
  for (;;) {
    const text = await page.locator("#last-response").innerText()
    if (/\d+ ms/.test(text)) return text
    if (Date.now() > deadline) throw new Error(`no check shown within 90 s (last: ${text})`)
    await page.waitForTimeout(1000)
    await page.reload()
  }
}

/** Fills the create form's required fields (and the ones given). */
const fillMonitor = async (page: Page, fields: { name: string; url: string; interval?: string; expected?: string }) => {
  await page.getByLabel("Name", { exact: true }).fill(fields.name)
  await page.getByLabel("URL", { exact: true }).fill(fields.url)
  await page.getByLabel("Interval (seconds)").fill(fields.interval ?? "60")
  await page.getByLabel("Expected status").fill(fields.expected ?? "200-299")
}

describe("website monitors settings in Chromium", () => {
  let monitorPath = ""

  it("as a Member: malformed forms show their field errors in place and save nothing; a valid one is created and checked", async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    const list = `/settings/${world.org.slug}/monitors`
    await signIn(page, world.server, people.member, list)
    await page.getByText("0 monitors · unlimited on pro").waitFor()
    assert.strictEqual(await page.title(), "Website monitors · Analytical Engines · statusgrid")
    await expectAccessible(page)
    await screenshot(page, "settings-monitors-empty")

    const cases = [
      { fields: { name: "Bad URL", url: "not a url" }, error: "#field-url-error", says: /valid absolute URL/ },
      { fields: { name: "Bad status", url: targetUrl, expected: "abc" }, error: "#field-expected_status-error", says: /Expected status/ },
      { fields: { name: "Too often", url: targetUrl, interval: "5" }, error: "#field-interval-error", says: /from 10 to 86400/ }
    ]
    for (const c of cases) {
      await fillMonitor(page, c.fields)
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === "POST"),
        page.getByRole("button", { name: "Add monitor" }).click()
      ])
      assert.strictEqual(response.status(), 400, `${c.fields.name}: a 400, not a 500`)
      const error = page.locator(c.error)
      await error.waitFor()
      assert.match(await error.innerText(), c.says)
      // What was typed is kept.
      assert.strictEqual(await page.getByLabel("Name", { exact: true }).inputValue(), c.fields.name)
      assert.strictEqual(await monitorCount(), 0, `${c.fields.name}: nothing saved`)
    }
    await expectAccessible(page)
    await screenshot(page, "settings-monitors-errors")

    await fillMonitor(page, { name: "Checkout API", url: targetUrl, interval: "10" })
    await page.getByRole("button", { name: "Add monitor" }).click()
    await page.waitForURL(/\/monitors\/[0-9a-f-]{36}/, { timeout: 60_000 })
    monitorPath = new URL(page.url()).pathname
    await page.getByRole("heading", { level: 1, name: "Checkout API" }).waitFor()
    // The recommendation the API returns as a warning (interval under 30 s) is shown, not refused.
    await page.getByText(/Recommendation for interval/).waitFor()

    const response = await waitForFirstCheck(page)
    assert.match(response, /^\d+ ms$/)
    assert.strictEqual(await page.locator("#monitor-state").innerText(), "up")
    assert.strictEqual(await page.locator("#last-http").innerText(), "200")
    // The check log and the chart come from ClickHouse once the result is written.
    const deadline = Date.now() + 60_000
    while ((await page.locator("#check-log tbody tr").count()) === 0) {
      if (Date.now() > deadline) throw new Error("the check log stayed empty")
      await page.waitForTimeout(1000)
      await page.reload()
    }
    assert.ok(await page.locator(".chart svg[role=img]").isVisible())
    await expectAccessible(page)
    await screenshot(page, "settings-monitor-first-check")

    // Back on the list: the state, response time and HTTP status.
    await page.goto(`${world.server.url}${list}`)
    const row = page.locator("tbody tr", { hasText: "Checkout API" })
    await row.getByText(/\d+ ms/).waitFor()
    assert.include(await row.innerText(), "200")
    await expectAccessible(page)
    await screenshot(page, "settings-monitors-list")
    await page.close()
  }, 300_000)

  it("as a Member: Check now shows the phases; pause and resume; a bearer token is saved, sent and never rendered back", async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    await signIn(page, world.server, people.member, monitorPath)
    const id = monitorPath.split("/").at(-1)!

    await page.getByRole("button", { name: "Check now" }).click()
    const result = page.locator("#check-result")
    await result.waitFor({ timeout: 60_000 })
    const text = await result.innerText()
    for (const phase of ["DNS", "Connect", "TLS", "First byte", "Total"]) assert.include(text, phase)
    assert.include(text, "HTTP 200")
    assert.include(text, "plain http")
    await expectAccessible(page)
    await screenshot(page, "settings-monitor-check-now")

    await page.getByRole("button", { name: "Pause" }).click()
    await page.getByRole("button", { name: "Resume" }).waitFor()
    assert.strictEqual(await page.locator("#monitor-state").innerText(), "paused")
    assert.strictEqual(await monitorState(id), "paused")
    await page.getByRole("button", { name: "Resume" }).click()
    await page.getByRole("button", { name: "Pause" }).waitFor()
    assert.notStrictEqual(await monitorState(id), "paused")

    const token = "s3cret-Bearer-7f2c91"
    await page.getByLabel("Kind").selectOption("bearer")
    await page.getByLabel("Bearer token").fill(token)
    await page.getByRole("button", { name: "Save settings" }).click()
    await page.getByText("Saved.").waitFor()
    // The stored token is never rendered back, in the page or in its data.
    const html = await (await page.request.get(`${world.server.url}${monitorPath}`)).text()
    assert.notInclude(html, token)
    assert.notInclude(await page.content(), token)
    await page.locator("#field-auth_token-hint", { hasText: "leave blank to keep it" }).waitFor()
    assert.strictEqual(await page.getByLabel("Bearer token").inputValue(), "")
    assert.strictEqual(await page.getByLabel("Kind").inputValue(), "bearer")
    // Saving again with the token left blank keeps it: the next check sends it.
    await page.getByRole("button", { name: "Save settings" }).click()
    await page.getByText("Saved.").waitFor()
    authorizations.length = 0
    await page.getByRole("button", { name: "Check now" }).click()
    await page.locator("#check-result").waitFor()
    assert.include(authorizations, `Bearer ${token}`)
    await screenshot(page, "settings-monitor-saved")

    // At 360 px the page fits.
    await page.setViewportSize({ width: 360, height: 800 })
    await page.reload()
    assert.strictEqual(await sidewaysScroll(page), 0)
    await screenshot(page, "settings-monitor-phone")
    await page.close()
  }, 240_000)

  it("as a Viewer: no controls, and a forged POST is refused with 403 and nothing changes", async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    await signIn(page, world.server, people.viewer, monitorPath)
    const id = monitorPath.split("/").at(-1)!
    await page.getByRole("heading", { level: 1, name: "Checkout API" }).waitFor()
    for (const name of ["Check now", "Pause", "Resume", "Save settings", "Delete monitor"]) {
      assert.strictEqual(await page.getByRole("button", { name }).count(), 0, `no ${name} button`)
    }
    await expectAccessible(page)
    await screenshot(page, "settings-monitor-viewer")
    const before = await monitorState(id)
    assert.strictEqual(await forgePost(page, `${world.server.url}${monitorPath}`, { intent: "pause" }), 403)
    assert.strictEqual(await forgePost(page, `${world.server.url}${monitorPath}`, { intent: "delete" }), 403)
    assert.strictEqual(await monitorState(id), before)
    assert.strictEqual(await monitorCount(), 1)

    await page.goto(`${world.server.url}/settings/${world.org.slug}/monitors`)
    assert.strictEqual(await page.getByRole("button", { name: "Add monitor" }).count(), 0)
    assert.strictEqual(
      await forgePost(page, page.url(), { name: "Sneaky", url: targetUrl, interval: "60", expected_status: "200", method: "GET" }),
      403
    )
    assert.strictEqual(await monitorCount(), 1)
    await page.close()
  }, 120_000)

  it("as an Admin: deletes the monitor", async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    await signIn(page, world.server, people.admin, monitorPath)
    await page.getByRole("button", { name: "Delete monitor" }).click()
    await page.waitForURL(`**/settings/${world.org.slug}/monitors`)
    await page.getByText("No monitors yet").waitFor()
    assert.strictEqual(await monitorCount(), 0)
    await page.close()
  }, 120_000)

  it("on Free: the limit is shown before it bites, and a second monitor is refused in place", async () => {
    await world.run(Effect.gen(function*() {
      const sql = yield* SqlClient
      yield* sql`UPDATE organizations SET plan_id = 'free' WHERE id = ${world.org.id}::uuid`
    }).pipe(Effect.orDie))
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    const list = `/settings/${world.org.slug}/monitors`
    await signIn(page, world.server, people.member, list)
    await page.getByText("0 of 1 monitor on free").waitFor()
    await fillMonitor(page, { name: "Only one", url: targetUrl })
    await page.getByRole("button", { name: "Add monitor" }).click()
    await page.waitForURL(/\/monitors\/[0-9a-f-]{36}/, { timeout: 60_000 })
    await page.goto(`${world.server.url}${list}`)
    await page.getByText("1 of 1 monitor on free").waitFor()
    await page.getByText(/allows 1 website monitor and it is in use/).waitFor()
    assert.strictEqual(await page.getByRole("button", { name: "Add monitor" }).count(), 0)
    // A form posted anyway gets the service's refusal in place (402 inside: shown as the form's error), nothing saved.
    const status = await forgePost(page, `${world.server.url}${list}`, { name: "Second", url: targetUrl, interval: "60", expected_status: "200-299" })
    assert.strictEqual(status, 400)
    assert.strictEqual(await monitorCount(), 1)
    await expectAccessible(page)
    await screenshot(page, "settings-monitors-free-limit")
    await page.close()
  }, 120_000)
})
