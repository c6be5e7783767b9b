/**
 * The website-monitor benchmark's target: a tiny HTTP(S) server run as its
 * own process (`node bench/monitorTarget.ts`), so that the poller's CPU and
 * memory figures are its own. Every request is answered 200 with a small
 * body after a uniform random delay; `GET /_stats` reports this process's
 * CPU and peak RSS. Prints one JSON line `{ "url": ... }` once listening.
 *
 *   node bench/monitorTarget.ts [--port 0] [--latency 50-300] [--cert F --key F] [--close]
 *
 * `--cert/--key` serve HTTPS; `--close` answers `Connection: close`, so every
 * check needs a new connection (and handshake), as monitors of many distinct hosts would.
 */
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Https from "node:https"
import type { AddressInfo } from "node:net"
import { peakRssMb } from "./figures.ts"

const args = process.argv.slice(2)
const arg = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : undefined
}

const latency = /^(\d+)(?:-(\d+))?$/.exec(arg("latency") ?? "50-300")
if (!latency) {
  console.error("--latency: expected N or MIN-MAX (milliseconds)")
  process.exit(2)
}
const minMs = Number(latency[1])
const spanMs = Math.max(0, Number(latency[2] ?? latency[1]) - minMs)
const close = args.includes("--close")
const cert = arg("cert")
const key = arg("key")
const started = process.cpuUsage()


const handle = (req: Http.IncomingMessage, res: Http.ServerResponse) => {
  if (req.url === "/_stats") {
    const cpu = process.cpuUsage(started)
    const body = JSON.stringify({ cpu_s: (cpu.user + cpu.system) / 1e6, peak_rss_mb: peakRssMb() })
    res.writeHead(200, { "content-type": "application/json" }).end(body)
    return
  }
  req.resume()
  const body = `ok ${req.url ?? "/"}\n`
  setTimeout(() => {
    res.writeHead(200, {
      "content-type": "text/plain",
      "content-length": Buffer.byteLength(body),
      ...(close ? { connection: "close" } : {})
    })
    res.end(body)
  }, minMs + Math.random() * spanMs)
}

const server = cert && key
  ? Https.createServer({ cert: Fs.readFileSync(cert), key: Fs.readFileSync(key) }, handle)
  : Http.createServer(handle)
// Above the monitors' in-flight checks (~checks/s x 0.3 s), so connects never wait in the kernel's queue.
server.listen({ port: Number(arg("port") ?? 0), host: "127.0.0.1", backlog: 4096 }, () => {
  const { port } = server.address() as AddressInfo
  process.stdout.write(`${JSON.stringify({ url: `${cert && key ? "https" : "http"}://127.0.0.1:${port}` })}\n`)
})

const stop = () => {
  server.closeAllConnections()
  server.close(() => process.exit(0))
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
