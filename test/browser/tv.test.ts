import type { Browser } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { expectAccessible, launchBrowser, screenshot } from "../support/browser.ts"
import { runCli } from "../support/process.ts"
import { manualSource, openIncident, type ScreenWorld, stackOf, startScreenWorld } from "../support/screens.ts"

let world: ScreenWorld
let browser: Browser
beforeAll(async () => {
  ;[world, browser] = await Promise.all([startScreenWorld(), launchBrowser()])
}, 120_000)
afterAll(async () => {
  await browser?.close()
  await world?.stop()
})

describe("TV mode in Chromium", () => {
  it("rotates through a TV link's stacks without sign-in, shows the feed, follows a change live, and is 404 once revoked", async () => {
    const payments = await manualSource(world, "Payments API")
    const vault = await manualSource(world, "Card vault")
    const mail = await manualSource(world, "E-mail relay", "degraded")
    const auth = await manualSource(world, "Auth service")
    const storage = await manualSource(world, "Object storage")
    const checkout = await stackOf(world, "Checkout", [payments.key, vault.key, mail.key])
    const platform = await stackOf(world, "Platform", [auth.key, storage.key])
    await openIncident(world, mail.key, "Delayed delivery to some providers", "We have identified a backlog in the outbound queue and are draining it.")

    const created = await world.api("POST", "/tv-links", { name: "Office lobby", stack_ids: [checkout.id, platform.id], rotation_s: 2 })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const tvUrl = `${world.server.url}${created.body.url as string}`

    const head = await fetch(tvUrl)
    assert.strictEqual(head.status, 200)
    assert.include(head.headers.get("x-robots-tag") ?? "", "noindex")

    // A fresh browser: no session, no login page.
    const context = await browser.newContext({ viewport: { width: 1920, height: 1080 } })
    const page = await context.newPage()
    await page.goto(tvUrl)
    assert.strictEqual(await page.title(), "Office lobby · TV · statusgrid")
    await page.getByRole("heading", { level: 1, name: "Checkout" }).waitFor()
    assert.isTrue(await page.evaluate("document.documentElement.classList.contains('theme-dark')") as boolean)
    assert.strictEqual(await page.locator('meta[name="robots"]').getAttribute("content"), "noindex, nofollow")
    assert.include(await page.locator(".tv-feed").innerText(), "Delayed delivery to some providers")
    assert.include(await page.locator(".banner").innerText(), "Degraded Performance")
    await page.locator(".live-state.is-live").waitFor()
    await expectAccessible(page)

    // Rotation: the second stack comes by itself.
    await page.getByRole("heading", { level: 1, name: "Platform" }).waitFor({ timeout: 15_000 })
    assert.include(await page.locator(".screen-items").innerText(), "Auth service")

    // A change published while the screen is open reaches it without a reload: in the feed and on the stack.
    const changed = await world.api("PATCH", `/custom-sources/${auth.key}`, { status: "down" })
    assert.strictEqual(changed.status, 200, JSON.stringify(changed.body))
    await page.locator(".tv-change", { hasText: "Auth service: operational → major outage" }).waitFor({ timeout: 15_000 })
    await page.getByRole("heading", { level: 1, name: "Platform" }).waitFor({ timeout: 15_000 })
    await page.locator(".banner", { hasText: "Major Outage" }).waitFor({ timeout: 15_000 })
    await expectAccessible(page)
    await screenshot(page, "tv-mode")

    await page.setViewportSize({ width: 360, height: 740 })
    const overflow = await page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") as number
    assert.isAtMost(overflow, 0)
    await screenshot(page, "tv-mode-360")

    const revoked = await world.api("DELETE", `/tv-links/${created.body.id as string}`)
    assert.strictEqual(revoked.status, 204)
    assert.strictEqual((await fetch(tvUrl)).status, 404)
    // The open screen finds out at its next read and shows the 404 page.
    await page.getByRole("heading", { level: 1, name: "Page not found" }).waitFor({ timeout: 60_000 })
    await context.close()
  })

  it("/tv/<org> signed out asks to sign in (a member's screen); an unknown TV token is 404, never a login page", async () => {
    const signedOut = await fetch(`${world.server.url}/tv/${world.organization.slug}`, { redirect: "manual" })
    assert.strictEqual(signedOut.status, 302)
    assert.strictEqual(signedOut.headers.get("location"), `/signin?next=%2Ftv%2F${world.organization.slug}`)
    const unknown = await fetch(`${world.server.url}/tv/tv_${"x".repeat(32)}`)
    assert.strictEqual(unknown.status, 404)
  })

  it("/tv/<org> for a signed-in member: the Pro-plan notice on Free, every stack's screen once on Pro, live on the session's stream", async () => {
    const page = await browser.newPage({ viewport: { width: 1920, height: 1080 } })
    await page.goto(`${world.server.url}/signup`)
    await page.getByLabel("Your name").fill("Wally Wall")
    await page.getByLabel("E-mail").fill("wally@example.com")
    await page.getByLabel("Password").fill("a screen on every wall")
    await page.getByRole("button", { name: "Create account" }).click()
    await page.waitForURL("**/orgs/new")
    await page.getByLabel("Organization name").fill("Wall Company")
    await page.getByLabel("Short name").fill("wallco")
    await page.getByRole("button", { name: "Create organization" }).click()
    await page.waitForURL("**/dashboard/wallco")

    await page.goto(`${world.server.url}/tv/wallco`)
    await page.getByRole("heading", { level: 1, name: "TV mode is a Pro-plan feature" }).waitFor()
    assert.include(await page.locator(".tv-upgrade").innerText(), "tv_dashboard")
    await expectAccessible(page)
    await screenshot(page, "tv-org-free")

    const moved = await runCli(["org", "plan", "wallco", "pro"], world.env)
    assert.strictEqual(moved.code, 0, moved.stderr)
    await page.goto(`${world.server.url}/tv/wallco?rotation=5`)
    assert.strictEqual(await page.title(), "Wall Company · TV · statusgrid")
    await page.getByRole("heading", { level: 1, name: "No stacks to show yet" }).waitFor()
    await page.locator(".live-state.is-live").waitFor()
    await expectAccessible(page)
    await screenshot(page, "tv-org")
    await page.close()
  })

  it("survives a network drop: 'Reconnecting…' with the last update time, then live again with what changed meanwhile", async () => {
    const gateway = await manualSource(world, "Payment gateway")
    const stack = await stackOf(world, "Payments", [gateway.key])
    const created = await world.api("POST", "/tv-links", { name: "Ops wall", stack_ids: [stack.id], rotation_s: 30 })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const page = await browser.newPage({ viewport: { width: 1920, height: 1080 } })
    await page.goto(`${world.server.url}${created.body.url as string}`)
    await page.locator(".live-state.is-live").waitFor()
    let stoppedAt = 0

    // The server goes away; while it is down the source's status changes in the database (no delta
    // is published), so the screen can only learn it by reading the state again when it reconnects.
    // The last update shown is one heard before the server stopped (a ping may have moved it since the
    // page opened), not a time made up while it is down.
    await world.restart(async () => {
      stoppedAt = Date.now()
      await page.locator(".live-state.is-down", { hasText: "Reconnecting…" }).waitFor({ timeout: 90_000 })
      assert.include(await page.locator(".live-state").innerText(), "last update")
      assert.isAtMost(Date.parse((await page.locator(".live-state time").getAttribute("datetime"))!), stoppedAt)
      await expectAccessible(page)
      await screenshot(page, "tv-reconnecting")
      await world.sql("UPDATE sources SET status = 'down' WHERE key = $1", [gateway.key])
    })
    await page.locator(".live-state.is-live").waitFor({ timeout: 90_000 })
    await page.locator(".banner", { hasText: "Major Outage" }).waitFor({ timeout: 90_000 })
    await page.locator(".tv-change", { hasText: "Payment gateway: operational → major outage" }).waitFor({ timeout: 90_000 })
    assert.isAbove(Date.parse((await page.locator(".live-state time").getAttribute("datetime"))!), stoppedAt)
    await page.close()
  }, 300_000)
})
