import type { Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { api, type Organization } from "../support/alertWorld.ts"
import { expectAccessible, screenshot } from "../support/browser.ts"
import type { Running } from "../support/process.ts"
import { type HttpReceiver, startHttpReceiver, webhookSignatureProblem } from "../support/receivers.ts"
import { type SignedInWorld, startSignedInWorld } from "../support/signedInWorld.ts"

/**
 * Channels and the notification center in Chromium against a real
 * `statusgrid start` (PostgreSQL, the server's own deliverer): a webhook
 * channel with its signing secret shown once and a test send that arrives
 * signed with it; bad input on the SMS form; a channel whose endpoint
 * refuses, its failed test in the notification center, and Retry once the
 * endpoint accepts.
 */

let signedIn: SignedInWorld
let server: Running
let org: Organization
let page: Page
let receiver: HttpReceiver
/** Whether /flaky accepts: 400 (a final failure) until the test fixes the endpoint. */
let flakyAccepts = false

beforeAll(async () => {
  receiver = await startHttpReceiver((req) =>
    req.path === "/flaky" && !flakyAccepts
      ? { status: 400, body: "endpoint not ready", problem: "refused" }
      : { status: 200, body: "{}", headers: { "content-type": "application/json" } }
  )
  signedIn = await startSignedInWorld({ NOTIFIER_ALLOW_PRIVATE: "true", NOTIFIER_POLL_MS: "100" })
  ;({ server, org, page } = signedIn)
}, 180_000)

afterAll(async () => {
  await signedIn?.stop()
  await receiver?.close()
})

const channels = async () => (await api(server.url, org.adminKey, "GET", "/channels"))["data"] as ReadonlyArray<{ id: string; name: string; type: string }>

const createWebhook = async (name: string, path: string) => {
  await page.goto(`${server.url}/settings/acme/channels`)
  await page.getByRole("link", { name: "Webhook", exact: true }).click()
  await page.waitForURL("**/channels?type=webhook")
  await page.getByLabel("Name").fill(name)
  await page.getByLabel("URL", { exact: true }).fill(`${receiver.url}${path}`)
  await page.getByRole("button", { name: "Create Webhook channel" }).click()
  await page.getByTestId("signing-secret").waitFor()
  return (await page.getByTestId("signing-secret").innerText()).trim()
}

describe("channels and the notification center in Chromium", () => {
  it("creates a webhook channel, shows its signing secret once, and a test arrives signed with it", async () => {
    await page.goto(`${server.url}/settings/acme/channels`)
    await page.getByRole("heading", { level: 1, name: "Notification channels" }).waitFor()
    await expectAccessible(page)
    const secret = await createWebhook("Ops relay", "/ops")
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
    await expectAccessible(page)
    await screenshot(page, "channels-created")

    await page.getByRole("link", { name: "Ops relay" }).first().click()
    await page.getByRole("heading", { level: 1, name: "Ops relay" }).waitFor()
    assert.notInclude(await page.content(), secret, "the secret is shown once, never on the channel's page")
    await page.getByRole("button", { name: "Send a test notification" }).click()
    await page.getByTestId("test-result").waitFor({ timeout: 20_000 })
    assert.match(await page.getByTestId("test-result").innerText(), /^Test delivered after 1 attempt\./)
    const sent = receiver.requests.filter((r) => r.path === "/ops")
    assert.strictEqual(sent.length, 1)
    assert.isUndefined(webhookSignatureProblem(sent[0]!, secret))
    // The page's latest deliveries list it once the page reloads its data.
    await page.reload()
    assert.include(await page.locator("table.deliveries").innerText(), "Test notification")
    await expectAccessible(page)
    await screenshot(page, "channels-test-delivered")
  })

  it("keeps bad input in the SMS form with the Schema's message beside the field, and saves nothing", async () => {
    const before = (await channels()).length
    await page.goto(`${server.url}/settings/acme/channels?type=sms`)
    await page.getByLabel("Name").fill("On-call phone")
    await page.getByLabel("Phone numbers").fill("+14155550100\nnot-a-number")
    await page.getByLabel("Twilio account SID").fill("AC123")
    await page.getByLabel("Twilio auth token").fill("token-token")
    await page.getByLabel("From number").fill("+15005550006")
    await page.getByRole("button", { name: "Create SMS (Twilio) channel" }).click()
    const error = page.locator(".field-error").first()
    await error.waitFor()
    const messages = await page.locator(".field-error").allInnerTexts()
    assert.isTrue(messages.some((m) => /Phone numbers|Twilio account SID/.test(m)), messages.join(" | "))
    assert.strictEqual(await page.getByLabel("Name").inputValue(), "On-call phone", "what was typed stays")
    // The typed secret stays in the browser's field, but the server never renders it back.
    assert.notInclude(await page.content(), "token-token", "a secret is never in the page's markup")
    assert.strictEqual((await channels()).length, before)
    await expectAccessible(page)
    await screenshot(page, "channels-bad-input")
  })

  it("shows a failed test in the notification center, and Retry delivers it once the endpoint accepts", async () => {
    await createWebhook("Broken hook", "/flaky")
    await page.getByRole("link", { name: "Broken hook" }).first().click()
    await page.getByRole("button", { name: "Send a test notification" }).click()
    await page.getByTestId("test-result").waitFor({ timeout: 20_000 })
    assert.match(await page.getByTestId("test-result").innerText(), /^Test failed: .*400/)

    await page.goto(`${server.url}/settings/acme/notifications?status=failed`)
    await page.getByRole("heading", { level: 1, name: "Notification center" }).waitFor()
    const row = page.locator("table.deliveries tbody tr").filter({ hasText: "Broken hook" })
    assert.strictEqual(await row.count(), 1)
    assert.include(await row.innerText(), "failed")
    assert.strictEqual(await page.locator("table.deliveries tbody tr").filter({ hasText: "Ops relay" }).count(), 0, "the status filter holds")
    await expectAccessible(page)
    await screenshot(page, "notifications-failed")

    // Its id before the retry: the page then reloads its data, and the row leaves the "failed" filter.
    const id = await row.getAttribute("data-delivery")
    flakyAccepts = true
    await page.getByRole("button", { name: "Retry the delivery to Broken hook" }).click()
    await page.getByRole("status").filter({ hasText: "Retrying the delivery to Broken hook" }).waitFor()
    const deadline = Date.now() + 20_000
    let status = ""
    while (Date.now() < deadline && status !== "delivered") {
      status = String((await api(server.url, org.adminKey, "GET", `/deliveries/${id}`))["status"])
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    assert.strictEqual(status, "delivered")
    // A delivered one cannot be retried (the API's 409).
    const again = await fetch(`${server.url}/api/v1/deliveries/${id}/retry`, { method: "POST", headers: { authorization: `Bearer ${org.adminKey}` } })
    assert.strictEqual(again.status, 409)

    await page.goto(`${server.url}/settings/acme/notifications`)
    const delivered = page.locator(`table.deliveries tbody tr[data-delivery="${id}"]`)
    assert.include(await delivered.innerText(), "delivered")
    assert.include(await delivered.innerText(), "2 attempts")
    await expectAccessible(page)
    await screenshot(page, "notifications-retried")
  })
})
