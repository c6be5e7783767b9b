import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { spawnScript } from "./scriptProcess.ts"

const script = Path.join(import.meta.dirname, "clickhouseServer.ts")

/** A ClickHouse server for a benchmark's statusgrid processes: where it answers and its pid (for /proc). */
export interface ClickHouseProcess {
  /** The address to give statusgrid as CLICKHOUSE_URL. */
  readonly url: string
  /** The same without credentials (fetch refuses URLs with them), for the benchmark's own queries. */
  readonly direct: string
  readonly pid: number
}

/**
 * ClickHouse's HTTP interface over chDB (bench/clickhouseServer.ts) in its own process with its data
 * under `dir`, stopped when the scope closes: one store every statusgrid process of a benchmark writes
 * to over the wire, as they would to a ClickHouse server, with chDB's work in none of their event loops.
 */
export const spawnClickHouse = Effect.fn("bench.spawnClickHouse")(function*(dir: string) {
  Fs.mkdirSync(dir, { recursive: true })
  const server = yield* spawnScript(script, ["--path", dir], "the ClickHouse server (chDB)")
  return { url: server.url, direct: `http://${new URL(server.url).host}`, pid: server.pid } satisfies ClickHouseProcess
})

/**
 * The one ClickHouse of a benchmark's statusgrid processes: CLICKHOUSE_URL's when set (`process`
 * undefined), or else chDB behind HTTP in a process of its own (`spawnClickHouse`) with its data in a
 * temporary directory, both gone when the scope closes.
 */
export const benchClickHouse = Effect.gen(function*() {
  const named = process.env["CLICKHOUSE_URL"]
  if (named !== undefined && named !== "") return { url: named, process: undefined }
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-bench-clickhouse-"))),
    (path) => Effect.sync(() => Fs.rmSync(path, { recursive: true, force: true }))
  )
  const server = yield* spawnClickHouse(dir)
  return { url: server.url, process: server as ClickHouseProcess | undefined }
})

/** `SELECT count() FROM check_results` straight at a ClickHouse server (`direct`); null if it cannot answer. */
export const storedRows = (direct: string) =>
  Effect.promise(async () => {
    try {
      const response = await fetch(`${direct}/?database=statusgrid`, {
        method: "POST",
        body: "SELECT count() FROM check_results FORMAT TabSeparated",
        signal: AbortSignal.timeout(10_000)
      })
      const text = (await response.text()).trim()
      return response.ok && /^\d+$/.test(text) ? Number(text) : null
    } catch {
      return null
    }
  })
