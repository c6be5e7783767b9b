import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "vitest"
import { childEnv, runCli } from "../support/process.ts"
import { freshDatabase, testRedisUrl } from "../support/stores.ts"

interface IngestLine {
  readonly servers: unknown
  readonly via_proxy_connections: number
  readonly sent: number
  readonly accepted_202: number
  readonly rows_stored: number
  readonly server_cpu_s: number
  readonly load_cpu_s: number
  readonly latency_slices: { readonly slices: number; readonly over_limit: number; readonly worst: ReadonlyArray<{ readonly p99_ms: number }> }
  readonly major_gcs?: { readonly count: number; readonly over_limit_near: number; readonly over_limit: number; readonly all: number }
}

/** `statusgrid bench crowd --only ingest` at 100/s for 1 + 2 s over 20 sources and `extra`, on a fresh database: its line. */
const smallIngest = (extra: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const databaseUrl = yield* freshDatabase
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-bench-ingest-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dataDir, { recursive: true, force: true })))
    const { code, stdout, stderr } = yield* Effect.promise(() =>
      runCli(
        ["bench", "crowd", "--only", "ingest", "--rate", "100", "--ingest-duration", "2", "--ingest-warmup", "1", "--ingest-sources", "20", ...extra],
        childEnv({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl, REDIS_URL: testRedisUrl })
      )
    )
    assert.strictEqual(code, 0, stderr)
    return JSON.parse(stdout.trim().split("\n").at(-1)!) as { readonly command: string; readonly ingest: IngestLine }
  })

/**
 * The crowd ingest benchmark served by `statusgrid http` processes on one port (`--http-processes`):
 * answered in full from two of them, each report stored once, their CPU reported; and served by the
 * benchmark's own process, with its latency by quarter second and its full collections.
 */
describe("statusgrid bench crowd --only ingest", () => {
  it("sends the reports to two HTTP processes on one port and reports their CPU", () =>
    Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const line = yield* smallIngest(["--http-processes", "2"])
      assert.match(line.command, /--http-processes 2$/)
      assert.strictEqual(line.ingest.servers, 2)
      assert.strictEqual(line.ingest.sent, 300)
      assert.strictEqual(line.ingest.accepted_202, 300)
      assert.strictEqual(line.ingest.rows_stored, 300)
      assert.isAbove(line.ingest.server_cpu_s, 0)
      assert.isAbove(line.ingest.load_cpu_s, 0)
      // 2 s measured: 8 quarter seconds; the other processes' collections are not this process's to count.
      assert.strictEqual(line.ingest.latency_slices.slices, 8)
      assert.isUndefined(line.ingest.major_gcs)
    }))), 180_000)

  it("served by this process, reports its full collections beside the slow quarter seconds", () =>
    Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const { ingest } = yield* smallIngest([])
      assert.strictEqual(ingest.servers, "this process")
      assert.strictEqual(ingest.accepted_202, 300)
      const slices = ingest.latency_slices
      assert.strictEqual(slices.slices, 8)
      assert.isAtMost(slices.over_limit, slices.slices)
      assert.isAtMost(slices.worst.length, 5)
      assert.isDefined(ingest.major_gcs, "major_gcs is printed when this process serves")
      const gcs = ingest.major_gcs!
      // Every quarter is counted once against the collections; the slow ones are some of them.
      assert.strictEqual(gcs.all, slices.slices)
      assert.strictEqual(gcs.over_limit, slices.over_limit)
      assert.isAtMost(gcs.over_limit_near, gcs.over_limit)
    }))), 180_000)

  it("sends as a trusted reverse proxy would (--via-proxy): kept-alive connections, each forwarded reporter its own", () =>
    Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const { command, ingest } = yield* smallIngest(["--via-proxy", "8"])
      assert.match(command, /--via-proxy 8$/)
      assert.strictEqual(ingest.via_proxy_connections, 8)
      assert.strictEqual(ingest.accepted_202, 300)
      // 300 reports of 300 forwarded addresses over 20 sources: 300 reporters. From the proxy's address
      // alone they would be one reporter a source in the window, 20 rows.
      assert.strictEqual(ingest.rows_stored, 300)
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
