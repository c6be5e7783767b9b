import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { Organizations } from "../../services/orgs/Organizations.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { childEnv, freePort, runCli } from "../support/process.ts"
import { freshDatabase } from "../support/stores.ts"

/** The URL of this test's own PostgreSQL database, for the CLI processes. */
class DatabaseUrl extends Context.Service<DatabaseUrl, string>()("test/cli-errors/DatabaseUrl") {}

const database = Layer.unwrap(Effect.map(freshDatabase, (url) =>
  Layer.mergeAll(Layer.succeed(DatabaseUrl, url), Organizations.layer).pipe(
    Layer.provideMerge(Layer.effectDiscard(Migrations.migratePostgres())),
    Layer.provideMerge(Postgres.layerServer(url, { maxConnections: 2 }))
  )
))

/** A status page whose JSON is cut short, on 127.0.0.1; closed with the scope. */
const truncatedPage = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<Http.Server>((resolve) => {
      const server = Http.createServer((_req, res) => {
        const body = "{\"page\":{\"id\":\"acme\",\"name\":\"Acme\"},\"status\":{\"indicator\":\"none\",\"descr"
        res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }).end(body)
      })
      server.listen(0, "127.0.0.1", () => resolve(server))
    })
  ),
  (server) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
).pipe(Effect.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2/summary.json`))

const cli = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => Effect.promise(() => runCli(args, childEnv(env)))

/** A failure as the CLI must print it: one line on stderr that starts with the command, no trace. */
const assertOneLine = (r: { code: number | null; stdout: string; stderr: string }, command: string) => {
  const lines = r.stderr.trimEnd().split("\n")
  assert.strictEqual(lines.length, 1, `one line expected, got:\n${r.stderr}`)
  assert.match(lines[0]!, new RegExp(`^${command}[: ]`), r.stderr)
  assert.notMatch(r.stderr, /^\s+at /m, r.stderr)
  assert.notStrictEqual(r.code, 0)
  return lines[0]!
}

describe("CLI errors are one clear line (a real process for each)", () => {
  layer(database, { timeout: 180_000, excludeTestServices: true })("on PostgreSQL", (it) => {
    it.effect("a bad flag, an unreachable URL, a truncated JSON page, an unknown organization: one line each; --verbose shows the cause", () =>
      Effect.gen(function*() {
        const page = yield* truncatedPage
        const closed = yield* Effect.promise(() => freePort())
        const url = yield* DatabaseUrl

        const flag = yield* cli(["probe", "--bogus", page])
        assert.include(assertOneLine(flag, "statusgrid probe"), "--bogus")
        assert.include(flag.stderr, "statusgrid probe --help")
        assert.strictEqual(flag.stdout, "")

        const unreachable = assertOneLine(yield* cli(["probe", `http://127.0.0.1:${closed}/status`]), "statusgrid probe failed")
        assert.match(unreachable, /\. [A-Z][^.]+\.$/, "what to do, after what failed")

        const truncated = yield* cli(["probe", "--type", "statuspage_io", page])
        assert.include(assertOneLine(truncated, "statusgrid probe failed"), "not valid JSON")
        const verbose = yield* cli(["probe", "--verbose", "--type", "statuspage_io", page])
        assert.notStrictEqual(verbose.code, 0)
        const [first, ...rest] = verbose.stderr.trimEnd().split("\n")
        assert.strictEqual(first, truncated.stderr.trimEnd())
        assert.match(rest.join("\n"), /AdapterError[\s\S]*\n\s+at /, "the trace after the line")

        const unknown = yield* cli(["org", "plan", "no-such-org", "pro"], { DATABASE_URL: url })
        assert.include(assertOneLine(unknown, "statusgrid org plan failed"), "no organization with slug no-such-org")
        const badPlan = yield* cli(["org", "plan", "no-such-org", "platinum"], { DATABASE_URL: url })
        assert.include(assertOneLine(badPlan, "statusgrid org plan"), "platinum")
        const noDatabase = yield* cli(["org", "plan", "acme", "pro"], { DATABASE_URL: `postgres://postgres:postgres@127.0.0.1:${closed}/none` })
        assert.include(assertOneLine(noDatabase, "statusgrid org plan failed"), "DATABASE_URL")
      }))

    it.effect("a poller setting out of range stops statusgrid start with one line naming it, before anything is polled", () =>
      Effect.gen(function*() {
        for (const [name, value, said] of [["POLLER_CHECK_TIMES_MS", "0", "greater than 0"], ["POLLER_SHARDS", "many", "number"]] as const) {
          const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-settings-"))
          try {
            const port = yield* Effect.promise(() => freePort())
            const started = yield* cli(["start"], { DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1", [name]: value })
            const line = assertOneLine(started, "statusgrid start failed")
            assert.include(line, name)
            assert.include(line, said)
            assert.include(line, "README, Configuration")
          } finally {
            Fs.rmSync(dataDir, { recursive: true, force: true })
          }
        }
      }))

    it.effect("statusgrid org plan: the operator moves an organization to another plan, prints it as JSON, audited as the operator", () =>
      Effect.gen(function*() {
        const url = yield* DatabaseUrl
        const slug = `op-${Math.random().toString(36).slice(2, 10)}`
        const { id } = yield* Organizations.use((o) => o.create({ name: "Operated", slug, plan: "free" }))

        const moved = yield* cli(["org", "plan", slug, "enterprise"], { DATABASE_URL: url })
        assert.strictEqual(moved.code, 0, moved.stderr)
        const printed = JSON.parse(moved.stdout.trim().split("\n").at(-1)!) as { id: string; slug: string; plan: string; limits: { max_stacks: { limit: number | null } } }
        assert.deepStrictEqual([printed.id, printed.slug, printed.plan, printed.limits.max_stacks.limit], [id, slug, "enterprise", null])

        const sql = yield* SqlClient
        const [row] = yield* sql<{ plan_id: string }>`SELECT plan_id FROM organizations WHERE id = ${id}::uuid`
        assert.strictEqual(row!.plan_id, "enterprise")
        const audit = yield* sql<{ action: string; actor_operator: string | null; actor_user_id: string | null; actor_api_key_id: string | null; before: unknown; after: unknown }>`
          SELECT action, actor_operator, actor_user_id, actor_api_key_id, before, after FROM audit_log WHERE organization_id = ${id}::uuid`
        assert.strictEqual(audit.length, 1)
        assert.deepStrictEqual([audit[0]!.action, audit[0]!.before, audit[0]!.after], ["organization.plan_changed", { plan: "free" }, { plan: "enterprise" }])
        assert.match(audit[0]!.actor_operator ?? "", /^[^@\s]+@\S+$/)
        assert.deepStrictEqual([audit[0]!.actor_user_id, audit[0]!.actor_api_key_id], [null, null])
      }))
  })
})
