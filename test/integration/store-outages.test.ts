import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Redis } from "ioredis"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import type { StatusEvent } from "../../services/domain/Event.ts"
import * as RedisBus from "../../services/platform/Bus/Redis.ts"
import { ClickHouse } from "../../services/platform/ClickHouse.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { Publisher } from "../../services/platform/Publisher.ts"
import { PollerStats } from "../../services/poller/PollerStats.ts"
import { RedisKeys } from "../../services/platform/RedisKeys.ts"
import { ResultWriter } from "../../services/poller/ResultWriter.ts"
import type { SimSource } from "../../services/simulator/Model.ts"
import { waitFor } from "../support/eventually.ts"
import * as FaultProxy from "../support/faultProxy.ts"
import { type HttpReceiver, startHttpReceiver } from "../support/receivers.ts"
import { call, newTenant } from "../support/api.ts"
import { freshDatabase, tempDir, testRedisUrl } from "../support/stores.ts"
import { api, engineOver, notifier, Sim, simulator } from "../support/engine.ts"

/**
 * Issue 12, "Redis outage" and "PostgreSQL outage": one in-process statusgrid
 * (poller shards, notifier, API) on real PostgreSQL, Redis and chDB, polling
 * 100 simulator sources every 2 s, with PostgreSQL and Redis each behind a
 * TCP fault proxy that takes the store away for 30 s. Each test prints one
 * JSON line with its figures.
 */

const outageMs = 30_000
const sourceCount = 100
const run = Math.random().toString(36).slice(2, 8)
const keyOf = (i: number) => `outage-${run}-${String(i).padStart(3, "0")}`

/** Where the publisher spills changes; few are kept in memory, so that the outage goes through the disk. */
const spillDir = Path.join(Os.tmpdir(), `statusgrid-outage-handover-${run}`)
const spillFiles = () => (Fs.existsSync(spillDir) ? Fs.readdirSync(spillDir).filter((f) => f.endsWith(".ndjson")).length : 0)

class Proxies extends Context.Service<Proxies, { readonly redis: FaultProxy.FaultProxy; readonly postgres: FaultProxy.FaultProxy }>()(
  "test/store-outages/Proxies"
) {}
class Hook extends Context.Service<Hook, HttpReceiver>()("test/store-outages/Hook") {}
/** A client straight to the test's Redis (not through the proxy), to read what statusgrid left there. */
class Direct extends Context.Service<Direct, Redis>()("test/store-outages/Direct") {}

const via = (url: string, proxy: FaultProxy.FaultProxy) => {
  const u = new URL(url)
  u.hostname = "127.0.0.1"
  u.port = String(proxy.port)
  return u.toString()
}

/** The two proxies, the stores statusgrid reaches through them, and a direct Redis client. */
const stores = Layer.unwrap(Effect.gen(function*() {
  const database = yield* freshDatabase
  const redis = yield* FaultProxy.scopedTo(testRedisUrl)
  const postgres = yield* FaultProxy.scopedTo(database)
  return Layer.mergeAll(
    Layer.succeed(Proxies, Proxies.of({ redis, postgres })),
    Postgres.layerServer(via(database, postgres), { maxConnections: 8 }),
    Publisher.layer.pipe(Layer.provideMerge(RedisBus.layer(via(testRedisUrl, redis)))),
    Layer.unwrap(Effect.map(tempDir("outage-ch"), (dir) => ClickHouse.layerEmbedded(dir, "statusgrid"))),
    Layer.effect(Direct, Effect.acquireRelease(Effect.sync(() => new Redis(testRedisUrl)), (r) => Effect.promise(() => r.quit()))),
    Layer.effectDiscard(Effect.addFinalizer(() => Effect.sync(() => {
      Fs.rmSync(spillDir, { recursive: true, force: true })
      Fs.rmSync(`${spillDir}.away`, { recursive: true, force: true })
    })))
  )
}))

const TestLayer = engineOver(stores, {
  name: "outage",
  config: {
    POLLER_INTERVAL_OVERRIDE_S: "2",
    POLLER_REFRESH_MS: "2000",
    NOTIFIER_POLL_MS: "100",
    NOTIFIER_ALLOW_PRIVATE: "true",
    PUBLISH_MEMORY_CHANGES: "8",
    PUBLISH_SPILL_DIR: spillDir
  }
}, Layer.mergeAll(
  notifier,
  api,
  simulator,
  Layer.effect(Hook, Effect.acquireRelease(Effect.promise(() => startHttpReceiver(() => ({ status: 200 }))), (r) => Effect.promise(() => r.close())))
))

/** Component status events of a source on `sg:events`, in stream order: `<component external id>:<status>`. */
const componentEvents = (redis: Redis) =>
  Effect.promise(async () => {
    const entries = await redis.xrange(RedisKeys.events, "-", "+")
    const bySource = new Map<string, Array<{ id: string; change: string }>>()
    for (const [, flat] of entries) {
      const payload = flat[flat.indexOf("payload") + 1]
      if (payload === undefined) continue
      const event = JSON.parse(payload) as StatusEvent
      if (event.type !== "component.status_changed" || !event.source.key.startsWith(`outage-${run}-`)) continue
      const list = bySource.get(event.source.key) ?? []
      list.push({ id: event.id, change: `${event.component!.id}:${event.component!.current_status}` })
      bySource.set(event.source.key, list)
    }
    return bySource
  })

/** A component's status in the Redis hash of its source, as the API serves it. */
const hashStatus = (redis: Redis, key: string, componentId: string) =>
  Effect.promise(async () => {
    const raw = await redis.hget(RedisKeys.sourceComponents(key), componentId)
    return raw === null ? undefined : (JSON.parse(raw) as { status: string }).status
  })

const checksSoFar = PollerStats.use((s) => s.snapshot).pipe(Effect.map((s) => s.checksSinceStart))
const rowsSoFar = ResultWriter.use((w) => w.stats).pipe(Effect.map((s) => s.written_rows))

/** Statuspage-style simulator sources in PostgreSQL; their first checks have reached PostgreSQL and Redis. */
const setUp = Effect.gen(function*() {
  const sim = yield* Sim
  const sql = yield* SqlClient
  const direct = yield* Direct
  const pages: Array<SimSource> = []
  for (let i = 0; i < sourceCount; i++) {
    const page = sim.state.add({ key: keyOf(i), name: `Outage ${i}`, provider: "statuspage_io", components: 3, groups: 0 })
    pages.push(page)
    yield* sql`INSERT INTO sources (key, name, kind, provider_type, status_page_url, check_class, poll_interval_s)
      VALUES (${page.key}, ${page.key}, 'catalog', 'statuspage_io', ${page.baseUrl}, 'critical', 30)`
  }
  yield* waitFor(60_000, "every source checked once, in PostgreSQL and Redis", Effect.gen(function*() {
    const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM sources WHERE key LIKE ${`outage-${run}-%`} AND components_count > 0`
    if (row!.n < sourceCount) return undefined
    for (const page of pages) if ((yield* Effect.promise(() => direct.exists(RedisKeys.sourceComponents(page.key)))) === 0) return undefined
    return true
  }))
  return pages
})

/** A pro organization with the given components in a stack and a rule sending component.critical to the webhook. */
const alerting = (componentIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const hook = yield* Hook
    const tenant = yield* newTenant("pro")
    const key = tenant.keys.admin
    const stack = yield* call("POST", "/stacks", { key, body: { name: "Watched" } })
    assert.strictEqual(stack.status, 201)
    for (const id of componentIds) {
      assert.strictEqual((yield* call("POST", `/stacks/${stack.body.id}/items`, { key, body: { kind: "component", component_id: id } })).status, 201)
    }
    const channel = yield* call("POST", "/channels", { key, body: { type: "webhook", name: "Ops", settings: { url: `${hook.url}/hook` } } })
    assert.strictEqual(channel.status, 201)
    const rule = yield* call("POST", "/rules", { key, body: { name: "Critical", triggers: ["component.critical"], channel_ids: [channel.body.id] } })
    assert.strictEqual(rule.status, 201)
  })

const componentIdOf = (sourceKey: string, externalId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const [row] = yield* sql<{ id: string }>`
      SELECT c.id FROM components c JOIN sources s ON s.id = c.source_id WHERE s.key = ${sourceKey} AND c.external_id = ${externalId}`
    return row!.id
  })

/** Webhook bodies received so far, as `<component id>` of each alert. */
const alertedComponents = Effect.gen(function*() {
  const hook = yield* Hook
  return hook.requests.map((r) => (JSON.parse(r.body.toString("utf8")) as { component: { id: string } }).component.id)
})

const leaves = (page: SimSource) => page.components.filter((c) => !c.is_group)

/** The new description of the `i`th source's first leaf in the save-queue test. */
const described = (i: number) => `Packed ${i}: λ \\ "quoted" & <b>\nline two`

describe("store outages", () => {
  layer(TestLayer, { timeout: 300_000, excludeTestServices: true })("statusgrid behind fault proxies", (it) => {
    let pages: Array<SimSource> = []
    it.effect("Redis cut for 30 s while 100 sources are polled every 2 s and 10 flip: every flip is published once, in order, and alerts once", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const direct = yield* Direct
        const { redis } = yield* Proxies
        pages = yield* setUp
        const flipped = pages.slice(0, 10)
        const watched = yield* Effect.forEach(flipped, (page) => componentIdOf(page.key, leaves(page)[0]!.id))
        yield* alerting(watched)
        const alertsBefore = (yield* alertedComponents).length

        const checks0 = yield* checksSoFar
        const rows0 = yield* rowsSoFar
        yield* Effect.promise(() => redis.cut())
        const cutAt = Date.now()
        // 10 sources flip a component to critical; 5 of them then a second one to degraded (order per source).
        yield* Effect.sleep("4 seconds")
        for (const page of flipped) sim.state.setComponent(page.key, leaves(page)[0]!.id, { status: "critical" })
        // Beyond 8 changes in memory, they go to disk.
        const spilled = yield* waitFor(10_000, "changes spilled to disk", Effect.sync(() => spillFiles() || undefined))
        // Then the disk goes too: a change that neither memory nor disk takes stays with its shard and is offered
        // again at every check (answered 304 Not Modified meanwhile, so the page is not read again).
        // (The directory moved aside, a file in its place: writes fail, the files already spilled stay.)
        Fs.renameSync(spillDir, `${spillDir}.away`)
        Fs.writeFileSync(spillDir, "")
        yield* Effect.sleep(14_000 - (Date.now() - cutAt))
        for (const page of flipped.slice(0, 5)) sim.state.setComponent(page.key, leaves(page)[1]!.id, { status: "degraded" })
        yield* Effect.sleep(22_000 - (Date.now() - cutAt))
        Fs.rmSync(spillDir)
        Fs.renameSync(`${spillDir}.away`, spillDir)
        yield* Effect.sleep(outageMs - (Date.now() - cutAt))
        const duringCut = (yield* checksSoFar) - checks0
        redis.pass()
        const passedAt = Date.now()
        // Checks every 2 s: about 15 per source; the shards do not wait on Redis.
        assert.isAbove(duringCut, sourceCount * 10, "polling went on during the cut")

        const expected = new Map(flipped.map((page, i) => [
          page.key,
          i < 5 ? [`${leaves(page)[0]!.id}:critical`, `${leaves(page)[1]!.id}:degraded`] : [`${leaves(page)[0]!.id}:critical`]
        ]))
        yield* waitFor(60_000, "every flip on sg:events and in the Redis hashes", Effect.gen(function*() {
          const events = yield* componentEvents(direct)
          for (const [key, changes] of expected) if ((events.get(key)?.length ?? 0) < changes.length) return undefined
          for (const page of flipped) if ((yield* hashStatus(direct, page.key, leaves(page)[0]!.id)) !== "critical") return undefined
          return true
        }))
        const recoveredS = (Date.now() - passedAt) / 1000
        yield* waitFor(60_000, "an alert per flipped component", alertedComponents.pipe(
          Effect.map((ids) => (ids.length - alertsBefore >= watched.length ? true : undefined))
        ))
        // Time for a duplicate to show up, if one were coming.
        yield* Effect.sleep("3 seconds")

        const events = yield* componentEvents(direct)
        for (const [key, changes] of expected) {
          assert.deepStrictEqual(events.get(key)?.map((e) => e.change), changes, `${key}: each flip once, in order`)
        }
        for (const page of pages.slice(10)) assert.isUndefined(events.get(page.key), `${page.key} did not change`)
        for (const [i, page] of flipped.entries()) {
          assert.strictEqual(yield* hashStatus(direct, page.key, leaves(page)[0]!.id), "critical")
          if (i < 5) assert.strictEqual(yield* hashStatus(direct, page.key, leaves(page)[1]!.id), "degraded")
        }
        const alerted = (yield* alertedComponents).slice(alertsBefore)
        assert.deepStrictEqual(alerted.toSorted(), watched.toSorted(), "one alert per flipped component")
        console.log(JSON.stringify({
          test: "redis-outage",
          outage_s: outageMs / 1000,
          checks_made: (yield* checksSoFar) - checks0,
          checks_during_outage: duringCut,
          spill_files_during_outage: spilled,
          rows_written: (yield* rowsSoFar) - rows0,
          events_published: [...events.values()].reduce((n, list) => n + list.length, 0),
          events_expected: [...expected.values()].reduce((n, list) => n + list.length, 0),
          events_delivered: alerted.length,
          seconds_to_recover: recoveredS
        }))
      }), 240_000)

    it.effect("PostgreSQL cut for 30 s: polling and result rows go on, snapshots and marks are saved after, the refresh loop still runs", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const sql = yield* SqlClient
        const { postgres } = yield* Proxies
        if (pages.length === 0) pages = yield* setUp
        const flipped = pages.slice(20, 25)
        const watched = yield* Effect.forEach(flipped, (page) => componentIdOf(page.key, leaves(page)[2]!.id))
        yield* alerting(watched)
        const alertsBefore = (yield* alertedComponents).length

        const checks0 = yield* checksSoFar
        const rows0 = yield* rowsSoFar
        yield* Effect.promise(() => postgres.cut())
        const cutAt = Date.now()
        yield* Effect.sleep("4 seconds")
        for (const page of flipped) sim.state.setComponent(page.key, leaves(page)[2]!.id, { status: "critical" })
        yield* Effect.sleep(outageMs - (Date.now() - cutAt))
        const checksDuring = (yield* checksSoFar) - checks0
        const rowsDuring = (yield* rowsSoFar) - rows0
        postgres.pass()
        const passedAt = Date.now()

        // Rows kept flowing to ClickHouse during the cut (checks every 2 s: about 15 per source).
        assert.isAbove(checksDuring, sourceCount * 10, "polling went on")
        assert.isAbove(rowsDuring, sourceCount * 10, "result rows went on")

        // Snapshots seen during the cut reach PostgreSQL, and every source's check time moves past the cut.
        yield* waitFor(60_000, "snapshots and check times saved", Effect.gen(function*() {
          const rows = yield* sql<{ key: string; status: string }>`
            SELECT s.key, c.status FROM components c JOIN sources s ON s.id = c.source_id
            WHERE c.id IN ${sql.in(watched)}`
          if (rows.length !== watched.length || rows.some((r) => r.status !== "critical")) return undefined
          const [stale] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM sources LEFT JOIN source_checks ON source_id = id
            WHERE key LIKE ${`outage-${run}-%`} AND (checked_at IS NULL OR checked_at < ${new Date(passedAt).toISOString()}::timestamptz)`
          return stale!.n === 0 ? true : undefined
        }))
        const recoveredS = (Date.now() - passedAt) / 1000

        // The refresh loop survived: a source added after the outage, told to no shard, is checked.
        const late = sim.state.add({ key: keyOf(sourceCount), name: "Late", provider: "statuspage_io", components: 2, groups: 0 })
        yield* sql`INSERT INTO sources (key, name, kind, provider_type, status_page_url, check_class, poll_interval_s)
          VALUES (${late.key}, 'Late', 'catalog', 'statuspage_io', ${late.baseUrl}, 'critical', 30)`
        yield* waitFor(30_000, "the source added after the outage checked", sql<{ n: number }>`
          SELECT count(*)::int AS n FROM sources LEFT JOIN source_checks ON source_id = id WHERE key = ${late.key} AND checked_at IS NOT NULL`.pipe(
          Effect.map((rows) => (rows[0]!.n === 1 ? true : undefined))
        ))

        // The flips seen during the cut alert once PostgreSQL is back.
        yield* waitFor(60_000, "an alert per flipped component", alertedComponents.pipe(
          Effect.map((ids) => (ids.length - alertsBefore >= watched.length ? true : undefined))
        ))
        yield* Effect.sleep("2 seconds")
        const alerted = (yield* alertedComponents).slice(alertsBefore)
        assert.deepStrictEqual(alerted.toSorted(), watched.toSorted(), "one alert per flipped component")
        console.log(JSON.stringify({
          test: "postgres-outage",
          outage_s: outageMs / 1000,
          checks_made: (yield* checksSoFar) - checks0,
          checks_during_outage: checksDuring,
          rows_written: (yield* rowsSoFar) - rows0,
          rows_written_during_outage: rowsDuring,
          events_delivered: alerted.length,
          seconds_to_recover: recoveredS
        }))
      }), 240_000)

    it.effect("PostgreSQL cut while 600 more sources change: changes waiting beyond a batch wait packed and are all saved after, as observed", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const sql = yield* SqlClient
        const stats = yield* PollerStats
        const { postgres } = yield* Proxies
        const count = 600
        const queued = Array.from({ length: count }, (_, i) =>
          sim.state.add({ key: `queue-${run}-${String(i).padStart(3, "0")}`, name: `Queue ${i}`, provider: "statuspage_io", components: 3, groups: 0 }))
        yield* sql`INSERT INTO sources (key, name, kind, provider_type, status_page_url, check_class, poll_interval_s)
          SELECT key, key, 'catalog', 'statuspage_io', url, 'critical', 30
          FROM unnest(${queued.map((page) => page.key)}::text[], ${queued.map((page) => page.baseUrl)}::text[]) AS t(key, url)`
        yield* waitFor(90_000, "the 600 sources' first snapshots saved", Effect.gen(function*() {
          const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM sources WHERE key LIKE ${`queue-${run}-%`} AND components_count > 0`
          return row!.n === count && stats.unsaved() === 0 ? true : undefined
        }))

        yield* Effect.promise(() => postgres.cut())
        // Each source's first leaf goes critical, with a new description: wording only the snapshot carries.
        queued.forEach((page, i) => {
          leaves(page)[0]!.description = described(i)
          sim.state.setComponent(page.key, leaves(page)[0]!.id, { status: "critical" })
        })
        // Two shards: about 300 changes each, so a third of each shard's wait packed behind its first batch.
        let waitedMost = 0
        yield* waitFor(60_000, "every change waiting for PostgreSQL", Effect.sync(() => {
          waitedMost = Math.max(waitedMost, stats.unsaved())
          return waitedMost >= count ? true : undefined
        }))
        postgres.pass()
        const passedAt = Date.now()

        // Every change as the snapshot carried it: the component's status and description, every character,
        // in its row and in the observation the next shard compares with.
        const keys = queued.map((page) => page.key)
        const ids = queued.map((page) => leaves(page)[0]!.id)
        const descriptions = queued.map((_, i) => described(i))
        yield* waitFor(90_000, "every waiting change saved", Effect.gen(function*() {
          const [row] = yield* sql<{ components: number; observations: number }>`
            SELECT count(*) FILTER (WHERE c.status = 'critical' AND c.description = w.description)::int AS components,
                   count(*) FILTER (WHERE o.snapshot @> jsonb_build_object('components', jsonb_build_array(
                     jsonb_build_object('id', w.external_id, 'status', 'critical', 'description', w.description))))::int AS observations
            FROM unnest(${keys}::text[], ${ids}::text[], ${descriptions}::text[]) AS w(key, external_id, description)
            JOIN sources s ON s.key = w.key
            JOIN components c ON c.source_id = s.id AND c.external_id = w.external_id
            JOIN source_observations o ON o.source_id = s.id`
          return row!.components === count && row!.observations === count && stats.unsaved() === 0 ? true : undefined
        }))
        console.log(JSON.stringify({ test: "postgres-outage-save-queue", changed: count, most_waiting: waitedMost, seconds_to_save: (Date.now() - passedAt) / 1000 }))
      }), 300_000)
  })
})
