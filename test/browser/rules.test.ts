import type { Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { api, type Organization } from "../support/alertWorld.ts"
import { expectAccessible, screenshot } from "../support/browser.ts"
import type { Running } from "../support/process.ts"
import { type SignedInWorld, startSignedInWorld } from "../support/signedInWorld.ts"

/**
 * The rule editor in Chromium against a real `statusgrid start`
 * (PostgreSQL): an Admin writes a rule with a scope, a schedule, an
 * escalation step and a template whose preview renders as they type; a
 * bad time zone is refused beside its field with nothing saved; what the
 * API then returns is what the form said; an edit saves.
 */

let signedIn: SignedInWorld
let server: Running
let org: Organization
let page: Page
let onCall: string
let lead: string
let stack: string

beforeAll(async () => {
  signedIn = await startSignedInWorld()
  ;({ server, org, page } = signedIn)
  const channel = async (name: string) =>
    String((await api(server.url, org.adminKey, "POST", "/channels", { type: "webhook", name, settings: { url: "https://hooks.example.com/" + name.length } }))["id"])
  onCall = await channel("On-call webhook")
  lead = await channel("Lead pager")
  stack = String((await api(server.url, org.adminKey, "POST", "/stacks", { name: "Platform" }))["id"])
}, 180_000)

afterAll(async () => {
  await signedIn?.stop()
})

const rules = async () => (await api(server.url, org.adminKey, "GET", "/rules"))["data"] as ReadonlyArray<Record<string, unknown>>

describe("rule editor in Chromium", () => {
  it("writes a rule with scope, schedule, escalation and a template; a bad time zone stays in the form", async () => {
    await page.goto(`${server.url}/settings/acme/rules`)
    await page.getByRole("heading", { level: 1, name: "Notification rules" }).waitFor()
    await expectAccessible(page)
    await page.getByRole("link", { name: "New rule" }).click()
    await page.waitForURL("**/rules/new")
    await expectAccessible(page)

    await page.getByLabel("Name").fill("Checkout is down")
    await page.getByLabel("major outage").check()
    await page.getByLabel("Only what is ticked below").check()
    await page.getByLabel("Platform").check()
    await page.locator(`#channel-${onCall}`).check()
    await page.getByLabel("Only at certain hours").check()
    await page.getByLabel("Time zone").fill("Mars/Olympus")
    await page.getByLabel("Sat").uncheck()
    await page.getByLabel("Sun").uncheck()
    await page.getByLabel("Critical alerts at any hour").check()
    await page.locator("#field-escalation-0-delay").fill("900")
    await page.locator(`#escalation-0-channel-${lead}`).check()
    await page.getByLabel("Subject (e-mail)").fill("[{stack_name}] {component_name}")
    await page.getByLabel("Text", { exact: true }).fill("{status_emoji} {component_name} is {status} in {stack_name} ({duration})")
    // The preview renders with the notifier's own function as the text is typed.
    const preview = page.getByTestId("template-preview")
    await preview.waitFor()
    assert.include(await preview.innerText(), "🔴 API is critical in Payments (1h 5m)")
    assert.include(await preview.innerText(), "[Payments] API")
    await page.getByRole("button", { name: "Create rule" }).click()

    await page.locator("#field-schedule-timezone-error").waitFor()
    assert.include(await page.locator("#field-schedule-timezone-error").innerText(), "must be an IANA time zone")
    assert.strictEqual((await rules()).length, 0, "nothing saved")
    assert.isTrue(await page.getByLabel("Platform").isChecked(), "what was chosen stays")
    await expectAccessible(page)
    await screenshot(page, "rules-bad-input")

    await page.getByLabel("Time zone").fill("Europe/Paris")
    await page.getByRole("button", { name: "Create rule" }).click()
    await page.waitForURL("**/rules/*?created")
    await page.getByRole("status").filter({ hasText: "Created Checkout is down" }).waitFor()
    const [rule] = await rules()
    assert.strictEqual(rule!["name"], "Checkout is down")
    assert.deepStrictEqual(rule!["triggers"], ["component.critical"])
    assert.strictEqual(rule!["scope"], "specific")
    assert.deepStrictEqual(rule!["stack_ids"], [stack])
    assert.deepStrictEqual(rule!["channel_ids"], [onCall])
    assert.deepStrictEqual(rule!["schedule"], {
      timezone: "Europe/Paris",
      days: ["mon", "tue", "wed", "thu", "fri"],
      start: "09:00",
      end: "18:00",
      holidays: [],
      critical_always: true
    })
    assert.deepStrictEqual(rule!["escalation"], [{ delay_s: 900, channel_ids: [lead] }])
    assert.deepStrictEqual(rule!["template"], { subject: "[{stack_name}] {component_name}", body: "{status_emoji} {component_name} is {status} in {stack_name} ({duration})" })
    await expectAccessible(page)
    await screenshot(page, "rules-created")
  })

  it("edits a rule: a later escalation step before an earlier one is refused; a rename saves", async () => {
    const [rule] = await rules()
    await page.goto(`${server.url}/settings/acme/rules/${String(rule!["id"])}`)
    await page.getByRole("heading", { level: 1, name: "Checkout is down" }).waitFor()
    assert.strictEqual(await page.locator("#field-escalation-0-delay").inputValue(), "900")
    // A second step earlier than the first: the Schema's ordering rule names the step.
    await page.locator("#field-escalation-1-delay").fill("600")
    await page.locator(`#escalation-1-channel-${onCall}`).check()
    await page.getByRole("button", { name: "Save rule" }).click()
    await page.locator("#field-escalation-1-delay-error").waitFor()
    assert.include(await page.locator("#field-escalation-1-delay-error").innerText(), "later than the previous step")

    await page.locator("#field-escalation-1-delay").fill("1800")
    await page.getByLabel("Name").fill("Checkout is down (EU hours)")
    await page.getByRole("button", { name: "Save rule" }).click()
    await page.getByRole("status").filter({ hasText: "Saved" }).waitFor()
    const saved = await api(server.url, org.adminKey, "GET", `/rules/${String(rule!["id"])}`)
    assert.strictEqual(saved["name"], "Checkout is down (EU hours)")
    assert.deepStrictEqual(saved["escalation"], [{ delay_s: 900, channel_ids: [lead] }, { delay_s: 1800, channel_ids: [onCall] }])
    await expectAccessible(page)
    await screenshot(page, "rules-edited")
  })
})
