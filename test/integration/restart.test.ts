import { Deferred, Effect, Fiber, Layer, type Scope } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Redis } from "ioredis"
import { randomBytes } from "node:crypto"
import { assert, describe, it } from "vitest"
import type { MonitorEvent, StatusEvent } from "../../services/domain/Event.ts"
import type { Snapshot } from "../../services/domain/Snapshot.ts"
import { ApiKeys } from "../../services/orgs/ApiKeys.ts"
import { Organizations } from "../../services/orgs/Organizations.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { SecretBox } from "../../services/platform/SecretBox.ts"
import { eventsBetween, observe } from "../../services/domain/Changes.ts"
import { type PolledSource, SourceStore } from "../../services/poller/SourceStore.ts"
import * as Simulator from "../../services/simulator/Server.ts"
import { newTenant, type Tenant } from "../support/api.ts"
import { waitFor } from "../support/eventually.ts"
import { childEnv, freePort, type Running, startService } from "../support/process.ts"
import { type HttpReceiver, startHttpReceiver } from "../support/receivers.ts"
import { freshDatabase, tempDir, testRedisUrl } from "../support/stores.ts"

/**
 * No change lost across restarts and runner fail-over, with real `statusgrid start` and `statusgrid
 * runner` processes on PostgreSQL and Redis, the simulator upstream and a webhook receiver: a change
 * made while no process polls its source becomes one event and one alert once one does again, and a
 * change seen before a restart and again after it alerts once. Incidents and website monitors the same.
 */

/**
 * A Redis database of this file's own, derived from TEST_REDIS_URL: every notifier on a Redis database
 * reads `sg:events` in one consumer group, so processes of another file would take this file's events.
 */
const redisUrl = (() => {
  const url = new URL(testRedisUrl)
  url.pathname = `/${(Number(url.pathname.slice(1) || "0") + 7) % 16}`
  return url.toString()
})()
/** Processes sharing a database share the key of its sealed channel secrets. */
const secretsKey = randomBytes(32).toString("base64")

interface Component {
  /** The provider's id (the simulator's) */
  readonly external: string
  /** Ours (PostgreSQL), as in alerts */
  readonly id: string
}

interface World {
  readonly databaseUrl: string
  readonly sim: Simulator.Simulator
  readonly key: string
  readonly redis: Redis
  readonly hook: HttpReceiver
  /** A website for a monitor, answering `target.status` */
  readonly target: { readonly url: string; status: number }
  readonly tenant: Tenant
}

/**
 * A simulated Statuspage source (the only catalog source, so no default catalog is loaded), a webhook
 * receiver, an emptied Redis database and a Pro organization, on a fresh database.
 */
const world = Effect.gen(function*() {
  const sim = yield* Simulator.make({ port: 0, host: "127.0.0.1", sources: 0 })
  const page = sim.state.add({ key: "restart-shop", name: "Restart Shop", provider: "statuspage_io", components: 2, groups: 0 })
  const databaseUrl = yield* freshDatabase
  const redis = yield* Effect.acquireRelease(
    Effect.promise(async () => {
      const redis = new Redis(redisUrl)
      await redis.flushdb()
      return redis
    }),
    (redis) => Effect.promise(() => redis.quit())
  )
  const hook = yield* Effect.acquireRelease(Effect.promise(() => startHttpReceiver(() => ({ status: 200 }))), (r) => Effect.promise(r.close))
  const target = { url: "", status: 200 }
  const site = yield* Effect.acquireRelease(Effect.promise(() => startHttpReceiver(() => ({ status: target.status }))), (r) => Effect.promise(r.close))
  target.url = `${site.url}/health`
  const tenant = yield* Effect.gen(function*() {
    yield* Migrations.migratePostgres()
    const sql = yield* SqlClient
    yield* sql`INSERT INTO sources (key, name, kind, provider_type, status_page_url, check_class, poll_interval_s)
      VALUES (${page.key}, ${page.name}, 'catalog', 'statuspage_io', ${page.baseUrl}, 'critical', 30)`
    return yield* newTenant("pro")
  }).pipe(Effect.provide(Layer.mergeAll(Organizations.layer, ApiKeys.layer).pipe(
    // The servers' secrets key: the tenant's API keys are keyed hashes under it.
    Layer.provide(Layer.succeed(SecretBox, SecretBox.fromKey(Buffer.from(secretsKey, "base64")))),
    Layer.provideMerge(Postgres.layerServer(databaseUrl, { maxConnections: 1 }))
  )))
  return { databaseUrl, sim, key: page.key, redis, hook, target, tenant } satisfies World
})

/** Kills the process with SIGKILL and waits until it is gone. */
const sigkill = (running: Running) =>
  Effect.callback<void>((resume) => {
    if (running.child.exitCode !== null || running.child.signalCode !== null) return resume(Effect.void)
    running.child.once("exit", () => resume(Effect.void))
    running.child.kill("SIGKILL")
  })

/** `statusgrid start` or `statusgrid runner` on the world's stores, polling every second; killed when the scope closes. */
const serve = (w: World, command: "start" | "runner", extra: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const env = childEnv({
      DATABASE_URL: w.databaseUrl,
      REDIS_URL: redisUrl,
      DATA_DIR: yield* tempDir("restart"),
      PORT: String(yield* Effect.promise(freePort)),
      ...(command === "runner" ? { RUNNER_PORT: String(yield* Effect.promise(freePort)) } : {}),
      SECRETS_KEY: secretsKey,
      POLLER_INTERVAL_OVERRIDE_S: "1",
      POLLER_KEEPER_MS: "500",
      NOTIFIER_POLL_MS: "100",
      // The receiver and the website listen on 127.0.0.1, which are refused unless told otherwise.
      NOTIFIER_ALLOW_PRIVATE: "true",
      MONITOR_ALLOW_PRIVATE: "true",
      ...extra
    })
    return yield* Effect.acquireRelease(Effect.promise(() => startService(env, 60_000, [command])), sigkill)
  })

const sql = <A, E>(w: World, effect: Effect.Effect<A, E, SqlClient>) =>
  effect.pipe(Effect.provide(Postgres.layerServer(w.databaseUrl, { maxConnections: 1 })))

/** The source's components once its first snapshot is stored. */
const components = (w: World) =>
  waitFor(30_000, "the first snapshot stored", sql(w, Effect.gen(function*() {
    const sql = yield* SqlClient
    const rows = yield* sql<{ id: string; external_id: string }>`SELECT id, external_id FROM components ORDER BY position`
    return rows.length === 2 ? rows.map((r): Component => ({ id: r.id, external: r.external_id })) : undefined
  })))

/**
 * A stack of the components, a monitor of the website, a webhook channel to the receiver and a rule on
 * critical components and monitors going down or recovering, without cooldown; the monitor's id.
 */
const alertOn = (w: World, running: Running, shown: ReadonlyArray<Component>) =>
  Effect.gen(function*() {
    const api = (path: string, body: unknown) =>
      Effect.promise(async () => {
        const response = await fetch(`${running.url}/api/v1${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${w.tenant.keys.admin}`, "content-type": "application/json" },
          body: JSON.stringify(body)
        })
        const reply = (await response.json()) as { id: string }
        assert.strictEqual(response.status, 201, JSON.stringify(reply))
        return reply
      })
    const stack = yield* api("/stacks", { name: "Shop" })
    for (const c of shown) yield* api(`/stacks/${stack.id}/items`, { kind: "component", component_id: c.id })
    const monitor = yield* api("/monitors", { name: "Shop health", url: w.target.url, alert_threshold: 1 })
    const channel = yield* api("/channels", { type: "webhook", name: "Ops", settings: { url: `${w.hook.url}/hook` } })
    // No cooldown: only the event ids keep a change observed twice from alerting twice.
    const triggers = ["component.critical", "incident.created", "monitor.down", "monitor.recovered"]
    yield* api("/rules", { name: "Critical", triggers, channel_ids: [channel.id], cooldown_s: 0 })
    return monitor.id
  })

/** The component's changes on `sg:events`, oldest first. */
const eventsOf = (w: World, c: Component) =>
  Effect.promise(async () => {
    const entries = await w.redis.xrange("sg:events", "-", "+")
    return entries
      .map(([, fields]) => JSON.parse(fields[fields.indexOf("payload") + 1]!) as StatusEvent)
      .filter((e) => e.type === "component.status_changed" && e.component?.id === c.external)
  })

/** The source's incident events of one type on `sg:events`, oldest first. */
const incidentEventsOf = (w: World, type: StatusEvent["type"]) =>
  Effect.promise(async () => {
    const entries = await w.redis.xrange("sg:events", "-", "+")
    return entries
      .map(([, fields]) => JSON.parse(fields[fields.indexOf("payload") + 1]!) as StatusEvent)
      .filter((e) => e.type === type && e.source.key === w.key)
  })

/** The monitor's events of one type on `sg:events`, oldest first. */
const monitorEventsOf = (w: World, id: string, type: MonitorEvent["type"]) =>
  Effect.promise(async () => {
    const entries = await w.redis.xrange("sg:events", "-", "+")
    return entries
      .map(([, fields]) => JSON.parse(fields[fields.indexOf("payload") + 1]!) as MonitorEvent)
      .filter((e) => e.type === type && e.monitor?.id === id)
  })

/** The webhooks received about the component (or monitor), of one event type when given. */
const alertsOf = (w: World, c: Pick<Component, "id">, event?: string) =>
  w.hook.requests.filter((r) => {
    const sent = JSON.parse(r.body.toString("utf8")) as { event?: string; component?: { id?: string } }
    return sent.component?.id === c.id && (event === undefined || sent.event === event)
  })

const flip = (w: World, c: Component) => Effect.sync(() => w.sim.state.setComponent(w.key, c.external, { status: "critical" }))

/** Once the component's alert has arrived, and two more seconds of checks: its events and alerts. */
const settled = (w: World, c: Component) =>
  Effect.gen(function*() {
    yield* waitFor(30_000, `the alert about ${c.external}`, Effect.sync(() => (alertsOf(w, c, "component.status_changed").length > 0 ? true : undefined)))
    yield* Effect.sleep("2 seconds")
    return { events: yield* eventsOf(w, c), alerts: alertsOf(w, c, "component.status_changed") }
  })

/** The monitor's events and alerts of one type, once its alert has arrived (and two more seconds of checks). */
const monitorSettled = (w: World, id: string, type: MonitorEvent["type"]) =>
  Effect.gen(function*() {
    yield* waitFor(30_000, `the ${type} alert`, Effect.sync(() => (alertsOf(w, { id }, type).length > 0 ? true : undefined)))
    yield* Effect.sleep("2 seconds")
    return { events: yield* monitorEventsOf(w, id, type), alerts: alertsOf(w, { id }, type) }
  })

const storedStatus = (w: World, c: Component) =>
  sql(w, Effect.gen(function*() {
    const sql = yield* SqlClient
    const [row] = yield* sql<{ status: string }>`SELECT status FROM components WHERE id = ${c.id}::uuid`
    return row?.status
  }))

const monitorState = (w: World, id: string) =>
  sql(w, Effect.gen(function*() {
    const sql = yield* SqlClient
    const [row] = yield* sql<{ state: string }>`SELECT state FROM monitors WHERE id = ${id}::uuid`
    return row?.state
  }))

/** Waits until the monitor's state in PostgreSQL is `state`. */
const monitorSaved = (w: World, id: string, state: string) =>
  waitFor(15_000, `the monitor ${state} in PostgreSQL`, Effect.map(monitorState(w, id), (s) => (s === state ? true : undefined)))

/** When the process last started a poller shard (ms since the epoch; 0: never). */
const lastShardStart = (r: Running) =>
  Math.max(0, ...r.logs.filter((l) => l["message"] === "shard started").map((l) => Date.parse(String(l["timestamp"]))))

const scenario = <A, E>(body: (w: World) => Effect.Effect<A, E, Scope.Scope>) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(world, body)))

describe("no change lost across restarts and fail-over", () => {
  it("a change made while `statusgrid start` is stopped alerts once after the restart; one seen before a restart and again after it alerts once", () =>
    scenario((w) =>
      Effect.gen(function*() {
        const first = yield* serve(w, "start")
        const [x, y] = yield* components(w)
        const monitor = yield* alertOn(w, first, [x!, y!])
        yield* monitorSaved(w, monitor, "up")
        assert.strictEqual(yield* Effect.promise(first.stop), 0)

        // While it is stopped: an incident opens, taking the first component down, and the website fails.
        w.sim.state.openIncident(w.key, { title: "Checkout down", impact: "critical", components: [x!.external], component_status: "critical" })
        w.target.status = 500
        const second = yield* serve(w, "start")
        const restarted = yield* settled(w, x!)
        assert.deepStrictEqual(restarted.events.map((e) => [e.component?.previous_status, e.component?.current_status]), [["operational", "critical"]])
        assert.strictEqual(restarted.alerts.length, 1)
        assert.strictEqual((yield* incidentEventsOf(w, "incident.created")).length, 1)
        assert.strictEqual(w.hook.requests.filter((r) => JSON.parse(r.body.toString("utf8")).event === "incident.created").length, 1)
        const down = yield* monitorSettled(w, monitor, "monitor.down")
        assert.deepStrictEqual([down.events.length, down.alerts.length], [1, 1])
        yield* waitFor(10_000, "the change saved", Effect.map(storedStatus(w, x!), (s) => (s === "critical" ? true : undefined)))
        yield* monitorSaved(w, monitor, "down")

        // The next change is seen, published and alerted, but its snapshot never reaches PostgreSQL (the
        // source's row is locked) before the process dies: the next process observes the change again.
        // The same for the monitor's recovery (its state is saved once a second; its row is locked too).
        // The rows stay locked until the next process has read them: a dead process's statement waiting
        // on a lock outside a transaction still commits when the lock is released.
        const locked = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const holder = yield* sql(w, Effect.gen(function*() {
          const sql = yield* SqlClient
          yield* sql.withTransaction(Effect.gen(function*() {
            yield* sql`SELECT 1 FROM sources WHERE key = ${w.key} FOR UPDATE`
            yield* sql`SELECT 1 FROM monitors WHERE id = ${monitor}::uuid FOR UPDATE`
            yield* Deferred.succeed(locked, undefined)
            yield* Deferred.await(release)
          }))
        })).pipe(Effect.forkChild)
        yield* Deferred.await(locked)
        yield* flip(w, y!)
        w.target.status = 200
        yield* waitFor(30_000, "the alerts before the kill", Effect.sync(() =>
          alertsOf(w, y!, "component.status_changed").length > 0 && alertsOf(w, { id: monitor }, "monitor.recovered").length > 0 ? true : undefined))
        yield* sigkill(second)
        assert.strictEqual(yield* storedStatus(w, y!), "operational")
        assert.strictEqual(yield* monitorState(w, monitor), "down")

        const third = yield* serve(w, "start")
        yield* waitFor(30_000, "the changes observed again", Effect.gen(function*() {
          const component = yield* eventsOf(w, y!)
          const recovered = yield* monitorEventsOf(w, monitor, "monitor.recovered")
          return component.length === 2 && recovered.length === 2 ? true : undefined
        }))
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holder)
        const again = yield* settled(w, y!)
        assert.strictEqual(again.alerts.length, 1)
        assert.strictEqual(new Set(again.events.map((e) => e.id)).size, 1, "the change observed twice has one id")
        const recovered = yield* monitorSettled(w, monitor, "monitor.recovered")
        assert.strictEqual(recovered.alerts.length, 1)
        assert.strictEqual(new Set(recovered.events.map((e) => e.id)).size, 1, "the recovery observed twice has one id")
        assert.strictEqual((yield* settled(w, x!)).alerts.length, 1)
        assert.strictEqual(alertsOf(w, { id: monitor }, "monitor.down").length, 1)
        assert.strictEqual(yield* Effect.promise(third.stop), 0)
      })), 180_000)

  it("a change made while the runner of its shard is killed alerts once after another runner takes the shard over", () =>
    scenario((w) =>
      Effect.gen(function*() {
        // The takeover waits for the killed runner's lock to expire: 8 s here (the default is 15).
        const extra = { POLLER_SHARDS: "1", RUNNER_LOCK_EXPIRATION_S: "8" }
        const runners = [yield* serve(w, "runner", extra), yield* serve(w, "runner", extra)]
        const [x, y] = yield* components(w)
        yield* alertOn(w, runners[0]!, [x!, y!])
        // The one shard runs where it started last (it may have moved when the second runner joined).
        yield* waitFor(10_000, "a runner running the shard", Effect.sync(() => (runners.some((r) => lastShardStart(r) > 0) ? true : undefined)))
        const [owner, other] = runners.toSorted((a, b) => lastShardStart(b) - lastShardStart(a))
        yield* sigkill(owner!)
        const killedAt = Date.now()

        yield* flip(w, x!)
        const taken = yield* settled(w, x!)
        assert.isAbove(lastShardStart(other!), killedAt, "the other runner took the shard over")
        assert.deepStrictEqual(taken.events.map((e) => [e.component?.previous_status, e.component?.current_status]), [["operational", "critical"]])
        assert.strictEqual(taken.alerts.length, 1)
      })), 180_000)
})

describe("the observation a shard starts from", () => {
  it("is the last saved one; a source observed before observations were saved is rebuilt from its rows", () =>
    Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const databaseUrl = yield* freshDatabase
      yield* Effect.gen(function*() {
        yield* Migrations.migratePostgres()
        const sql = yield* SqlClient
        const store = yield* SourceStore
        const [old, saved, never] = yield* sql<PolledSource>`
          INSERT INTO sources (key, name, kind, provider_type, status_page_url, status, last_changed_at)
          VALUES ('old', 'Old', 'catalog', 'statuspage_io', 'https://old.example', 'degraded', '2026-11-20T10:00:00Z'),
                 ('saved', 'Saved', 'catalog', 'statuspage_io', 'https://saved.example', 'operational', NULL),
                 ('never', 'Never', 'catalog', 'statuspage_io', 'https://never.example', 'operational', NULL)
          RETURNING id, key, name, provider_type, status_page_url AS url, poll_interval_s, regions`
        // What an older version left: components with their hierarchy, an open and a resolved incident.
        const [group] = yield* sql<{ id: string }>`INSERT INTO components (source_id, external_id, name, is_group, position, last_changed_at)
          VALUES (${old!.id}::uuid, 'g', 'Git', true, 0, '2026-11-20T09:00:00Z') RETURNING id`
        yield* sql`INSERT INTO components (source_id, external_id, name, status, parent_id, position, last_changed_at)
          VALUES (${old!.id}::uuid, 'api', 'API', 'degraded', ${group!.id}::uuid, 1, '2026-11-20T10:00:00.123Z')`
        yield* sql`INSERT INTO incidents (source_id, external_id, title, status, impact, update_count, started_at, updated_at, resolved_at)
          VALUES (${old!.id}::uuid, 'i1', 'API slow', 'identified', 'minor', 2, '2026-11-20T10:00:00Z', '2026-11-20T10:30:00Z', NULL),
                 (${old!.id}::uuid, 'i0', 'Earlier', 'resolved', 'minor', 3, '2026-11-19T10:00:00Z', '2026-11-19T11:00:00Z', '2026-11-19T11:00:00Z')`
        const snapshot: Snapshot = {
          provider: "statuspage_io", status: "operational", reported_status: "operational", description: "All good",
          components: [{ id: "web", name: "Web", description: "", status: "operational", parent_id: null, is_group: false, position: 0, region: null }],
          incidents: [], maintenances: [], regions: [{ region: "eu", status: "operational" }], warnings: []
        }
        const first = observe(saved!, undefined, snapshot, new Date("2026-11-22T00:00:00.000Z")).observation
        yield* store.applySnapshots([{ source: saved!, ...first, at: new Date("2026-11-22T00:00:00.000Z") }])

        const loaded = yield* store.loadObservations([old!.id, saved!.id, never!.id])
        assert.deepStrictEqual([...loaded.keys()].toSorted(), [old!.id, saved!.id].toSorted())
        assert.deepStrictEqual(loaded.get(saved!.id), first)
        const rebuilt = loaded.get(old!.id)!
        assert.deepStrictEqual(rebuilt.since, {
          source: "2026-11-20T10:00:00.000Z",
          components: { g: "2026-11-20T09:00:00.000Z", api: "2026-11-20T10:00:00.123Z" }
        })
        assert.deepStrictEqual(rebuilt.snapshot.components.map((c) => [c.id, c.status, c.parent_id]), [["g", "operational", null], ["api", "degraded", "g"]])
        assert.deepStrictEqual(rebuilt.snapshot.incidents.map((i) => [i.id, i.status, i.update_count]), [["i1", "identified", 2]])
        // The first snapshot after the upgrade: the API recovered and the incident was resolved meanwhile.
        const next: Snapshot = {
          ...rebuilt.snapshot,
          status: "operational",
          components: rebuilt.snapshot.components.map((c) => ({ ...c, status: "operational" as const })),
          incidents: rebuilt.snapshot.incidents.map((i) => ({ ...i, status: "resolved" as const, resolved_at: "2026-11-22T00:00:00.000Z" }))
        }
        const events = eventsBetween(old!, rebuilt, next, new Date("2026-11-22T00:00:01.000Z"))
        assert.deepStrictEqual(events.map((e) => e.type), ["source.status_changed", "component.status_changed", "incident.resolved"])
      }).pipe(Effect.provide(SourceStore.layer.pipe(Layer.provideMerge(Postgres.layerServer(databaseUrl, { maxConnections: 1 })))))
    }))), 60_000)
})
