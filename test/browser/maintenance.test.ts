import ICAL from "ical.js"
import type { Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { api, onDatabase, type Organization, type WorldRuntime } from "../support/alertWorld.ts"
import { expectAccessible, screenshot } from "../support/browser.ts"
import type { Running } from "../support/process.ts"
import { type SignedInWorld, startSignedInWorld } from "../support/signedInWorld.ts"

/**
 * The maintenance calendar in Chromium against a real `statusgrid start`
 * (PostgreSQL): an Admin creates a window in a time zone of their choice and
 * finds it in the month and the list; bad input stays in the form; the iCal
 * subscription is created, read back with a separate parser (ical.js: the
 * instant, the UID, a provider's maintenance beside the window), keeps the
 * UID with a higher SEQUENCE when the window moves, and answers 404 once
 * replaced or revoked. The provider's maintenance is written as the poller
 * would store it (upstream status pages are out of reach here).
 */

let signedIn: SignedInWorld
let server: Running
let world: { readonly runtime: WorldRuntime; readonly databaseUrl: string }
let org: Organization
let page: Page
let providerMaintenance: { title: string; starts: string }

beforeAll(async () => {
  signedIn = await startSignedInWorld()
  ;({ server, world, org, page } = signedIn)
  // A provider in one of the organization's stacks, with a maintenance announced for the 20th of next month.
  const next = new Date()
  next.setUTCMonth(next.getUTCMonth() + 1, 20)
  next.setUTCHours(6, 0, 0, 0)
  providerMaintenance = { title: "Database failover test", starts: next.toISOString() }
  // A manual custom source stands for a polled provider (manual sources are not polled, so nothing rewrites its records).
  const source = await api(server.url, org.adminKey, "POST", "/custom-sources", { type: "manual", name: "Harbor Cloud" })
  const key = String(source["key"])
  await onDatabase(world.runtime, (sql) =>
    sql`
      INSERT INTO scheduled_maintenances (source_id, external_id, title, status, scheduled_for, scheduled_until)
      SELECT s.id, 'mnt-1', ${providerMaintenance.title}, 'scheduled', ${next}, ${new Date(next.getTime() + 2 * 3600_000)}
      FROM sources s WHERE s.key = ${key}`
  )
  const stack = await api(server.url, org.adminKey, "POST", "/stacks", { name: "Platform" })
  await api(server.url, org.adminKey, "POST", `/stacks/${String(stack["id"])}/items`, { kind: "source", source_key: key })
}, 180_000)

afterAll(async () => {
  await signedIn?.stop()
})

const windows = async () => (await api(server.url, org.adminKey, "GET", "/maintenance-windows"))["data"] as ReadonlyArray<Record<string, unknown>>

/** The feed as ical.js reads it: each VEVENT's UID, summary, start and end instants, sequence. */
const readFeed = async (url: string) => {
  const response = await fetch(url)
  if (response.status !== 200) return { status: response.status, events: [] }
  assert.match(response.headers.get("content-type") ?? "", /^text\/calendar; charset=utf-8/)
  const text = await response.text()
  assert.match(text, /^BEGIN:VCALENDAR\r\n/, "CRLF line endings (RFC 5545)")
  const calendar = new ICAL.Component(ICAL.parse(text))
  assert.strictEqual(calendar.getFirstPropertyValue("version"), "2.0")
  const events = calendar.getAllSubcomponents("vevent").map((v) => {
    const event = new ICAL.Event(v)
    return {
      uid: event.uid,
      summary: event.summary,
      start: event.startDate.toJSDate().toISOString(),
      end: event.endDate.toJSDate().toISOString(),
      sequence: event.sequence,
      status: String(v.getFirstPropertyValue("status"))
    }
  })
  return { status: 200, events }
}

/** One hour after `iso`, as a `datetime-local` value (UTC wall clock). */
const later = (iso: string) => new Date(Date.parse(iso) + 3600_000).toISOString().slice(0, 16)

describe("maintenance calendar in Chromium", () => {
  let windowId: string
  let feedUrl: string

  it("creates a window in the person's time zone and shows it in the month and the list; refuses bad input in place", async () => {
    await page.goto(`${server.url}/settings/acme/maintenance`)
    await page.getByRole("heading", { level: 1, name: "Maintenance calendar" }).waitFor()
    assert.strictEqual(await page.title(), "Maintenance calendar · Acme Payments · statusgrid")
    await expectAccessible(page)

    // Ends before it starts, and a zone that does not exist: messages beside the fields, nothing saved.
    const form = page.locator("form.window-form")
    await form.getByLabel("Title").fill("Database upgrade")
    await form.getByLabel("Starts").fill("2030-01-10T10:00")
    await form.getByLabel("Ends").fill("2030-01-10T09:00")
    await form.getByLabel("Time zone").fill("Mars/Olympus")
    await form.getByRole("button", { name: "Create window" }).click()
    await page.locator("#field-time_zone-error").waitFor()
    assert.include(await page.locator("#field-time_zone-error").innerText(), "must be a time zone name")
    assert.strictEqual(await page.locator("#field-ends_local-error").count(), 0, "no message about times the zone could not place")
    await form.getByLabel("Time zone").fill("Asia/Kolkata")
    await form.getByRole("button", { name: "Create window" }).click()
    await page.locator("#field-ends_local-error").waitFor()
    assert.include(await page.locator("#field-ends_local-error").innerText(), "must be after the start")
    assert.strictEqual(await form.getByLabel("Title").inputValue(), "Database upgrade", "what was typed stays")
    assert.strictEqual((await windows()).length, 0)
    await expectAccessible(page)
    await screenshot(page, "maintenance-bad-input")

    // Next month, 10:00 to 12:30 in Kolkata (UTC+5:30): 04:30 to 07:00 UTC.
    const next = new Date()
    next.setUTCMonth(next.getUTCMonth() + 1, 12)
    const day = next.toISOString().slice(0, 10)
    await form.getByLabel("Ends").fill(`${day}T12:30`)
    await form.getByLabel("Starts").fill(`${day}T10:00`)
    await form.getByLabel("Covers").selectOption({ label: "Stack: Platform" })
    await form.getByLabel("Description").fill("Postgres 17; the API may answer slowly.")
    await form.getByRole("button", { name: "Create window" }).click()
    await page.waitForURL(`**/settings/acme/maintenance?month=${day.slice(0, 7)}&created=*`)
    await page.getByRole("status").filter({ hasText: "Created Database upgrade" }).waitFor()
    const [created] = await windows()
    assert.strictEqual(created!["starts_at"], `${day}T04:30:00.000Z`)
    assert.strictEqual(created!["ends_at"], `${day}T07:00:00.000Z`)
    windowId = String(created!["id"])
    // The month grid shows it on its day (UTC), beside the provider's maintenance on the 20th.
    const cell = page.locator("table.month td").filter({ has: page.locator(`.day-number[aria-label="${day}"]`) })
    assert.include(await cell.innerText(), "04:30 Database upgrade")
    const providerDay = providerMaintenance.starts.slice(0, 10)
    const providerCell = page.locator("table.month td").filter({ has: page.locator(`.day-number[aria-label="${providerDay}"]`) })
    assert.include(await providerCell.innerText(), `Harbor Cloud: ${providerMaintenance.title}`)
    await expectAccessible(page)
    await screenshot(page, "maintenance-month")

    await page.getByRole("link", { name: "List" }).click()
    await page.waitForURL("**/maintenance?view=list")
    const rows = page.locator(".entry-row")
    await rows.nth(1).waitFor()
    assert.strictEqual(await rows.count(), 2)
    assert.include(await rows.first().innerText(), "covers Platform")
    await expectAccessible(page)
    await screenshot(page, "maintenance-list")
  })

  it("serves the iCal feed: the window and the provider's maintenance, read back by ical.js", async () => {
    await page.goto(`${server.url}/settings/acme/maintenance`)
    await page.getByRole("button", { name: "Create subscription address" }).click()
    await page.getByTestId("calendar-feed").waitFor()
    feedUrl = (await page.getByTestId("calendar-feed").innerText()).trim()
    assert.match(feedUrl, new RegExp(`^${server.url}/calendar/cal_[A-Za-z0-9_-]{32}\\.ics$`))
    await expectAccessible(page)
    await screenshot(page, "maintenance-feed")

    const feed = await readFeed(feedUrl)
    assert.strictEqual(feed.status, 200)
    const window = feed.events.find((e) => e.summary === "Database upgrade")
    assert.isDefined(window)
    const [stored] = await windows()
    assert.strictEqual(window!.uid, `window-${windowId}@127.0.0.1`)
    assert.strictEqual(window!.start, stored!["starts_at"])
    assert.strictEqual(window!.end, stored!["ends_at"])
    assert.strictEqual(window!.sequence, 0)
    assert.strictEqual(window!.status, "CONFIRMED")
    const provider = feed.events.find((e) => e.summary === `Harbor Cloud: ${providerMaintenance.title}`)
    assert.isDefined(provider)
    assert.strictEqual(provider!.start, providerMaintenance.starts)
  })

  it("keeps the UID and raises the SEQUENCE when the window moves; Admins delete", async () => {
    await page.goto(`${server.url}/settings/acme/maintenance/${windowId}`)
    await page.getByRole("heading", { level: 1, name: "Database upgrade" }).waitFor()
    await expectAccessible(page)
    // The form shows the window in UTC; move it one hour later.
    const [stored] = await windows()
    const starts = String(stored!["starts_at"])
    assert.strictEqual(await page.getByLabel("Starts").inputValue(), starts.slice(0, 16))
    await page.getByLabel("Starts").fill(later(starts))
    await page.getByLabel("Ends").fill(later(String(stored!["ends_at"])))
    await page.getByRole("button", { name: "Save" }).click()
    await page.getByRole("status").filter({ hasText: "Saved" }).waitFor()
    await expectAccessible(page)
    await screenshot(page, "maintenance-window")

    const moved = (await readFeed(feedUrl)).events.find((e) => e.summary === "Database upgrade")!
    assert.strictEqual(moved.uid, `window-${windowId}@127.0.0.1`, "same UID: clients update the event in place")
    assert.strictEqual(moved.sequence, 1)
    assert.strictEqual(moved.start, `${later(starts)}:00.000Z`)

    await page.getByRole("button", { name: "Delete Database upgrade" }).click()
    await page.waitForURL("**/maintenance?view=list")
    assert.strictEqual((await windows()).length, 0)
    assert.isUndefined((await readFeed(feedUrl)).events.find((e) => e.summary === "Database upgrade"))
  })

  it("a new address stops the old one; revoking answers 404; the audit log has each", async () => {
    await page.goto(`${server.url}/settings/acme/maintenance`)
    await page.getByRole("button", { name: "New address" }).click()
    await page.getByRole("status").filter({ hasText: "previous one no longer works" }).waitFor()
    // The action's message can render a moment before the revalidated address.
    await page.getByTestId("calendar-feed").filter({ hasNotText: feedUrl }).waitFor()
    const replaced = (await page.getByTestId("calendar-feed").innerText()).trim()
    assert.notStrictEqual(replaced, feedUrl)
    assert.strictEqual((await readFeed(feedUrl)).status, 404)
    assert.strictEqual((await readFeed(replaced)).status, 200)

    await page.getByRole("button", { name: "Revoke address" }).click()
    await page.getByRole("status").filter({ hasText: "revoked" }).waitFor()
    assert.strictEqual((await readFeed(replaced)).status, 404)
    assert.strictEqual((await fetch(`${server.url}/calendar/not-a-token.ics`)).status, 404)
    const actions = await onDatabase(world.runtime, (sql) =>
      sql<{ action: string }>`SELECT action FROM audit_log WHERE entity_type = 'calendar_feed' ORDER BY created_at, id`
    )
    assert.deepStrictEqual(actions.map((a) => a.action), ["calendar_feed.created", "calendar_feed.replaced", "calendar_feed.revoked"])

    // On a phone.
    await page.setViewportSize({ width: 360, height: 800 })
    await expectAccessible(page)
    await screenshot(page, "maintenance-360")
  })
})
