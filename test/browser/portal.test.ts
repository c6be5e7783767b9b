import type { Browser } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { expectAccessible, launchBrowser, screenshot, startPortalServer } from "../support/browser.ts"
import type { Running } from "../support/process.ts"

let server: Running
let browser: Browser
beforeAll(async () => {
  ;[server, browser] = await Promise.all([startPortalServer(), launchBrowser()])
})
afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

describe("portal in Chromium", () => {
  it("serves the portal beside the API on one port: pages, immutable assets, the API's own 404, health", async () => {
    const home = await fetch(server.url)
    assert.strictEqual(home.status, 200)
    assert.match(home.headers.get("content-type") ?? "", /^text\/html/)
    const html = await home.text()
    const asset = html.match(/href="(\/assets\/[^"]+\.css)"/)?.[1]
    assert.isDefined(asset)
    const css = await fetch(`${server.url}${asset}`)
    assert.strictEqual(css.status, 200)
    assert.strictEqual(css.headers.get("cache-control"), "public, max-age=31536000, immutable")
    assert.include(await css.text(), "--status-ok")

    const missing = await fetch(`${server.url}/no/such/page`)
    assert.strictEqual(missing.status, 404)
    assert.include(await missing.text(), "Page not found")
    const api = await fetch(`${server.url}/api/v1/no-such-endpoint`)
    assert.strictEqual(api.status, 404)
    assert.strictEqual(((await api.json()) as { code: string }).code, "not_found")
    assert.strictEqual((await fetch(`${server.url}/healthz`)).status, 200)
    const icon = await fetch(`${server.url}/favicon.ico`)
    assert.strictEqual(icon.status, 200)
    assert.match(icon.headers.get("content-type") ?? "", /^image\/svg\+xml/)
    // A signed-out dashboard link returns to itself after sign-in.
    const dashboard = await fetch(`${server.url}/dashboard/acme`, { redirect: "manual" })
    assert.strictEqual(dashboard.status, 302)
    assert.strictEqual(dashboard.headers.get("location"), "/signin?next=%2Fdashboard%2Facme")
  })

  it("leads a new person from the landing page through sign-up and a new organization to its dashboard", async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } })
    await page.goto(server.url)
    assert.strictEqual(await page.title(), "statusgrid · is it us or them?")
    await expectAccessible(page)
    await screenshot(page, "portal-landing")
    await page.emulateMedia({ colorScheme: "dark" })
    await expectAccessible(page)
    await screenshot(page, "portal-landing-dark")
    await page.emulateMedia({ colorScheme: "light" })

    await page.getByRole("link", { name: "Create an account" }).click()
    await page.waitForURL("**/signup")
    await expectAccessible(page)
    // A bad address and a short password: the Schema's messages appear next to the fields, the name is kept.
    await page.getByLabel("Your name").fill("Ada Lovelace")
    await page.getByLabel("E-mail").fill("not-an-address")
    await page.getByLabel("Password").fill("short")
    await page.getByRole("button", { name: "Create account" }).click()
    await page.locator("#field-email-error").waitFor()
    assert.include(await page.locator("#field-email-error").innerText(), "must be an e-mail address")
    assert.include(await page.locator("#field-password-error").innerText(), "10 to 200 characters")
    assert.strictEqual(await page.getByLabel("Your name").inputValue(), "Ada Lovelace")
    await expectAccessible(page)
    await screenshot(page, "portal-signup-errors")

    await page.getByLabel("E-mail").fill("ada@example.com")
    await page.getByLabel("Password").fill("analytical engine 1843")
    await page.getByRole("button", { name: "Create account" }).click()
    await page.waitForURL("**/orgs/new")
    await page.getByRole("heading", { level: 1, name: "Create your organization" }).waitFor()
    assert.strictEqual(await page.title(), "Create an organization · statusgrid")
    await expectAccessible(page)

    await page.getByLabel("Organization name").fill("Analytical Engines")
    await page.getByLabel("Short name").fill("engines")
    await page.getByRole("button", { name: "Create organization" }).click()
    await page.waitForURL("**/dashboard/engines")
    await page.getByRole("heading", { level: 1, name: "Analytical Engines" }).waitFor()
    assert.strictEqual(await page.title(), "Analytical Engines · statusgrid")
    assert.include(await page.locator("header").innerText(), "Ada Lovelace")
    await expectAccessible(page)
    await screenshot(page, "portal-dashboard")

    // At 360 px the header wraps and nothing scrolls sideways.
    await page.setViewportSize({ width: 360, height: 740 })
    const overflow = await page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") as number
    assert.isAtMost(overflow, 0)
    await screenshot(page, "portal-dashboard-360")
    await page.close()
  })

  it("shows the 419 page, not an error, for a form posted with a forged CSRF token", async () => {
    // Without JavaScript: the forms work as plain HTML, and the document itself answers 419.
    const context = await browser.newContext({ javaScriptEnabled: false })
    const page = await context.newPage()
    await page.goto(`${server.url}/signup`)
    await page.getByLabel("Your name").fill("Grace Hopper")
    await page.getByLabel("E-mail").fill("grace@example.com")
    await page.getByLabel("Password").fill("compiler pioneer 1952")
    await page.getByRole("button", { name: "Create account" }).click()
    await page.waitForURL("**/orgs/new")

    await page.locator('main input[name="csrf"]').evaluate((input) => {
      ;(input as unknown as { value: string }).value = "forged-token"
    })
    await page.getByLabel("Organization name").fill("Navy")
    await page.getByLabel("Short name").fill("navy")
    const response = page.waitForResponse((r) => r.request().method() === "POST" && r.request().isNavigationRequest())
    await page.getByRole("button", { name: "Create organization" }).click()
    assert.strictEqual((await response).status(), 419)
    await page.getByRole("heading", { level: 1, name: "This page has expired" }).waitFor()
    assert.strictEqual(await page.title(), "This page has expired · statusgrid")
    // The session is still valid: the header says who is signed in, and its sign-out works (its CSRF token is the session's).
    const account = page.getByRole("navigation", { name: "Account" })
    assert.strictEqual((await account.locator(".who").textContent())?.trim(), "Grace Hopper")
    assert.strictEqual(await account.getByRole("link", { name: "Sign in" }).count(), 0)
    assert.strictEqual(await page.getByRole("link", { name: "Sign in again" }).count(), 0)
    await screenshot(page, "portal-419")
    // axe needs scripts: the same document, in a page with JavaScript.
    const html = await page.content()
    await account.getByRole("button", { name: "Sign out" }).click()
    await page.getByRole("navigation", { name: "Account" }).getByRole("link", { name: "Sign in" }).waitFor()
    await context.close()
    // Signed out, the same 419 says so and offers to sign in again.
    const signedOut = await fetch(`${server.url}/orgs/new`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url },
      body: "csrf=forged-token&name=Navy&slug=navy"
    })
    assert.strictEqual(signedOut.status, 419)
    const signedOutHtml = await signedOut.text()
    assert.include(signedOutHtml, "Sign in again")
    assert.notInclude(signedOutHtml, "Grace Hopper")
    const checked = await browser.newPage()
    await checked.goto(server.url)
    // Without the document's scripts: their nonce was another page's, which this page's CSP refuses (axe needs none of them).
    await checked.setContent(html.replaceAll(/<script\b[^>]*>[\s\S]*?<\/script>/gu, ""))
    await expectAccessible(checked)
    await checked.close()
  })
})
