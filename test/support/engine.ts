import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import { SingleRunner } from "effect/cluster"
import { Digest } from "effect/crypto"
import { HttpRouter } from "effect/http"
import { SqlClient } from "effect/sql/SqlClient"
import * as Http from "node:http"
import { ApiRoutes, routerConfig } from "../../services/api/ApiHttp.ts"
import { ShardReloads } from "../../services/domain/ShardReloads.ts"
import * as Consumer from "../../services/notifier/Consumer.ts"
import * as Deliverer from "../../services/notifier/Deliverer.ts"
import { ApiKeys } from "../../services/orgs/ApiKeys.ts"
import { Organizations } from "../../services/orgs/Organizations.ts"
import { Bus } from "../../services/platform/Bus.ts"
import * as MemoryBus from "../../services/platform/Bus/Memory.ts"
import * as RedisBus from "../../services/platform/Bus/Redis.ts"
import { ClickHouse } from "../../services/platform/ClickHouse.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { Publisher } from "../../services/platform/Publisher.ts"
import { SecretBox } from "../../services/platform/SecretBox.ts"
import { RedisKeys } from "../../services/platform/RedisKeys.ts"
import * as Poller from "../../services/poller/Poller.ts"
import * as Simulator from "../../services/simulator/Server.ts"
import { apiBaseLayer } from "./api.ts"
import { waitFor } from "./eventually.ts"
import { freshDatabase, tempDir, testRedisUrl, withConfig } from "./stores.ts"

/**
 * One in-process statusgrid for the tests that run the poller: real
 * PostgreSQL (a fresh database), chDB (a temporary directory) and a bus,
 * migrated; one runner with the poller; and whatever else a test adds on top
 * (the simulator, the API, the notifier, its own stand-ins) from the pieces
 * below.
 */

/** The simulator, with no sources until a test adds them through its state. */
export class Sim extends Context.Service<Sim, Simulator.Simulator>()("test/support/engine/Sim") {}

export const simulator = Layer.effect(Sim, Simulator.make({ port: 0, host: "127.0.0.1", sources: 0 }))

/** The whole `/api/v1` on 127.0.0.1, and its origin as `ApiBase` (test/support/api.ts). */
export const api = Layer.mergeAll(HttpRouter.serve(ApiRoutes, { disableListenLog: true, disableLogger: true, routerConfig }), apiBaseLayer).pipe(
  Layer.provideMerge(NodeHttpServer.layer(Http.createServer, { port: 0, host: "127.0.0.1" }))
)

/** The notifier (rules engine and delivery worker) and the organization services that set tenants up. */
export const notifier = Layer.mergeAll(Consumer.layer, Deliverer.serviceLayer, Organizations.layer, ApiKeys.layer.pipe(Layer.provide(SecretBox.layer)))

/** PostgreSQL, chDB and the Publisher over the in-process bus, or over the test's Redis (`TEST_REDIS_URL`). */
export const stores = (name: string, bus: "memory" | "redis") =>
  Layer.mergeAll(
    Layer.unwrap(Effect.map(freshDatabase, (url) => Postgres.layerServer(url, { maxConnections: 8 }))),
    Layer.unwrap(Effect.map(tempDir(`${name}-ch`), (dir) => ClickHouse.layerEmbedded(dir, "statusgrid"))),
    Publisher.layer.pipe(Layer.provideMerge(bus === "redis" ? RedisBus.layer(testRedisUrl) : MemoryBus.layer))
  )

/** Fast timings: every source polled each second, results flushed every 200 ms, new sources reaching their shards through ShardReloads. */
export const pollerTimings = {
  POLLER_SHARDS: "2",
  POLLER_INTERVAL_OVERRIDE_S: "1",
  POLLER_KEEPER_MS: "300",
  // Long: new sources must reach their shards through ShardReloads, not the periodic refresh.
  POLLER_REFRESH_MS: "600000",
  RESULTS_FLUSH_MS: "200"
}

export interface EngineOptions {
  /** Names the temporary directories. */
  readonly name: string
  /** The bus under the Publisher: in process (default), or Redis, shared with other test files. */
  readonly bus?: "memory" | "redis"
  /** With the Redis bus: empties `sg:events` once migrated, so that a test reads the events of its own run. */
  readonly clearEvents?: boolean
  /** Configuration over `pollerTimings`; DATA_DIR is a temporary directory of the run unless given. */
  readonly config?: Record<string, string>
}

/** The poller on one in-process runner (needs the stores, configuration and DATA_DIR). */
export const pollerRunner = Poller.layer.pipe(Layer.provide(SingleRunner.layer({ runnerStorage: "memory" }).pipe(Layer.provide(Digest.layerWebCrypto))))

/**
 * The poller and `services` over `over` (the stores), migrated, all
 * configured by `options.config` (nothing is read from the environment).
 */
export const engineOver = <SA, SE, SR, A, E, R>(over: Layer.Layer<SA, SE, SR>, options: EngineOptions, services: Layer.Layer<A, E, R>) => {
  const migrated = Layer.effectDiscard(Effect.gen(function*() {
    yield* Migrations.migratePostgres()
    yield* Migrations.migrateClickHouse()
    if (options.clearEvents === true) yield* (yield* Bus).del([RedisKeys.events])
  }))
  return Layer.mergeAll(pollerRunner, services).pipe(
    Layer.provideMerge(migrated),
    Layer.provideMerge(over),
    Layer.provide(Layer.unwrap(Effect.map(tempDir(`${options.name}-data`), (dir) =>
      withConfig({ ...pollerTimings, DATA_DIR: dir, ...options.config })
    )))
  )
}

/** `engineOver` the default stores (`options.bus`). */
export const engine = <A, E, R>(options: EngineOptions, services: Layer.Layer<A, E, R>) =>
  engineOver(stores(options.name, options.bus ?? "memory"), options, services)

/**
 * A catalog source of the `critical` class at `url`, told to its shard at
 * once (the periodic refresh is long here): the poller checks it at the
 * test's interval.
 */
export const addCatalogSource = (key: string, provider: string, url: string, name = key) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    yield* sql`INSERT INTO sources (key, name, kind, provider_type, status_page_url, check_class, poll_interval_s)
      VALUES (${key}, ${name}, 'catalog', ${provider}, ${url}, 'critical', 30)`
    yield* ShardReloads.use((reloads) => reloads.sources([key]))
  })

/**
 * A Statuspage source of `components` components on the simulator, added to
 * the catalog; once the poller has read it: the page, its first component
 * and that component's id.
 */
export const simulatedStatuspage = (key: string, name: string, components: number) =>
  Effect.gen(function*() {
    const sim = yield* Sim
    const sql = yield* SqlClient
    const page = sim.state.add({ key, name, provider: "statuspage_io", components, groups: 0 })
    yield* addCatalogSource(key, "statuspage_io", page.baseUrl, name)
    const target = page.components.find((c) => !c.is_group)!
    const componentId = yield* waitFor(10_000, "component discovered", sql<{ id: string }>`
      SELECT id FROM components WHERE external_id = ${target.id}`.pipe(Effect.map((rows) => rows[0]?.id)))
    return { page, target, componentId }
  })
