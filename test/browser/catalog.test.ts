import { Effect, Exit, Layer, ManagedRuntime, Scope } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { randomBytes } from "node:crypto"
import * as Path from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { recordOnset } from "../../services/crowd/CrowdWorker.ts"
import { Users } from "../../services/identity/Users.ts"
import { Members } from "../../services/orgs/Members.ts"
import { Organizations } from "../../services/orgs/Organizations.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { SecretBox } from "../../services/platform/SecretBox.ts"
import { expectAccessible, launchBrowser, screenshot, screenshotDir, startPortalServer, waitForExpression } from "../support/browser.ts"
import { sendFrom } from "../support/crowd.ts"
import type { Running } from "../support/process.ts"
import { freshDatabase } from "../support/stores.ts"

/**
 * The catalog, a source page and "Add to a stack", in Chromium against a real `statusgrid start` on a
 * fresh PostgreSQL database. The people and their roles are made through the identity and members
 * services (sign-up, an organization, invitations accepted); the provider's status page is out of
 * reach here, so its components, incidents and maintenance are rows as the poller stores them.
 */

const password = "a perfectly fine password"
const secretsKey = randomBytes(32).toString("base64")

let scope: Scope.Closeable
let server: Running
let browser: Browser
let services: ManagedRuntime.ManagedRuntime<Users | Members | SqlClient, unknown>
let org: { readonly id: string; readonly slug: string }
const people = { member: "bea@example.com", viewer: "vic@example.com" }

/** An operational catalog source of one component, checked a moment ago; its id. */
const insertCheckedSource = (key: string, name: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const [row] = yield* sql<{ id: string }>`
      WITH s AS (
        INSERT INTO sources (key, name, kind, status, status_page_url, check_class, poll_interval_s, verified, components_count)
        VALUES (${key}, ${name}, 'catalog', 'operational', ${`https://status.${key}.example`}, 'standard', 60, true, 1)
        RETURNING id
      ), checked AS (INSERT INTO source_checks (source_id, checked_at) SELECT id, now() FROM s)
      SELECT id FROM s`
    return row!.id
  })

/** A catalog source with two component groups, regions, an open and a resolved incident and an upcoming maintenance. */
const seedSource = Effect.gen(function*() {
  const sql = yield* SqlClient
  const [source] = yield* sql<{ id: string }>`
    WITH s AS (
      INSERT INTO sources (key, name, kind, description, status, provider_type, status_page_url, service_url, check_class,
        poll_interval_s, verified, has_history, region_statuses, regions, components_count, incidents_count)
      VALUES ('acme-cloud', 'Acme Cloud', 'catalog', 'Compute, storage and queues for the Acme platform.', 'degraded',
        'statuspage_io', 'https://status.acme-cloud.example', 'https://acme-cloud.example', 'critical', 30, true, true,
        '[{"region":"eu-west-1","status":"operational"},{"region":"us-east-1","status":"degraded"}]'::jsonb,
        ARRAY['eu-west-1','us-east-1'], 6, 2)
      RETURNING id
    ), checked AS (INSERT INTO source_checks (source_id, checked_at) SELECT id, now() - interval '20 seconds' FROM s)
    SELECT id FROM s`
  yield* sql`INSERT INTO source_categories (source_id, category_id) VALUES (${source!.id}::uuid, 'cloud')`
  const component = (name: string, position: number, parent: string | null, extra: { group?: boolean; status?: string; region?: string } = {}) =>
    sql<{ id: string }>`
      INSERT INTO components (source_id, external_id, parent_id, name, status, is_group, region, position)
      VALUES (${source!.id}::uuid, ${`ext-${position}`}, ${parent}::uuid, ${name}, ${extra.status ?? "operational"},
        ${extra.group ?? false}, ${extra.region ?? null}, ${position})
      RETURNING id`.pipe(Effect.map((rows) => rows[0]!.id))
  const compute = yield* component("Compute", 1, null, { group: true })
  const vms = yield* component("Virtual machines", 2, compute, { status: "degraded", region: "us-east-1" })
  yield* component("Containers", 3, compute)
  const storage = yield* component("Storage", 4, null, { group: true })
  yield* component("Object storage", 5, storage)
  yield* component("Block storage", 6, storage)
  yield* component("Queues", 7, null)
  const [open] = yield* sql<{ id: string }>`
    INSERT INTO incidents (source_id, external_id, title, status, impact, region, update_count, started_at, updated_at)
    VALUES (${source!.id}::uuid, 'inc-1', 'Slow VM starts in us-east-1', 'identified', 'minor', 'us-east-1', 2,
      now() - interval '40 minutes', now() - interval '10 minutes')
    RETURNING id`
  yield* sql`INSERT INTO incident_components (incident_id, component_id) VALUES (${open!.id}::uuid, ${vms}::uuid)`
  yield* sql`INSERT INTO incident_updates (incident_id, external_id, status, body, created_at) VALUES
    (${open!.id}::uuid, 'u-1', 'investigating', 'We are looking into slow starts of virtual machines.', now() - interval '40 minutes'),
    (${open!.id}::uuid, 'u-2', 'identified', 'A storage controller is overloaded; we are moving load away.', now() - interval '10 minutes')`
  yield* sql`
    INSERT INTO incidents (source_id, external_id, title, status, impact, update_count, started_at, updated_at, resolved_at)
    VALUES (${source!.id}::uuid, 'inc-0', 'Queue delays', 'resolved', 'major', 0, now() - interval '3 days',
      now() - interval '3 days', now() - interval '3 days' + interval '50 minutes')`
  const [maintenance] = yield* sql<{ id: string }>`
    INSERT INTO scheduled_maintenances (source_id, external_id, title, status, scheduled_for, scheduled_until)
    VALUES (${source!.id}::uuid, 'm-1', 'Storage firmware upgrade', 'scheduled', now() + interval '2 days',
      now() + interval '2 days 2 hours')
    RETURNING id`
  yield* sql`INSERT INTO maintenance_components (maintenance_id, component_id)
    SELECT ${maintenance!.id}::uuid, id FROM components WHERE parent_id = ${storage}::uuid`
})

/** An organization made by its admin, with a Member and a Viewer who joined through invitations. */
const seedPeople = Effect.gen(function*() {
  const users = yield* Users
  const members = yield* Members
  const admin = yield* users.signUp("ada@example.com", password, "Ada Admin")
  const created = yield* users.createOrganization(admin.id, { name: "Analytical Engines", slug: "engines" })
  // Three people need a paid plan (the operator's `statusgrid org plan engines pro`).
  yield* SqlClient.use((sql) => sql`UPDATE organizations SET plan_id = 'pro' WHERE id = ${created.id}::uuid`)
  const principal = yield* users.principalFor(admin.id, created.id)
  for (const [role, email] of [["member", people.member], ["viewer", people.viewer]] as const) {
    const user = yield* users.signUp(email, password, role === "member" ? "Bea Member" : "Vic Viewer")
    const invited = yield* members.invite(principal, { email, role })
    yield* members.acceptInvitation(user.id, invited.accept_url.replace(/^\/invite\//, ""))
  }
  return { id: created.id, slug: created.slug }
})

beforeAll(async () => {
  scope = Scope.makeUnsafe()
  const url = await Effect.runPromise(Scope.provide(scope)(freshDatabase))
  ;[server, browser] = await Promise.all([startPortalServer({ DATABASE_URL: url, SECRETS_KEY: secretsKey }), launchBrowser()])
  // The server has migrated the database; these services write to it as the API would.
  services = ManagedRuntime.make(
    Layer.mergeAll(Users.layer, Members.layer).pipe(
      Layer.provide(Organizations.layer),
      Layer.provide(Layer.succeed(SecretBox, SecretBox.fromKey(Buffer.from(secretsKey, "base64")))),
      Layer.provideMerge(Postgres.layerServer(url, { maxConnections: 2 }))
    )
  )
  await services.runPromise(seedSource)
  org = await services.runPromise(seedPeople)
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  await services?.dispose()
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
})

const signIn = async (page: Page, email: string, next: string) => {
  await page.goto(`${server.url}/signin?next=${encodeURIComponent(next)}`)
  await page.getByLabel("E-mail").fill(email)
  await page.getByLabel("Password").fill(password)
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.waitForURL(`**${next}`)
}

/** How far the page scrolls sideways: 0 when it fits the viewport. */
const sidewaysScroll = (page: Page) =>
  page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") as Promise<number>

describe("catalog in Chromium", () => {
  it("searches as one types, keeps the URL in sync, and filters by category and status", async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    await page.goto(`${server.url}/catalog`)
    assert.strictEqual(await page.title(), "Catalog · statusgrid")
    const rows = page.locator(".source-row")
    assert.strictEqual(await rows.count(), 30)
    await expectAccessible(page)
    await page.getByRole("link", { name: "Next page →" }).waitFor()

    await page.getByLabel("Search", { exact: true }).pressSequentially("acme clo", { delay: 20 })
    await page.waitForURL("**/catalog?q=acme+clo")
    await page.getByRole("link", { name: "Acme Cloud" }).waitFor()
    // The URL follows the typing before the results do: wait for the list of the last query.
    await waitForExpression(page, "document.querySelectorAll('.source-row').length === 1")
    assert.strictEqual(await rows.count(), 1)
    assert.include(await rows.first().innerText(), "degraded")
    assert.include(await rows.first().innerText(), "Cloud infrastructure")

    // The status filter is the API's: Acme Cloud is degraded, so "operational" leaves nothing.
    await page.getByLabel("Status", { exact: true }).selectOption("operational")
    await page.waitForURL("**/catalog?q=acme+clo&status=operational")
    await page.getByText("No source matches.").waitFor()
    await page.getByLabel("Status", { exact: true }).selectOption("degraded")
    await page.getByRole("link", { name: "Acme Cloud" }).waitFor()
    await expectAccessible(page)
    // Control characters in a hand-edited URL are dropped from the search (the API would refuse them).
    await page.goto(`${server.url}/catalog?q=acme%1F%09+clo`)
    await page.getByRole("link", { name: "Acme Cloud" }).waitFor()
    assert.strictEqual(await page.getByLabel("Search", { exact: true }).inputValue(), "acme clo")
    await screenshot(page, "catalog-search")

    // The same result from the API's list for the same query.
    const api = await (await fetch(`${server.url}/api/v1/sources?search=acme+clo&status=degraded`)).json() as { data: Array<{ key: string }> }
    assert.deepStrictEqual(api.data.map((s) => s.key), ["acme-cloud"])

    await page.getByRole("link", { name: "Acme Cloud" }).click()
    await page.waitForURL("**/sources/acme-cloud")
    await page.getByRole("heading", { level: 1, name: "Acme Cloud" }).waitFor()
    await page.close()
  })

  it("works without JavaScript: a search is a link, pages follow with next links", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false })
    const page = await context.newPage()
    await page.goto(`${server.url}/catalog`)
    await page.getByLabel("Search", { exact: true }).fill("acme")
    await page.getByLabel("Category").selectOption("cloud")
    await page.getByRole("button", { name: "Search" }).click()
    await page.waitForURL("**/catalog?q=acme&category=cloud&status=")
    assert.deepStrictEqual(await page.locator(".source-row h2").allInnerTexts(), ["Acme Cloud"])

    await page.goto(`${server.url}/catalog?category=cloud`)
    const first = await page.locator(".source-row h2").allInnerTexts()
    await page.getByRole("link", { name: "Next page →" }).click()
    await page.waitForURL(/cursor=/)
    const second = await page.locator(".source-row h2").allInnerTexts()
    assert.isAbove(second.length, 0)
    assert.deepStrictEqual(first.filter((name) => second.includes(name)), [])
    await page.getByRole("link", { name: "← First page" }).waitFor()
    // A cursor this server did not hand out: a way back, not an error.
    await page.goto(`${server.url}/catalog?cursor=not-a-cursor`)
    await page.getByText("This page link is no longer valid.").waitFor()
    await context.close()
  })

  it("fits a 360 px phone", async () => {
    const page = await browser.newPage({ viewport: { width: 360, height: 740 } })
    await page.goto(`${server.url}/catalog?q=a`)
    await page.locator(".source-row").first().waitFor()
    assert.isAtMost(await sidewaysScroll(page), 0)
    await expectAccessible(page)
    // The first screenful (the whole page is 30 rows long).
    await page.screenshot({ path: Path.join(screenshotDir, "catalog-360.png") })
    await page.goto(`${server.url}/sources/acme-cloud`)
    await page.getByRole("heading", { level: 1, name: "Acme Cloud" }).waitFor()
    assert.isAtMost(await sidewaysScroll(page), 0)
    await screenshot(page, "catalog-source-360")
    await page.close()
  })

  it("shows a source: status, components, regions, incidents with updates, maintenance, reliability, history", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    await page.goto(`${server.url}/sources/acme-cloud`)
    assert.strictEqual(await page.title(), "Acme Cloud status · statusgrid")
    const head = await page.locator(".source-head").innerText()
    assert.include(head, "degraded")
    const tree = page.getByRole("list", { name: "Components" })
    assert.include(await tree.innerText(), "Virtual machines")
    assert.include(await tree.innerText(), "Block storage")
    const regions = await page.locator(".regions").innerText()
    assert.match(regions, /us-east-1\s*!\s*degraded/)
    const incidents = await page.locator("section[aria-labelledby=incidents-title]").innerText()
    assert.include(incidents, "Slow VM starts in us-east-1")
    assert.include(incidents, "A storage controller is overloaded")
    assert.include(incidents, "Affected: Virtual machines")
    assert.include(incidents, "Queue delays")
    const maintenance = await page.locator("section[aria-labelledby=maintenance-title]").innerText()
    assert.include(maintenance, "Storage firmware upgrade")
    assert.include(maintenance, "Affects Object storage, Block storage")
    const reliability = await page.locator(".indicators").innerText()
    assert.include(reliability, "Verified format")
    assert.include(reliability, "Real-time")
    const official = page.getByRole("link", { name: /Official status page/ })
    assert.strictEqual(await official.getAttribute("href"), "https://status.acme-cloud.example")
    assert.include(await official.getAttribute("rel") ?? "", "noopener")
    // The history arrives after the page (streamed): 24 hourly cells, then 90 daily ones. Visible cells only: when the
    // browser renders the resolved history before the server's streamed copy arrives, that copy stays in a hidden div.
    const cells = page.locator("ul.strip:visible > li")
    await cells.nth(23).waitFor()
    assert.strictEqual(await cells.count(), 24)
    // The same hidden-copy rule for the uptime line (and the skeleton's "loading…" line, while it is still in the page).
    assert.include(await page.locator(".uptime:visible", { hasNotText: "loading" }).innerText(), "last 30 days")
    await page.getByRole("link", { name: "90 days" }).click()
    await page.waitForURL("**/sources/acme-cloud?window=90d")
    await cells.nth(89).waitFor()
    // Signed out: a way to sign in instead of the form.
    assert.isTrue(await page.getByRole("link", { name: "Sign in" }).first().isVisible())
    assert.strictEqual(await page.locator("form.add-form").count(), 0)
    await expectAccessible(page)
    await screenshot(page, "catalog-source")
    await page.emulateMedia({ colorScheme: "dark" })
    await expectAccessible(page)
    await screenshot(page, "catalog-source-dark")
    await page.close()

    const missing = await fetch(`${server.url}/sources/no-such-source`)
    if (missing.status !== 404) console.log("MISSING", missing.status, (await missing.text()).slice(0, 3000))
    assert.strictEqual(missing.status, 404)
  })

  it("takes a problem report from a signed-out visitor and from a signed-in Member, each reporter once, and shows the crowd's score and why", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    await page.goto(`${server.url}/sources/acme-cloud`)
    const panel = page.locator("section[aria-labelledby=crowd-title]")
    assert.include(await panel.locator(".crowd-score").innerText(), "No reports in the last 10 min.")
    // Signed out: the address the server saw is the reporter.
    await panel.getByLabel("What is wrong?").selectOption("slow")
    await panel.getByLabel("Which part (optional)").selectOption({ label: "Compute › Virtual machines" })
    await panel.getByRole("button", { name: "Report a problem" }).click()
    await panel.getByRole("status").filter({ hasText: "your report is counted" }).waitFor()
    // The sentence names the window the model scored: the last minutes or the whole 10 (decision 0014).
    assert.match(await panel.locator(".crowd-score").innerText(), /1 reporter in (1|2|3|5|10) min/)
    // The same visitor again inside the window: counted once.
    await panel.getByRole("button", { name: "Report a problem" }).click()
    await panel.getByRole("status").filter({ hasText: "already counted" }).waitFor()
    assert.match(await panel.locator(".crowd-score").innerText(), /1 reporter in (1|2|3|5|10) min/)
    await page.close()

    // Signed in, the person is the reporter (from the same address): a second one.
    const member = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    await signIn(member, people.member, "/sources/acme-cloud")
    const mine = member.locator("section[aria-labelledby=crowd-title]")
    await mine.getByRole("button", { name: "Report a problem" }).click()
    await mine.getByRole("status").filter({ hasText: "your report is counted" }).waitFor()
    const score = await mine.locator(".crowd-score").innerText()
    // The sentence names the window the model scored: the last minutes or the whole 10 (decision 0014).
    assert.match(score, /2 reporters in (1|2|3|5|10) min/)
    // The page and the API say the same.
    const api = await (await fetch(`${server.url}/api/v1/sources/acme-cloud/crowd`)).json() as { confidence: number; reporters: number; reason: string }
    assert.strictEqual(api.reporters, 2)
    assert.include(score, `${api.confidence} %`)
    assert.include(score, api.reason)
    await expectAccessible(member)
    await mine.scrollIntoViewIfNeeded()
    await screenshot(member, "catalog-source-crowd-report")
    await member.close()
  })

  it("marks a source whose users report problems, and says how early its users saw problems before its status page", async () => {
    // An operational source; eight reporters from eight networks (real loopback addresses) start its signal in the server.
    const source = await services.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient
      const id = yield* insertCheckedSource("birch-mail", "Birch Mail")
      yield* sql`INSERT INTO components (source_id, external_id, name, status, position) VALUES (${id}::uuid, 'smtp', 'SMTP', 'operational', 1)`
      return id
    }))
    for (let n = 1; n <= 8; n++) {
      const r = await sendFrom(server.url, "POST", "/sources/birch-mail/reports", `127.0.${60 + n}.1`, { body: { symptom: "down" } })
      assert.strictEqual(r.status, 202, JSON.stringify(r.body))
    }
    const crowd = await (await fetch(`${server.url}/api/v1/sources/birch-mail/crowd`)).json() as { signal: { id: string } | null }
    assert.isNotNull(crowd.signal, "eight reporters from eight networks start a signal")
    // The status page follows five minutes later (the signal moved five minutes back: the test cannot wait),
    // recorded as the crowd's worker records an official onset.
    await services.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient
      yield* sql`UPDATE crowd_signals SET started_at = started_at - interval '5 minutes' WHERE id = ${crowd.signal!.id}::uuid`
      yield* recordOnset({
        id: `birch-${randomBytes(4).toString("hex")}`, type: "source.status_changed", timestamp: new Date().toISOString(),
        source: { key: "birch-mail", name: "Birch Mail" }, previous_status: "operational", current_status: "down"
      })
      const [onset] = yield* sql<{ signal_id: string | null }>`SELECT signal_id FROM crowd_onsets WHERE source_id = ${source}::uuid`
      assert.strictEqual(onset?.signal_id, crowd.signal!.id)
    }))

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    await page.goto(`${server.url}/sources/birch-mail`)
    const panel = page.locator("section[aria-labelledby=crowd-title]")
    assert.include(await panel.locator(".crowd-signal").innerText(), "Users report problems")
    const record = await (await fetch(`${server.url}/api/v1/sources/birch-mail/crowd/record`)).json() as { sentence: string; led: number; onsets: number }
    assert.deepStrictEqual([record.led, record.onsets], [1, 1])
    assert.strictEqual(record.sentence, "statusgrid users usually see problems with Birch Mail 5 minutes before its status page (1 of 1 in 90 days).")
    assert.strictEqual(await panel.locator(".crowd-record").innerText(), record.sentence)
    // The official status stays what the status page said when the crowd spoke.
    assert.strictEqual(((await (await fetch(`${server.url}/api/v1/sources/birch-mail`)).json()) as { status: string }).status, "operational")
    await expectAccessible(page)
    await panel.scrollIntoViewIfNeeded()
    await screenshot(page, "catalog-source-crowd-signal")
    await page.close()
  })

  it("shows users' problem reports on the open dashboard and stack page as they cross the threshold, without a reload", async () => {
    // A stack of the Member's organization showing one component of an operational source.
    await services.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient
      const sourceId = yield* insertCheckedSource("cedar-pay", "Cedar Pay")
      const [component] = yield* sql<{ id: string }>`
        INSERT INTO components (source_id, external_id, name, status, position) VALUES (${sourceId}::uuid, 'cards', 'Card payments', 'operational', 1)
        RETURNING id`
      const [stack] = yield* sql<{ id: string }>`
        INSERT INTO stacks (organization_id, name, slug) VALUES (${org.id}::uuid, 'Payments', 'payments') RETURNING id`
      yield* sql`INSERT INTO stack_items (stack_id, kind, component_id, position) VALUES (${stack!.id}::uuid, 'component', ${component!.id}::uuid, 0)`
    }))
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    await signIn(page, people.member, `/dashboard/${org.slug}`)
    const card = page.locator("[data-stack=payments]")
    await card.waitFor()
    assert.strictEqual(await card.locator(".crowd-signal").count(), 0)
    // The stream is open before the reports (deltas are at most once; a page that connects later reads the state).
    await page.locator("[data-live=live]").waitFor()
    // Eight reporters from eight networks: the server starts the signal and the open page shows it.
    for (let n = 1; n <= 8; n++) {
      const r = await sendFrom(server.url, "POST", "/sources/cedar-pay/reports", `127.0.${80 + n}.1`, { body: { symptom: "errors" } })
      assert.strictEqual(r.status, 202, JSON.stringify(r.body))
    }
    const marker = card.locator("[data-crowd=cedar-pay]")
    await marker.waitFor({ timeout: 10_000 })
    assert.include(await marker.innerText(), "Users report problems with Cedar Pay")
    // The banner is the official one: still operational.
    assert.include(await card.innerText(), "All Systems Operational")
    await expectAccessible(page)
    await screenshot(page, "dashboard-crowd-marker")
    // The stack page shows it beside the source, from its loader, and takes a report from the member.
    await page.goto(`${server.url}/dashboard/${org.slug}/stacks/payments`)
    assert.include(await page.locator("[data-source=cedar-pay] [data-crowd=cedar-pay]").innerText(), "Users report problems")
    const form = page.locator("section.report-problem")
    await form.getByLabel("What is wrong with Cedar Pay?").selectOption("slow")
    await form.getByRole("button", { name: "Report a problem" }).click()
    await form.getByRole("status").filter({ hasText: "your report is counted" }).waitFor()
    const crowd = async () => (await (await fetch(`${server.url}/api/v1/sources/cedar-pay/crowd`)).json()) as { reporters: number }
    assert.strictEqual((await crowd()).reporters, 9)
    await expectAccessible(page)
    await screenshot(page, "stack-page-report-problem")
    await page.close()

    // The stack shared publicly: a visitor without an account reports through the share page.
    const token = randomBytes(24).toString("base64url")
    await services.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient
      yield* sql`UPDATE stacks SET visibility = 'public', share_token = ${token} WHERE organization_id = ${org.id}::uuid AND slug = 'payments'`
    }))
    const visitor = await browser.newPage({ viewport: { width: 390, height: 844 } })
    await visitor.goto(`${server.url}/share/${token}`)
    const shared = visitor.locator("section.report-problem")
    await shared.getByRole("button", { name: "Report a problem" }).click()
    await shared.getByRole("status").filter({ hasText: "your report is counted" }).waitFor()
    assert.strictEqual((await crowd()).reporters, 10)
    await expectAccessible(visitor)
    await screenshot(visitor, "share-report-problem")
    await visitor.close()
  })

  it("lets a Member add two components to a new stack, and shows a Viewer no form", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    await signIn(page, people.member, "/sources/acme-cloud")
    const form = page.locator("form.add-form")
    await form.waitFor()
    await expectAccessible(page)

    // A new stack without a name: the Schema's message beside the field.
    await page.getByLabel("Stack", { exact: true }).selectOption("new")
    await page.getByLabel("Containers").check()
    await page.getByRole("button", { name: "Add to stack" }).click()
    await page.locator("#add-new_stack_name-error").waitFor()
    assert.match(await page.locator("#add-new_stack_name-error").innerText(), /1 to 200 characters/)

    await page.getByLabel("Stack", { exact: true }).selectOption("new")
    await page.getByLabel("New stack name").fill("Checkout")
    await page.getByLabel("Virtual machines").check()
    await page.getByLabel("Containers").check()
    assert.isTrue(await page.getByLabel("Only the components ticked below").isChecked())
    await page.getByRole("button", { name: "Add to stack" }).click()
    const success = page.locator(".form-success")
    await success.waitFor()
    assert.include(await success.innerText(), "Added 2 components to the new stack Checkout")
    const link = page.getByRole("link", { name: "Checkout" })
    assert.strictEqual(await link.getAttribute("href"), `/dashboard/${org.slug}/stacks/checkout`)
    await expectAccessible(page)
    await screenshot(page, "catalog-added-to-stack")

    // The stack holds exactly those two components (the Stacks service the API reads).
    const items = await services.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient
      return yield* sql<{ name: string }>`
        SELECT c.name FROM stack_items i JOIN stacks s ON s.id = i.stack_id JOIN components c ON c.id = i.component_id
        WHERE s.organization_id = ${org.id}::uuid AND s.slug = 'checkout' ORDER BY c.name`
    }))
    assert.deepStrictEqual(items.map((r) => r.name), ["Containers", "Virtual machines"])
    // The dashboard lists the new stack with its link and those two components.
    await page.goto(`${server.url}/dashboard/${org.slug}`)
    await page.getByRole("link", { name: "Checkout" }).waitFor()
    const card = page.locator('.stack-card[data-stack="checkout"] .status-row .row-name')
    assert.deepStrictEqual((await card.allInnerTexts()).map((t) => t.split("\n")[0]!.trim()).toSorted(), ["Containers", "Virtual machines"])
    await page.close()

    const viewer = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    await signIn(viewer, people.viewer, "/sources/acme-cloud")
    await viewer.getByText("you can view its stacks but not change them").waitFor()
    assert.strictEqual(await viewer.locator("form.add-form").count(), 0)
    await expectAccessible(viewer)
    await screenshot(viewer, "catalog-source-viewer")
    await viewer.close()
  })
})
