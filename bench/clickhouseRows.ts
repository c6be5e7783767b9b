/**
 * What ClickHouse's own work costs for the poller's rows, without the poller: chDB behind its HTTP
 * interface in a process of its own (clickhouseServer.ts), the migrations applied, then rows shaped
 * as a source check writes them (decision 0016: one per check, its components in arrays) inserted at
 * a fixed rate, one insert every `--every` seconds; the chDB process's CPU (all threads, /proc) over
 * the last `--measure` seconds. Prints one JSON line. Decisions 0021 and bench/README.md use it.
 *
 *   node bench/clickhouseRows.ts [--rate 667] [--every 5] [--duration 120] [--measure 75]
 *     [--components 12] [--subjects 20000] [--sql "ALTER TABLE …; …"] [--format JSONEachRow] [--time iso]
 *
 * `--format`: JSONEachRow (as the poller wrote before decision 0024), JSONCompactEachRow or
 * TabSeparated. `--time`: `iso` (ISO 8601 text read with `date_time_input_format=best_effort`, as
 * the poller wrote before decision 0024) or `ms` (whole milliseconds since the epoch).
 *
 * `--sql`: statements run after the migrations (a table setting, a view dropped or replaced).
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Readline from "node:readline"

const flag = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1]! : fallback
}
const count = (name: string, fallback: number) => {
  const value = Number(flag(name, String(fallback)))
  if (!Number.isFinite(value) || value < 0) {
    console.error(`--${name}: a number of 0 or more`)
    process.exit(2)
  }
  return value
}
const rate = count("rate", 667)
const every = count("every", 5)
const duration = count("duration", 120)
const measure = count("measure", 75)
const components = count("components", 12)
const subjects = count("subjects", 20_000)
const extra = flag("sql", "")
const format = flag("format", "JSONEachRow")
const time = flag("time", "iso")
if (!["JSONEachRow", "JSONCompactEachRow", "TabSeparated"].includes(format)) {
  console.error("--format: JSONEachRow, JSONCompactEachRow or TabSeparated")
  process.exit(2)
}
if (time !== "iso" && time !== "ms") {
  console.error("--time: iso or ms")
  process.exit(2)
}

const root = Path.resolve(import.meta.dirname, "..")
const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-clickhouse-rows-"))
const server = spawn(process.execPath, [Path.join(import.meta.dirname, "clickhouseServer.ts"), "--path", dir], { stdio: ["ignore", "pipe", "inherit"] })
const url = new URL(await new Promise<string>((resolve) => {
  Readline.createInterface({ input: server.stdout }).once("line", (line) => resolve((JSON.parse(line) as { url: string }).url))
}))
const authorization = url.username === "" ? {} : {
  authorization: `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")}`
}

const run = async (sql: string, database = "statusgrid", params = "") => {
  const response = await fetch(`http://${url.host}/?database=${database}${params}`, { method: "POST", body: sql, headers: authorization })
  const text = await response.text()
  if (!response.ok) throw new Error(`${sql.slice(0, 80)}: ${text}`)
  return text
}
const statements = (text: string) =>
  text.split("\n").filter((line) => !line.trim().startsWith("--")).join("\n").split(";").map((s) => s.trim()).filter((s) => s !== "")

await run("CREATE DATABASE IF NOT EXISTS statusgrid", "default")
const migrations = Path.join(root, "migrations", "clickhouse")
for (const file of Fs.readdirSync(migrations).filter((f) => f.endsWith(".sql")).toSorted()) {
  for (const statement of statements(Fs.readFileSync(Path.join(migrations, file), "utf8"))) await run(statement)
}
for (const statement of statements(extra)) await run(statement)

/** CPU seconds of the chDB process so far, every thread. */
const cpuSeconds = () => {
  const fields = Fs.readFileSync(`/proc/${server.pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

const columns = ["checked_at", "subject_kind", "subject_id", "component_id", "status", "latency_ms", "http_status", "error", "shard", "component_ids", "component_statuses", "component_regions"]
const ids = Array.from({ length: components }, (_, i) => `c${i}`)
let next = 0
let inserts = 0
let measuredFrom: { readonly at: number; readonly cpu: number } | undefined
const started = Date.now()
while (Date.now() - started < duration * 1000) {
  const now = Date.now()
  const rows: Array<string> = []
  for (let i = 0; i < rate * every; i++) {
    const subject = next++ % subjects
    const at = now - Math.floor(Math.random() * every * 1000)
    const checkedAt = time === "iso" ? new Date(at).toISOString() : at
    // About one component check in a thousand not operational.
    const statuses = ids.map(() => Math.random() < 0.001 ? "degraded" : "operational")
    const regions = ids.map(() => "")
    const values = [checkedAt, "source", `sim-${subject}`, "", "operational", 20 + Math.floor(Math.random() * 200), 304, "", subject % 16, ids, statuses, regions]
    rows.push(
      format === "JSONCompactEachRow"
        ? JSON.stringify(values)
        : format === "TabSeparated"
        ? values.map((v) => Array.isArray(v) ? `[${v.map((x) => `'${x}'`).join(",")}]` : String(v)).join("\t")
        : JSON.stringify(Object.fromEntries(columns.map((c, i) => [c, values[i]])))
    )
  }
  const into = format === "JSONEachRow" ? "check_results" : `check_results (${columns.join(", ")})`
  const timeSetting = time === "iso" ? "&date_time_input_format=best_effort" : ""
  await run(`INSERT INTO ${into} FORMAT ${format}\n${rows.join("\n")}`, "statusgrid", `&insert_deduplication_token=rows-${inserts++}&deduplicate_blocks_in_dependent_materialized_views=1${timeSetting}`)
  if (measuredFrom === undefined && Date.now() - started >= (duration - measure) * 1000) measuredFrom = { at: Date.now(), cpu: cpuSeconds() }
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + inserts * every * 1000 - Date.now())))
}
const from = measuredFrom ?? { at: started, cpu: 0 }
const cores = (cpuSeconds() - from.cpu) / ((Date.now() - from.at) / 1000)
const parts = (await run("SELECT table, count() FROM system.parts WHERE database = 'statusgrid' AND active GROUP BY table ORDER BY table FORMAT TSV", "default"))
  .trim().split("\n").map((line) => line.replace("\t", ": "))
console.log(JSON.stringify({
  rate,
  every_s: every,
  components,
  sql: extra,
  format,
  time,
  chdb_cores: Number(cores.toFixed(3)),
  chdb_ms_per_row: Number((cores * 1000 / Math.max(rate, 1e-9)).toFixed(3)),
  active_parts: parts
}))
server.kill("SIGTERM")
server.once("exit", () => {
  Fs.rmSync(dir, { recursive: true, force: true })
  process.exit(0)
})
