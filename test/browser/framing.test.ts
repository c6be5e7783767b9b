import { Effect } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { Browser, Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { ApiKeys } from "../../services/orgs/ApiKeys.ts"
import { api } from "../support/alertWorld.ts"
import { expectAccessible, launchBrowser, screenshot } from "../support/browser.ts"
import { people, type SettingsWorld, signIn, startSettingsWorld } from "../support/monitorsWorld.ts"

/**
 * Another site framing the organization's TV link and share page, in Chromium (issue #19): a page served
 * from another local origin (a tiny HTTP server on another port) holds both in iframes. Until an Admin
 * lists that origin on the TV links settings page, Chromium refuses to show them (X-Frame-Options DENY,
 * CSP frame-ancestors 'none'); once listed, they load there, and still not for an origin not listed.
 */

let world: SettingsWorld
let browser: Browser
let outer: Server
let outerPort = 0
let tvPath = ""
let sharePath = ""

beforeAll(async () => {
  ;[world, browser] = await Promise.all([startSettingsWorld(), launchBrowser()])
  const key = await world.run(ApiKeys.use((k) => k.issue(world.org.id, "framing test", "admin")).pipe(Effect.provide(ApiKeys.layer)))
  const source = await api(world.server.url, key, "POST", "/custom-sources", { name: "Payments API", type: "manual", status: "operational" })
  const stack = await api(world.server.url, key, "POST", "/stacks", { name: "Checkout", visibility: "public" })
  await api(world.server.url, key, "POST", `/stacks/${String(stack["id"])}/items`, { kind: "source", source_key: source["key"] })
  const tv = await api(world.server.url, key, "POST", "/tv-links", { name: "Lobby wall", stack_ids: [stack["id"]] })
  tvPath = String(tv["url"])
  sharePath = String(stack["share_url"])
  // The other site: one page framing the TV link and the share page of the server under test.
  outer = createServer((request, response) => {
    if (request.url !== "/") {
      response.writeHead(404).end()
      return
    }
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(
      `<!doctype html><html lang="en"><head><title>Intranet status wall</title></head><body>` +
        `<main><h1>Intranet status wall</h1>` +
        `<iframe id="tv" title="TV link" src="${world.server.url}${tvPath}" width="960" height="540"></iframe>` +
        `<iframe id="share" title="Share page" src="${world.server.url}${sharePath}" width="960" height="540"></iframe>` +
        `</main></body></html>`
    )
  })
  await new Promise<void>((resolve) => outer.listen(0, "127.0.0.1", resolve))
  outerPort = (outer.address() as AddressInfo).port
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await new Promise<void>((resolve) => (outer === undefined ? resolve() : outer.close(() => resolve())))
  await world?.close()
})

/**
 * Opens the other site's page at `origin` and tells, for each iframe, whether the statusgrid page
 * loaded in it (its stack's name is shown there). A refused frame holds Chromium's error page instead.
 */
const framedFrom = async (origin: string) => {
  const page = await browser.newPage({ viewport: { width: 1000, height: 1200 } })
  const refusals: Array<string> = []
  page.on("console", (m) => {
    if (m.text().includes("frame-ancestors") || m.text().includes("X-Frame-Options")) refusals.push(m.text())
  })
  await page.goto(`${origin}/`)
  await page.getByRole("heading", { name: "Intranet status wall" }).waitFor()
  // Each frame ends either showing the stack's name or on Chromium's error page (chrome-error://…).
  const shows = async (id: string): Promise<boolean> => {
    const heading = page.frameLocator(`#${id}`).getByRole("heading", { level: 1, name: "Checkout" })
    const deadline = Date.now() + 20_000
    while (Date.now() < deadline) {
      if (await heading.count() > 0) return true
      const frame = await (await page.locator(`#${id}`).elementHandle())?.contentFrame()
      if (frame?.url().startsWith("chrome-error:") === true) return false
      await page.waitForTimeout(100)
    }
    throw new Error(`the frame #${id} neither loaded nor was refused in 20 s`)
  }
  const result = { tv: await shows("tv"), share: await shows("share") }
  // A refused frame is Chromium's error page, never the statusgrid page.
  const frameUrls = page.frames().filter((f) => f !== page.mainFrame()).map((f) => f.url())
  return { page, ...result, refusals, frameUrls }
}

const settingsPage = async (): Promise<Page> => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } })
  const page = await context.newPage()
  await signIn(page, world.server, people.admin, `/settings/${world.org.slug}/tv`)
  return page
}

describe("framing the TV link and share page from another site, in Chromium", () => {
  it("refused by default; allowed for the origin an Admin lists on the TV links page; refused for any other origin", async () => {
    const allowed = `http://localhost:${outerPort}`

    // Nothing listed: Chromium refuses both frames.
    const before = await framedFrom(allowed)
    assert.isFalse(before.tv, "the TV link is not shown in another site's frame by default")
    assert.isFalse(before.share, "nor the share page")
    assert.deepStrictEqual(before.frameUrls, ["chrome-error://chromewebdata/", "chrome-error://chromewebdata/"])
    // Chromium says why (the console of the page that framed them).
    assert.strictEqual(before.refusals.filter((r) => r.includes(`"frame-ancestors 'none'"`)).length, 2, before.refusals.join(" | "))
    await before.page.close()

    // The Admin lists the other site's origin on the TV links settings page: a bad value first.
    const page = await settingsPage()
    const section = page.getByRole("region", { name: "Embedding in other sites" })
    await section.waitFor()
    const field = section.getByLabel("Sites allowed to embed")
    assert.strictEqual(await field.inputValue(), "")
    await field.fill(`${allowed}\nhttps://intranet.example.com/status`)
    await section.getByRole("button", { name: "Save embedding" }).click()
    await section.locator(".field-error").waitFor()
    assert.include(await section.locator(".field-error").innerText(), "“https://intranet.example.com/status”")
    assert.strictEqual(await field.getAttribute("aria-invalid"), "true")
    assert.strictEqual(await field.inputValue(), `${allowed}\nhttps://intranet.example.com/status`, "what was typed is kept")
    await expectAccessible(page)
    await screenshot(page, "settings-framing-error")

    await field.fill(`${allowed}\nhttps://intranet.example.com`)
    await section.getByRole("button", { name: "Save embedding" }).click()
    await section.getByRole("status").filter({ hasText: "Saved: 2 sites may embed these pages." }).waitFor()
    assert.strictEqual(await section.getByLabel("Sites allowed to embed").inputValue(), `${allowed}\nhttps://intranet.example.com`)
    await expectAccessible(page)
    await screenshot(page, "settings-framing")
    await page.context().close()

    // The other site at the listed origin: both frames show the pages.
    const after = await framedFrom(allowed)
    assert.isTrue(after.tv, `the TV link loads in the listed site's frame: ${after.refusals.join(" | ")}`)
    assert.isTrue(after.share, `the share page too: ${after.refusals.join(" | ")}`)
    assert.deepStrictEqual(after.refusals, [])
    await after.page.frameLocator("#tv").locator(".live-state.is-live").waitFor({ timeout: 15_000 })

    // The same page served from an origin not listed (another host name for the same server): refused still.
    const unlisted = await framedFrom(`http://127.0.0.1:${outerPort}`)
    assert.isFalse(unlisted.tv, "an origin not listed cannot frame the TV link")
    assert.isFalse(unlisted.share, "nor the share page")
    assert.strictEqual(
      unlisted.refusals.filter((r) => r.includes(`"frame-ancestors ${allowed} https://intranet.example.com"`)).length,
      2,
      unlisted.refusals.join(" | ")
    )
    await unlisted.page.close()

    await expectAccessible(after.page)
    await screenshot(after.page, "framing-allowed")
    await after.page.close()
  })
})
