import { Effect, Exit, Layer, ManagedRuntime, Scope } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { randomBytes } from "node:crypto"
import type { Page } from "playwright-core"
import { Users } from "../../services/identity/Users.ts"
import { Members } from "../../services/orgs/Members.ts"
import { Organizations } from "../../services/orgs/Organizations.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { SecretBox } from "../../services/platform/SecretBox.ts"
import { startPortalServer } from "./browser.ts"
import type { Running } from "./process.ts"
import { freshDatabase } from "./stores.ts"
import { tearDown } from "./teardown.ts"

/**
 * The world of the settings pages' browser tests (monitors, custom sources):
 * a real `statusgrid start` on a fresh PostgreSQL database, allowed to reach
 * the test's local targets (MONITOR_ALLOW_PRIVATE), and an organization whose
 * Admin, Member and Viewer were made through the identity and members
 * services (sign-up, organization, invitations accepted).
 */

export const password = "a perfectly fine password"
export const people = { admin: "ada@example.com", member: "bea@example.com", viewer: "vic@example.com" } as const

export interface SettingsWorld {
  readonly server: Running
  readonly org: { readonly id: string; readonly slug: string }
  /** Runs an effect on the test's own connection to the server's database, with the server's secrets key. */
  readonly run: <A, E>(effect: Effect.Effect<A, E, SqlClient | SecretBox>) => Promise<A>
  readonly close: () => Promise<void>
}

const seedPeople = Effect.gen(function*() {
  const users = yield* Users
  const members = yield* Members
  const admin = yield* users.signUp(people.admin, password, "Ada Admin")
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

export const startSettingsWorld = async (extra: Record<string, string> = {}): Promise<SettingsWorld> => {
  const secretsKey = randomBytes(32).toString("base64")
  const scope = Scope.makeUnsafe()
  const url = await Effect.runPromise(Scope.provide(scope)(freshDatabase))
  const server = await startPortalServer({ DATABASE_URL: url, SECRETS_KEY: secretsKey, MONITOR_ALLOW_PRIVATE: "true", ...extra })
  const services = ManagedRuntime.make(
    Layer.mergeAll(Users.layer, Members.layer).pipe(
      Layer.provide(Organizations.layer),
      // The server's secrets key: API keys issued here (a keyed hash under it) work against the server.
      Layer.provideMerge(Layer.succeed(SecretBox, SecretBox.fromKey(Buffer.from(secretsKey, "base64")))),
      Layer.provideMerge(Postgres.layerServer(url, { maxConnections: 2 }))
    )
  )
  const org = await services.runPromise(seedPeople)
  return {
    server,
    org,
    run: (effect) => services.runPromise(effect),
    close: () =>
      tearDown([
        ["stop the server", () => server.stop()],
        ["close the test's database pool", () => services.dispose()],
        ["drop the database", () => Effect.runPromise(Scope.close(scope, Exit.void))]
      ])
  }
}

/** Signs in through the page and lands on `next`. */
export const signIn = async (page: Page, server: Running, email: string, next: string) => {
  await page.goto(`${server.url}/signin?next=${encodeURIComponent(next)}`)
  await page.getByLabel("E-mail").fill(email)
  await page.getByLabel("Password").fill(password)
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.waitForURL(`**${next}`, { timeout: 60_000 })
}

/** A POST as the page's session would send it without JavaScript (the session's CSRF token from the page), its status. */
export const forgePost = async (page: Page, url: string, fields: Record<string, string>): Promise<number> => {
  const csrf = await page.locator("input[name=csrf]").first().getAttribute("value")
  const response = await page.request.post(url, { form: { csrf: csrf ?? "", ...fields }, headers: { origin: new URL(url).origin } })
  return response.status()
}

/** How far the page scrolls sideways: 0 when it fits the viewport. */
export const sidewaysScroll = (page: Page) =>
  page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") as Promise<number>
