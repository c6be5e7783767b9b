import * as Fs from "node:fs"
import * as Path from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"
import { repoRoot, startEmbedded } from "./process.ts"

/** Debian's Chromium (infra/test installs it when absent). */
export const chromiumPath = "/usr/bin/chromium"

/** Headless Chromium, without the background traffic a test does not want. */
export const launchBrowser = (): Promise<Browser> =>
  chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
  })

/** A real `statusgrid start` on embedded stores in a fresh data directory; `stop` also removes the directory. */
export const startPortalServer = startEmbedded

interface AxeViolation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<{ readonly target: ReadonlyArray<string>; readonly failureSummary?: string }>
}

const axeSource = Fs.readFileSync(Path.join(repoRoot, "node_modules", "axe-core", "axe.min.js"), "utf8")

/**
 * Runs axe-core on the page; fails on serious or critical violations, naming each rule and element,
 * and on anything the page's Content-Security-Policy refused since it was loaded (the console's
 * "violates the following Content Security Policy directive").
 */
export const expectAccessible = async (page: Page): Promise<void> => {
  const refused = (await page.consoleMessages({ filter: "since-navigation" })).filter((m) => m.text().includes("Content Security Policy"))
  if (refused.length > 0) {
    throw new Error(`the Content-Security-Policy refused ${refused.length} thing(s) on ${page.url()}:\n${refused.map((m) => m.text()).join("\n")}`)
  }
  // Evaluated through the DevTools protocol, not as a <script>: the page's CSP allows only its own scripts.
  await page.evaluate(axeSource)
  const violations = await page.evaluate(async () => {
    // axe is the global the injected script defines (test/ compiles without the DOM library).
    const page = globalThis as unknown as { axe: { run: (ctx: unknown) => Promise<{ violations: Array<AxeViolation> }> }; document: unknown }
    return (await page.axe.run(page.document)).violations
  }) as ReadonlyArray<AxeViolation>
  const bad = violations.filter((v) => v.impact === "serious" || v.impact === "critical")
  if (bad.length > 0) {
    const lines = bad.flatMap((v) => [
      `${v.impact}: ${v.id} (${v.help})`,
      ...v.nodes.slice(0, 5).map((n) => `  at ${n.target.join(" ")}: ${n.failureSummary ?? ""}`.replaceAll("\n", " "))
    ])
    throw new Error(`axe-core found ${bad.length} serious or critical violation(s) on ${page.url()}:\n${lines.join("\n")}`)
  }
}

/**
 * Awaits `work`, failing after `ms` with the step's name: a step that hangs under load then says
 * which one it was, instead of the test's own timeout naming none (fetches and `page.close()` have
 * no timeout of their own).
 */
export const step = async <A>(name: string, work: Promise<A>, ms = 20_000): Promise<A> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const expired = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(`step "${name}" did not finish within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([work, expired])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Waits until the JavaScript expression `expression` is truthy on the page (a promise is awaited),
 * asking every `pollMs`: `page.waitForFunction` with a string compiles it in the page, which the
 * portal's CSP refuses (no 'unsafe-eval'); `page.evaluate` goes through the DevTools protocol.
 */
export const waitForExpression = async (page: Page, expression: string, options: { readonly timeoutMs?: number; readonly pollMs?: number } = {}) => {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000)
  for (;;) {
    if (await page.evaluate(expression)) return
    if (Date.now() > deadline) throw new Error(`not true within ${options.timeoutMs ?? 30_000} ms: ${expression}`)
    await new Promise((done) => setTimeout(done, options.pollMs ?? 100))
  }
}

export const screenshotDir = Path.join(repoRoot, "test-output", "screenshots")

/** Saves a full-page PNG under test-output/screenshots/<name>.png for a reviewer to look at. */
export const screenshot = async (page: Page, name: string): Promise<string> => {
  Fs.mkdirSync(screenshotDir, { recursive: true })
  const file = Path.join(screenshotDir, `${name}.png`)
  await page.screenshot({ path: file, fullPage: true })
  return file
}

/** Signs in with e-mail and password on the portal's sign-in page; resolves once it has left it. */
export const signInWithPassword = async (page: Page, baseUrl: string, email: string, password: string, next?: string) => {
  await page.goto(`${baseUrl}/signin${next === undefined ? "" : `?next=${encodeURIComponent(next)}`}`)
  await page.getByLabel("E-mail").fill(email)
  await page.getByLabel("Password").fill(password)
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.waitForURL((url) => !url.pathname.startsWith("/signin"), { timeout: 60_000 })
}

/** A new person signs up on `/signup` and creates an organization; resolves on its dashboard. */
export const signUpWithOrganization = async (
  page: Page,
  baseUrl: string,
  person: { readonly name: string; readonly email: string; readonly password: string },
  organization: { readonly name: string; readonly slug: string }
) => {
  await page.goto(`${baseUrl}/signup`)
  await page.getByLabel("Your name").fill(person.name)
  await page.getByLabel("E-mail").fill(person.email)
  await page.getByLabel("Password").fill(person.password)
  await page.getByRole("button", { name: "Create account" }).click()
  await page.waitForURL("**/orgs/new", { timeout: 60_000 })
  await page.getByLabel("Organization name").fill(organization.name)
  await page.getByLabel("Short name").fill(organization.slug)
  await page.getByRole("button", { name: /Create/ }).click()
  await page.waitForURL(`**/dashboard/${organization.slug}`, { timeout: 90_000 })
}
