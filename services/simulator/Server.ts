import { Effect, Schema } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { syntheticSpecs } from "../catalog/Synthetic.ts"
import type { Rendered } from "./Model.ts"
import { rendererFor } from "./renderers/index.ts"
import {
  ComponentUpdate,
  IncidentCreate,
  IncidentResolve,
  IncidentUpdate,
  MaintenanceCreate,
  ProviderChange,
  SimulatorError,
  SimulatorState,
  SourceCreate
} from "./State.ts"

/** How the simulated upstreams behave; changeable at run time through PUT /_control/config. */
export const Behaviour = Schema.Struct({
  /** Response delay, uniform between min and max milliseconds. */
  latency_min_ms: Schema.Number.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0))),
  latency_max_ms: Schema.Number.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0))),
  /** Share of requests answered 5xx (500, 502 or 503). */
  error_rate: Schema.Number.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: 1 }))),
  /** Share of requests never answered (the connection is dropped after `timeout_hold_ms`). */
  timeout_rate: Schema.Number.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: 1 }))),
  timeout_hold_ms: Schema.Number.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0)))
})
export type Behaviour = typeof Behaviour.Type

export const calmBehaviour: Behaviour = {
  latency_min_ms: 0,
  latency_max_ms: 0,
  error_rate: 0,
  timeout_rate: 0,
  timeout_hold_ms: 30_000
}

export interface SimulatorOptions {
  readonly port: number
  readonly host: string
  /** Synthetic sources served from the start (the catalog's `sim-` sources). */
  readonly sources: number
  readonly behaviour?: Partial<Behaviour>
}

export interface Simulator {
  readonly url: string
  readonly state: SimulatorState
  readonly behaviour: () => Behaviour
  /** Requests answered so far, by outcome. */
  readonly stats: { requests: number; notModified: number; errors: number; timeouts: number }
}

const sendJson = (res: Http.ServerResponse, status: number, value: unknown) => {
  const body = JSON.stringify(value)
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(body) })
  res.end(body)
}

const readBody = (req: Http.IncomingMessage): Promise<unknown> =>
  new Promise((resolve, reject) => {
    let data = ""
    req.setEncoding("utf8")
    req.on("data", (chunk: string) => {
      data += chunk
      if (data.length > 1_000_000) reject(new SimulatorError({ status: 413, message: "body too large" }))
    })
    req.on("end", () => {
      if (data.trim() === "") return resolve({})
      try {
        resolve(JSON.parse(data))
      } catch {
        reject(new SimulatorError({ status: 400, message: "body: not valid JSON" }))
      }
    })
    req.on("error", reject)
  })

const decode = <S extends Schema.Top>(schema: S, value: unknown): S["Type"] => {
  try {
    return Schema.decodeUnknownSync(schema as never)(value) as S["Type"]
  } catch (error) {
    throw new SimulatorError({ status: 400, message: String((error as Error).message) })
  }
}

interface Running extends Simulator {
  readonly server: Http.Server
  /** responses deliberately left unanswered (simulated timeouts) */
  readonly held: Set<Http.ServerResponse>
}

interface CacheEntry {
  readonly version: number
  readonly provider: string
  readonly rendered: Rendered
  readonly etag: string
}

/**
 * The upstream simulator: one HTTP server serving every source under
 * /s/<key>/... in its provider's format, with ETag and Last-Modified (304s),
 * configurable latency, errors and timeouts, and a control API under /_control.
 */
export const make = (options: SimulatorOptions) =>
  Effect.acquireRelease(
    Effect.callback<Running>((resume) => {
      let behaviour: Behaviour = { ...calmBehaviour, ...options.behaviour }
      const stats = { requests: 0, notModified: 0, errors: 0, timeouts: 0 }
      const cache = new Map<string, CacheEntry>()
      const held = new Set<Http.ServerResponse>()
      // The base URL is known once listening; sources are created then.
      let state = new SimulatorState("http://placeholder")

      const serveSource = (req: Http.IncomingMessage, res: Http.ServerResponse, key: string, path: string) => {
        const source = state.sources.get(key)
        if (!source) return sendJson(res, 404, { error: `no source ${key}` })
        const renderer = rendererFor(source.provider)!
        const route = renderer.routes[path]
        const cacheKey = `${key}\u0000${path}`
        let entry = cache.get(cacheKey)
        if (!entry || entry.version !== source.version || entry.provider !== source.provider) {
          const rendered: Rendered = route
            ? route(source, new Date())
            : path === "/" || renderer.catchAllHtml
            ? { contentType: "text/html; charset=utf-8", body: renderer.page(source, new Date()) }
            : { contentType: "", body: "" }
          entry = { version: source.version, provider: source.provider, rendered, etag: `"${key}-${source.version}-${source.provider}"` }
          cache.set(cacheKey, entry)
        }
        if (entry.rendered.contentType === "") return sendJson(res, 404, { error: `no ${path} on ${source.provider}` })
        const lastModified = source.updatedAt.toUTCString()
        const inm = req.headers["if-none-match"]
        const ims = req.headers["if-modified-since"]
        const fresh = inm !== undefined
          ? inm.split(",").some((tag) => tag.trim() === entry.etag)
          : ims !== undefined && Date.parse(ims) >= Math.floor(source.updatedAt.getTime() / 1000) * 1000
        if (fresh) {
          stats.notModified++
          res.writeHead(304, { etag: entry.etag, "last-modified": lastModified })
          return res.end()
        }
        const body = entry.rendered.body
        res.writeHead(200, {
          "content-type": entry.rendered.contentType,
          "content-length": typeof body === "string" ? Buffer.byteLength(body) : body.byteLength,
          etag: entry.etag,
          "last-modified": lastModified,
          "cache-control": "no-cache"
        })
        res.end(body)
      }

      const control = async (req: Http.IncomingMessage, res: Http.ServerResponse, parts: Array<string>) => {
        const method = req.method ?? "GET"
        const [, , resource, key, sub, id, action] = parts
        if (resource === "config") {
          if (method === "GET") return sendJson(res, 200, behaviour)
          if (method === "PUT") {
            behaviour = decode(Behaviour, { ...behaviour, ...(await readBody(req) as object) })
            return sendJson(res, 200, behaviour)
          }
        }
        if (resource === "stats" && method === "GET") return sendJson(res, 200, { ...stats, sources: state.sources.size })
        if (resource !== "sources") throw new SimulatorError({ status: 404, message: "unknown control path" })
        if (key === undefined) {
          if (method === "GET") {
            return sendJson(res, 200, [...state.sources.values()].map((s) => ({
              key: s.key, name: s.name, provider: s.provider, url: s.baseUrl, version: s.version
            })))
          }
          if (method === "POST") return sendJson(res, 201, state.add(decode(SourceCreate, await readBody(req))))
        } else if (sub === undefined && method === "GET") {
          return sendJson(res, 200, state.get(key))
        } else if (sub === "provider" && method === "PUT") {
          return sendJson(res, 200, state.setProvider(key, decode(ProviderChange, await readBody(req))))
        } else if (sub === "components" && id !== undefined && (method === "POST" || method === "PUT")) {
          return sendJson(res, 200, state.setComponent(key, id, decode(ComponentUpdate, await readBody(req))))
        } else if (sub === "incidents" && id === undefined && method === "POST") {
          return sendJson(res, 201, state.openIncident(key, decode(IncidentCreate, await readBody(req))))
        } else if (sub === "incidents" && id !== undefined && action === "updates" && method === "POST") {
          return sendJson(res, 200, state.updateIncident(key, id, decode(IncidentUpdate, await readBody(req))))
        } else if (sub === "incidents" && id !== undefined && action === "resolve" && method === "POST") {
          return sendJson(res, 200, state.resolveIncident(key, id, decode(IncidentResolve, await readBody(req))))
        } else if (sub === "maintenances" && method === "POST") {
          return sendJson(res, 201, state.scheduleMaintenance(key, decode(MaintenanceCreate, await readBody(req))))
        }
        throw new SimulatorError({ status: 405, message: `${method} ${parts.join("/")} is not a control action` })
      }

      const handle = (req: Http.IncomingMessage, res: Http.ServerResponse) => {
        const url = new URL(req.url ?? "/", "http://simulator")
        const parts = url.pathname.split("/")
        if (parts[1] === "_control") {
          control(req, res, parts).catch((error: unknown) => {
            if (error instanceof SimulatorError) sendJson(res, error.status, { error: error.message })
            else sendJson(res, 500, { error: String(error) })
          })
          return
        }
        stats.requests++
        const r = Math.random()
        if (r < behaviour.timeout_rate) {
          stats.timeouts++
          held.add(res)
          setTimeout(() => {
            held.delete(res)
            res.socket?.destroy()
          }, behaviour.timeout_hold_ms).unref()
          return
        }
        const respond = () => {
          if (r < behaviour.timeout_rate + behaviour.error_rate) {
            stats.errors++
            const status = [500, 502, 503][Math.floor(Math.random() * 3)]!
            res.writeHead(status, { "content-type": "text/plain" })
            return res.end(`simulated ${status}`)
          }
          if (parts[1] === "s" && parts[2]) return serveSource(req, res, parts[2], "/" + parts.slice(3).join("/"))
          if (url.pathname === "/") return sendJson(res, 200, { simulator: "statusgrid", sources: state.sources.size })
          sendJson(res, 404, { error: "not found" })
        }
        const delay = behaviour.latency_min_ms + Math.random() * (behaviour.latency_max_ms - behaviour.latency_min_ms)
        if (delay > 0) setTimeout(respond, delay)
        else respond()
      }

      const server = Http.createServer({ keepAlive: true }, handle)
      server.keepAliveTimeout = 60_000
      server.once("error", (error) => resume(Effect.die(error)))
      server.listen(options.port, options.host, () => {
        const { port } = server.address() as AddressInfo
        const host = options.host === "0.0.0.0" || options.host === "::" ? "127.0.0.1" : options.host
        const url = `http://${host}:${port}`
        state = new SimulatorState(url)
        for (const spec of syntheticSpecs(options.sources)) state.addSpec(spec)
        resume(Effect.succeed({ url, state, behaviour: () => behaviour, stats, server, held }))
      })
    }),
    ({ server, held }) =>
      Effect.callback<void>((resume) => {
        for (const res of held) res.socket?.destroy()
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map((running): Simulator => running))
