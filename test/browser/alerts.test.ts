import type { Browser } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import {
  api,
  deliveredAll,
  makeOrganization,
  type Organization,
  secretsKey,
  sessionCookie,
  startReceiver,
  type WorldRuntime,
  worldRuntime,
  writeAlert,
  type WrittenAlert
} from "../support/alertWorld.ts"
import { expectAccessible, launchBrowser, screenshot, startPortalServer } from "../support/browser.ts"
import type { Running } from "../support/process.ts"

/**
 * The alert page and the links an alert's message carries, in Chromium
 * against a real `statusgrid start`: the short link of an SMS, sign-in and
 * back to the same alert, its channels' delivery status (sent by the
 * server's own deliverer), Acknowledge; the signed acknowledgment link;
 * and every link statusgrid sends answering a real page.
 */

let server: Running
let browser: Browser
let world: { runtime: WorldRuntime; databaseUrl: string }
let receiver: Awaited<ReturnType<typeof startReceiver>>
let org: Organization
let stack: { id: string; name: string; slug: string }
let escalating: WrittenAlert
let viaLink: WrittenAlert
let orgWide: WrittenAlert

beforeAll(async () => {
  ;[world, browser, receiver] = await Promise.all([worldRuntime(), launchBrowser(), startReceiver()])
  server = await startPortalServer({
    DATABASE_URL: world.databaseUrl,
    SECRETS_KEY: secretsKey,
    NOTIFIER_ALLOW_PRIVATE: "true",
    NOTIFIER_POLL_MS: "100"
  })
  org = await makeOrganization(world.runtime, "Acme Payments", "acme")
  const created = await api(server.url, org.adminKey, "POST", "/stacks", { name: "Checkout" })
  stack = { id: String(created["id"]), name: "Checkout", slug: String(created["slug"]) }
  const channel = async (name: string, path: string) =>
    String((await api(server.url, org.adminKey, "POST", "/channels", { type: "webhook", name, settings: { url: `${receiver.base}${path}` } }))["id"])
  const onCall = await channel("On-call webhook", "/on-call")
  const ops = await channel("Ops chat relay", "/ops")
  const lead = await channel("Team lead pager", "/lead")
  const escalation = [{ delay_s: 3600, channel_ids: [lead] }]
  const rule = String((await api(server.url, org.adminKey, "POST", "/rules", {
    name: "Checkout is down",
    triggers: ["component.critical"],
    channel_ids: [onCall, ops],
    escalation
  }))["id"])
  const orgRule = String((await api(server.url, org.adminKey, "POST", "/rules", { name: "Anything critical", triggers: ["component.critical"], channel_ids: [ops] }))["id"])
  escalating = await writeAlert(world.runtime, server.url, { organization: org, ruleId: rule, channelIds: [onCall, ops], escalation, stack, component: "Card payments" })
  viaLink = await writeAlert(world.runtime, server.url, { organization: org, ruleId: rule, channelIds: [onCall], escalation, stack, component: "Refunds API" })
  orgWide = await writeAlert(world.runtime, server.url, { organization: org, ruleId: orgRule, channelIds: [ops], escalation: null, stack: null, component: "Payouts" })
  await Promise.all([deliveredAll(world.runtime, escalating.id), deliveredAll(world.runtime, orgWide.id)])
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  await receiver?.stop()
  await world?.runtime.dispose()
})

/** GET with the session cookie; the final answer after redirects (same site only). */
const open = async (url: string, cookie?: string) => {
  const response = await fetch(url, { headers: cookie === undefined ? {} : { cookie } })
  return { status: response.status, url: response.url, type: response.headers.get("content-type") ?? "", html: await response.text() }
}

/** A real page: 200, HTML, a title, and not the 404 page. */
const assertRealPage = (page: Awaited<ReturnType<typeof open>>, what: string) => {
  assert.strictEqual(page.status, 200, `${what}: ${page.url} answered ${page.status}`)
  assert.match(page.type, /^text\/html/, what)
  assert.match(page.html, /<title>[^<]*statusgrid[^<]*<\/title>/, what)
  assert.notInclude(page.html, "Page not found", what)
}

describe("alerts in Chromium", () => {
  it("every link an alert or invitation carries opens a real page, and so does the 419 page's way back", async () => {
    const cookie = await sessionCookie(world.runtime, org.admin.id)
    // Alert messages: the dashboard link (an organization-wide rule's alert), the short link (SMS), the signed ack link.
    assert.strictEqual(orgWide.url, `${server.url}/dashboard/acme`)
    assertRealPage(await open(orgWide.url, cookie), "dashboard link")
    assertRealPage(await open(escalating.url, cookie), "stack link")
    const short = await open(escalating.shortUrl, cookie)
    assertRealPage(short, "short link")
    assert.strictEqual(new URL(short.url).pathname, `/alerts/${escalating.id}`)
    assert.include(short.html, "Card payments is critical")
    assert.match(escalating.ackUrl ?? "", new RegExp(`^${server.url}/alerts/${escalating.id}/ack\\?token=`))
    const ack = await open(escalating.ackUrl!)
    assertRealPage(ack, "acknowledgment link (signed out)")
    assert.include(ack.html, "Acknowledge and stop the escalation")
    // Signed out, the short link goes to sign-in, which returns to the alert.
    const signedOut = await fetch(escalating.shortUrl, { redirect: "manual" })
    assert.strictEqual(signedOut.status, 302)
    const atAlert = await fetch(new URL(signedOut.headers.get("location")!, server.url), { redirect: "manual" })
    assert.strictEqual(atAlert.status, 302)
    assert.strictEqual(atAlert.headers.get("location"), `/signin?next=${encodeURIComponent(`/alerts/${escalating.id}`)}`)
    assertRealPage(await open(new URL(atAlert.headers.get("location")!, server.url).href), "sign-in with next")

    // Invitation links: the API's accept_url, and the e-mail's PUBLIC_URL/invite/<token>.
    const invitation = await api(server.url, org.adminKey, "POST", "/invitations", { email: "walk@example.com", role: "viewer" })
    const invite = await open(`${server.url}${String(invitation["accept_url"])}`)
    assertRealPage(invite, "invitation link")
    assert.include(invite.html, "Join Acme Payments")

    // A public stack's share URL, opened by someone without an account.
    const shared = await api(server.url, org.adminKey, "POST", "/stacks", { name: "Public status", visibility: "public" })
    assert.match(String(shared["share_url"]), /^\/share\//)
    assertRealPage(await open(`${server.url}${String(shared["share_url"])}`), "share URL")

    // The 419 page (a forged CSRF token) and each of its links back.
    const expired = await fetch(`${server.url}/alerts/${escalating.id}`, {
      method: "POST",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded", origin: server.url },
      body: "csrf=forged"
    })
    assert.strictEqual(expired.status, 419)
    const expiredHtml = await expired.text()
    assert.include(expiredHtml, "This page has expired")
    const ways = [...expiredHtml.matchAll(/<a href="(\/[^"]*)"[^>]*>/g)].map((m) => m[1]!).filter((href) => !href.startsWith("/assets/"))
    // A signed-in person (only the form's token was forged) is offered the way home and their dashboard,
    // not "Sign in again" (the header shows them signed in).
    assert.includeMembers(ways, ["/", "/dashboard/acme"])
    assert.notInclude(ways, "/signin")
    for (const href of ways) assertRealPage(await open(`${server.url}${href}`), `419 page link ${href}`)
  })

  it("short link → sign in → the same alert, its channels delivered → Acknowledge → acknowledged", async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    await page.goto(escalating.shortUrl)
    await page.waitForURL(`**/signin?next=*`)
    await expectAccessible(page)
    await page.getByLabel("E-mail").fill(org.admin.email)
    await page.getByLabel("Password").fill(org.admin.password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.waitForURL(`**/alerts/${escalating.id}`)
    // The heading without the chat title's emoji: the level badge says "Critical" in words.
    await page.getByRole("heading", { level: 1, name: "Card payments is critical (was operational)" }).waitFor()
    assert.strictEqual(await page.title(), "Card payments is critical (was operational) · statusgrid")
    // What changed, which rule, which channels and how each delivery went.
    const body = await page.locator("main").innerText()
    assert.include(body, "Card payments")
    assert.include(body, "major outage")
    assert.include(body, "Checkout is down")
    const rows = page.locator("table.deliveries tbody tr")
    assert.strictEqual(await rows.count(), 2)
    for (const name of ["On-call webhook", "Ops chat relay"]) {
      assert.include(await rows.filter({ hasText: name }).innerText(), "delivered")
    }
    assert.include(body, "Escalating: step 1 is due")
    await expectAccessible(page)
    await screenshot(page, "alerts-alert-page")

    await page.getByRole("button", { name: "Acknowledge" }).click()
    await page.getByRole("status").filter({ hasText: "Acknowledged" }).waitFor()
    assert.include(await page.getByRole("status").filter({ hasText: "Acknowledged" }).innerText(), "by a member")
    assert.strictEqual(await page.getByRole("button", { name: "Acknowledge" }).count(), 0)
    const alert = await api(server.url, org.adminKey, "GET", `/alerts/${escalating.id}`)
    assert.strictEqual(alert["acknowledged_by"], `user:${org.admin.id}`)
    assert.isNull(alert["next_escalation_at"])
    await expectAccessible(page)
    await screenshot(page, "alerts-acknowledged")

    // On a phone, as the on-call engineer at 3 a.m.
    await page.setViewportSize({ width: 360, height: 800 })
    await expectAccessible(page)
    await screenshot(page, "alerts-acknowledged-360")
    await page.close()
  })

  it("the signed acknowledgment link: opening acknowledges nothing, the button does; no sign-in", async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 800 } })
    const page = await context.newPage()
    await page.goto(viaLink.ackUrl!)
    await page.getByRole("heading", { level: 1, name: "Refunds API is critical (was operational)" }).waitFor()
    await expectAccessible(page)
    assert.isNull((await api(server.url, org.adminKey, "GET", `/alerts/${viaLink.id}`))["acknowledged_at"], "opening acknowledges nothing")
    await page.getByRole("button", { name: "Acknowledge and stop the escalation" }).click()
    await page.getByRole("status").filter({ hasText: "Acknowledged" }).waitFor()
    assert.strictEqual((await api(server.url, org.adminKey, "GET", `/alerts/${viaLink.id}`))["acknowledged_by"], "link")
    await expectAccessible(page)
    await screenshot(page, "alerts-ack-link")
    // A forged token is the 404 page, not the alert.
    const forged = await page.goto(viaLink.ackUrl!.replace(/token=.*/, "token=forged"))
    assert.strictEqual(forged?.status(), 404)
    await page.getByRole("heading", { name: "Page not found" }).waitFor()
    await context.close()
  })

  it("another organization's member gets the 404 page for the alert", async () => {
    const other = await makeOrganization(world.runtime, "Other Co", "other-co")
    const page = await open(`${server.url}/alerts/${escalating.id}`, await sessionCookie(world.runtime, other.admin.id))
    assert.strictEqual(page.status, 404)
    assert.include(page.html, "Page not found")
    assert.notInclude(page.html, "Card payments")
    assert.strictEqual((await open(`${server.url}/alerts/not-a-uuid`, await sessionCookie(world.runtime, other.admin.id))).status, 404)
  })
})
