import type { Browser, BrowserContext, Page } from "playwright-core"
import { makeOrganization, type Organization, secretsKey, type WorldRuntime, worldRuntime } from "./alertWorld.ts"
import { launchBrowser, signInWithPassword, startPortalServer } from "./browser.ts"
import type { Running } from "./process.ts"

/** A real `statusgrid start` on a fresh PostgreSQL database, an Enterprise organization, and its Admin signed in in Chromium. */
export interface SignedInWorld {
  readonly server: Running
  readonly browser: Browser
  readonly world: { readonly runtime: WorldRuntime; readonly databaseUrl: string }
  readonly org: Organization
  readonly context: BrowserContext
  /** The Admin's page, signed in (1280 × 900). */
  readonly page: Page
  readonly stop: () => Promise<void>
}

/**
 * The setting of the portal's management-page tests: the server (with
 * `env` added to its environment), "Acme Payments" (`acme`) on Enterprise
 * with its Admin's API key, and that Admin signed in.
 */
export const startSignedInWorld = async (env: Record<string, string> = {}): Promise<SignedInWorld> => {
  const [world, browser] = await Promise.all([worldRuntime(), launchBrowser()])
  const server = await startPortalServer({ DATABASE_URL: world.databaseUrl, SECRETS_KEY: secretsKey, ...env })
  const org = await makeOrganization(world.runtime, "Acme Payments", "acme")
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  const page = await context.newPage()
  await signInWithPassword(page, server.url, org.admin.email, org.admin.password)
  return {
    server,
    browser,
    world,
    org,
    context,
    page,
    stop: async () => {
      await context.close()
      await browser.close()
      await server.stop()
      await world.runtime.dispose()
    }
  }
}
