import { PgClient } from "@effect/sql-pg"
import { Effect, Exit, Redacted, Scope } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert } from "vitest"
import type { Reply } from "./api.ts"
import { childEnv, freePort, runCli, type Running, startService } from "./process.ts"
import { freshDatabase } from "./stores.ts"

/**
 * A real `statusgrid start` for the TV and share page tests: PostgreSQL in a
 * fresh database on the test server (so a test can store an incident as the
 * poller would), the in-process bus, chDB in a fresh DATA_DIR, and a Pro
 * organization made by `statusgrid org create` with its Admin API key.
 */
export interface ScreenWorld {
  readonly server: Running
  readonly organization: { readonly slug: string; readonly name: string }
  /** The server's environment, for a `statusgrid` command on its stores. */
  readonly env: NodeJS.ProcessEnv
  /** One call to the server's API with the Admin key; the JSON body. */
  api(method: string, path: string, body?: unknown): Promise<Reply>
  /** A statement on the server's database. */
  sql(text: string, params?: ReadonlyArray<unknown>): Promise<ReadonlyArray<Record<string, unknown>>>
  /** Stops the server and starts it again on the same port and stores (a network drop for open pages). */
  restart(between?: () => Promise<void>): Promise<void>
  stop(): Promise<void>
}

export const startScreenWorld = async (): Promise<ScreenWorld> => {
  const scope = Effect.runSync(Scope.make())
  const databaseUrl = await Effect.runPromise(Scope.provide(scope)(freshDatabase))
  const pg = await Effect.runPromise(
    Scope.provide(scope)(PgClient.make({ url: Redacted.make(databaseUrl), maxConnections: 1 }).pipe(Effect.provide(Reactivity.layer)))
  )
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-screens-"))
  const env = childEnv({ DATABASE_URL: databaseUrl, DATA_DIR: dataDir, PORT: String(await freePort()), HOST: "127.0.0.1" })
  const organization = { slug: "acme", name: "Acme Corporation" }
  const created = await runCli(["org", "create", "--name", organization.name, "--slug", organization.slug, "--plan", "pro"], env)
  assert.strictEqual(created.code, 0, created.stderr)
  const key = (JSON.parse(created.stdout.trim().split("\n").at(-1)!) as { admin_api_key: string }).admin_api_key
  let server = await startService(env)
  return {
    get server() {
      return server
    },
    organization,
    env,
    api: async (method, path, body) => {
      const response = await fetch(`${server.url}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await response.text()
      return { status: response.status, body: text === "" ? null : JSON.parse(text), headers: response.headers }
    },
    sql: (text, params = []) => Effect.runPromise(pg.unsafe<Record<string, unknown>>(text, params as Array<unknown>).pipe(Effect.orDie)),
    restart: async (between) => {
      await server.stop()
      await between?.()
      server = await startService(env)
    },
    stop: async () => {
      await server.stop()
      await Effect.runPromise(Scope.close(scope, Exit.void))
      Fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

/** A manual custom source (its status set through the API, published live like a polled one). */
export const manualSource = async (world: ScreenWorld, name: string, status = "operational") => {
  const r = await world.api("POST", "/custom-sources", { name, type: "manual", status })
  assert.strictEqual(r.status, 201, JSON.stringify(r.body))
  return r.body as { key: string }
}

/** A stack holding the given sources whole. */
export const stackOf = async (world: ScreenWorld, name: string, sourceKeys: ReadonlyArray<string>, extra: Record<string, unknown> = {}) => {
  const r = await world.api("POST", "/stacks", { name, ...extra })
  assert.strictEqual(r.status, 201, JSON.stringify(r.body))
  for (const key of sourceKeys) {
    const item = await world.api("POST", `/stacks/${r.body.id}/items`, { kind: "source", source_key: key })
    assert.strictEqual(item.status, 201, JSON.stringify(item.body))
  }
  return r.body as { id: string; slug: string; share_url: string | null }
}

/** An open incident of a source with one update, stored as the poller stores a provider's incident. */
export const openIncident = async (world: ScreenWorld, sourceKey: string, title: string, update: string) => {
  const [incident] = await world.sql(
    `INSERT INTO incidents (source_id, external_id, title, status, impact, started_at, updated_at, update_count)
     SELECT id, 'inc-1', $2, 'identified', 'major', now() - interval '25 minutes', now() - interval '4 minutes', 1 FROM sources WHERE key = $1
     RETURNING id`,
    [sourceKey, title]
  )
  await world.sql(
    `INSERT INTO incident_updates (incident_id, external_id, status, body, created_at) VALUES ($1, 'u-1', 'identified', $2, now() - interval '4 minutes')`,
    [incident!["id"], update]
  )
}
