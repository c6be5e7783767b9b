/**
 * ClickHouse's HTTP interface over chDB (clickhouseHttp.ts) as its own process, for `statusgrid bench
 * soak`: the store statusgrid reaches over the wire (through a fault proxy), with chDB's work outside
 * both statusgrid's and the benchmark's event loops. Prints one JSON line `{ "url": ... }` once
 * listening; stops on SIGTERM, or when the process that started it is gone.
 *
 *   node bench/clickhouseServer.ts --path DIR
 */
import { startClickHouseHttp } from "./clickhouseHttp.ts"

const at = process.argv.indexOf("--path")
const path = at >= 0 ? process.argv[at + 1] : undefined
if (path === undefined) {
  console.error("--path DIR: where chDB keeps its data")
  process.exit(2)
}

const server = await startClickHouseHttp(path)
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`)

let stopping = false
const stop = () => {
  if (stopping) return
  stopping = true
  // A statement chDB is still running would hold the close: 5 s at most.
  setTimeout(() => process.exit(0), 5000).unref()
  void server.close().finally(() => process.exit(0))
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
// A benchmark killed outright (SIGKILL) leaves this process to init: it goes too.
const parent = process.ppid
setInterval(() => {
  if (process.ppid !== parent) stop()
}, 1000).unref()
