import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import type { Browser } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { expectAccessible, launchBrowser, screenshot } from "../support/browser.ts"
import { childEnv, freePort, type Running, startService } from "../support/process.ts"

/**
 * The acceptance line: statusgrid started as `infra/start --demo`
 * does (`statusgrid start --demo`, embedded stores, the default demo, a fresh
 * DATA_DIR), a new person opens it in Chromium and goes landing → sign-up →
 * organization → a live dashboard with no other step: demo mode gave the new
 * organization its starter stack, and a status changes on the open page
 * without a reload. Only the port, the simulator's port (any free one) and a
 * short DEMO_TICK_MS differ from a plain start, so the test does not wait a
 * minute per tick.
 */

const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-dashboard-demo-"))
let server: Running
let browser: Browser

beforeAll(async () => {
  const env = childEnv({ DATA_DIR: dataDir, PORT: String(await freePort()), SIMULATOR_URL: "http://127.0.0.1:0", DEMO_TICK_MS: "2000" })
  ;[server, browser] = await Promise.all([startService(env, 180_000, ["start", "--demo"]), launchBrowser()])
}, 240_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  Fs.rmSync(dataDir, { recursive: true, force: true })
})

describe("demo mode, first visit", () => {
  it("leads from the landing page through sign-up and a new organization to a live dashboard whose statuses change without a reload", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    await page.goto(server.url.replace("127.0.0.1", "localhost") + "/")
    await expectAccessible(page)
    await page.getByRole("link", { name: "Create an account" }).click()
    await page.waitForURL("**/signup")
    await page.getByLabel("Your name").fill("Katherine Johnson")
    await page.getByLabel("E-mail").fill("katherine@example.com")
    await page.getByLabel("Password").fill("orbital mechanics 1962")
    await page.getByRole("button", { name: "Create account" }).click()
    await page.waitForURL("**/orgs/new", { timeout: 60_000 })
    await expectAccessible(page)
    await page.getByLabel("Organization name").fill("Flight Research")
    await page.getByLabel("Short name").fill("flight")
    await page.getByRole("button", { name: "Create organization" }).click()
    await page.waitForURL("**/dashboard/flight", { timeout: 90_000 })

    // Not empty: the starter stack of demo sources, with its banner and what it shows.
    await page.getByRole("heading", { level: 2, name: "Demo production" }).waitFor()
    const rows = page.locator("[data-stack='demo-production'] [data-row]")
    assert.isAtLeast(await rows.count(), 2)
    await page.locator("[data-live='live']").waitFor({ timeout: 60_000 })
    await expectAccessible(page)

    // A change arrives on the open page: some row's status differs from what the page first showed.
    const before = await rows.evaluateAll((els) => els.map((e) => `${e.getAttribute("data-row")}=${e.querySelector(".badge")?.textContent ?? ""}`))
    await page.evaluate(() => ((globalThis as unknown as { notReloaded: boolean }).notReloaded = true))
    await page.waitForFunction(
      (first: ReadonlyArray<string>) => {
        const doc = (globalThis as unknown as {
          document: { querySelectorAll: (s: string) => ArrayLike<{ getAttribute: (n: string) => string | null; querySelector: (s: string) => { textContent: string | null } | null }> }
        }).document
        const now = Array.from(doc.querySelectorAll("[data-stack='demo-production'] [data-row]"))
          .map((e) => `${e.getAttribute("data-row")}=${e.querySelector(".badge")?.textContent ?? ""}`)
        return now.some((row) => !first.includes(row))
      },
      before,
      { timeout: 240_000, polling: 500 }
    )
    assert.isTrue(await page.evaluate(() => (globalThis as unknown as { notReloaded?: boolean }).notReloaded === true))
    await expectAccessible(page)
    await screenshot(page, "dashboard-demo-live")
    await page.close()
  }, 420_000)
})
