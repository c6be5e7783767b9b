import type { Browser, Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { makeOrganization, onDatabase, type Organization, secretsKey, type WorldRuntime, worldRuntime } from "../support/alertWorld.ts"
import { expectAccessible, launchBrowser, screenshot, startPortalServer } from "../support/browser.ts"
import type { Running } from "../support/process.ts"

/**
 * `/profile` in Chromium against a real `statusgrid start` on PostgreSQL:
 * name, password (the current one required), and signing out the other sessions.
 */

let server: Running
let browser: Browser
let world: { runtime: WorldRuntime; databaseUrl: string }
let org: Organization

beforeAll(async () => {
  ;[world, browser] = await Promise.all([worldRuntime(), launchBrowser()])
  server = await startPortalServer({ DATABASE_URL: world.databaseUrl, SECRETS_KEY: secretsKey })
  org = await makeOrganization(world.runtime, "Acme Payments", "acme")
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  await world?.runtime.dispose()
})

const signIn = async (page: Page, password: string) => {
  await page.goto(`${server.url}/signin`)
  await page.getByLabel("E-mail").fill(org.admin.email)
  await page.getByLabel("Password").fill(password)
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.waitForURL((url) => !url.pathname.startsWith("/signin"), { timeout: 60_000 })
}

const nameInDatabase = () =>
  onDatabase(world.runtime, (sql) => sql<{ name: string }>`SELECT name FROM users WHERE email = ${org.admin.email}`).then((r) => r[0]!.name)
const passwordHash = () =>
  onDatabase(world.runtime, (sql) => sql<{ h: string }>`SELECT password_hash AS h FROM users WHERE email = ${org.admin.email}`).then((r) => r[0]!.h)

describe("the profile page in Chromium", () => {
  it("change the name; a wrong current password is a field error; the other browser is signed out", async () => {
    const main = await browser.newContext({ viewport: { width: 1200, height: 900 } })
    const other = await browser.newContext({ viewport: { width: 360, height: 740 } })
    const page = await main.newPage()
    const elsewhere = await other.newPage()
    await signIn(page, org.admin.password)
    await signIn(elsewhere, org.admin.password)

    await page.getByRole("link", { name: "Profile" }).click()
    await page.waitForURL("**/profile")
    await page.getByRole("heading", { level: 1, name: "Profile" }).waitFor()
    assert.strictEqual(await page.title(), "Profile · statusgrid")
    await expectAccessible(page)

    // An empty name: the message next to the field, nothing saved.
    await page.getByLabel("Your name").fill("   ")
    await page.getByRole("button", { name: "Save name" }).click()
    await page.locator("#field-name-error").waitFor()
    assert.strictEqual(await nameInDatabase(), "Grace Hopper")

    await page.getByLabel("Your name").fill("Grace B. Hopper")
    await page.getByRole("button", { name: "Save name" }).click()
    await page.getByText("Your name was changed.").waitFor()
    assert.strictEqual(await nameInDatabase(), "Grace B. Hopper")
    await page.locator(".who", { hasText: "Grace B. Hopper" }).waitFor()

    // A wrong current password: its field's error, the hash unchanged, the other session still open.
    const hash = await passwordHash()
    await page.getByLabel("Current password").fill("not my password")
    await page.getByLabel("New password").fill("a brand new passphrase")
    await page.getByRole("button", { name: "Change password" }).click()
    await page.locator("#field-current_password-error").waitFor()
    assert.include(await page.locator("#field-current_password-error").innerText(), "wrong")
    assert.strictEqual(await passwordHash(), hash)
    // Too short a new one: its field's error.
    await page.getByLabel("Current password").fill(org.admin.password)
    await page.getByLabel("New password").fill("short")
    await page.getByRole("button", { name: "Change password" }).click()
    await page.locator("#field-new_password-error").waitFor()
    assert.strictEqual(await passwordHash(), hash)
    await expectAccessible(page)
    await screenshot(page, "profile-password-errors")
    assert.strictEqual((await elsewhere.goto(`${server.url}/profile`))?.status(), 200)

    // Sign out of other sessions: the other browser is signed out, this one stays.
    await page.getByRole("button", { name: "Sign out of other sessions" }).click()
    await page.getByText("Signed out of 1 other session.").waitFor()
    await elsewhere.goto(`${server.url}/profile`)
    await elsewhere.waitForURL("**/signin?next=*")
    assert.strictEqual((await page.goto(`${server.url}/profile`))?.status(), 200)

    // The password change itself: the new one signs in, the old one not.
    await page.getByLabel("Current password").fill(org.admin.password)
    await page.getByLabel("New password").fill("a brand new passphrase")
    await page.getByRole("button", { name: "Change password" }).click()
    await page.getByText("Your password was changed").waitFor()
    assert.notStrictEqual(await passwordHash(), hash)
    await elsewhere.goto(`${server.url}/signin`)
    await elsewhere.getByLabel("E-mail").fill(org.admin.email)
    await elsewhere.getByLabel("Password").fill(org.admin.password)
    await elsewhere.getByRole("button", { name: "Sign in" }).click()
    await elsewhere.getByRole("alert").waitFor()
    await signIn(elsewhere, "a brand new passphrase")
    await elsewhere.goto(`${server.url}/profile`)
    await elsewhere.getByRole("heading", { level: 1, name: "Profile" }).waitFor()
    await expectAccessible(elsewhere)
    await screenshot(elsewhere, "profile-360")
    await main.close()
    await other.close()
  })

  it("a forged or malformed profile POST: 419 without the CSRF token, 400 with the field named, never a 500", async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await signIn(page, "a brand new passphrase")
    await page.goto(`${server.url}/profile`)
    const csrf = await page.locator("input[name=csrf]").first().inputValue()
    const post = (form: Record<string, string>) => page.request.post(`${server.url}/profile`, { form, maxRedirects: 0 })
    assert.strictEqual((await post({ intent: "sessions" })).status(), 419)
    assert.strictEqual((await post({ intent: "name", name: "x".repeat(300), csrf })).status(), 400)
    assert.strictEqual((await post({ intent: "password", csrf })).status(), 400)
    assert.strictEqual((await post({ intent: "jump", csrf })).status(), 400)
    assert.strictEqual(await nameInDatabase(), "Grace B. Hopper")
    await context.close()
  })
})
