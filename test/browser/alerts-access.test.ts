import type { Browser } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { api, makeOrganization, onDatabase, type Organization, secretsKey, type WorldRuntime, worldRuntime } from "../support/alertWorld.ts"
import { expectAccessible, launchBrowser, screenshot, startPortalServer } from "../support/browser.ts"
import { FakeIdp } from "../support/oidcProvider.ts"
import type { Running } from "../support/process.ts"

/**
 * Access in Chromium against a real `statusgrid start`: accepting an
 * invitation (sign up, then join with the invited role; used, expired and
 * unknown links each a clear page), and signing in with Google through a
 * local OpenID Connect provider that speaks the real protocol
 * (test/support/oidcProvider.ts), coming back to the page that asked.
 */

let server: Running
let browser: Browser
let world: { runtime: WorldRuntime; databaseUrl: string }
let org: Organization
const google = new FakeIdp("google")
const microsoft = new FakeIdp("microsoft")

beforeAll(async () => {
  ;[world, browser] = await Promise.all([worldRuntime(), launchBrowser(), google.start(), microsoft.start()])
  server = await startPortalServer({
    DATABASE_URL: world.databaseUrl,
    SECRETS_KEY: secretsKey,
    OIDC_PROVIDERS: JSON.stringify([google.config(), microsoft.config()])
  })
  org = await makeOrganization(world.runtime, "Acme Payments", "acme")
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  await Promise.all([google.stop(), microsoft.stop()])
  await world?.runtime.dispose()
})

const invite = async (email: string, role: "admin" | "member" | "viewer") =>
  `${server.url}${String((await api(server.url, org.adminKey, "POST", "/invitations", { email, role }))["accept_url"])}`

const roleOf = async (email: string) => {
  const members = (await api(server.url, org.adminKey, "GET", "/members"))["data"] as ReadonlyArray<{ email: string; role: string }>
  return members.find((m) => m.email === email)?.role
}

describe("access in Chromium", () => {
  it("an invitation: shows the organization and role, sign up, join with the invited role; then a used link says so", async () => {
    const link = await invite("lin@example.com", "member")
    const context = await browser.newContext({ viewport: { width: 1200, height: 800 } })
    const page = await context.newPage()
    await page.goto(link)
    await page.getByRole("heading", { level: 1, name: "Join Acme Payments" }).waitFor()
    assert.include(await page.locator("main").innerText(), "An admin invited lin@example.com to join as member")
    await expectAccessible(page)
    await screenshot(page, "alerts-access-invitation")

    await page.getByRole("link", { name: "Create an account" }).click()
    await page.waitForURL("**/signup?next=*")
    await page.getByLabel("Your name").fill("Lin Chen")
    await page.getByLabel("E-mail").fill("lin@example.com")
    await page.getByLabel("Password").fill("a long enough password")
    await page.getByRole("button", { name: "Create account" }).click()
    await page.waitForURL(link)
    await expectAccessible(page)
    await page.getByRole("button", { name: "Join Acme Payments as member" }).click()
    await page.waitForURL("**/dashboard/acme")
    await page.getByRole("heading", { level: 1, name: "Acme Payments" }).waitFor()
    assert.strictEqual(await roleOf("lin@example.com"), "member")
    await expectAccessible(page)
    await screenshot(page, "alerts-access-invitation-joined")

    // The same link again: already used, a clear page (410), and the way in for a member.
    const again = await page.goto(link)
    assert.strictEqual(again?.status(), 410)
    await page.getByRole("heading", { level: 1, name: "This invitation was already used" }).waitFor()
    await page.getByRole("link", { name: "Open Acme Payments" }).waitFor()
    await expectAccessible(page)
    await context.close()
  })

  it("expired, revoked and unknown invitation links are clear pages, never a 500", async () => {
    const expired = await invite("late@example.com", "viewer")
    await onDatabase(world.runtime, (sql) => sql`UPDATE invitations SET created_at = now() - interval '8 days', expires_at = now() - interval '1 hour' WHERE email = 'late@example.com'`)
    const page = await browser.newPage({ viewport: { width: 360, height: 740 } })
    const answer = await page.goto(expired)
    assert.strictEqual(answer?.status(), 410)
    await page.getByRole("heading", { level: 1, name: "This invitation has expired" }).waitFor()
    await expectAccessible(page)
    await screenshot(page, "alerts-access-invitation-expired-360")

    const revoked = await invite("gone@example.com", "member")
    const { id } = ((await api(server.url, org.adminKey, "GET", "/invitations"))["data"] as Array<{ id: string; email: string }>).find((i) => i.email === "gone@example.com")!
    await api(server.url, org.adminKey, "DELETE", `/invitations/${id}`)
    assert.strictEqual((await page.goto(revoked))?.status(), 410)
    await page.getByRole("heading", { level: 1, name: "This invitation was withdrawn" }).waitFor()

    assert.strictEqual((await page.goto(`${server.url}/invite/not-a-real-token`))?.status(), 404)
    await page.getByRole("heading", { level: 1, name: "No invitation at this link" }).waitFor()
    await expectAccessible(page)
    await page.close()
  })

  it("Google sign-in through the OIDC stand-in (state, nonce, PKCE), back to the invitation that asked, then join", async () => {
    const link = await invite("ada@example.com", "viewer")
    google.person = { sub: "google-ada-1815", email: "ada@example.com", email_verified: true, name: "Ada Lovelace" }
    const context = await browser.newContext({ viewport: { width: 1200, height: 800 } })
    const page = await context.newPage()
    await page.goto(link)
    await page.getByRole("link", { name: "Sign in to accept" }).click()
    await page.waitForURL("**/signin?next=*")
    await page.getByRole("link", { name: "Continue with Google" }).waitFor()
    await page.getByRole("link", { name: "Continue with Microsoft" }).waitFor()
    await expectAccessible(page)
    await screenshot(page, "alerts-access-signin-providers")

    const tokensBefore = google.hits.token
    await page.getByRole("link", { name: "Continue with Google" }).click()
    await page.waitForURL(link)
    assert.strictEqual(google.hits.token, tokensBefore + 1, "the code was exchanged at the token endpoint")
    // Signed in (the header names the person), and the pending sign-in cookie is gone.
    await page.getByText("Ada Lovelace").first().waitFor()
    assert.isUndefined((await context.cookies()).find((c) => c.name === "sg_oidc"))
    await page.getByRole("button", { name: "Join Acme Payments as viewer" }).click()
    await page.waitForURL("**/dashboard/acme")
    assert.strictEqual(await roleOf("ada@example.com"), "viewer")
    await expectAccessible(page)
    await screenshot(page, "alerts-access-oidc-joined")
    await context.close()
  })

  it("a callback that is not this browser's sign-in, or an unknown provider, is refused with a page", async () => {
    const forged = await fetch(`${server.url}/signin/google/callback?code=abc&state=forged`)
    assert.strictEqual(forged.status, 401)
    assert.include(await forged.text(), "Sign-in failed")
    const denied = await fetch(`${server.url}/signin/google/callback?error=access_denied&state=x`)
    assert.strictEqual(denied.status, 401)
    assert.include(await denied.text(), "access_denied")
    const unknown = await fetch(`${server.url}/signin/github`, { redirect: "manual" })
    assert.strictEqual(unknown.status, 404)
    // Starting sets the pending cookie (HttpOnly, Lax, /signin) and sends the browser to the provider with PKCE S256.
    const start = await fetch(`${server.url}/signin/microsoft?next=/orgs`, { redirect: "manual" })
    assert.strictEqual(start.status, 302)
    const to = new URL(start.headers.get("location")!)
    assert.strictEqual(to.origin, microsoft.base)
    assert.strictEqual(to.searchParams.get("code_challenge_method"), "S256")
    assert.strictEqual(to.searchParams.get("redirect_uri"), `${server.url}/signin/microsoft/callback`)
    assert.match(start.headers.get("set-cookie") ?? "", /^sg_oidc=[^;]+; Max-Age=600; Path=\/signin; HttpOnly; SameSite=Lax$/)
  })
})
