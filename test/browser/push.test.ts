import type { Browser, BrowserContext, Page } from "playwright-core"
import * as Path from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { syntheticSpecs } from "../../services/catalog/Synthetic.ts"
import { componentFormats } from "../../services/demo/Demo.ts"
import { waitForValue } from "../support/eventually.ts"
import { expectAccessible, launchBrowser, screenshot, signUpWithOrganization, waitForExpression } from "../support/browser.ts"
import { type DemoServer, startDemoServer } from "../support/demoServer.ts"
import { childEnv, runCli, type Running } from "../support/process.ts"
import { type PushService, startPushService, type Subscription } from "../support/pushService.ts"
import { makeTestCerts, type TestCerts } from "../support/tls.ts"

/**
 * Web Push from the profile, in Chromium, on a real `statusgrid start --demo`:
 * the portal is an installable app (manifest, icons, service worker); a
 * person subscribes this browser on their profile (a `webpush` channel of
 * their organization), picks it in a rule in the rule editor, the simulator
 * flips a component of the starter stack, and the server's notifier pushes
 * the alert to the push service, which checks the VAPID signature and
 * decrypts it (test/support/pushService.ts, RFC 8291/8292); the decrypted
 * message, handed to the page's real service worker, shows the notification.
 *
 * What stands in for what is out of reach: Chromium's own push service is
 * Google's (FCM), not reachable here and refused to a headless browser, so
 * `PushManager.subscribe` answers with a subscription on the local push
 * service (its keys made as a browser makes them); everything else, the
 * permission, the service worker, the form, the channel, the rule, the
 * notifier's VAPID and encryption, runs as in production.
 */

let certs: TestCerts
let push: PushService
let demo: DemoServer
let server: Running
let browser: Browser
let context: BrowserContext
let page: Page
let simulatorUrl: string
let subscription: Subscription

const slug = "lighthouse-keepers"
const demoSources = 60
/** A source polled every 30 s, in a format with components (a status page's, if there is one). */
const source = syntheticSpecs(demoSources).find((s) => s.check_class === "critical" && s.provider === "statuspage_io")
  ?? syntheticSpecs(demoSources).find((s) => s.check_class === "critical" && componentFormats.has(s.provider))!

beforeAll(async () => {
  certs = makeTestCerts()
  push = await startPushService(certs)
  ;[demo, browser] = await Promise.all([
    startDemoServer({
      sources: demoSources,
      env: {
        // The push service listens on loopback with the test CA's certificate.
        NOTIFIER_ALLOW_PRIVATE: "true",
        NODE_EXTRA_CA_CERTS: Path.join(certs.dir, "ca.pem"),
        NOTIFIER_POLL_MS: "100"
      }
    }),
    launchBrowser()
  ])
  ;({ server, simulatorUrl } = demo)
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  await context.grantPermissions(["notifications"], { origin: server.url })
  subscription = push.subscribe()
  // PushManager answers with the local push service's subscription (see above); the options it was asked with are kept.
  await context.addInitScript({ content: `(${stubPushManager})(${JSON.stringify(subscription.json)})` })
  page = await context.newPage()
}, 180_000)

/**
 * The page's side of the stand-in (the source of a function run in the
 * browser, whose DOM types this Node project does not load): PushManager's
 * `subscribe` and `getSubscription` answer with `json`'s subscription, and
 * the options the page asked with are kept in `globalThis.pushOptions`.
 */
const stubPushManager = `function (json) {
  const decode = (key) => {
    if (typeof key !== "string") return key
    const text = atob(key.replace(/-/g, "+").replace(/_/g, "/"))
    return Uint8Array.from(text, (c) => c.charCodeAt(0)).buffer
  }
  let current = null
  PushManager.prototype.subscribe = async function (options) {
    globalThis.pushOptions = { userVisibleOnly: options && options.userVisibleOnly, applicationServerKey: options && options.applicationServerKey }
    current = {
      endpoint: json.endpoint,
      expirationTime: null,
      options: { userVisibleOnly: true, applicationServerKey: decode(options && options.applicationServerKey) },
      toJSON: () => ({ endpoint: json.endpoint, expirationTime: null, keys: json.keys }),
      unsubscribe: async () => { current = null; return true }
    }
    return current
  }
  PushManager.prototype.getSubscription = async function () { return current }
}`

afterAll(async () => {
  await browser?.close()
  await demo?.stop()
  await push?.close()
  certs?.remove()
}, 180_000)

describe("Web Push in Chromium", () => {
  it("is an installable app: the manifest, its icons and the service worker are served", async () => {
    await page.goto(`${server.url}/`)
    const manifestHref = await page.locator("link[rel=manifest]").getAttribute("href")
    assert.strictEqual(manifestHref, "/manifest.webmanifest")
    const manifestAnswer = await fetch(`${server.url}${manifestHref}`)
    assert.strictEqual(manifestAnswer.headers.get("content-type"), "application/manifest+json")
    const manifest = await manifestAnswer.json() as { name: string; display: string; start_url: string; icons: Array<{ src: string; sizes: string; type: string }> }
    assert.strictEqual(manifest.display, "standalone")
    assert.strictEqual(manifest.start_url, "/")
    for (const size of ["192x192", "512x512"]) {
      const icon = manifest.icons.find((i) => i.sizes === size && i.type === "image/png")
      assert.isDefined(icon, `a ${size} PNG icon`)
      const answer = await fetch(`${server.url}${icon!.src}`)
      assert.strictEqual(answer.status, 200, icon!.src)
      const png = Buffer.from(await answer.arrayBuffer())
      assert.strictEqual(png.readUInt32BE(16), Number(size.split("x")[0]), `${icon!.src} is ${size}`)
    }
    const worker = await fetch(`${server.url}/sw.js`)
    assert.strictEqual(worker.status, 200)
    assert.strictEqual(worker.headers.get("cache-control"), "no-cache")
    assert.include(await worker.text(), "showNotification")
    // Every page registers it once idle.
    const scope = await page.evaluate("navigator.serviceWorker.ready.then((r) => r.scope)")
    assert.strictEqual(scope, `${server.url}/`)
  })

  it("subscribes this browser on the profile, a rule targets it, and a simulator flip arrives as a push and a notification", async () => {
    // Sign up and create the organization; Web Push is a paid channel type: the operator moves it to Pro.
    await signUpWithOrganization(
      page,
      server.url,
      { name: "Grace Darling", email: "grace@example.com", password: "longstone lighthouse 1838" },
      { name: "Lighthouse Keepers", slug }
    )
    const plan = await runCli(["org", "plan", slug, "pro"], childEnv({ DATABASE_URL: demo.databaseUrl, DATA_DIR: demo.dataDir }))
    assert.strictEqual(plan.code, 0, plan.stderr)

    // The profile's push panel: subscribe this browser.
    await page.goto(`${server.url}/profile`)
    await page.getByRole("heading", { level: 2, name: "Push notifications" }).waitFor()
    await page.getByText("No device is subscribed.").waitFor()
    // The default name is the browser's, set once the page is hydrated, which can come after the server's
    // list shows: read at once, it was the empty server-rendered field in every run on 2026-11-27's machine
    // (Chromium 156), the test's last commit included.
    const named = await waitForValue("the default device name", async () => {
      const name = await page.getByLabel("Device name").inputValue()
      return name === "" ? undefined : name
    }, 15_000)
    assert.strictEqual(named, "Chrome on Linux")
    await page.getByLabel("Device name").fill("Grace's laptop")
    await page.getByRole("button", { name: "Subscribe this browser" }).click()
    await page.getByRole("status").filter({ hasText: "Subscribed Grace's laptop to Lighthouse Keepers's alerts." }).waitFor()
    const row = page.locator("tr", { has: page.getByRole("link", { name: "Grace's laptop" }) })
    await row.getByText("this browser").waitFor()
    // The browser was asked for a user-visible subscription with the server's VAPID key.
    const options = await page.evaluate(() => (globalThis as unknown as { pushOptions: { userVisibleOnly: boolean; applicationServerKey: string } }).pushOptions)
    assert.isTrue(options.userVisibleOnly)
    assert.match(options.applicationServerKey, /^B[A-Za-z0-9_-]{86}$/)
    await expectAccessible(page)
    await screenshot(page, "profile-push-subscribed")
    const channelId = (await row.getByRole("link", { name: "Grace's laptop" }).getAttribute("href"))!.split("/").at(-1)!

    // A stack with a component of a source polled every 30 s, added from the source's page once it has been polled.
    await page.goto(`${server.url}/sources/${source.key}`)
    const deadline = Date.now() + 120_000
    while (await page.locator(".component-picker input[type=checkbox]").count() === 0) {
      if (Date.now() > deadline) throw new Error(`${source.key} was not polled in 120 s`)
      await page.waitForTimeout(2_000)
      await page.goto(`${server.url}/sources/${source.key}`)
    }
    const box = page.locator(".component-picker input[type=checkbox]").first()
    const componentName = (await page.locator(`label[for="${await box.getAttribute("id")}"]`).innerText()).trim()
    await box.check()
    await page.getByLabel("Stack", { exact: true }).selectOption("new")
    await page.getByLabel("New stack name").fill("Beacons")
    await page.getByRole("button", { name: "Add to stack" }).click()
    await page.locator(".form-success").waitFor()

    // A rule for every stack sends major outages to the device (the rule editor lists it as a channel).
    await page.goto(`${server.url}/settings/${slug}/rules/new`)
    await page.getByLabel("Name").fill("Anything down")
    await page.getByLabel("major outage").check()
    await page.locator(`#channel-${channelId}`).check()
    await page.getByRole("button", { name: "Create rule" }).click()
    await page.getByRole("status").filter({ hasText: "Created Anything down" }).waitFor()

    // The simulator flips that component to critical (operational first if it is not).
    const simulated = (await (await fetch(`${simulatorUrl}/_control/sources/${source.key}`)).json()) as {
      components: Array<{ id: string; name: string; status?: string }>
    }
    const component = simulated.components.find((c) => c.name === componentName)!
    const flip = async (status: string) => {
      const answer = await fetch(`${simulatorUrl}/_control/sources/${source.key}/components/${component.id}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ status })
      })
      assert.strictEqual(answer.status, 200, await answer.text())
    }
    if (component.status !== undefined && component.status !== "operational") {
      await flip("operational")
      await new Promise((resolve) => setTimeout(resolve, 35_000))
    }
    await flip("critical")

    // The notifier pushes it: the push service verified the VAPID JWT (signed with the key the page subscribed with) and decrypted it.
    const message = await waitForValue("the push", () => push.received.find((m) => m.plaintext.includes(component.name)), 150_000).catch(async (e) => {
      // What the notification center shows says where it stopped (no alert, or a failed delivery and why).
      await page.goto(`${server.url}/settings/${slug}/notifications`)
      throw new Error(`${String(e)}; push service problems ${JSON.stringify(push.problems)}; notification center: ${await page.locator("main").innerText()}`)
    })
    assert.deepStrictEqual(push.problems, [])
    assert.strictEqual(message.subscription, subscription.id)
    assert.strictEqual(message.vapidKey, options.applicationServerKey)
    const payload = JSON.parse(message.plaintext) as { title: string; body: string; url: string }
    assert.include(payload.title, component.name)
    assert.strictEqual(new URL(payload.url).origin, server.url)

    // Handed to the page's service worker as the push service would deliver it, it shows the notification.
    const cdp = await context.newCDPSession(page)
    const registrations: Array<{ registrationId: string; scopeURL: string; isDeleted: boolean }> = []
    cdp.on("ServiceWorker.workerRegistrationUpdated", (e) => registrations.push(...e.registrations))
    await cdp.send("ServiceWorker.enable")
    const registration = await waitForValue("the service worker", () => registrations.find((r) => !r.isDeleted && r.scopeURL === `${server.url}/`), 10_000)
    await waitForExpression(page, "navigator.serviceWorker.ready.then((r) => r.active.state === 'activated')", { timeoutMs: 10_000 })
    // CDP's deliverPushMessage answers before the worker has handled the event and says nothing of a drop (in
    // CI on 2026-11-28 no notification showed within 10 s of a single delivery): as a push service redelivers
    // an unacknowledged message, it is handed again every 5 s until one shows; `tag` makes a later delivery
    // replace the first, so one notification shows either way.
    let delivered = 0
    // Each try reads the shown notifications' values in the page (the promise awaited there, no handle kept).
    const [notification] = await waitForValue("the notification", async () => {
      if (delivered <= Date.now() - 5_000) {
        await cdp.send("ServiceWorker.deliverPushMessage", { origin: server.url, registrationId: registration.registrationId, data: message.plaintext })
        delivered = Date.now()
      }
      const all = await page.evaluate<Array<{ title: string; body: string; url: string }>>(`navigator.serviceWorker.ready
        .then((r) => r.getNotifications())
        .then((all) => all.map((n) => ({ title: n.title, body: n.body, url: n.data?.url })))`)
      return all.length > 0 ? all : undefined
    }, 30_000)
    assert.deepStrictEqual(notification, { title: payload.title, body: payload.body, url: payload.url })

    // The device's channel delivered it, as any channel: in the notification center.
    await page.goto(`${server.url}/settings/${slug}/notifications`)
    await page.locator("tr", { hasText: "Grace's laptop" }).first().waitFor()
    await screenshot(page, "profile-push-delivered")
  }, 420_000)

  it("refuses a subscription that is not one in place, saving nothing; Remove deletes this browser's device and unsubscribes it", async () => {
    await page.goto(`${server.url}/profile`)
    await page.getByRole("heading", { level: 2, name: "Push notifications" }).waitFor()
    const csrf = await page.locator("input[name=csrf]").first().inputValue()
    // A forged subscription (http endpoint) posted to the action: a 400 naming it, no channel.
    const forged = await page.evaluate(async ({ csrf, slug }) => {
      const form = new FormData()
      for (const [k, v] of Object.entries({ csrf, intent: "push-subscribe", organization: slug, name: "Forged", endpoint: "http://push.example/x", p256dh: "short", auth: "x" })) form.set(k, v)
      const answer = await fetch("/profile.data", { method: "POST", body: form })
      return { status: answer.status, body: await answer.text() }
    }, { csrf, slug })
    assert.strictEqual(forged.status, 400, forged.body)
    assert.include(forged.body, "subscription was refused")
    await page.reload()
    assert.strictEqual(await page.getByRole("link", { name: "Forged" }).count(), 0)

    const row = page.locator("tr", { has: page.getByRole("link", { name: "Grace's laptop" }) })
    await row.getByRole("button", { name: "Remove Grace's laptop" }).click()
    await page.getByText("No device is subscribed.").waitFor()
    await waitForExpression(page, "navigator.serviceWorker.ready.then((r) => r.pushManager.getSubscription()).then((s) => s === null)", {
      pollMs: 250,
      timeoutMs: 10_000
    })
  })
})
