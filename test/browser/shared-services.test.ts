import { PgClient } from "@effect/sql-pg"
import { Effect, Exit, Redacted, Scope } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { startPortalServer } from "../support/browser.ts"
import type { Running } from "../support/process.ts"
import { freshDatabase } from "../support/stores.ts"

/**
 * The portal's pages and the API run on the server's one set of services (services/api/Portal.ts):
 * one `Sources`, so one micro-cache. With the cache held long (API_CACHE_MS), a source read through
 * one side and renamed in the database reads the same through the other side: both answer from the
 * one cache. A second `Sources` beside the API's would show the new name on the side that had not read it.
 */

let scope: Scope.Closeable
let server: Running
let sql: (text: string, params?: ReadonlyArray<unknown>) => Promise<ReadonlyArray<Record<string, unknown>>>

beforeAll(async () => {
  scope = Scope.makeUnsafe()
  const url = await Effect.runPromise(Scope.provide(scope)(freshDatabase))
  server = await startPortalServer({ DATABASE_URL: url, API_CACHE_MS: "600000" })
  const pg = await Effect.runPromise(
    Scope.provide(scope)(PgClient.make({ url: Redacted.make(url), maxConnections: 1 }).pipe(Effect.provide(Reactivity.layer)))
  )
  sql = (text, params = []) => Effect.runPromise(pg.unsafe<Record<string, unknown>>(text, params as Array<unknown>).pipe(Effect.orDie))
}, 120_000)

afterAll(async () => {
  await server?.stop()
  await Effect.runPromise(Scope.close(scope, Exit.void))
}, 60_000)

const catalogSource = (key: string, name: string) =>
  sql(
    `INSERT INTO sources (key, name, kind, description, status, provider_type, status_page_url, check_class, poll_interval_s)
     VALUES ($1, $2, 'catalog', 'A source of this test.', 'operational', 'statuspage_io', 'https://status.example', 'critical', 30)`,
    [key, name]
  )
const rename = (key: string, name: string) => sql(`UPDATE sources SET name = $2 WHERE key = $1`, [key, name])

const apiName = async (key: string) => {
  const response = await fetch(`${server.url}/api/v1/sources/${key}`)
  assert.strictEqual(response.status, 200)
  return ((await response.json()) as { name: string }).name
}
/** The source page's title, "<name> status · statusgrid", server-rendered. */
const pageName = async (key: string) => {
  const response = await fetch(`${server.url}/sources/${key}`)
  assert.strictEqual(response.status, 200)
  const title = /<title>([^<]*) status · statusgrid<\/title>/.exec(await response.text())
  assert.isNotNull(title, "the source page has its title")
  return title![1]!
}

describe("portal and API share the server's services", () => {
  it("a source read through the API is the page's source too, and the other way round (one Sources, one micro-cache)", async () => {
    await catalogSource("shared-api-first", "Read by the API")
    assert.strictEqual(await apiName("shared-api-first"), "Read by the API")
    await rename("shared-api-first", "Renamed later")
    assert.strictEqual(await pageName("shared-api-first"), "Read by the API")

    await catalogSource("shared-page-first", "Read by the page")
    assert.strictEqual(await pageName("shared-page-first"), "Read by the page")
    await rename("shared-page-first", "Renamed later")
    assert.strictEqual(await apiName("shared-page-first"), "Read by the page")

    // Control: a source neither side has read shows its stored name on both.
    await catalogSource("shared-unread", "Stored name")
    await rename("shared-unread", "Renamed before any read")
    assert.strictEqual(await pageName("shared-unread"), "Renamed before any read")
  }, 120_000)
})
