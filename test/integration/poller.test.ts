import { assert, describe, layer } from "@effect/vitest"
import { Duration, Effect, Layer, Queue, Result, Stream } from "effect"
import * as Http from "node:http"
import { SqlClient } from "effect/sql/SqlClient"
import { decodeDelta } from "../../services/domain/Event.ts"
import { ClickHouse } from "../../services/platform/ClickHouse.ts"
import { Bus } from "../../services/platform/Bus.ts"
import { PollerStats } from "../../services/poller/PollerStats.ts"
import { RedisKeys } from "../../services/platform/RedisKeys.ts"
import { ShardReloads } from "../../services/domain/ShardReloads.ts"
import { ApiBase } from "../support/api.ts"
import { addCatalogSource, api, engine, Sim, simulator } from "../support/engine.ts"

const intervalS = 2

/** Real PostgreSQL, Redis and chDB, migrated (the deltas and events of this run only); the simulator; one runner with the poller; the sources API. */
const TestLayer = engine({ name: "poller", bus: "redis", clearEvents: true, config: { POLLER_INTERVAL_OVERRIDE_S: String(intervalS) } }, Layer.mergeAll(simulator, api))

/** Polls `check` every 100 ms until it returns a value, for at most `ms`. */
const eventually = <A>(ms: number, check: Effect.Effect<A | undefined, unknown, SqlClient | ClickHouse | Bus>) =>
  Effect.gen(function*() {
    const started = Date.now()
    for (;;) {
      const value = yield* check
      if (value !== undefined) return { value, elapsedMs: Date.now() - started }
      if (Date.now() - started > ms) return yield* Effect.die(new Error(`not within ${ms} ms`))
      yield* Effect.sleep(Duration.millis(100))
    }
  })


/** How long a change upstream may take to be seen: one interval and 2 s. */
const limitOf = (intervalS: number) => intervalS * 1000 + 2000

describe("poller", () => {
  layer(TestLayer, { timeout: 120_000, excludeTestServices: true })("with the simulator", (it) => {
    it.effect("a flip upstream reaches PostgreSQL, a Redis delta and an event within one interval + 2 s", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const sql = yield* SqlClient
        const bus = yield* Bus
        const page = sim.state.add({ key: "flip-statuspage", name: "Flip Statuspage", provider: "statuspage_io", components: 6 })
        const feed = sim.state.add({ key: "flip-feed", name: "Flip Feed", provider: "rss", components: 0, groups: 0 })
        yield* addCatalogSource(page.key, "statuspage_io", page.baseUrl)
        yield* addCatalogSource(feed.key, "rss", `${feed.baseUrl}/history.atom`)

        // Both are picked up without a restart and checked.
        yield* eventually(10_000, sql<{ n: number }>`
          SELECT count(*)::int AS n FROM sources LEFT JOIN source_checks ON source_id = id WHERE key IN ('flip-statuspage', 'flip-feed') AND checked_at IS NOT NULL`
          .pipe(Effect.map((rows) => (rows[0]!.n === 2 ? true : undefined))))
        yield* eventually(5_000, sql<{ n: number }>`SELECT count(*)::int AS n FROM components WHERE external_id LIKE 'flipst%'`
          .pipe(Effect.map((rows) => (rows[0]!.n > 0 ? true : undefined))))

        yield* bus.xgroupCreate(RedisKeys.events, "test", "$")
        const deltas = yield* Queue.unbounded<string>()
        const subscription = yield* bus.subscribe(RedisKeys.deltas)
        yield* subscription.pipe(Stream.runForEach((m) => Queue.offer(deltas, m)), Effect.forkScoped)

        const target = page.components.find((c) => !c.is_group)!
        const flippedAt = Date.now()
        sim.state.openIncident(page.key, { title: "API down", impact: "critical", components: [target.id], component_status: "critical" })
        sim.state.openIncident(feed.key, { title: "Delays in delivery", impact: "minor" })

        const limit = intervalS * 1000 + 2000
        const pageStatus = yield* eventually(limit, sql<{ status: string }>`
          SELECT status FROM components WHERE external_id = ${target.id}`
          .pipe(Effect.map((rows) => (rows[0]?.status === "critical" ? rows[0].status : undefined))))
        const feedStatus = yield* eventually(limit, sql<{ status: string; incidents_count: number }>`
          SELECT status, incidents_count FROM sources WHERE key = 'flip-feed'`
          .pipe(Effect.map((rows) => (rows[0]?.status !== "operational" ? rows[0] : undefined))))
        assert.strictEqual(pageStatus.value, "critical")
        const apiUrl = yield* ApiBase
        const served = yield* Effect.promise(async () =>
          (await (await fetch(`${apiUrl}/api/v1/sources/flip-feed`)).json()) as { status: string; incidents_count: number }
        )
        const tree = yield* Effect.promise(async () =>
          (await (await fetch(`${apiUrl}/api/v1/sources/flip-statuspage/components`)).json()) as {
            data: Array<{ children: Array<{ name: string; status: string }> }>
          }
        )
        assert.deepStrictEqual(feedStatus.value, { status: "degraded", incidents_count: 1 })
        assert.deepStrictEqual([served.status, served.incidents_count], ["degraded", 1])
        assert.strictEqual(tree.data.flatMap((g) => g.children).find((c) => c.name === target.name)?.status, "critical")

        const events = yield* eventually(limit, bus.xreadgroup(RedisKeys.events, "test", "t1", { count: 100, blockMs: 200 })
          .pipe(Effect.map((entries) => (entries.length > 0 ? entries : undefined))))
        const all = [...events.value]
        // Collect whatever else arrived within the limit.
        for (let i = 0; i < 5; i++) all.push(...(yield* bus.xreadgroup(RedisKeys.events, "test", "t1", { count: 100, blockMs: 200 })))
        const types = all.map((e) => `${JSON.parse(e.fields["payload"]!).source.key} ${e.fields["type"]}`)
        assert.include(types, "flip-statuspage component.status_changed")
        assert.include(types, "flip-statuspage incident.created")
        assert.include(types, "flip-feed incident.created")
        const changed = all.map((e) => JSON.parse(e.fields["payload"]!)).find((e) => e.component?.id === target.id)
        assert.deepStrictEqual(changed.component, {
          id: target.id,
          name: target.name,
          previous_status: "operational",
          current_status: "critical"
        })
        assert.strictEqual(changed.incident.title, "API down")
        assert.isBelow(Date.now() - flippedAt, limit + 2000)

        const received: Array<{ key: string; status: string }> = []
        while (received.length < 2) {
          const message = yield* Queue.take(deltas).pipe(Effect.timeout("5 seconds"))
          // Every delta is what the domain Schema says (services/domain/Event.ts).
          const decoded = decodeDelta(message)
          assert.isTrue(Result.isSuccess(decoded), message)
          const delta = Result.getOrThrow(decoded)
          if (delta.kind === "source" && delta.key.startsWith("flip-") && !received.some((d) => d.key === delta.key)) received.push(delta)
        }
        assert.deepStrictEqual(received.map((d) => d.key).toSorted(), ["flip-feed", "flip-statuspage"])

        const state = yield* bus.hgetall(RedisKeys.source("flip-statuspage"))
        // A critical incident makes the source down (services/adapters/README.md, status rules).
        assert.strictEqual(state["status"], "down")
      }))

    it.effect("a source added with a bare URL is detected by its shard, stored, then polled; an unreachable one backs off", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const sql = yield* SqlClient
        const page = sim.state.add({ key: "bare-url", name: "Bare URL", provider: "instatus", components: 3, groups: 0 })
        yield* sql`INSERT INTO sources (key, name, kind, status_page_url, check_class, poll_interval_s)
          VALUES ('bare-url', 'Bare URL', 'catalog', ${page.baseUrl}, 'critical', 30),
                 ('bare-unreachable', 'Unreachable', 'catalog', 'http://127.0.0.1:9/status', 'critical', 30)`
        yield* ShardReloads.use((reloads) => reloads.sources(["bare-url", "bare-unreachable"]))
        const detected = yield* eventually(15_000, sql<{ provider_type: string | null; components_count: number }>`
          SELECT provider_type, components_count FROM sources WHERE key = 'bare-url' AND components_count > 0`
          .pipe(Effect.map((rows) => rows[0])))
        assert.deepStrictEqual(detected.value, { provider_type: "instatus", components_count: 3 })
        const failed = yield* eventually(15_000, sql<{ provider_type: string | null; last_error: string | null }>`
          SELECT provider_type, error AS last_error FROM sources LEFT JOIN source_checks ON source_id = id WHERE key = 'bare-unreachable' AND error IS NOT NULL`
          .pipe(Effect.map((rows) => rows[0])))
        assert.strictEqual(failed.value.provider_type, null)
        assert.match(failed.value.last_error ?? "", /^detection failed: /)
      }))

    it.effect("a multi-document page whose one document changed while the other answered 304 is read with the kept body of the other", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const sql = yield* SqlClient
        const page = sim.state.add({ key: "split-instatus", name: "Split Instatus", provider: "instatus", components: 3, groups: 0 })
        sim.state.openIncident(page.key, { title: "Slow logins", impact: "minor" })
        // In front of the simulator: the summary (which alone carries the incident) frozen at its first
        // answer with its own ETag, so that it answers 304 from then on while the components document moves.
        const served = { summary304: 0, components200: 0 }
        let frozen: string | undefined
        const server = yield* Effect.acquireRelease(
          Effect.callback<Http.Server>((resume) => {
            const s = Http.createServer((req, res) => {
              void (async () => {
                if (req.url === "/summary.json") {
                  frozen ??= await (await fetch(`${page.baseUrl}/summary.json`)).text()
                  if (req.headers["if-none-match"] === "\"frozen\"") {
                    served.summary304++
                    res.writeHead(304, { etag: "\"frozen\"" })
                    return res.end()
                  }
                  res.writeHead(200, { "content-type": "application/json", etag: "\"frozen\"" })
                  return res.end(frozen)
                }
                const upstream = await fetch(`${page.baseUrl}${req.url}`, {
                  headers: req.headers["if-none-match"] ? { "if-none-match": req.headers["if-none-match"] } : {}
                })
                if (upstream.status === 200) served.components200++
                res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "", etag: upstream.headers.get("etag") ?? "" })
                res.end(upstream.status === 304 ? undefined : await upstream.text())
              })()
            })
            s.listen(0, "127.0.0.1", () => {
              resume(Effect.succeed(s))
            })
          }),
          (s) =>
            Effect.callback<void>((resume) => {
              s.close(() => resume(Effect.void))
            })
        )
        const port = (server.address() as { port: number }).port
        yield* addCatalogSource(page.key, "instatus", `http://127.0.0.1:${port}/`)
        yield* eventually(10_000, sql<{ n: number }>`
          SELECT incidents_count AS n FROM sources WHERE key = 'split-instatus' AND components_count = 3`
          .pipe(Effect.map((rows) => (rows[0]?.n === 1 ? true : undefined))))
        // A check answered 304 on both, then only the components document changes.
        yield* eventually(limitOf(intervalS), Effect.sync(() => (served.summary304 > 0 ? true : undefined)))
        const target = page.components[0]!
        sim.state.setComponent(page.key, target.id, { status: "critical" })
        const seen = yield* eventually(limitOf(intervalS), sql<{ status: string; incidents: number }>`
          SELECT c.status, s.incidents_count AS incidents FROM components c JOIN sources s ON s.id = c.source_id
          WHERE s.key = 'split-instatus' AND c.external_id = ${target.id}`
          .pipe(Effect.map((rows) => (rows[0]?.status === "critical" ? rows[0] : undefined))))
        // The incident is still there: it came from the kept summary (answered 304 since its first read),
        // which the parse needed beside the changed components (with an empty body instead, this fails).
        assert.deepStrictEqual(seen.value, { status: "critical", incidents: 1 })
        assert.isAtLeast(served.components200, 2)
        const errors = yield* sql<{ error: string | null }>`
          SELECT error FROM source_checks JOIN sources ON id = source_id WHERE key = 'split-instatus'`
        assert.strictEqual(errors[0]?.error ?? null, null)
      }))

    it.effect("every check writes result rows to ClickHouse, and stats count them", () =>
      Effect.gen(function*() {
        const ch = yield* ClickHouse
        const stats = yield* PollerStats
        const counted = yield* eventually(5_000, ch.query(
          "SELECT count() AS n FROM check_results WHERE subject_id = 'flip-statuspage' AND component_id = ''"
        ).pipe(Effect.map((rows) => (Number(rows[0]!["n"]) >= 3 ? Number(rows[0]!["n"]) : undefined))))
        assert.isAtLeast(counted.value, 3)
        const snapshot = yield* stats.snapshot
        assert.isAtLeast(snapshot.checks, counted.value)
        assert.isAtLeast(snapshot.changes, 4)
      }))
  })
})
