import { Effect } from "effect"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { api, makeOrganization, onDatabase, type Organization, secretsKey, type WorldRuntime, worldRuntime } from "../support/alertWorld.ts"
import { expectAccessible, launchBrowser, screenshot, startPortalServer } from "../support/browser.ts"
import { eventually } from "../support/eventually.ts"
import { freePort, type Running } from "../support/process.ts"
import { mailPart, type SmtpReceiver, startSmtpReceiver } from "../support/receivers.ts"

/**
 * Team, API keys, audit log and plan pages in Chromium against a real
 * `statusgrid start` (PostgreSQL, the notifier's mail worker and a real SMTP
 * server): what an Admin does, what a Viewer cannot, and what bad input gets.
 */

let server: Running
let browser: Browser
let smtp: SmtpReceiver
let world: { runtime: WorldRuntime; databaseUrl: string }
let org: Organization
let admin: BrowserContext
let adminPage: Page
let invitee: BrowserContext

beforeAll(async () => {
  ;[world, browser, smtp] = await Promise.all([worldRuntime(), launchBrowser(), startSmtpReceiver()])
  const port = await freePort()
  server = await startPortalServer({
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: world.databaseUrl,
    SECRETS_KEY: secretsKey,
    SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
    SMTP_FROM: "statusgrid <team@example.com>",
    NOTIFIER_POLL_MS: "100"
  })
  org = await makeOrganization(world.runtime, "Acme Payments", "acme")
  admin = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  adminPage = await admin.newPage()
  await signIn(adminPage, org.admin.email, org.admin.password)
}, 180_000)

afterAll(async () => {
  await admin?.close()
  await invitee?.close()
  await browser?.close()
  await server?.stop()
  await smtp?.close()
  await world?.runtime.dispose()
})

const signIn = async (page: Page, email: string, password: string) => {
  await page.goto(`${server.url}/signin`)
  await page.getByLabel("E-mail").fill(email)
  await page.getByLabel("Password").fill(password)
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.waitForURL((url) => !url.pathname.startsWith("/signin"), { timeout: 60_000 })
}

const members = async () => (await api(server.url, org.adminKey, "GET", "/members"))["data"] as ReadonlyArray<{ user_id: string; email: string; role: string }>
const invitations = async () => (await api(server.url, org.adminKey, "GET", "/invitations"))["data"] as ReadonlyArray<{ id: string; email: string }>
const auditCount = () => onDatabase(world.runtime, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_log`).then((r) => r[0]!.n)

/** A CSV parser (RFC 4180: quoted fields, doubled quotes, line breaks inside quotes), to read the export back. */
const parseCsv = (text: string): Array<Array<string>> => {
  const rows: Array<Array<string>> = []
  let row: Array<string> = []
  let field = ""
  let quoted = false
  const endField = () => {
    row.push(field)
    field = ""
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quoted) {
      if (c === "\"" && text[i + 1] === "\"") {
        field += "\""
        i++
      } else if (c === "\"") quoted = false
      else field += c
    } else if (c === "\"") quoted = true
    else if (c === ",") endField()
    else if (c === "\r" && text[i + 1] === "\n") {
      endField()
      rows.push(row)
      row = []
      i++
    } else field += c
  }
  if (field !== "" || row.length > 0) {
    endField()
    rows.push(row)
  }
  return rows
}

/** A form's fields plus the page's CSRF token, posted as that browser context (a forged request, without the page's controls). */
const forge = async (page: Page, path: string, fields: Record<string, string>) => {
  const csrf = await page.locator("input[name=csrf]").first().inputValue()
  return page.request.post(`${server.url}${path}`, { form: { ...fields, csrf }, maxRedirects: 0 })
}

describe("team, API keys and audit log in Chromium", () => {
  it("an Admin invites by e-mail; the invitee accepts in another browser and appears with the role", async () => {
    const page = adminPage
    await page.goto(`${server.url}/settings/acme/team`)
    await page.getByRole("heading", { level: 1, name: "Team" }).waitFor()
    assert.strictEqual(await page.title(), "Team · Acme Payments · statusgrid")
    await expectAccessible(page)

    // A malformed address: the message next to the field, nothing saved.
    await page.getByLabel("E-mail", { exact: true }).fill("not an address")
    await page.getByRole("button", { name: "Send invitation" }).click()
    await page.locator("#field-email-error").waitFor()
    assert.include(await page.locator("#field-email-error").innerText(), "E-mail")
    assert.strictEqual((await invitations()).length, 0)
    await expectAccessible(page)

    await page.getByLabel("E-mail", { exact: true }).fill("lin@example.com")
    await page.getByLabel("Role", { exact: true }).selectOption("member")
    await page.getByRole("button", { name: "Send invitation" }).click()
    await page.getByText("Invitation sent to lin@example.com.").waitFor()
    await page.locator("tr[data-invitation='lin@example.com']").waitFor()
    await screenshot(page, "settings-team-invited")

    const mail = await Effect.runPromise(eventually(30_000, Effect.sync(() => smtp.mails.find((m) => m.to.includes("lin@example.com")))))
    const body = mailPart(mail.raw, "text/plain").replace(/=\r?\n/g, "")
    const link = /https?:\/\/\S+\/invite\/[A-Za-z0-9_-]+/.exec(body)?.[0]
    assert.isDefined(link, body)

    // The invitee's browser writes its own X-Forwarded-For (no proxy is trusted here): not an address the
    // audit log may take, nor one it may fail on.
    invitee = await browser.newContext({ viewport: { width: 360, height: 740 }, extraHTTPHeaders: { "x-forwarded-for": "not an address, 198.51.100.4" } })
    const other = await invitee.newPage()
    await other.goto(link!)
    await other.getByRole("link", { name: "Create an account" }).click()
    await other.waitForURL("**/signup?next=*")
    await other.getByLabel("Your name").fill("Lin Chen")
    await other.getByLabel("E-mail").fill("lin@example.com")
    await other.getByLabel("Password").fill("a long enough password")
    await other.getByRole("button", { name: "Create account" }).click()
    await other.waitForURL(link!)
    await other.getByRole("button", { name: "Join Acme Payments as member" }).click()
    await other.waitForURL("**/dashboard/acme")

    await page.reload()
    const row = page.locator("tr[data-member='lin@example.com']")
    await row.waitFor()
    assert.strictEqual(await row.getByRole("combobox").inputValue(), "member")
    assert.strictEqual(await page.locator("tr[data-invitation='lin@example.com']").count(), 0)
    // The join is audited with the address the server saw: the socket's peer.
    const joined = await onDatabase(world.runtime, (sql) => sql<{ ip: string | null }>`SELECT host(ip) AS ip FROM audit_log WHERE action = 'member.joined'`)
    assert.deepStrictEqual(joined, [{ ip: "127.0.0.1" }])
  })

  it("an Admin changes a role: the audit log shows it with before and after; the last Admin stays, with the service's message", async () => {
    const page = adminPage
    await page.goto(`${server.url}/settings/acme/team`)
    const row = page.locator("tr[data-member='lin@example.com']")
    await row.getByRole("combobox").selectOption("viewer")
    await row.getByRole("button", { name: "Change role" }).click()
    await page.getByText("lin@example.com is now Viewer.").waitFor()
    assert.strictEqual((await members()).find((m) => m.email === "lin@example.com")?.role, "viewer")

    // The only Admin demotes themself: refused in place, nothing changed.
    const before = await auditCount()
    const me = page.locator(`tr[data-member='${org.admin.email}']`)
    await me.getByRole("combobox").selectOption("member")
    await me.getByRole("button", { name: "Change role" }).click()
    await me.getByRole("alert").waitFor()
    assert.include(await me.getByRole("alert").innerText(), "only admin")
    assert.strictEqual((await members()).find((m) => m.email === org.admin.email)?.role, "admin")
    assert.strictEqual(await auditCount(), before)
    await expectAccessible(page)
    await screenshot(page, "settings-team-last-admin")

    await page.goto(`${server.url}/settings/acme/audit?type=member`)
    const entry = page.locator("tr[data-action='member.role_changed']")
    await entry.waitFor()
    assert.include(await entry.locator(".audit-changes").innerText(), "role: member → viewer")
    await entry.getByText("Full records").click()
    assert.strictEqual(JSON.parse(await entry.locator("[data-before]").innerText()).role, "member")
    assert.strictEqual(JSON.parse(await entry.locator("[data-after]").innerText()).role, "viewer")
    assert.include(await entry.innerText(), "Grace Hopper")
    await expectAccessible(page)
    await screenshot(page, "settings-audit-member")
  })

  it("an API key: created with a role, shown once, works against /api/v1, revoked → 401", async () => {
    const page = adminPage
    await page.goto(`${server.url}/settings/acme/api-keys`)
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor()
    await expectAccessible(page)

    // No name: the field's message, no key made.
    const keysBefore = (await api(server.url, org.adminKey, "GET", "/api-keys"))["data"] as ReadonlyArray<unknown>
    await page.getByRole("button", { name: "Create key" }).click()
    await page.locator("#field-name-error").waitFor()
    assert.strictEqual(((await api(server.url, org.adminKey, "GET", "/api-keys"))["data"] as ReadonlyArray<unknown>).length, keysBefore.length)

    const name = "Deploy \"blue\", green"
    await page.getByLabel("Name").fill(name)
    await page.getByLabel("Role", { exact: true }).selectOption("viewer")
    await page.getByRole("button", { name: "Create key" }).click()
    const key = (await page.getByTestId("new-key").innerText()).trim()
    assert.match(key, /^sg_/)
    await expectAccessible(page)
    await screenshot(page, "settings-api-key-created")

    const call = (k: string) => fetch(`${server.url}/api/v1/organization`, { headers: { authorization: `Bearer ${k}` } })
    assert.strictEqual((await call(key)).status, 200)
    await page.reload()
    assert.notInclude(await page.content(), key, "the key is shown once")

    await page.getByRole("button", { name: `Revoke ${name}` }).click()
    await page.getByText(`${name} was revoked`).waitFor()
    assert.strictEqual((await call(key)).status, 401)
  })

  it("the audit filter and its CSV export (read back), malformed filters named, the plan's numbers", async () => {
    const page = adminPage
    await page.goto(`${server.url}/settings/acme/audit`)
    await page.getByLabel("Record type").selectOption("api_key")
    await page.getByRole("button", { name: "Filter" }).click()
    await page.waitForURL("**/audit?*type=api_key*")
    const actions = await page.locator("tr.audit-entry").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-action")))
    assert.deepStrictEqual(actions, ["api_key.created", "api_key.revoked"])

    const today = new Date().toISOString().slice(0, 10)
    const csv = await page.request.get(`${server.url}/settings/acme/audit.csv?type=api_key&from=${today}&to=${today}`)
    assert.strictEqual(csv.status(), 200)
    assert.include(csv.headers()["content-type"] ?? "", "text/csv")
    const [header, ...rows] = parseCsv(await csv.text())
    assert.deepStrictEqual(header, ["time", "actor_kind", "actor_id", "actor", "action", "record_type", "record_id", "ip", "before", "after"])
    assert.deepStrictEqual(rows.map((r) => r[4]), ["api_key.created", "api_key.revoked"])
    assert.strictEqual(JSON.parse(rows[0]![9]!).name, "Deploy \"blue\", green")
    assert.isNull(JSON.parse(rows[1]![8]!).revoked_at)
    assert.isString(JSON.parse(rows[1]![9]!).revoked_at)
    // Another day: nothing.
    const none = await page.request.get(`${server.url}/settings/acme/audit.csv?type=api_key&to=2001-01-01`)
    assert.strictEqual(parseCsv(await none.text()).length, 1)

    // Malformed filters: named, a 400, never a 500.
    const bad = await page.goto(`${server.url}/settings/acme/audit?from=yesterday&type=spaceship`)
    assert.strictEqual(bad?.status(), 400)
    assert.include(await page.locator("#field-from-error").innerText(), "YYYY-MM-DD")
    assert.include(await page.locator("#filter-type-error").innerText(), "Record type")
    assert.strictEqual((await page.request.get(`${server.url}/settings/acme/audit.csv?to=nope`)).status(), 400)
    assert.strictEqual((await page.goto(`${server.url}/settings/acme/audit?cursor=garbage`))?.status(), 400)

    // Something to count: two stacks, made through the API.
    await api(server.url, org.adminKey, "POST", "/stacks", { name: "Checkout" })
    await api(server.url, org.adminKey, "POST", "/stacks", { name: "Platform" })
    await page.goto(`${server.url}/settings/acme/plan`)
    const stacksNow = await onDatabase(world.runtime, (sql) => sql<{ n: number }>`
      SELECT count(*)::int AS n FROM stacks s JOIN organizations o ON o.id = s.organization_id WHERE o.slug = 'acme'`.pipe(Effect.map((r) => r[0]!.n)))
    assert.strictEqual(stacksNow, 2)
    assert.strictEqual(Number(await page.locator("tr[data-limit='max_stacks'] [data-used]").innerText()), stacksNow)
    const organization = await api(server.url, org.adminKey, "GET", "/organization")
    const limits = organization["limits"] as Record<string, { limit: number | null; used: number }>
    const membersNow = await onDatabase(world.runtime, (sql) => sql<{ n: number }>`
      SELECT count(*)::int AS n FROM memberships m JOIN organizations o ON o.id = m.organization_id WHERE o.slug = 'acme'`.pipe(Effect.map((r) => r[0]!.n)))
    assert.strictEqual(Number(await page.locator("tr[data-limit='max_users'] [data-used]").innerText()), membersNow + (await invitations()).length)
    for (const key of ["max_stacks", "max_components", "max_monitors", "max_custom_sources", "max_rules", "max_users"]) {
      const shown = page.locator(`tr[data-limit='${key}']`)
      assert.strictEqual(Number(await shown.locator("[data-used]").innerText()), limits[key]!.used, key)
      assert.strictEqual(await shown.locator("[data-max]").innerText(), limits[key]!.limit === null ? "Unlimited" : String(limits[key]!.limit), key)
    }
    await expectAccessible(page)
    await screenshot(page, "settings-plan")
  })

  it("a Viewer sees the team without controls; forged POSTs and the audit log are 403 and change nothing", async () => {
    const page = await invitee.newPage()
    await page.goto(`${server.url}/settings/acme/team`)
    await page.getByRole("heading", { level: 1, name: "Team" }).waitFor()
    assert.strictEqual(await page.getByRole("button", { name: "Change role" }).count(), 0)
    assert.strictEqual(await page.getByRole("button", { name: "Send invitation" }).count(), 0)
    const nav = await page.getByRole("navigation", { name: "Settings" }).innerText()
    assert.notInclude(nav, "Audit log")
    assert.notInclude(nav, "API keys")
    await expectAccessible(page)
    await screenshot(page, "settings-team-viewer-360")

    const before = { members: await members(), audit: await auditCount() }
    const adminId = before.members.find((m) => m.email === org.admin.email)!.user_id
    for (const fields of [
      { intent: "role", user_id: adminId, role: "viewer" },
      { intent: "remove", user_id: adminId },
      { intent: "invite", email: "mallory@example.com", role: "admin" }
    ]) {
      assert.strictEqual((await forge(page, "/settings/acme/team", fields)).status(), 403, JSON.stringify(fields))
    }
    assert.strictEqual((await forge(page, "/settings/acme/api-keys", { intent: "create", name: "mine", role: "admin" })).status(), 403)
    assert.deepStrictEqual(await members(), before.members)
    assert.strictEqual(await auditCount(), before.audit)
    assert.strictEqual((await page.goto(`${server.url}/settings/acme/audit`))?.status(), 403)
    assert.strictEqual((await page.request.get(`${server.url}/settings/acme/audit.csv`)).status(), 403)
    assert.strictEqual((await page.goto(`${server.url}/settings/acme/api-keys`))?.status(), 403)
    await page.close()
  })

  it("malformed team forms from an Admin are field errors, never a 500", async () => {
    await adminPage.goto(`${server.url}/settings/acme/team`)
    const before = { members: await members(), audit: await auditCount() }
    for (const fields of [
      { intent: "role", user_id: "not-a-uuid", role: "admin" },
      { intent: "role", user_id: before.members[0]!.user_id, role: "owner" },
      { intent: "remove", user_id: "" },
      { intent: "revoke", id: "42" },
      { intent: "dance" }
    ]) {
      assert.strictEqual((await forge(adminPage, "/settings/acme/team", fields)).status(), 400, JSON.stringify(fields))
    }
    assert.strictEqual((await forge(adminPage, "/settings/acme/api-keys", { intent: "create", name: "x", role: "root" })).status(), 400)
    assert.strictEqual((await forge(adminPage, "/settings/acme/api-keys", { intent: "revoke", id: "x" })).status(), 400)
    assert.deepStrictEqual(await members(), before.members)
    assert.strictEqual(await auditCount(), before.audit)
  })

  it("the team page at 360 px in the dark theme", async () => {
    const context = await browser.newContext({ viewport: { width: 360, height: 740 }, colorScheme: "dark", storageState: await admin.storageState() })
    const page = await context.newPage()
    await page.goto(`${server.url}/settings/acme/team`)
    await page.getByRole("heading", { level: 1, name: "Team" }).waitFor()
    const width = await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth)
    assert.isAtMost(width, 360)
    await expectAccessible(page)
    await screenshot(page, "settings-team-dark-360")
    await page.goto(`${server.url}/settings/acme/audit`)
    await expectAccessible(page)
    await screenshot(page, "settings-audit-dark-360")
    await context.close()
  })
})
