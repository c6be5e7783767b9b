import { createChdbConnection } from "chdb/connection"
import { Effect } from "effect"
import * as Http from "node:http"
import { Readable } from "node:stream"
import type { AddressInfo, Socket } from "node:net"
import * as Zlib from "node:zlib"

/**
 * A ClickHouse server for tests and `statusgrid bench soak`, where none is
 * installed (the tests import it as test/support/clickhouseHttp.ts): the subset of
 * ClickHouse's HTTP interface that @clickhouse/client uses (`GET /ping`;
 * `POST /?query=…` with the statement in the URL and the data in the body,
 * or the statement in the body; settings, `database` and `param_*` in the
 * URL; errors as a non-2xx answer with `Code: N. DB::Exception: …`), backed
 * by real chDB. So `ClickHouse.layerServer` and the inserts' settings
 * (`insert_deduplication_token`) go over real HTTP into a real engine.
 *
 * Faults, as a server would show them:
 * - `slowInserts(n, ms)`: the next `n` inserts are executed (the rows land)
 *   and answered `ms` later: a client that gives up first retries a batch
 *   that is already stored.
 * - `down = true`: every connection is reset, as if the server were gone.
 */
export interface ClickHouseHttp {
  readonly url: string
  down: boolean
  slowInserts(count: number, ms: number): void
  /** Inserts executed (including those answered late). */
  readonly inserts: () => number
}

/** Query-string names that are not settings. */
const notSettings = new Set(["query", "query_id", "database", "session_id", "session_timeout", "session_check", "role"])
/** Settings whose values are strings even when they look like numbers. */
const stringSettings = new Set(["insert_deduplication_token", "date_time_input_format", "default_format"])

const readBody = (request: Http.IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    const source = request.headers["content-encoding"] === "gzip" ? request.pipe(Zlib.createGunzip()) : request
    source.on("data", (chunk: Buffer) => chunks.push(chunk))
    source.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    source.on("error", reject)
  })

const streamText = (stream: NodeJS.ReadableStream): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    stream.on("data", (chunk: Buffer | string) => chunks.push(Buffer.from(chunk)))
    stream.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    stream.on("error", reject)
  })

/** A running server and how to stop it. */
export interface ClickHouseHttpServer extends ClickHouseHttp {
  /** Resets every connection, stops listening and closes chDB. */
  readonly close: () => Promise<void>
}

/** Starts the server on 127.0.0.1 (`port`, 0: a free one) over chDB at `path`. */
export const startClickHouseHttp = async (path: string, port = 0): Promise<ClickHouseHttpServer> => {
  const connection = createChdbConnection({ path })
  let slowCount = 0
  let slowMs = 0
  let inserted = 0
  // One statement at a time: `USE` is per session, and chDB has one session here.
  let queue: Promise<unknown> = Promise.resolve()
  const serial = <A>(f: () => Promise<A>): Promise<A> => {
    const next = queue.then(f, f)
    queue = next.catch(() => undefined)
    return next
  }
  const sockets = new Set<Socket>()

  const execute = async (url: URL, body: string) => {
    const query = url.searchParams.get("query")
    const settings: Record<string, string | number> = {}
    const params: Record<string, string> = {}
    for (const [key, value] of url.searchParams) {
      if (key.startsWith("param_")) params[key.slice(6)] = value
      else if (!notSettings.has(key)) settings[key] = !stringSettings.has(key) && /^-?\d+$/.test(value) ? Number(value) : value
    }
    const database = url.searchParams.get("database") ?? "default"
    const sql = query ?? body
    return serial(async () => {
      await connection.command({ query: `USE \`${database}\``, query_id: crypto.randomUUID() })
      const result = await connection.exec({
        query: sql,
        query_id: url.searchParams.get("query_id") ?? crypto.randomUUID(),
        clickhouse_settings: settings,
        ...(Object.keys(params).length > 0 ? { query_params: params } : {}),
        ...(query !== null && body.length > 0 ? { values: Readable.from([body]) } : {})
      })
      return streamText(result.stream)
    })
  }

  const server = Http.createServer((request, response) => {
    if (front.down) {
      request.socket.destroy()
      return
    }
    const url = new URL(request.url ?? "/", "http://localhost")
    if (url.pathname === "/ping") {
      response.end("Ok.\n")
      return
    }
    void (async () => {
      const body = await readBody(request)
      const isInsert = /^\s*INSERT\b/i.test(url.searchParams.get("query") ?? body)
      try {
        const text = await execute(url, body)
        if (isInsert) {
          inserted++
          if (slowCount > 0) {
            slowCount--
            await new Promise((resolve) => setTimeout(resolve, slowMs))
          }
        }
        if (front.down) {
          request.socket.destroy()
          return
        }
        response.writeHead(200, { "content-type": "text/plain; charset=UTF-8" })
        response.end(text)
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error)
        response.writeHead(500, { "content-type": "text/plain; charset=UTF-8", "x-clickhouse-exception-code": "1000" })
        response.end(message.startsWith("Code:") ? message : `Code: 1000. DB::Exception: ${message}`)
      }
    })()
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  const front: ClickHouseHttpServer = {
    url: `http://default:@127.0.0.1:${(server.address() as AddressInfo).port}`,
    down: false,
    slowInserts: (count, ms) => {
      slowCount = count
      slowMs = ms
    },
    inserts: () => inserted,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await connection.close()
    }
  }
  return front
}

/** Starts the server on 127.0.0.1 (a free port) over chDB at `path`; stopped with the scope. */
export const clickHouseHttp = (path: string) =>
  Effect.acquireRelease(
    Effect.promise(() => startClickHouseHttp(path)),
    (front) => Effect.promise(() => front.close())
  ).pipe(Effect.map((front): ClickHouseHttp => front))
