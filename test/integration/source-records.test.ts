import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { Page } from "../../services/domain/api/Paging.ts"
import type * as Wire from "../../services/domain/api/Sources.ts"
import { waitFor } from "../support/eventually.ts"
import { ApiBase } from "../support/api.ts"
import { addCatalogSource, api, engine, Sim, simulator } from "../support/engine.ts"

/**
 * What the poller reads is stored and served: the real poller reads simulator sources into a real
 * PostgreSQL, and `/sources/{key}/incidents`, `/maintenances` and the source's `regions` must match
 * what the simulator's control API says after each change made through that API.
 */

/** The records as they are on the wire (times as ISO strings). */
type Incident = typeof Wire.Incident.Encoded
type ProviderMaintenance = typeof Wire.ProviderMaintenance.Encoded
type Source = typeof Wire.Source.Encoded

const intervalS = 2
const TestLayer = engine({
  name: "records",
  bus: "redis",
  config: {
    POLLER_INTERVAL_OVERRIDE_S: String(intervalS),
    // Answers are read right after the poller writes them.
    API_CACHE_MS: "0"
  }
}, Layer.mergeAll(simulator, api))

/** A change is served within one poll interval plus the save and a margin for a loaded machine. */
const within = intervalS * 1000 + 8000

const getJson = <A>(url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url)
    return { status: response.status, type: response.headers.get("content-type"), body: (await response.json()) as A }
  })

/** A call of the simulator's control API. */
const control = <A>(method: string, path: string, body?: unknown) =>
  Effect.gen(function*() {
    const sim = yield* Sim
    return yield* Effect.promise(async () => {
      const response = await fetch(`${sim.url}/_control${path}`, {
        method,
        headers: { "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`)
      return (await response.json()) as A
    })
  })

/** A source as the control API shows it (times as ISO strings). */
interface SimSourceJson {
  readonly components: ReadonlyArray<{ id: string; name: string; is_group: boolean; region: string | null }>
  readonly incidents: ReadonlyArray<{
    id: string
    title: string
    status: string
    impact: string
    resolved_at: string | null
    region: string | null
    components: ReadonlyArray<string>
    updates: ReadonlyArray<{ id: string; status: string; body: string; created_at: string }>
  }>
  readonly maintenances: ReadonlyArray<{
    id: string
    title: string
    status: string
    scheduled_for: string
    scheduled_until: string | null
    components: ReadonlyArray<string>
  }>
}

const simSource = (key: string) => control<SimSourceJson>("GET", `/sources/${key}`)


/** The comparable part of an incident: what the provider says, with components by name, updates oldest first. */
const incidentView = (i: Incident) => ({
  provider_id: i.provider_id,
  title: i.title,
  status: i.status,
  impact: i.impact,
  open: i.resolved_at === null,
  components: i.components.map((c) => c.name).toSorted(),
  updates: i.updates.map((u) => ({ provider_id: u.provider_id, status: u.status, body: u.body, created_at: u.created_at }))
})

/**
 * What the API must show for the simulator's incidents. A Statuspage summary lists open incidents only,
 * so a resolved incident keeps the updates published while it was open, and the poller records it as
 * resolved when the summary stops listing it.
 */
const expectedIncidents = (sim: SimSourceJson) =>
  sim.incidents.toSorted((a, b) => b.id.localeCompare(a.id)).map((i) => ({
    provider_id: i.id,
    title: i.title,
    status: i.resolved_at === null ? i.status : "resolved",
    impact: i.impact,
    open: i.resolved_at === null,
    components: i.components.map((id) => sim.components.find((c) => c.id === id)!.name).toSorted(),
    updates: i.updates.filter((u) => i.resolved_at === null || u.status !== "resolved").map((u) => ({
      provider_id: u.id,
      status: u.status,
      body: u.body,
      created_at: u.created_at
    }))
  }))

const maintenanceView = (m: ProviderMaintenance) => ({
  provider_id: m.provider_id,
  title: m.title,
  status: m.status,
  scheduled_for: m.scheduled_for,
  scheduled_until: m.scheduled_until,
  components: m.components.map((c) => c.name).toSorted()
})

const expectedMaintenances = (sim: SimSourceJson) =>
  sim.maintenances.toSorted((a, b) => b.scheduled_for.localeCompare(a.scheduled_for)).map((m) => ({
    provider_id: m.id,
    title: m.title,
    status: m.status,
    scheduled_for: m.scheduled_for,
    scheduled_until: m.scheduled_until,
    components: m.components.map((id) => sim.components.find((c) => c.id === id)!.name).toSorted()
  }))


/** Waits until the served list, viewed through `view`, equals what the simulator now says; returns it. */
const servedMatches = <A, V>(
  what: string,
  url: string,
  view: (a: A) => V,
  expected: Effect.Effect<ReadonlyArray<V>, never, Sim>
) =>
  Effect.gen(function*() {
    let last: unknown
    const want = yield* expected
    return yield* waitFor(within, what, getJson<Page<A>>(url).pipe(Effect.map((r) => {
      last = r.body.data.map(view)
      return JSON.stringify(last) === JSON.stringify(want) ? r.body.data : undefined
    }))).pipe(Effect.tapDefect(() => Effect.sync(() => assert.deepStrictEqual(last, want, what))))
  })

describe("source records", () => {
  layer(TestLayer, { timeout: 180_000, excludeTestServices: true })("the poller against the simulator", (it) => {
    it.effect("incidents with their updates and components, and maintenances, match the simulator after each change", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const apiUrl = yield* ApiBase
        const key = "records-statuspage"
        const page = sim.state.add({ key, name: "Records Statuspage", provider: "statuspage_io", components: 8, groups: 2 })
        yield* addCatalogSource(key, "statuspage_io", page.baseUrl)
        const sql = yield* SqlClient
        yield* waitFor(within, "first check stored", sql<{ n: number }>`
          SELECT components_count AS n FROM sources WHERE key = ${key}`
          .pipe(Effect.map((rows) => ((rows[0]?.n ?? 0) > 0 ? true : undefined))))

        const incidentsUrl = `${apiUrl}/api/v1/sources/${key}/incidents`
        const maintenancesUrl = `${apiUrl}/api/v1/sources/${key}/maintenances`
        const none = yield* getJson<Page<Incident>>(incidentsUrl)
        assert.deepStrictEqual([none.status, none.body], [200, { data: [], next_cursor: null, limit: 50 }])
        assert.deepStrictEqual((yield* getJson<Page<ProviderMaintenance>>(maintenancesUrl)).body.data, [])
        const before = (yield* getJson<Source>(`${apiUrl}/api/v1/sources/${key}`)).body
        assert.deepStrictEqual(before.reliability, { verified: true, realtime: true, historical: false, regional: false })
        assert.deepStrictEqual(before.regions, [])

        const leaves = page.components.filter((c) => !c.is_group)
        const expectIncidents = (what: string) =>
          servedMatches(what, incidentsUrl, incidentView, Effect.map(simSource(key), expectedIncidents))

        // Open an incident on two components.
        const opened = yield* control<{ id: string }>("POST", `/sources/${key}/incidents`, {
          title: "Elevated API errors",
          impact: "major",
          body: "We are investigating elevated error rates.",
          components: [leaves[0]!.id, leaves[1]!.id],
          component_status: "degraded"
        })
        const [first] = yield* expectIncidents("the opened incident")
        assert.strictEqual(first!.resolved_at, null)
        assert.strictEqual(first!.update_count, 1)

        // Add an update.
        yield* control("POST", `/sources/${key}/incidents/${opened.id}/updates`, {
          status: "identified",
          body: "The cause is identified: a faulty deploy."
        })
        yield* expectIncidents("the incident with its second update")
        const served = (yield* getJson<Source>(`${apiUrl}/api/v1/sources/${key}`)).body
        assert.deepStrictEqual([served.incidents_count, served.reliability.historical], [1, true])

        // Resolve it.
        const resolvedAt = Date.now()
        yield* control("POST", `/sources/${key}/incidents/${opened.id}/resolve`, { body: "Fixed." })
        const [resolved] = yield* expectIncidents("the resolved incident")
        assert.isNotNull(resolved!.resolved_at)
        assert.isAtLeast(Date.parse(String(resolved!.resolved_at)), resolvedAt - 1000)
        assert.strictEqual((yield* getJson<Source>(`${apiUrl}/api/v1/sources/${key}`)).body.incidents_count, 0)

        // Schedule a maintenance on one component, and another one without components.
        const soon = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3_600_000)
        yield* control("POST", `/sources/${key}/maintenances`, {
          title: "Database upgrade",
          scheduled_for: soon.toISOString(),
          scheduled_until: new Date(soon.getTime() + 7_200_000).toISOString(),
          components: [leaves[2]!.id]
        })
        yield* control("POST", `/sources/${key}/maintenances`, {
          title: "Network work",
          scheduled_for: new Date(soon.getTime() + 86_400_000).toISOString()
        })
        yield* servedMatches("the scheduled maintenances", maintenancesUrl, maintenanceView,
          Effect.map(simSource(key), expectedMaintenances))

        // A second incident: both are served newest first, a page at a time with the shared cursor.
        yield* control("POST", `/sources/${key}/incidents`, { title: "Slow dashboard", impact: "minor", components: [leaves[3]!.id] })
        yield* expectIncidents("two incidents, newest first")
        const pageOne = (yield* getJson<Page<Incident>>(`${incidentsUrl}?limit=1`)).body
        assert.strictEqual(pageOne.data.length, 1)
        assert.isString(pageOne.next_cursor)
        const pageTwo = (yield* getJson<Page<Incident>>(`${incidentsUrl}?limit=1&cursor=${pageOne.next_cursor}`)).body
        assert.deepStrictEqual(
          [...pageOne.data, ...pageTwo.data].map((i) => i.title),
          ["Slow dashboard", "Elevated API errors"]
        )
        assert.strictEqual(pageTwo.next_cursor, null)

        // What is stored, not only what is served: every update and affected component has its row.
        const [rows] = yield* sql<{ updates: number; links: number; maintenance_links: number }>`
          SELECT (SELECT count(*)::int FROM incident_updates u JOIN incidents i ON i.id = u.incident_id
                  JOIN sources s ON s.id = i.source_id WHERE s.key = ${key}) AS updates,
                 (SELECT count(*)::int FROM incident_components l JOIN incidents i ON i.id = l.incident_id
                  JOIN sources s ON s.id = i.source_id WHERE s.key = ${key}) AS links,
                 (SELECT count(*)::int FROM maintenance_components l JOIN scheduled_maintenances m ON m.id = l.maintenance_id
                  JOIN sources s ON s.id = m.source_id WHERE s.key = ${key}) AS maintenance_links`
        assert.deepStrictEqual(rows, { updates: 3, links: 3, maintenance_links: 1 })
      }))

    it.effect("a region flipped upstream shows on the source, its components and its incidents (AWS)", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const apiUrl = yield* ApiBase
        const key = "records-aws"
        const regions = ["eu-west-1", "us-east-1"]
        const page = sim.state.add({ key, name: "Records AWS", provider: "aws", components: 6, groups: 0, regions })
        yield* addCatalogSource(key, "aws", page.baseUrl)
        const sourceUrl = `${apiUrl}/api/v1/sources/${key}`
        yield* waitFor(within, "first check", getJson<Source>(sourceUrl)
          .pipe(Effect.map((r) => (r.body.last_checked_at !== null ? true : undefined))))

        /** Each region's status as the simulator implies it: the worst impact of its open incidents. */
        const expectedRegions = Effect.map(simSource(key), (s) => {
          const byRegion = new Map<string, string>()
          const rank = ["operational", "degraded", "down"]
          for (const i of s.incidents) {
            if (i.region === null) continue
            const status = i.resolved_at !== null ? "operational" : i.impact === "critical" ? "down" : "degraded"
            const now = byRegion.get(i.region) ?? "operational"
            byRegion.set(i.region, rank.indexOf(status) > rank.indexOf(now) ? status : now)
          }
          return [...byRegion].map(([region, status]) => ({ region, status })).toSorted((a, b) => a.region.localeCompare(b.region))
        })
        const regionsMatch = (what: string) =>
          Effect.gen(function*() {
            const want = yield* expectedRegions
            let last: unknown
            return yield* waitFor(within, what, getJson<Source>(sourceUrl).pipe(Effect.map((r) => {
              last = r.body.regions
              return JSON.stringify(last) === JSON.stringify(want) ? r.body : undefined
            }))).pipe(Effect.tapDefect(() => Effect.sync(() => assert.deepStrictEqual(last, want, what))))
          })

        // Flip eu-west-1: an incident on one of its service-regions.
        const target = page.components.find((c) => c.region === "eu-west-1" && !c.is_group)!
        const opened = yield* control<{ id: string }>("POST", `/sources/${key}/incidents`, {
          title: "Increased error rates",
          impact: "major",
          components: [target.id],
          component_status: "degraded"
        })
        const flipped = yield* regionsMatch("eu-west-1 degraded")
        assert.deepStrictEqual(flipped.regions, [{ region: "eu-west-1", status: "degraded" }])
        assert.strictEqual(flipped.reliability.regional, true)

        // The component carries its region; the incident its region and component.
        const tree = (yield* getJson<{ data: ReadonlyArray<{ name: string; region: string | null; status: string }> }>(
          `${sourceUrl}/components`
        )).body.data
        assert.deepStrictEqual(tree.map((c) => [c.region, c.status]), [["eu-west-1", "degraded"]])
        const incidents = (yield* getJson<Page<Incident>>(`${sourceUrl}/incidents`)).body.data
        assert.deepStrictEqual(
          incidents.map((i) => [i.region, i.resolved_at === null, i.components.map((c) => c.name)]),
          [["eu-west-1", true, [tree[0]!.name]]]
        )
        assert.include(incidents[0]!.title, "Increased error rates")
        /** The eu-west-1 incident's updates as served and as the simulator holds them, by body and status. */
        const updatesOfFlip = Effect.gen(function*() {
          const served = (yield* getJson<Page<Incident>>(`${sourceUrl}/incidents`)).body.data
            .find((i) => i.region === "eu-west-1")!.updates.map((u) => [u.status, u.body])
          const upstream = (yield* simSource(key)).incidents.find((i) => i.id === opened.id)!.updates
            .map((u) => [u.status === "resolved" ? "resolved" : "investigating", u.body])
          return { served, upstream }
        })
        const beforeResolve = yield* updatesOfFlip
        assert.deepStrictEqual(beforeResolve.served, beforeResolve.upstream)

        // Flip a second region down, then resolve the first.
        const other = page.components.find((c) => c.region === "us-east-1" && !c.is_group)!
        yield* control("POST", `/sources/${key}/incidents`, {
          title: "Instances unreachable",
          impact: "critical",
          components: [other.id],
          component_status: "critical"
        })
        yield* regionsMatch("us-east-1 down beside eu-west-1 degraded")
        yield* control("POST", `/sources/${key}/incidents/${opened.id}/resolve`, {})
        const after = yield* regionsMatch("eu-west-1 recovered, us-east-1 still down")
        assert.deepStrictEqual(after.regions, [{ region: "eu-west-1", status: "operational" }, { region: "us-east-1", status: "down" }])
        // The feed's "operating normally" item closes the incident with the resolution's text.
        const resolvedUpdates = yield* updatesOfFlip
        assert.deepStrictEqual(resolvedUpdates.served, resolvedUpdates.upstream)
        assert.strictEqual(resolvedUpdates.served.length, 2)
      }))

    it.effect("an unknown key is a 404 JSON body; bad paging parameters are 400s naming the parameter", () =>
      Effect.gen(function*() {
        const apiUrl = yield* ApiBase
        for (const path of ["incidents", "maintenances"]) {
          const missing = yield* getJson<{ code: string; field: string }>(`${apiUrl}/api/v1/sources/no-such-source/${path}`)
          assert.strictEqual(missing.status, 404)
          assert.match(missing.type ?? "", /^application\/json/)
          assert.deepStrictEqual([missing.body.code, missing.body.field], ["not_found", "key"])
          for (const [query, field] of [["limit=0", "limit"], ["limit=abc", "limit"], ["limit=201", "limit"], ["cursor=bm90LWEtY3Vyc29y", "cursor"]]) {
            const bad = yield* getJson<{ code: string; field: string }>(`${apiUrl}/api/v1/sources/records-statuspage/${path}?${query}`)
            assert.strictEqual(bad.status, 400, `${path}?${query}`)
            assert.deepStrictEqual([bad.body.code, bad.body.field], ["invalid_parameter", field], `${path}?${query}`)
          }
        }
        // Both are in the OpenAPI document.
        const spec = yield* getJson<{ paths: Record<string, unknown> }>(`${apiUrl}/api/v1/openapi.json`)
        assert.includeMembers(Object.keys(spec.body.paths), ["/api/v1/sources/{key}/incidents", "/api/v1/sources/{key}/maintenances"])
      }))
  })
})
