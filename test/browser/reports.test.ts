import { Effect } from "effect"
import type { Browser, Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { ApiKeys } from "../../services/orgs/ApiKeys.ts"
import { api } from "../support/alertWorld.ts"
import { expectAccessible, launchBrowser, screenshot } from "../support/browser.ts"
import { people, type SettingsWorld, signIn, startSettingsWorld } from "../support/monitorsWorld.ts"
import { reportOf } from "../support/orgRecords.ts"

/**
 * The reports pages in Chromium against a real `statusgrid start`: a member
 * schedules a report through the form (bad input named beside its field),
 * pauses it; a sent report's page shows its figures and serves its CSV and
 * PDF; a Viewer reads but cannot schedule.
 */

let world: SettingsWorld
let browser: Browser
let page: Page
let key: string
let stack: { id: string; name: string }

beforeAll(async () => {
  ;[world, browser] = await Promise.all([startSettingsWorld(), launchBrowser()])
  key = await world.run(ApiKeys.use((k) => k.issue(world.org.id, "reports test", "admin")).pipe(Effect.provide(ApiKeys.layer)))
  const created = await api(world.server.url, key, "POST", "/stacks", { name: "Checkout" })
  stack = { id: String(created["id"]), name: String(created["name"]) }
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage()
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await world?.close()
}, 120_000)

describe("reports pages in Chromium", () => {
  it("a member schedules a weekly report for a stack; a bad time zone is named; pause and resume", async () => {
    await signIn(page, world.server, people.member, `/settings/${world.org.slug}/stacks`)
    await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Reports" }).click()
    await page.waitForURL("**/reports")
    await page.getByLabel("Name").fill("Weekly for the board")
    await page.getByLabel("Time zone").fill("Mars/Olympus")
    await page.getByLabel("Recipients").fill("board@example.com, cto@example.com")
    await page.getByLabel(stack.name).check()
    await page.getByRole("button", { name: "Schedule the report" }).click()
    await page.getByText("Time zone must be an IANA time zone").waitFor()
    // What was typed is kept; the zone fixed, it is scheduled.
    assert.strictEqual(await page.getByLabel("Recipients").inputValue(), "board@example.com, cto@example.com")
    await page.getByLabel("Time zone").fill("Europe/Paris")
    await page.getByRole("button", { name: "Schedule the report" }).click()
    await page.getByRole("status").filter({ hasText: "Scheduled “Weekly for the board”" }).waitFor()
    const schedules = (await api(world.server.url, key, "GET", "/report-schedules"))["data"] as ReadonlyArray<Record<string, unknown>>
    assert.strictEqual(schedules.length, 1)
    assert.deepStrictEqual(
      [schedules[0]!["frequency"], schedules[0]!["time_zone"], schedules[0]!["recipients"], schedules[0]!["stack_ids"], schedules[0]!["sla_target"]],
      ["weekly", "Europe/Paris", ["board@example.com", "cto@example.com"], [stack.id], 99.9]
    )
    await page.getByRole("button", { name: "Pause Weekly for the board" }).click()
    await page.getByRole("status").filter({ hasText: "Schedule paused" }).waitFor()
    assert.strictEqual(((await api(world.server.url, key, "GET", "/report-schedules"))["data"] as ReadonlyArray<{ enabled: boolean }>)[0]!.enabled, false)
    await expectAccessible(page)
    await screenshot(page, "reports-schedules")
  })

  it("a sent report: its page shows the figures, its CSV and PDF download; a Viewer reads it but cannot schedule", async () => {
    const schedule = await api(world.server.url, key, "POST", "/report-schedules", { name: "Weekly for the board", frequency: "weekly", recipients: ["board@example.com"] }) as { id: string }
    const reportId = await world.run(reportOf(world.org.id, schedule.id, stack.id, stack.name))
    await page.goto(`${world.server.url}/settings/${world.org.slug}/reports`)
    await page.getByTestId("reports").getByRole("link").first().click()
    await page.waitForURL(`**/reports/${reportId}`)
    const row = page.getByTestId("report-stacks").locator("tbody tr").first()
    assert.include(await row.innerText(), "99.500 %")
    assert.include(await row.innerText(), "missed")
    const [csv] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download CSV" }).click()])
    const csvText = await new Promise<string>((resolve, reject) => {
      csv.createReadStream().then((stream) => {
        const chunks: Array<Buffer> = []
        stream.on("data", (c: Buffer) => chunks.push(c))
        stream.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
        stream.on("error", reject)
      }, reject)
    })
    assert.include(csvText, `,${stack.name},,stack,99.500,3024,2,1512,99.9,false`)
    const pdf = await page.request.get(`${world.server.url}/settings/${world.org.slug}/reports/${reportId}/pdf`)
    assert.strictEqual(pdf.status(), 200)
    assert.strictEqual(pdf.headers()["content-type"], "application/pdf")
    assert.strictEqual((await pdf.body()).subarray(0, 5).toString("latin1"), "%PDF-")
    await expectAccessible(page)
    await screenshot(page, "reports-report")

    const viewer = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage()
    await signIn(viewer, world.server, people.viewer, `/settings/${world.org.slug}/reports`)
    await viewer.getByText("Your role can read the reports but not schedule them.").waitFor()
    assert.strictEqual(await viewer.getByRole("button", { name: "Schedule the report" }).count(), 0)
    assert.strictEqual(await viewer.getByTestId("reports").locator("tbody tr").count(), 1)
    await viewer.context().close()
  })
})
