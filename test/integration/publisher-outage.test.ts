import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { Redis } from "ioredis"
import * as Fs from "node:fs"
import type { MonitorEvent, StatusEvent } from "../../services/domain/Event.ts"
import type { Snapshot } from "../../services/domain/Snapshot.ts"
import * as RedisBus from "../../services/platform/Bus/Redis.ts"
import { RedisKeys } from "../../services/platform/RedisKeys.ts"
import { Publisher } from "../../services/platform/Publisher.ts"
import { waitFor } from "../support/eventually.ts"
import * as FaultProxy from "../support/faultProxy.ts"
import { tempDir, testRedisUrl, withConfig } from "../support/stores.ts"

const run = Math.random().toString(36).slice(2, 8)
const key = `pub-outage-${run}`
const monitorId = `mon-${run}`

const t = (s: number) => new Date(Date.UTC(2026, 10, 23, 12, 0, s))

/** Ids of this test's entries on the event stream, in order. */
const ours = (entries: Array<[string, Array<string>]>) =>
  entries.map(([, flat]) => flat[flat.indexOf("id") + 1]!).filter((id) => id.includes(run))

const snapshot = (status: "operational" | "critical"): Snapshot => ({
  provider: "statuspage_io",
  status: status === "critical" ? "down" : "operational",
  reported_status: null,
  description: "",
  components: [{ id: "api", name: "API", description: "", status, parent_id: null, is_group: false, position: 0, region: null }],
  incidents: [],
  maintenances: [],
  regions: [],
  warnings: []
})

const componentEvent = (previous: string, current: string, at: string): StatusEvent => ({
  id: `${key}:api:${previous}:${current}`,
  type: "component.status_changed",
  timestamp: at,
  source: { key, name: key },
  component: { id: "api", name: "API", previous_status: previous, current_status: current }
})

const monitorDown = (at: string): MonitorEvent => ({
  id: `${monitorId}:up:down:${at}`,
  type: "monitor.down",
  timestamp: at,
  monitor: { id: monitorId, name: "Shop", url: "https://shop.example" },
  previous_state: "up",
  current_state: "down",
  error: "expected 200-299, got 503",
  http_status: 503,
  response_time_ms: 12
})

/** The publisher on Redis through `proxy`, its changes spilled to `dir`; built in the caller's scope. */
const publisherVia = (proxy: FaultProxy.FaultProxy, dir: string) =>
  Effect.gen(function*() {
    const url = new URL(testRedisUrl)
    url.port = String(proxy.port)
    const services = yield* Layer.build(Publisher.layer.pipe(
      Layer.provide(RedisBus.layer(url.toString())),
      Layer.provide(withConfig({ PUBLISH_SPILL_DIR: dir, PUBLISH_MEMORY_CHANGES: "2", PUBLISH_RETRY_MAX_MS: "300" }))
    ))
    return Context.get(services, Publisher)
  })

describe("Publisher while Redis is away", () => {
  it.live("source and monitor changes wait (in order per subject), survive a shutdown during the outage, and land once when Redis returns", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = yield* tempDir("handover")
      const direct = yield* Effect.acquireRelease(Effect.sync(() => new Redis(testRedisUrl)), (r) => Effect.promise(() => r.quit()))
      const target = new URL(testRedisUrl)
      const proxy = yield* Effect.acquireRelease(
        Effect.promise(() => FaultProxy.start({ host: target.hostname, port: Number(target.port || 6379) })),
        (p) => Effect.promise(() => p.close())
      )
      const events = [
        componentEvent("operational", "critical", t(1).toISOString()),
        componentEvent("critical", "operational", t(3).toISOString())
      ]
      const down = monitorDown(t(2).toISOString())

      // First life: Redis cut before anything is written; the process stops while it is still away.
      yield* Effect.scoped(Effect.gen(function*() {
        const publisher = yield* publisherVia(proxy, dir)
        yield* Effect.promise(() => proxy.cut())
        yield* publisher.changed(key, snapshot("operational"), snapshot("critical"), [events[0]!], t(1))
        yield* publisher.monitorChecked({
          id: monitorId,
          organization_id: "org",
          previous: "up",
          state: "down",
          response_ms: 12,
          http_status: 503,
          error: "expected 200-299, got 503",
          events: [down],
          at: t(2).toISOString()
        })
        yield* publisher.changed(key, snapshot("critical"), snapshot("operational"), [events[1]!], t(3))
        yield* publisher.touched(key, t(4))
        yield* Effect.sleep("1 second")
        const backlog = yield* publisher.backlog
        assert.strictEqual(backlog.memory + backlog.spilled, 3, "three changes held")
        assert.isNotNull(backlog.failingSince)
      }))
      const spilled = Fs.readdirSync(dir).filter((f) => f.endsWith(".ndjson"))
      assert.isAbove(spilled.length, 0, "held changes spilled at shutdown")

      // Second life: Redis is back; what the first one held is applied first, in order, once.
      proxy.pass()
      const publisher = yield* publisherVia(proxy, dir)
      const ids = yield* waitFor(15_000, "the held events on sg:events", Effect.promise(async () => {
        const found = ours(await direct.xrange(RedisKeys.events, "-", "+"))
        return found.length >= 3 ? found : undefined
      }))
      yield* Effect.sleep("500 millis")
      // Each once; a source's changes in order (changes of different subjects may be applied side by side).
      assert.deepStrictEqual(ours(yield* Effect.promise(() => direct.xrange(RedisKeys.events, "-", "+"))), ids)
      assert.deepStrictEqual(ids.filter((id) => id !== down.id), [events[0]!.id, events[1]!.id])
      assert.deepStrictEqual(ids.filter((id) => id === down.id), [down.id])
      const source = yield* Effect.promise(() => direct.hgetall(RedisKeys.source(key)))
      assert.strictEqual(source["status"], "operational")
      assert.strictEqual(source["last_changed_at"], t(3).toISOString())
      const component = JSON.parse((yield* Effect.promise(() => direct.hget(RedisKeys.sourceComponents(key), "api")))!) as { status: string }
      assert.strictEqual(component.status, "operational")
      assert.strictEqual((yield* Effect.promise(() => direct.hgetall(RedisKeys.monitor(monitorId))))["state"], "down")
      assert.deepStrictEqual(Fs.readdirSync(dir).filter((f) => f.endsWith(".ndjson")), [], "spill files deleted once applied")
      const backlog = yield* publisher.backlog
      assert.deepStrictEqual([backlog.memory, backlog.spilled, backlog.failingSince], [0, 0, null])
      yield* Effect.promise(() => direct.del(RedisKeys.source(key), RedisKeys.sourceComponents(key), RedisKeys.monitor(monitorId)))
    })), 60_000)
})
