import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { Fetcher } from "../../services/adapters/Fetcher.ts"
import * as Probe from "../../services/adapters/Probe.ts"
import { adapterFor } from "../../services/adapters/registry.ts"
import * as Catalog from "../../services/catalog/Catalog.ts"
import { syntheticSpecs } from "../../services/catalog/Synthetic.ts"
import * as Simulator from "../../services/simulator/Server.ts"

class Sim extends Context.Service<Sim, Simulator.Simulator>()("test/Sim") {}

const simLayer = Layer.effect(Sim, Simulator.make({ port: 0, host: "127.0.0.1", sources: 5200 }))

const control = (sim: Simulator.Simulator, method: string, path: string, body?: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(`${sim.url}/_control${path}`, {
      method,
      headers: { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  })

const get = (url: string, headers: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const response = await fetch(url, { headers })
    return { status: response.status, headers: response.headers, text: await response.text() }
  })

/** The first synthetic source in a given format. */
const keyOf = (provider: string) => syntheticSpecs(5200).find((s) => s.provider === provider)!.key

describe("upstream simulator", () => {
  layer(Layer.merge(simLayer, Fetcher.layerOperator), { timeout: 60_000, excludeTestServices: true })("serving 5,200 sources", (it) => {
    it.effect("serves the catalog's 5,200 synthetic sources in every provider format", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const list = yield* Effect.promise(async () =>
          (await (await fetch(`${sim.url}/_control/sources`)).json()) as Array<{ key: string; provider: string }>
        )
        assert.strictEqual(list.length, 5200)
        assert.deepStrictEqual(list.map((s) => s.key), syntheticSpecs(5200).map((s) => s.key))
        assert.strictEqual(new Set(list.map((s) => s.provider)).size, 14)
      }))

    it.effect("every synthetic catalog source is readable by its adapter at its catalog URL", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const entries = Catalog.syntheticEntries(300, sim.url)
        assert.strictEqual(new Set(entries.map((e) => e.provider_type)).size, 14)
        const failures: Array<string> = []
        yield* Effect.forEach(entries, (entry) =>
          Probe.read(adapterFor(entry.provider_type!)!, { url: entry.status_page_url }, new Date()).pipe(
            Effect.catch((error) => Effect.sync(() => failures.push(`${entry.key}: ${String(error)}`)))
          ), { concurrency: 20, discard: true })
        assert.deepStrictEqual(failures, [])
      }))

    it.effect("answers conditional requests with 304 until the source changes", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const key = keyOf("statuspage_io")
        const url = `${sim.url}/s/${key}/api/v2/summary.json`
        const first = yield* get(url)
        assert.strictEqual(first.status, 200)
        const etag = first.headers.get("etag")!
        const lastModified = first.headers.get("last-modified")!
        assert.isTrue(etag.length > 2)
        assert.strictEqual((yield* get(url, { "if-none-match": etag })).status, 304)
        assert.strictEqual((yield* get(url, { "if-modified-since": lastModified })).status, 304)

        const source = yield* control(sim, "GET", `/sources/${key}`)
        const leaf = (source.body["components"] as Array<{ id: string; is_group: boolean }>).find((c) => !c.is_group)!
        assert.strictEqual((yield* control(sim, "POST", `/sources/${key}/components/${leaf.id}`, { status: "critical" })).status, 200)

        const changed = yield* get(url, { "if-none-match": etag })
        assert.strictEqual(changed.status, 200)
        assert.notStrictEqual(changed.headers.get("etag"), etag)
        assert.strictEqual((yield* get(url, { "if-modified-since": lastModified })).status, 200)
      }))

    it.effect("the control API changes what the next fetch returns", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const key = keyOf("statuspage_io")
        const adapter = adapterFor("statuspage_io")!
        const read = Probe.read(adapter, { url: `${sim.url}/s/${key}` }, new Date())
        const source = yield* control(sim, "GET", `/sources/${key}`)
        const leaves = (source.body["components"] as Array<{ id: string; is_group: boolean }>).filter((c) => !c.is_group)
        const target = leaves[1]!.id

        const opened = yield* control(sim, "POST", `/sources/${key}/incidents`, {
          title: "Elevated error rates",
          impact: "major",
          components: [target],
          component_status: "degraded"
        })
        assert.strictEqual(opened.status, 201)
        const incidentId = String(opened.body["id"])
        let snapshot = yield* read
        assert.strictEqual(snapshot.components.find((c) => c.id === target)?.status, "degraded")
        const incident = snapshot.incidents.find((i) => i.title === "Elevated error rates")!
        assert.strictEqual(incident.status, "investigating")
        assert.strictEqual(incident.impact, "major")
        assert.strictEqual(incident.resolved_at, null)
        assert.notStrictEqual(snapshot.status, "operational")

        yield* control(sim, "POST", `/sources/${key}/incidents/${incidentId}/updates`, { status: "identified", body: "Found it" })
        snapshot = yield* read
        assert.strictEqual(snapshot.incidents.find((i) => i.title === "Elevated error rates")?.status, "identified")

        yield* control(sim, "POST", `/sources/${key}/incidents/${incidentId}/resolve`, {})
        // Put back the component the first test broke, too.
        for (const c of leaves) yield* control(sim, "POST", `/sources/${key}/components/${c.id}`, { status: "operational" })
        snapshot = yield* read
        assert.isFalse(snapshot.incidents.some((i) => i.title === "Elevated error rates" && i.resolved_at === null))
        assert.strictEqual(snapshot.components.find((c) => c.id === target)?.status, "operational")
        assert.strictEqual(snapshot.status, "operational")

        const start = new Date(Date.now() + 86_400_000).toISOString()
        const maintenance = yield* control(sim, "POST", `/sources/${key}/maintenances`, {
          title: "Database upgrade",
          scheduled_for: start,
          scheduled_until: new Date(Date.now() + 90_000_000).toISOString(),
          components: [target]
        })
        assert.strictEqual(maintenance.status, 201)
        snapshot = yield* read
        assert.deepStrictEqual(
          snapshot.maintenances.map((m) => [m.title, m.status]),
          [["Database upgrade", "scheduled"]]
        )

        // The same source switched to another provider's format is read by that provider's adapter.
        assert.strictEqual((yield* control(sim, "PUT", `/sources/${key}/provider`, { provider: "instatus" })).status, 200)
        const asInstatus = yield* Probe.read(adapterFor("instatus")!, { url: `${sim.url}/s/${key}` }, new Date())
        assert.strictEqual(asInstatus.provider, "instatus")
        assert.strictEqual((yield* get(`${sim.url}/s/${key}/api/v2/summary.json`)).status, 404)
      }))

    it.effect("rejects bad control requests with a 4xx naming the problem", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const key = keyOf("statuspage_io")
        const badStatus = yield* control(sim, "POST", `/sources/${key}/components/nope`, { status: "on fire" })
        assert.strictEqual(badStatus.status, 400)
        const missing = yield* control(sim, "POST", `/sources/no-such-source/incidents`, { title: "x", impact: "minor" })
        assert.strictEqual(missing.status, 404)
        assert.match(String(missing.body["error"]), /no-such-source/)
        const badProvider = yield* control(sim, "PUT", `/sources/${key}/provider`, { provider: "myspace" })
        assert.strictEqual(badProvider.status, 400)
        assert.match(String(badProvider.body["error"]), /^provider: /)
      }))

    it.effect("simulates errors, latency and timeouts when configured", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const url = `${sim.url}/s/${keyOf("instatus")}/summary.json`
        yield* control(sim, "PUT", "/config", { error_rate: 1 })
        const failed = yield* get(url)
        assert.include([500, 502, 503], failed.status)

        yield* control(sim, "PUT", "/config", { error_rate: 0, latency_min_ms: 150, latency_max_ms: 150 })
        const started = Date.now()
        assert.strictEqual((yield* get(url)).status, 200)
        assert.isAtLeast(Date.now() - started, 140)

        yield* control(sim, "PUT", "/config", { latency_min_ms: 0, latency_max_ms: 0, timeout_rate: 1, timeout_hold_ms: 5_000 })
        const outcome = yield* Effect.promise(() =>
          fetch(url, { signal: AbortSignal.timeout(300) }).then(() => "answered", (e: Error) => e.name)
        )
        assert.strictEqual(outcome, "TimeoutError")
        const stats = yield* control(sim, "GET", "/stats")
        assert.isAtLeast(Number(stats.body["timeouts"]), 1)
        assert.isAtLeast(Number(stats.body["errors"]), 1)
        yield* control(sim, "PUT", "/config", { timeout_rate: 0 })
        const invalid = yield* control(sim, "PUT", "/config", { error_rate: 2 })
        assert.strictEqual(invalid.status, 400)
      }))
  })
})
