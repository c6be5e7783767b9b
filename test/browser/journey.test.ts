import type { Browser, Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { syntheticSpecs } from "../../services/catalog/Synthetic.ts"
import { componentFormats } from "../../services/demo/Demo.ts"
import { waitForValue } from "../support/eventually.ts"
import { expectAccessible, launchBrowser, screenshot } from "../support/browser.ts"
import { type DemoServer, startDemoServer } from "../support/demoServer.ts"
import { childEnv, runCli, type Running } from "../support/process.ts"
import { type HttpReceiver, startHttpReceiver, twilioHandler } from "../support/receivers.ts"

/**
 * The whole path of the "Portal I" issue in one chain, as a person walks it,
 * on a real `statusgrid start --demo` (its simulator as a child) over a fresh
 * PostgreSQL database: sign up → create an organization → find a source in
 * the catalog → add two of its components to a new stack from the source
 * page → the stack page is live → the simulator flips one component and the
 * open page shows it without a reload → the notifier texts the on-call
 * number through a Twilio stand-in → the SMS's short link opens the alert
 * page → Acknowledge. Nothing is written behind the product's back: the
 * plan changes through `statusgrid org plan` (the operator's command), the
 * API key through its settings page, the channels and the rule through
 * `/api/v1` with that key.
 */

const demoSources = 60
const twilio = { sid: `AC${"0123456789abcdef".repeat(2)}`, token: "journey-auth-token-0123", from: "+15005550006" }
const onCallPhone = "+14155550100"
let demo: DemoServer
let server: Running
let browser: Browser
let sms: HttpReceiver
let simulatorUrl: string

beforeAll(async () => {
  sms = await startHttpReceiver(twilioHandler(twilio.sid, twilio.token))
  ;[demo, browser] = await Promise.all([
    startDemoServer({ sources: demoSources, env: { TWILIO_API_URL: sms.url, NOTIFIER_ALLOW_PRIVATE: "true", NOTIFIER_POLL_MS: "100" } }),
    launchBrowser()
  ])
  ;({ server, simulatorUrl } = demo)
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await demo?.stop()
  await sms?.close()
}, 180_000)

const started = Date.now()
/** Progress on stderr, so that a slow run says where it is. */
const step = (what: string) => process.stderr.write(`[journey test +${Math.round((Date.now() - started) / 1000)} s] ${what}\n`)

/** `METHOD /api/v1<path>` with the key made on the API keys page; the JSON body. */
const api = async (key: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${server.url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  assert.isTrue(response.ok, `${method} ${path}: ${response.status} ${text}`)
  return JSON.parse(text) as Record<string, unknown>
}

/** The texts the Twilio stand-in accepted: recipient and body. */
const texts = () =>
  sms.requests.filter((r) => r.method === "POST").map((r) => {
    const form = new URLSearchParams(r.body.toString("utf8"))
    return { to: form.get("To") ?? "", body: form.get("Body") ?? "" }
  })

/** A source polled every 30 s, in a format with components. */
const source = syntheticSpecs(demoSources).find((s) => s.check_class === "critical" && s.provider === "statuspage_io")
  ?? syntheticSpecs(demoSources).find((s) => s.check_class === "critical" && componentFormats.has(s.provider))!

/** The source page once the poller has read its components (reloaded until the picker lists them). */
const openPolledSource = async (page: Page) => {
  const deadline = Date.now() + 120_000
  for (;;) {
    await page.goto(`${server.url}/sources/${source.key}`)
    if (await page.locator(".component-picker input[type=checkbox]").count() > 0) return
    if (Date.now() > deadline) throw new Error(`${source.key} was not polled in 120 s`)
    await page.waitForTimeout(2_000)
  }
}

describe("the whole journey in Chromium", () => {
  it("sign-up → organization → catalog → a new stack from a source page → live flip without reload → SMS short link → alert → Acknowledge", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    const slug = "tidewater"

    // Sign up and create an organization: its dashboard opens, with the demo's starter stack.
    await page.goto(`${server.url}/`)
    await page.getByRole("link", { name: /Sign up|Create an account|Get started/ }).first().click()
    await page.waitForURL("**/signup")
    await page.getByLabel("Your name").fill("Ada Lovelace")
    await page.getByLabel("E-mail").fill("ada@example.com")
    await page.getByLabel("Password").fill("analytical engine 1843")
    await page.getByRole("button", { name: "Create account" }).click()
    await page.waitForURL("**/orgs/new", { timeout: 60_000 })
    await page.getByLabel("Organization name").fill("Tidewater Freight")
    await page.getByLabel("Short name").fill(slug)
    await page.getByRole("button", { name: /Create/ }).click()
    await page.waitForURL(`**/dashboard/${slug}`, { timeout: 90_000 })
    await page.getByRole("heading", { level: 2, name: "Demo production" }).waitFor()
    step("signed up, organization created")

    // Escalation and SMS are paid features: the operator moves the organization to Enterprise.
    const plan = await runCli(["org", "plan", slug, "enterprise"], childEnv({ DATABASE_URL: demo.databaseUrl, DATA_DIR: demo.dataDir }))
    assert.strictEqual(plan.code, 0, plan.stderr)

    // The catalog finds the source by name; its page offers the add form once the poller has read it.
    await page.getByRole("link", { name: "Catalog" }).first().click()
    await page.waitForURL("**/catalog**")
    await page.getByLabel("Search", { exact: true }).fill(source.name)
    await page.getByRole("link", { name: source.name, exact: true }).first().click()
    await page.waitForURL(`**/sources/${source.key}`)
    await openPolledSource(page)
    step(`${source.key} polled`)
    const boxes = page.locator(".component-picker input[type=checkbox]")
    const names: Array<string> = []
    for (const box of [boxes.nth(0), boxes.nth(1)]) {
      const id = await box.getAttribute("id")
      names.push((await page.locator(`label[for="${id}"]`).innerText()).trim())
      await box.check()
    }
    await page.getByLabel("Stack", { exact: true }).selectOption("new")
    await page.getByLabel("New stack name").fill("Checkout")
    await page.getByRole("button", { name: "Add to stack" }).click()
    await page.locator(".form-success").waitFor()
    assert.include(await page.locator(".form-success").innerText(), "Added 2 components to the new stack Checkout")
    step(`added ${names.join(", ")} to Checkout`)

    // An API key from its settings page, then an SMS channel and a rule for the new stack through /api/v1.
    await page.goto(`${server.url}/settings/${slug}/api-keys`)
    await page.getByLabel("Name").fill("journey")
    await page.getByLabel("Role", { exact: true }).selectOption("admin")
    await page.getByRole("button", { name: "Create key" }).click()
    const key = (await page.getByTestId("new-key").innerText()).trim()
    const stacks = (await api(key, "GET", "/stacks"))["data"] as ReadonlyArray<Record<string, unknown>>
    const checkout = stacks.find((s) => s["slug"] === "checkout")
    assert.isDefined(checkout, "the stack made on the source page is in the API")
    const channel = await api(key, "POST", "/channels", {
      type: "sms",
      name: "On-call phone",
      settings: { phone_numbers: [onCallPhone], account_sid: twilio.sid, auth_token: twilio.token, from_number: twilio.from }
    })
    await api(key, "POST", "/rules", {
      name: "Checkout is down",
      triggers: ["component.critical"],
      scope: "specific",
      stack_ids: [checkout!["id"]],
      channel_ids: [channel["id"]],
      escalation: [{ delay_s: 3600, channel_ids: [channel["id"]] }]
    })

    // The stack page, live; the test marks the document to prove it is never reloaded.
    await page.goto(`${server.url}/dashboard/${slug}`)
    await page.getByRole("link", { name: "Checkout" }).first().click()
    await page.waitForURL(`**/dashboard/${slug}/stacks/checkout`)
    const row = page.locator("li.component-row").filter({ has: page.locator(".row-name", { hasText: names[0]! }) }).first()
    await row.waitFor()
    await page.locator("[data-live='live']").waitFor()
    await page.evaluate(() => ((globalThis as unknown as { notReloaded: boolean }).notReloaded = true))

    // The simulator flips the first component to critical (back to operational first if it already is).
    const simulated = (await (await fetch(`${simulatorUrl}/_control/sources/${source.key}`)).json()) as {
      components: Array<{ id: string; name: string; status?: string }>
    }
    const simId = simulated.components.find((c) => c.name === names[0])!.id
    const flip = async (status: string) => {
      const answer = await fetch(`${simulatorUrl}/_control/sources/${source.key}/components/${simId}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ status })
      })
      assert.strictEqual(answer.status, 200, await answer.text())
    }
    if ((await row.locator(".badge").innerText()).includes("major outage")) {
      await flip("operational")
      await row.locator(".badge", { hasText: "operational" }).waitFor({ timeout: 150_000 })
    }
    const flipped = Date.now()
    await flip("critical")
    step(`flipped ${names[0]} to critical`)
    // Critical sources are polled every 30 s; the change reaches the open page through its event stream.
    await row.locator(".badge", { hasText: "major outage" }).waitFor({ timeout: 150_000 })
    step(`the open page showed it ${Date.now() - flipped} ms after the flip`)
    assert.isTrue(await page.evaluate(() => (globalThis as unknown as { notReloaded?: boolean }).notReloaded === true), "no reload")
    await page.locator(".banner", { hasText: /Outage/ }).waitFor()
    await expectAccessible(page)
    await screenshot(page, "journey-stack-live")

    // The notifier texts the on-call phone; the message carries the alert's short link.
    const text = await waitForValue("the SMS", () => texts().find((t) => t.body.includes(names[0]!)), 60_000)
    assert.strictEqual(text.to, onCallPhone)
    const short = text.body.match(/https?:\/\/\S+\/a\/[A-Za-z0-9_-]+/)?.[0]
    assert.isDefined(short, `a short link in the SMS: ${text.body}`)
    assert.strictEqual(new URL(short!).origin, server.url)
    step("SMS received")

    // The short link (signed in already) opens the alert page; Acknowledge stops the escalation.
    await page.goto(short!)
    await page.waitForURL("**/alerts/*")
    await page.getByRole("heading", { level: 1, name: new RegExp(`${names[0]!.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is critical`) }).waitFor()
    const body = await page.locator("main").innerText()
    assert.include(body, "Checkout is down")
    assert.include(body, "On-call phone")
    await page.getByRole("button", { name: "Acknowledge" }).click()
    await page.getByRole("status").filter({ hasText: "Acknowledged" }).waitFor()
    const alertId = new URL(page.url()).pathname.split("/").at(-1)!
    const alert = await api(key, "GET", `/alerts/${alertId}`)
    assert.isNotNull(alert["acknowledged_at"])
    assert.isNull(alert["next_escalation_at"])
    await expectAccessible(page)
    await screenshot(page, "journey-acknowledged")
    await page.close()
  }, 420_000)
})
