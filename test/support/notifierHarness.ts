import { NodeHttpServer } from "@effect/platform-node"
import { assert } from "@effect/vitest"
import { Context, Duration, Effect, Layer } from "effect"
import { HttpRouter } from "effect/http"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { ApiRoutes, routerConfig } from "../../services/api/ApiHttp.ts"
import type { MonitorEvent, StatusEvent } from "../../services/domain/Event.ts"
import * as Consumer from "../../services/notifier/Consumer.ts"
import * as Deliverer from "../../services/notifier/Deliverer.ts"
import { ApiKeys } from "../../services/orgs/ApiKeys.ts"
import { Organizations } from "../../services/orgs/Organizations.ts"
import { Bus } from "../../services/platform/Bus.ts"
import * as MemoryBus from "../../services/platform/Bus/Memory.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { Publisher } from "../../services/platform/Publisher.ts"
import { SecretBox } from "../../services/platform/SecretBox.ts"
import { writeEvent } from "../../services/platform/EventStream.ts"
import { apiBaseLayer, apiClickHouse, call } from "./api.ts"
import { eventually } from "./eventually.ts"
import { freshDatabase, tempDir, withConfig } from "./stores.ts"

/**
 * The notifier between the event stream and the receivers, for the tests of
 * its rules: the rules engine and the delivery worker, the API to set up
 * tenants, channels and rules, PostgreSQL and the in-process bus; events are
 * written to the stream as the poller and the monitor checks write them, and
 * one local HTTP server records every request the channels send.
 */

/** One request as the receiver got it: a JSON or form-encoded body, parsed. */
export interface Received {
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  readonly body: Record<string, unknown>
}

/** The receiver's answer to one request: 200 without a body unless `answer` says otherwise. */
export interface Answer {
  readonly status: number
  readonly json?: unknown
}

/** The receiver: its origin, and every request in arrival order. */
export class Hooks extends Context.Service<Hooks, { base: string; received: Array<Received> }>()("test/support/notifierHarness/Hooks") {}

const hooksLayer = (answer: (request: Received, received: ReadonlyArray<Received>) => Answer) =>
  Layer.effect(Hooks, Effect.acquireRelease(
    Effect.callback<{ base: string; received: Array<Received>; server: Http.Server }>((resume) => {
      const received: Array<Received> = []
      const server = Http.createServer((req, res) => {
        let body = ""
        req.on("data", (c: Buffer) => (body += c.toString("utf8")))
        req.on("end", () => {
          const form = String(req.headers["content-type"]).startsWith("application/x-www-form-urlencoded")
          const request = {
            path: req.url ?? "",
            headers: req.headers,
            body: form ? Object.fromEntries(new URLSearchParams(body)) : JSON.parse(body) as Record<string, unknown>
          }
          received.push(request)
          const { status, json } = answer(request, received)
          if (json === undefined) res.writeHead(status).end()
          else res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(json))
        })
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, server })))
    }),
    ({ server }) => Effect.callback<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
  ))

export interface NotifierOptions {
  /** Names the test's data directory. */
  readonly name: string
  /** Configuration besides the fast notifier timings, given the receiver's origin. */
  readonly config?: (base: string) => Record<string, string>
  /** How the receiver answers (a stand-in of a provider's API); 200 by default. */
  readonly answer?: (request: Received, received: ReadonlyArray<Received>) => Answer
}

/**
 * The notifier, the API and the receiver (`Hooks`) over a fresh PostgreSQL
 * database and the in-process bus. Each run has its own data directory: two
 * runs at once (other checkouts) must not share the hand-over lock.
 */
export const notifierLayer = (options: NotifierOptions) =>
  Layer.mergeAll(
    Consumer.layer,
    Deliverer.serviceLayer,
    Layer.mergeAll(HttpRouter.serve(ApiRoutes, { disableListenLog: true, disableLogger: true, routerConfig }), apiBaseLayer).pipe(
      Layer.provideMerge(NodeHttpServer.layer(Http.createServer, { port: 0, host: "127.0.0.1" }))
    ),
    Organizations.layer,
    ApiKeys.layer.pipe(Layer.provide(SecretBox.layer))
  ).pipe(
    Layer.provideMerge(Layer.effectDiscard(Migrations.migratePostgres())),
    Layer.provideMerge(Layer.mergeAll(
      Layer.unwrap(Effect.map(freshDatabase, (url) => Postgres.layerServer(url, { maxConnections: 8 }))),
      Publisher.layer.pipe(Layer.provideMerge(MemoryBus.layer)),
      apiClickHouse
    )),
    Layer.provide(Layer.unwrap(Effect.gen(function*() {
      const { base } = yield* Hooks
      const dataDir = yield* tempDir(options.name)
      return withConfig({
        NOTIFIER_POLL_MS: "50",
        NOTIFIER_ALLOW_PRIVATE: "true",
        NOTIFIER_TIMER_MS: "100",
        PUBLIC_URL: "https://status.example.com",
        ...options.config?.(base),
        DATA_DIR: dataDir
      })
    }))),
    Layer.provideMerge(hooksLayer(options.answer ?? (() => ({ status: 200 }))))
  )

export const sleep = (ms: number) => Effect.sleep(Duration.millis(ms))

/** What arrived at one receiver path so far. */
export const at = (path: string) => Hooks.use((h) => Effect.succeed(h.received.filter((r) => r.path === path)))

/** Waits (up to 15 s) until `path` got `count` requests, then `settleMs` longer to catch any extra one. */
export const arrivals = (path: string, count: number, settleMs = 700) =>
  Effect.gen(function*() {
    yield* eventually(15_000, at(path).pipe(Effect.map((r) => (r.length >= count ? r : undefined))))
    yield* sleep(settleMs)
    return yield* at(path)
  })

/** The parsed bodies of requests. */
export const bodies = (received: ReadonlyArray<Received>) => received.map((r) => r.body)

/** Writes an event to `sg:events` as the poller and the monitor checks do. */
export const publish = (event: StatusEvent | MonitorEvent) =>
  Bus.use((bus) => writeEvent(bus, event))

/** A webhook channel named `path` that posts to the receiver's `path`, created through the API with `key`; its id. */
export const webhookChannel = (key: string, path: string) =>
  Effect.gen(function*() {
    const { base } = yield* Hooks
    const created = yield* call("POST", "/channels", { key, body: { type: "webhook", name: path, settings: { url: `${base}${path}` } } })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    return created.body.id as string
  })

/** A rule created through the API with `key` (named "rule" unless `body` names it); its id. */
export const newRule = (key: string, body: Record<string, unknown>) =>
  call("POST", "/rules", { key, body: { name: "rule", ...body } }).pipe(Effect.map((r) => {
    assert.strictEqual(r.status, 201, JSON.stringify(r.body))
    return r.body.id as string
  }))
