import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "vitest"
import { childEnv, runCli } from "../support/process.ts"
import { freshDatabase, testRedisUrl } from "../support/stores.ts"

/**
 * The API benchmarks served by `statusgrid http` processes on one port (`--http-processes`): the
 * crowd ingest answered in full from two of them, each report stored once, their CPU reported.
 */
describe("statusgrid bench crowd --only ingest --http-processes 2", () => {
  it("sends the reports to two HTTP processes on one port and reports their CPU", () =>
    Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const databaseUrl = yield* freshDatabase
      const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-bench-http-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dataDir, { recursive: true, force: true })))
      const { code, stdout, stderr } = yield* Effect.promise(() =>
        runCli(
          ["bench", "crowd", "--only", "ingest", "--rate", "100", "--ingest-duration", "2", "--ingest-warmup", "1", "--ingest-sources", "20", "--http-processes", "2"],
          childEnv({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl, REDIS_URL: testRedisUrl })
        )
      )
      assert.strictEqual(code, 0, stderr)
      const line = JSON.parse(stdout.trim().split("\n").at(-1)!) as {
        command: string
        ingest: { servers: unknown; sent: number; accepted_202: number; rows_stored: number; server_cpu_s: number }
      }
      assert.match(line.command, /--http-processes 2$/)
      assert.strictEqual(line.ingest.servers, 2)
      assert.strictEqual(line.ingest.sent, 300)
      assert.strictEqual(line.ingest.accepted_202, 300)
      assert.strictEqual(line.ingest.rows_stored, 300)
      assert.isAbove(line.ingest.server_cpu_s, 0)
    }))), 180_000)

  it("refuses --http-processes on the embedded stores in one line", async () => {
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-bench-http-embedded-"))
    try {
      const { code, stderr } = await runCli(["bench", "crowd", "--only", "ingest", "--http-processes", "2"], childEnv({ DATA_DIR: dataDir }))
      assert.strictEqual(code, 1)
      assert.match(stderr.trim(), /^statusgrid bench crowd failed: --http-processes needs DATABASE_URL and REDIS_URL set/)
      assert.strictEqual(stderr.trim().split("\n").length, 1, stderr)
    } finally {
      Fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 60_000)
})
