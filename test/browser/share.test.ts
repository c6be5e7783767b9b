import type { Browser } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { expectAccessible, launchBrowser, screenshot, step } from "../support/browser.ts"
import { manualSource, openIncident, type ScreenWorld, stackOf, startScreenWorld } from "../support/screens.ts"

/** The status a plain GET answers with, given up after 15 s. */
const statusOf = async (url: string) => (await fetch(url, { signal: AbortSignal.timeout(15_000) })).status

let world: ScreenWorld
let browser: Browser
beforeAll(async () => {
  ;[world, browser] = await Promise.all([startScreenWorld(), launchBrowser()])
}, 120_000)
afterAll(async () => {
  await browser?.close()
  await world?.stop()
})

describe("public share page in Chromium", () => {
  it("shows a public stack's live status to anyone, noindex, nothing else of the organization; 404 at once after revocation", async () => {
    const api = await manualSource(world, "Storefront API")
    const search = await manualSource(world, "Search")
    const cdn = await manualSource(world, "Image CDN", "degraded")
    const hidden = await manualSource(world, "Internal billing")
    await stackOf(world, "Back office", [hidden.key])
    const stack = await stackOf(world, "Shop status", [api.key, search.key, cdn.key], {
      visibility: "public",
      description: "What our shop depends on, live."
    })
    await openIncident(world, cdn.key, "Slow image loading in Europe", "Our CDN provider is rerouting traffic around a congested region.")
    assert.isString(stack.share_url)
    const shareUrl = `${world.server.url}${stack.share_url!}`

    const response = await fetch(shareUrl)
    assert.strictEqual(response.status, 200)
    assert.include(response.headers.get("x-robots-tag") ?? "", "noindex")

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await context.newPage()
    await page.goto(shareUrl)
    assert.strictEqual(await page.title(), "Shop status · status · statusgrid")
    assert.strictEqual(await page.locator('meta[name="robots"]').getAttribute("content"), "noindex, nofollow")
    await page.getByRole("heading", { level: 1, name: "Shop status" }).waitFor()
    assert.include(await page.locator(".banner").innerText(), "Degraded Performance")
    const text = await page.locator("main").innerText()
    for (const shown of ["Storefront API", "Search", "Image CDN", "Slow image loading in Europe", "What our shop depends on, live."]) assert.include(text, shown)
    // Nothing of the organization beyond the stack: not its name, its other stacks or its sources.
    const html = await page.content()
    for (const kept of [world.organization.name, world.organization.slug + "/", "Back office", "Internal billing", stack.id]) assert.notInclude(html, kept)
    await page.locator(".live-state.is-live").waitFor()
    await expectAccessible(page)

    // Live: a change reaches the open page without a reload.
    const changed = await world.api("PATCH", `/custom-sources/${search.key}`, { status: "down" })
    assert.strictEqual(changed.status, 200, JSON.stringify(changed.body))
    await page.locator(".screen-item", { hasText: "Search" }).locator(".badge", { hasText: "major outage" }).waitFor({ timeout: 15_000 })
    await page.locator(".banner", { hasText: "Partial Outage" }).waitFor()
    await expectAccessible(page)
    await screenshot(page, "share-page")

    await page.setViewportSize({ width: 360, height: 740 })
    const overflow = await page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") as number
    assert.isAtMost(overflow, 0)
    await screenshot(page, "share-page-360")

    // Revoking in the stack settings (private): the page and its stream answer 404 at once.
    const revoked = await step("revoke", world.api("PATCH", `/stacks/${stack.id}`, { visibility: "private" }))
    assert.strictEqual(revoked.status, 200)
    assert.strictEqual(await step("fetch the page", statusOf(shareUrl)), 404)
    assert.strictEqual(await step("fetch its state", statusOf(`${shareUrl}/state`)), 404)
    const token = stack.share_url!.split("/").at(-1)!
    assert.strictEqual(await step("fetch its stream", statusOf(`${world.server.url}/api/v1/share/${token}/stream`)), 404)
    // Opened again in a new tab: the open one reacts to the revocation itself (its stream ends, its
    // data reloads), and a navigation of that tab could be cut short by its own.
    await step("close the open tab", page.close())
    const later = await step("open a new tab", context.newPage())
    const again = await step("load the revoked page", later.goto(shareUrl, { timeout: 20_000 }), 25_000)
    assert.strictEqual(again?.status(), 404)
    await step("see Page not found", later.getByRole("heading", { level: 1, name: "Page not found" }).waitFor({ timeout: 15_000 }))
    assert.notInclude(await later.content(), "Shop status")
    await step("axe on the 404 page", expectAccessible(later))
    await screenshot(later, "share-page-revoked")
    await context.close()
  })
})
