import type { Browser } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { expectAccessible, launchBrowser, screenshot, startPortalServer } from "../support/browser.ts"
import type { Running } from "../support/process.ts"

/**
 * The portal under its Content-Security-Policy (services/api/SecurityHeaders.ts): pages hydrate with
 * the nonce the server gave them, and a script injected into a page (what an XSS would add) does not
 * run, and the browser tests' accessibility check reports it.
 */
let server: Running
let browser: Browser

beforeAll(async () => {
  server = await startPortalServer()
  browser = await launchBrowser()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
}, 60_000)

describe("the portal's Content-Security-Policy in Chromium", () => {
  it("runs the page's own scripts (hydrated: typing searches) and refuses an injected one", async () => {
    const page = await browser.newPage()
    await page.goto(`${server.url}/catalog`)
    // Hydrated: searching as one types is the client's work (a server-rendered form needs a submit).
    await page.getByLabel("Search", { exact: true }).pressSequentially("git", { delay: 20 })
    await page.waitForURL("**/catalog?q=git")
    await page.locator(".source-row").first().waitFor()
    await expectAccessible(page)

    // What an injected inline script would do: not run, and reported.
    await page.evaluate(() => {
      const doc = (globalThis as unknown as { document: { createElement(tag: string): { textContent: string }; body: { append(node: unknown): void } } }).document
      const script = doc.createElement("script")
      script.textContent = "document.title = 'injected'"
      doc.body.append(script)
    })
    assert.notStrictEqual(await page.title(), "injected")
    let reported = ""
    try {
      await expectAccessible(page)
    } catch (error) {
      reported = String(error)
    }
    assert.include(reported, "Content-Security-Policy refused")
    await screenshot(page, "csp-catalog")
    await page.close()
  })
})
