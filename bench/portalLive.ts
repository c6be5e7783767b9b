import { NodeHttpServer } from "@effect/platform-node"
import { Clock, Effect, Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { SqlClient } from "effect/sql/SqlClient"
import { spawn } from "node:child_process"
import { createServer } from "node:http"
import { createInterface } from "node:readline"
import { ApiRoutes, routerConfig } from "../services/api/ApiHttp.ts"
import type { Snapshot } from "../services/domain/Snapshot.ts"
import { ApiKeys } from "../services/orgs/ApiKeys.ts"
import { SecretBox } from "../services/platform/SecretBox.ts"
import { Organizations } from "../services/orgs/Organizations.ts"
import { LiveHub } from "../services/platform/LiveHub.ts"
import * as Migrations from "../services/platform/Migrations.ts"
import { Publisher } from "../services/platform/Publisher.ts"
import { percentile, round } from "./figures.ts"

export interface PortalLiveOptions {
  readonly streams: number
  readonly deltas: number
}

/**
 * The clients, in a child process so that their sockets and parsing are not
 * counted in the server's memory or event loop: N event streams over
 * node:http; "ready" once every stream had its hello; for each delta, when
 * every stream has it, one JSON line with the milliseconds from the delta's
 * `at` (when the change was handed to the Publisher) to its arrival at each client.
 */
const clientScript = `
import http from "node:http"
import readline from "node:readline"
const [url, n, key] = process.argv.slice(1)
const count = Number(n)
let hellos = 0
const rounds = new Map()
for (let i = 0; i < count; i++) {
  http.get(url, { headers: { authorization: "Bearer " + key }, agent: false }, (res) => {
    res.setEncoding("utf8")
    let buffer = ""
    res.on("data", (chunk) => {
      buffer += chunk
      let end
      while ((end = buffer.indexOf("\\n\\n")) !== -1) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        if (block.includes("event: hello")) {
          if (++hellos === count) process.stdout.write("ready\\n")
        } else if (block.includes("event: delta")) {
          const now = Date.now()
          const data = JSON.parse(block.slice(block.indexOf("data: ") + 6))
          const list = rounds.get(data.at) ?? []
          list.push(now - Date.parse(data.at))
          rounds.set(data.at, list)
          if (list.length === count) process.stdout.write(JSON.stringify({ at: data.at, latencies: list }) + "\\n")
        }
      }
    })
  }).on("error", (e) => { process.stderr.write(String(e) + "\\n"); process.exit(1) })
}
readline.createInterface({ input: process.stdin }).on("close", () => process.exit(0))
`

const snapshot = (status: Snapshot["status"]): Snapshot => ({
  provider: "bench",
  status,
  reported_status: null,
  description: "",
  components: [{ id: "api", name: "API", description: "", status: status === "down" ? "critical" : "operational", parent_id: null, is_group: false, position: 0, region: null }],
  incidents: [],
  maintenances: [],
  regions: [],
  warnings: []
})

const rssMb = () => {
  ;(globalThis as { gc?: () => void }).gc?.()
  return process.memoryUsage().rss / 1024 / 1024
}

/**
 * `statusgrid bench portal-live`: the API server in this process (one LiveHub), a stack with one
 * source, N event streams from a child process, then `deltas` changes of that source published
 * through the Publisher one after another; per delta, the time until every client has it.
 */
export const runPortalLiveBench = Effect.fn("bench.portalLive")(function*(options: PortalLiveOptions) {
  yield* Migrations.migratePostgres()
  const sql = yield* SqlClient
  const key = `bench-live-${Date.now().toString(36)}`
  yield* sql`INSERT INTO sources (key, name, kind, status, status_page_url) VALUES (${key}, 'Bench live', 'catalog', 'operational', 'https://status.example.com')`
  const org = yield* Organizations.use((o) => o.create({ name: "Bench live", slug: key, plan: "pro" }))
  const apiKey = yield* ApiKeys.use((k) => k.issue(org.id, "bench", "viewer"))
  const [stack] = yield* sql<{ id: string }>`
    INSERT INTO stacks (organization_id, name, slug) VALUES (${org.id}::uuid, 'Bench', 'bench') RETURNING id`
  const [source] = yield* sql<{ id: string }>`SELECT id FROM sources WHERE key = ${key}`
  yield* sql`INSERT INTO stack_items (stack_id, kind, source_id) VALUES (${stack!.id}::uuid, 'source', ${source!.id}::uuid)`
  const { address } = yield* HttpServer.HttpServer
  const base = address._tag === "UnixPathAddress" ? "" : `http://127.0.0.1:${address.port}`
  const hub = yield* LiveHub
  const publisher = yield* Publisher

  const rssBefore = rssMb()
  const child = spawn(process.execPath, ["--input-type=module", "-e", clientScript, `${base}/api/v1/organizations/${key}/stream?stack=bench`, String(options.streams), apiKey], {
    stdio: ["pipe", "pipe", "inherit"]
  })
  yield* Effect.addFinalizer(() => Effect.sync(() => child.kill()))
  const lines = createInterface({ input: child.stdout! })
  const waiting: Array<(line: string) => void> = []
  const buffered: Array<string> = []
  lines.on("line", (line) => {
    const resolve = waiting.shift()
    if (resolve) resolve(line)
    else buffered.push(line)
  })
  const nextLine = Effect.callback<string>((resume) => {
    const line = buffered.shift()
    if (line !== undefined) resume(Effect.succeed(line))
    else waiting.push((l) => resume(Effect.succeed(l)))
  })

  const openStart = yield* Clock.currentTimeMillis
  const ready = yield* nextLine
  if (ready !== "ready") return yield* Effect.die(new Error(`the clients said ${ready}`))
  const openMs = (yield* Clock.currentTimeMillis) - openStart
  const rssOpen = rssMb()
  const subscribers = (yield* hub.stats).subscribers

  const all: Array<number> = []
  const perDelta: Array<{ p50: number; p99: number; max: number }> = []
  let previous = snapshot("operational")
  for (let i = 0; i < options.deltas; i++) {
    const next = snapshot(i % 2 === 0 ? "down" : "operational")
    const at = new Date(yield* Clock.currentTimeMillis)
    yield* publisher.changed(key, previous, next, [], at)
    previous = next
    const round_ = JSON.parse(yield* nextLine) as { at: string; latencies: Array<number> }
    const sorted = round_.latencies.toSorted((a, b) => a - b)
    all.push(...sorted)
    perDelta.push({ p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? 0 })
    yield* Effect.sleep("200 millis")
  }
  const sorted = all.toSorted((a, b) => a - b)
  return {
    bench: "portal-live",
    streams: options.streams,
    subscribers_on_the_hub: subscribers,
    deltas: options.deltas,
    open_all_ms: openMs,
    // From handing the change to the Publisher to its arrival at each client (the bus, the hub, the HTTP stream).
    delivery_ms: { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? 0 },
    per_delta_ms: perDelta,
    server_rss_mb: { before: round(rssBefore, 1), open: round(rssOpen, 1) },
    kb_per_stream: round(((rssOpen - rssBefore) * 1024) / options.streams, 1),
    gc_before_rss: (globalThis as { gc?: unknown }).gc !== undefined
  }
})

/** The API alone on 127.0.0.1 with the process's one LiveHub, built before the server as services/api/Http.ts does. */
export const portalLiveBenchServer = Layer.mergeAll(
  HttpRouter.serve(ApiRoutes, { disableListenLog: true, disableLogger: true, routerConfig }),
  Organizations.layer,
  ApiKeys.layer.pipe(Layer.provide(SecretBox.layer))
).pipe(
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
  Layer.provideMerge(LiveHub.layer),
  Layer.provideMerge(Publisher.layer)
)
