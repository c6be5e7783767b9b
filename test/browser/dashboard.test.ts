import { Context, Effect, Layer, ManagedRuntime, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, afterEach, assert, beforeAll, describe, it } from "vitest"
import { syntheticSpecs } from "../../services/catalog/Synthetic.ts"
import { componentFormats } from "../../services/demo/Demo.ts"
import { Users } from "../../services/identity/Users.ts"
import { Organizations } from "../../services/orgs/Organizations.ts"
import { Stacks } from "../../services/orgs/Stacks.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { expectAccessible, launchBrowser, screenshot, signUpWithOrganization as signUp } from "../support/browser.ts"
import { childEnv, freePort, type Running, startService } from "../support/process.ts"
import { freshDatabase } from "../support/stores.ts"

/**
 * The dashboard and the stack page in Chromium, on a real `statusgrid start
 * --demo` (its simulator as a child) over a fresh PostgreSQL database that
 * this test also reaches through the product's own services (Stacks, Users,
 * Organizations) to build stacks, as the stack builder would. The demo world
 * ticks once an hour here, so what changes on the page is the test's flip.
 */

class TestDatabase extends Context.Service<TestDatabase, string>()("test/browser/TestDatabase") {}

const demoSources = 60
const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-dashboard-"))
const database = ManagedRuntime.make(Layer.effect(TestDatabase, freshDatabase))
let services: ManagedRuntime.ManagedRuntime<Users | Stacks | Organizations | SqlClient, unknown>
let server: Running
let browser: Browser
let simulatorUrl: string

beforeAll(async () => {
  const url = await database.runPromise(Effect.gen(function*() {
    return yield* TestDatabase
  }))
  services = ManagedRuntime.make(
    Layer.mergeAll(Users.layer, Stacks.layer, Organizations.layer).pipe(Layer.provideMerge(Postgres.layerServer(url, { maxConnections: 2 })))
  )
  const env = childEnv({
    DATA_DIR: dataDir,
    DATABASE_URL: url,
    PORT: String(await freePort()),
    HOST: "127.0.0.1",
    SIMULATOR_URL: "http://127.0.0.1:0",
    DEMO_SOURCES: String(demoSources),
    DEMO_TICK_MS: "3600000",
    // What the poller did every 30 s, printed with the warnings when a test fails.
    POLLER_STATS_LOG_MS: "30000"
  })
  ;[server, browser] = await Promise.all([startService(env, 120_000, ["start", "--demo"]), launchBrowser()])
  const line = server.logs.find((l) => l["message"] === "demo mode: the simulator runs beside the service")
  simulatorUrl = (line?.["annotations"] as Record<string, string> | undefined)?.["simulator"] ?? ""
  assert.notStrictEqual(simulatorUrl, "", "the demo logs its simulator URL")
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  await services?.dispose()
  await database.dispose()
  Fs.rmSync(dataDir, { recursive: true, force: true })
}, 180_000)

const run = <A, E>(effect: Effect.Effect<A, E, Users | Stacks | Organizations | SqlClient>) => services.runPromise(effect)

const componentRows = Schema.decodeUnknownSync(Schema.Array(Schema.Struct({ id: Schema.String, external_id: Schema.String, name: Schema.String, status: Schema.String })))

/** The components of a source once the poller has read it (critical sources are polled every 30 s). */
const polledComponents = (key: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    for (;;) {
      const rows = componentRows(yield* sql`
        SELECT c.id, c.external_id, c.name, c.status FROM components c JOIN sources s ON s.id = c.source_id
        WHERE s.key = ${key} AND NOT c.is_group ORDER BY c.position, c.name`)
      if (rows.length > 0) return rows
      yield* Effect.sleep("500 millis")
    }
  }).pipe(Effect.orDie)

/** Signs up and creates an organization through the pages, as a person would; ends on its dashboard. */
const signUpWithOrganization = (page: Page, email: string, slug: string) =>
  signUp(page, server.url, { name: "Grace Hopper", email, password: "compilers since 1952" }, { name: "Harbor Logistics", slug })

/** The new organization's Admin as a principal, on the Pro plan so that it may hold several stacks. */
const adminOf = (email: string, slug: string) =>
  Effect.gen(function*() {
    yield* Organizations.use((o) => o.setPlanAsOperator(slug, "pro", "browser test"))
    const sql = yield* SqlClient
    const [row] = yield* sql<{ user_id: string; organization_id: string }>`
      SELECT m.user_id, m.organization_id FROM memberships m
      JOIN users u ON u.id = m.user_id JOIN organizations o ON o.id = m.organization_id
      WHERE u.email = ${email} AND o.slug = ${slug}`
    return yield* Users.use((u) => u.principalFor(row!.user_id, row!.organization_id))
  }).pipe(Effect.orDie)

const started = Date.now()
/** Progress on stderr, so that a slow run says where it is. */
const step = (what: string) => process.stderr.write(`[dashboard test +${Math.round((Date.now() - started) / 1000)} s] ${what}\n`)

/** Sources polled every 30 s, in a format with components. */
const critical = syntheticSpecs(demoSources).filter((s) => s.check_class === "critical" && componentFormats.has(s.provider))

/** The service's log lines a failed test prints: warnings, errors and the poller's stats. */
const telling = (l: Record<string, unknown>) => l["level"] === "WARN" || l["level"] === "ERROR" || l["message"] === "poller stats"

describe("dashboard and stack page in Chromium", () => {
  // A failed test prints the service's last warnings, errors and poller stats: CI keeps only this process's output.
  afterEach((context) => {
    if (context.task.result?.state !== "fail") return
    for (const line of server.logs.filter(telling).slice(-40)) {
      process.stderr.write(`[dashboard test: service] ${JSON.stringify(line)}\n`)
    }
  })

  it("shows a stack's components by source with history, and a simulator flip appears on the open page without a reload", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    const email = "grace@example.com"
    await signUpWithOrganization(page, email, "harbor")
    step("signed up, organization created")
    // Demo mode gave the new organization its starter stack.
    await page.getByRole("heading", { level: 2, name: "Demo production" }).waitFor()
    await expectAccessible(page)

    // A stack with components of a simulated source, through the Stacks service as the Admin.
    const source = critical.find((s) => s.provider === "statuspage_io") ?? critical.at(-1)!
    const components = await run(polledComponents(source.key))
    step(`${source.key} polled`)
    const [first, second] = [components[0]!, components[1]!]
    await run(Effect.gen(function*() {
      const admin = yield* adminOf(email, "harbor")
      const stacks = yield* Stacks
      const stack = yield* stacks.create(admin, { name: "Checkout", description: "What the checkout page needs." })
      yield* stacks.addItem(admin, stack.id, { kind: "component", component_id: first.id })
      yield* stacks.addItem(admin, stack.id, { kind: "component", component_id: second.id })
    }).pipe(Effect.orDie))

    step("stack created")
    await page.goto(`${server.url}/dashboard/harbor/stacks/checkout`)
    assert.strictEqual(await page.title(), "Checkout · Harbor Logistics · statusgrid")
    await page.getByRole("heading", { level: 2, name: source.name }).waitFor()
    const row = page.locator(`[data-component="${first.external_id}"]`)
    await row.waitFor()
    // The history strip streams in after the page (a server-rendered SVG, no chart library).
    await row.locator("svg.strip-bars").waitFor()
    await page.locator("[data-live='live']").waitFor()
    await page.evaluate(() => ((globalThis as unknown as { notReloaded: boolean }).notReloaded = true))

    // Flip the first component in the simulator: to critical, or back to operational if it is not operational now.
    const target = first.status === "critical" ? "operational" : "critical"
    const word = target === "critical" ? "major outage" : "operational"
    // The simulator's own id of the component (a format may name it differently from the stored id).
    const simulated = (await (await fetch(`${simulatorUrl}/_control/sources/${source.key}`)).json()) as {
      components: Array<{ id: string; name: string }>
    }
    const simId = simulated.components.find((c) => c.name === first.name)!.id
    const flip = await fetch(`${simulatorUrl}/_control/sources/${source.key}/components/${simId}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ status: target })
    })
    assert.strictEqual(flip.status, 200, await flip.text())
    step(`flipped ${first.external_id} to ${target}`)
    // The poller reads it (every 30 s), the delta reaches the open page's stream: wait on the DOM.
    await row.locator(".badge", { hasText: word }).waitFor({ timeout: 150_000 })
    assert.isTrue(await page.evaluate(() => (globalThis as unknown as { notReloaded?: boolean }).notReloaded === true))
    if (target === "critical") await page.locator(".banner", { hasText: /Outage/ }).waitFor()
    await expectAccessible(page)
    await screenshot(page, "dashboard-stack-live")

    await page.getByRole("link", { name: "90 days" }).click()
    await page.waitForURL("**/stacks/checkout?window=90d")
    await row.locator("svg.strip-bars rect").nth(89).waitFor({ state: "attached" })
    await expectAccessible(page)
    await page.close()
  }, 300_000)

  it("shows several stacks with their banners and open incidents, at desktop width and at 360 px; refreshes every 30 s without JavaScript", async () => {
    const email = "grace@example.com"
    const [a, b] = [critical[0]!, critical[1]!]
    const [aComponents, bComponents] = await Promise.all([run(polledComponents(a.key)), run(polledComponents(b.key))])
    await run(Effect.gen(function*() {
      const admin = yield* adminOf(email, "harbor")
      const stacks = yield* Stacks
      const platform = yield* stacks.create(admin, { name: "Platform", description: "Cloud, DNS and e-mail." })
      yield* stacks.addItem(admin, platform.id, { kind: "source", source_key: a.key })
      const mobile = yield* stacks.create(admin, { name: "Mobile app" })
      for (const c of bComponents.slice(0, 4)) yield* stacks.addItem(admin, mobile.id, { kind: "component", component_id: c.id })
      yield* stacks.addItem(admin, mobile.id, { kind: "component", component_id: aComponents[0]!.id })
    }).pipe(Effect.orDie))
    // An incident on a source the stacks show, through the simulator; the dashboard lists it once polled.
    const incident = await fetch(`${simulatorUrl}/_control/sources/${a.key}/incidents`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ title: "Elevated API error rates", impact: "major", components: [aComponents[0]!.external_id], component_status: "degraded" })
    })
    assert.strictEqual(incident.status, 201, await incident.text())
    // Incidents travel with the page's data, not the stream: wait until the poller stored it, then open the page.
    await run(Effect.gen(function*() {
      const sql = yield* SqlClient
      for (;;) {
        const rows = yield* sql`SELECT 1 FROM incidents WHERE title = 'Elevated API error rates' AND resolved_at IS NULL`
        if (rows.length > 0) return
        yield* Effect.sleep("500 millis")
      }
    }).pipe(Effect.orDie))

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await context.newPage()
    await page.goto(`${server.url}/signin`)
    await page.getByLabel("E-mail").fill(email)
    await page.getByLabel("Password").fill("compilers since 1952")
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.waitForURL("**/dashboard/harbor")
    for (const name of ["Demo production", "Checkout", "Platform", "Mobile app"]) {
      await page.getByRole("heading", { level: 2, name }).waitFor()
    }
    assert.strictEqual(await page.title(), "Harbor Logistics · statusgrid")
    await page.getByText("Elevated API error rates").waitFor()
    await expectAccessible(page)
    await screenshot(page, "dashboard-stacks")
    await page.setViewportSize({ width: 360, height: 800 })
    await expectAccessible(page)
    await screenshot(page, "dashboard-stacks-360")

    // Without JavaScript: the same page, server-rendered, with a 30 s refresh inside <noscript>.
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join("; ")
    const html = await (await fetch(`${server.url}/dashboard/harbor`, { headers: { cookie } })).text()
    assert.match(html, /<noscript><meta http-equiv="refresh" content="30"\/?><\/noscript>/)
    assert.include(html, "Mobile app")
    await context.close()
  }, 300_000)

  it("an incident opened on a source a stack shows only part of appears on the open stack page and dashboard without a reload", async () => {
    const email = "grace@example.com"
    // A Statuspage source: its summary lists an incident that names no component.
    const c = critical.find((s) => s.provider === "statuspage_io")!
    const cComponents = await run(polledComponents(c.key))
    const stack = await run(Effect.gen(function*() {
      const admin = yield* adminOf(email, "harbor")
      const stacks = yield* Stacks
      const edge = yield* stacks.create(admin, { name: "Edge" })
      yield* stacks.addItem(admin, edge.id, { kind: "component", component_id: cComponents[0]!.id })
      return edge
    }).pipe(Effect.orDie))

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    try {
      const page = await context.newPage()
      await page.goto(`${server.url}/signin`)
      await page.getByLabel("E-mail").fill(email)
      await page.getByLabel("Password").fill("compilers since 1952")
      await page.getByRole("button", { name: "Sign in" }).click()
      await page.waitForURL("**/dashboard/harbor")
      const dashboard = await context.newPage()
      await dashboard.goto(`${server.url}/dashboard/harbor`)
      await page.goto(`${server.url}/dashboard/harbor/stacks/${stack.slug}`)
      const title = "Edge cache purge delays"
      for (const p of [page, dashboard]) {
        await p.locator('[data-live="live"]').waitFor({ timeout: 60_000 })
        assert.strictEqual(await p.getByText(title).count(), 0)
      }
      // Set on the open page: a reload would drop it.
      assert.isTrue(await page.evaluate("window.__notReloaded = true") as boolean)
      step("stack page and dashboard live; opening an incident that changes none of the stack's components")
      // No component named, no status given: the incident alone changes, none of the stack's components.
      const opened = await fetch(`${simulatorUrl}/_control/sources/${c.key}/incidents`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ title, impact: "minor" })
      })
      assert.strictEqual(opened.status, 201, await opened.text())
      // The poller reads the source at its next check and stores the incident. Its 30 s interval is not what
      // this waits: on 2026-11-30's slow VM the demo server's poller (1,203 sources, most of them the real
      // catalog's, failing without a network) took 0-86 s in four local runs and over 120 s once in CI (the poller stats
      // this file prints on a failure say why next time). Test 2 waits the same without a bound of its own.
      await run(Effect.gen(function*() {
        const sql = yield* SqlClient
        for (;;) {
          const rows = yield* sql`SELECT 1 FROM incidents WHERE title = ${title} AND resolved_at IS NULL`
          if (rows.length > 0) return
          yield* Effect.sleep("500 millis")
        }
      }).pipe(Effect.timeout("240 seconds"), Effect.orDie))
      step("the poller stored the incident")
      // ...and the pages show it from their stream, never reloaded.
      await page.getByText(title).first().waitFor({ timeout: 90_000 })
      await dashboard.getByText(title).first().waitFor({ timeout: 90_000 })
      assert.isTrue(await page.evaluate("window.__notReloaded === true") as boolean, "the stack page was not reloaded")
      step("the incident appeared live")
      await screenshot(page, "dashboard-stack-incident-live")
    } finally {
      await context.close()
    }
  }, 480_000)
})
