import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { defaults, maxShareFactor } from "../services/poller/ResultWriter/Options.ts"
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

/**
 * The longest a check's row can wait in a runner's memory before its insert: `RESULTS_FLUSH_MS` (as the
 * runners get it from this environment) over the smallest share of the shards a runner can hold, and
 * a few seconds for the insert (decision 0021).
 */
export const flushBoundMs = () => {
  const set = Number(process.env["RESULTS_FLUSH_MS"])
  return (Number.isInteger(set) && set > 0 ? set : defaults.flushMs) * maxShareFactor + 3000
}

/**
 * `storedRows` once it reaches `rows`, read every second until then or `flushBoundMs()` (the last
 * reading then): with the seconds it took.
 */
export const storedRowsReaching = (direct: string, rows: number) =>
  Effect.gen(function*() {
    const started = Date.now()
    for (;;) {
      const stored = yield* storedRows(direct)
      const waitedMs = Date.now() - started
      if ((stored !== null && stored >= rows) || waitedMs >= flushBoundMs()) {
        return { stored, afterS: Math.round(waitedMs / 100) / 10 }
      }
      yield* Effect.sleep("1 second")
    }
  })
