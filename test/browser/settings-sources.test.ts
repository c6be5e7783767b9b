import { Effect, Exit, Scope } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { Browser, Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as Simulator from "../../services/simulator/Server.ts"
import { expectAccessible, launchBrowser, screenshot } from "../support/browser.ts"
import { forgePost, people, type SettingsWorld, sidewaysScroll, signIn, startSettingsWorld } from "../support/monitorsWorld.ts"

/**
 * The custom sources' settings page in Chromium against a real `statusgrid start`;
 * the upstream status page is the simulator's (a Statuspage source added through its
 * control API), detected and then polled by the server.
 */

let world: SettingsWorld
let browser: Browser
let sim: Simulator.Simulator
let simScope: Scope.Closeable
const components = 4

beforeAll(async () => {
  simScope = Scope.makeUnsafe()
  sim = await Effect.runPromise(Scope.provide(simScope)(Simulator.make({ port: 0, host: "127.0.0.1", sources: 0 })))
  const added = await fetch(`${sim.url}/_control/sources`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ key: "acme-pay", name: "Acme Pay", provider: "statuspage_io", components })
  })
  assert.strictEqual(added.status, 201, await added.text())
  ;[world, browser] = await Promise.all([startSettingsWorld(), launchBrowser()])
}, 180_000)

const step = (what: string) => process.stderr.write(`[sources test] ${what}\n`)

afterAll(async () => {
  await browser?.close()
  step("browser closed")
  await world?.close()
  step("server stopped")
  if (simScope !== undefined) await Effect.runPromise(Scope.close(simScope, Exit.void))
  step("simulator stopped")
}, 120_000)

const sourceRows = () =>
  world.run(Effect.gen(function*() {
    const sql = yield* SqlClient
    return yield* sql<{ key: string; name: string; kind: string; status: string; provider_type: string | null }>`
      SELECT key, name, kind, status, provider_type FROM sources WHERE organization_id IS NOT NULL ORDER BY created_at`
  }).pipe(Effect.orDie))

const addSource = async (page: Page, fields: { name: string; url?: string; manual?: boolean }) => {
  const form = page.locator("section[aria-labelledby=add-source]")
  await form.getByLabel("Name", { exact: true }).fill(fields.name)
  if (fields.manual) await form.getByLabel("Set by hand (manual)").check()
  else await form.getByLabel("From a status page URL").check()
  await form.getByLabel("Status page URL", { exact: true }).fill(fields.url ?? "")
  return Promise.all([
    page.waitForResponse((r) => r.request().method() === "POST"),
    page.getByRole("button", { name: "Add source" }).click()
  ]).then(([response]) => response.status())
}

const path = () => `/settings/${world.org.slug}/sources`

describe("custom sources settings in Chromium", () => {
  it("as a Member: a bad URL shows its error in place; a URL source shows what detection found; a manual source's status is switched", async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    await signIn(page, world.server, people.member, path())
    await page.getByText("0 of 10 custom sources on pro").waitFor()
    assert.strictEqual(await page.title(), "Custom sources · Analytical Engines · statusgrid")
    await expectAccessible(page)

    assert.strictEqual(await addSource(page, { name: "Broken", url: "not a url" }), 400)
    const error = page.locator("#field-status_page_url-error")
    await error.waitFor()
    assert.match(await error.innerText(), /valid absolute URL/)
    assert.strictEqual((await sourceRows()).length, 0, "nothing saved")
    await expectAccessible(page)
    await screenshot(page, "settings-sources-error")

    // Detection reads the simulator's page (Statuspage), and the server polls it for its components.
    await addSource(page, { name: "Acme Pay", url: `${sim.url}/s/acme-pay` })
    await page.waitForURL(/\?added=/, { timeout: 60_000 })
    const detection = page.locator("#detection")
    await detection.waitFor()
    assert.include(await detection.innerText(), "statuspage_io")
    const deadline = Date.now() + 90_000
    while ((await page.locator("#detected-components").count()) === 0) {
      if (Date.now() > deadline) throw new Error(`components never read: ${await detection.innerText()}`)
      await page.waitForTimeout(1000)
      await page.reload()
    }
    assert.isAtLeast(Number(await page.locator("#detected-components").innerText()), components)
    const [url] = await sourceRows()
    assert.strictEqual(url?.provider_type, "statuspage_io")
    await expectAccessible(page)
    await screenshot(page, "settings-sources-detected")

    await addSource(page, { name: "Warehouse VPN", manual: true })
    await page.waitForURL(/added=engines-warehouse-vpn/, { timeout: 60_000 })
    await page.getByText("added as a manual source").waitFor()
    const status = page.getByLabel("Status of Warehouse VPN")
    await status.selectOption("down")
    await page.locator("#source-engines-warehouse-vpn").getByRole("button", { name: "Set status" }).click()
    await page.getByText("Status set to major outage.").waitFor()
    const manual = (await sourceRows()).find((s) => s.name === "Warehouse VPN")
    assert.strictEqual(manual?.status, "down")
    assert.include(await page.locator("#source-engines-warehouse-vpn").innerText(), "major outage")
    await expectAccessible(page)
    await screenshot(page, "settings-sources-manual")

    // Renamed through the edit form.
    const item = page.locator("#source-engines-warehouse-vpn")
    await item.getByText("Edit or delete").click()
    await item.getByLabel("Name").fill("Warehouse VPN (EU)")
    await item.getByRole("button", { name: "Save" }).click()
    await page.getByRole("heading", { name: "Warehouse VPN (EU)" }).waitFor()

    await page.setViewportSize({ width: 360, height: 800 })
    await page.reload()
    assert.strictEqual(await sidewaysScroll(page), 0)
    await screenshot(page, "settings-sources-phone")
    await page.close()
  }, 300_000)

  it("as a Viewer: no controls, and a forged POST is refused with 403 and nothing changes", async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    await signIn(page, world.server, people.viewer, path())
    await page.getByRole("heading", { name: "Warehouse VPN (EU)" }).waitFor()
    for (const name of ["Add source", "Set status", "Save"]) assert.strictEqual(await page.getByRole("button", { name }).count(), 0, `no ${name}`)
    await expectAccessible(page)
    await screenshot(page, "settings-sources-viewer")
    const before = await sourceRows()
    const url = `${world.server.url}${path()}`
    assert.strictEqual(await forgePost(page, url, { intent: "status", key: "engines-warehouse-vpn", status: "operational" }), 403)
    assert.strictEqual(await forgePost(page, url, { intent: "add", name: "Sneaky", type: "manual" }), 403)
    assert.strictEqual(await forgePost(page, url, { intent: "delete", key: "engines-warehouse-vpn" }), 403)
    assert.deepStrictEqual(await sourceRows(), before)
    await page.close()
  }, 120_000)

  it("as an Admin: deletes a source", async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    await signIn(page, world.server, people.admin, path())
    const item = page.locator("#source-engines-warehouse-vpn")
    await item.getByText("Edit or delete").click()
    await item.getByRole("button", { name: /Delete/ }).click()
    await page.getByText("1 of 10 custom sources on pro").waitFor()
    assert.deepStrictEqual((await sourceRows()).map((s) => s.name), ["Acme Pay"])
    await page.close()
  }, 120_000)
})
