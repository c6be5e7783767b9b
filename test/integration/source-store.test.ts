import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { SqlClient } from "effect/sql/SqlClient"
import type { Snapshot, SnapshotIncident, SnapshotMaintenance } from "../../services/domain/Snapshot.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import * as SqlFiles from "../../services/platform/SqlFiles.ts"
import { type PolledSource, type SnapshotChange, SourceStore } from "../../services/poller/SourceStore.ts"
import { freshDatabase, tempDir, withTempDataDir } from "../support/stores.ts"

/** A change's `since`: every status began at the change (these tests do not compare observations). */
const sinceAt = (d: Date) => ({ source: d.toISOString(), components: {} })

/**
 * SourceStore.applySnapshots on a real PostgreSQL: what a changed snapshot leaves in the records
 * tables (incident updates and components, maintenances and theirs, regions, reliability flags),
 * how records the provider stops listing end, input that must not fail a batch, and the cost of
 * the poller's batches of 200 changes (printed, not asserted).
 */

const withStore = <E, R>(database: Layer.Layer<SqlClient, E, R>) =>
  SourceStore.layer.pipe(Layer.provideMerge(Layer.effectDiscard(Migrations.migratePostgres())), Layer.provideMerge(database))
const server = Layer.unwrap(Effect.map(freshDatabase, (url) => Postgres.layerServer(url, { maxConnections: 4 })))
// The embedded store runs the same statements (statusgrid start without DATABASE_URL).
const embedded = withTempDataDir(Postgres.layerEmbedded)

const t0 = Date.parse("2026-11-20T10:00:00.000Z")
const at = (minutes: number) => new Date(t0 + minutes * 60_000).toISOString()

const addSources = (keys: ReadonlyArray<string>, synthetic = false) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const rows = yield* sql<{ id: string; key: string }>`
      INSERT INTO sources (key, name, kind, provider_type, status_page_url, synthetic)
      SELECT key, key, 'catalog', 'statuspage_io', 'https://status.example/' || key, ${synthetic}
      FROM unnest(${keys}::text[]) AS t(key)
      RETURNING id, key`
    return rows.map((r): PolledSource => ({
      id: r.id,
      key: r.key,
      name: r.key,
      provider_type: "statuspage_io",
      url: `https://status.example/${r.key}`,
      poll_interval_s: 300,
      regions: [],
      trusted: true,
      last_checked_at: null
    }))
  })

const incident = (id: string, fields: Partial<SnapshotIncident> = {}): SnapshotIncident => ({
  id,
  title: `Incident ${id}`,
  status: "investigating",
  impact: "minor",
  created_at: at(0),
  updated_at: at(5),
  resolved_at: null,
  update_count: 2,
  components: ["c1", "c2"],
  url: null,
  region: null,
  updates: [
    { id: `${id}-u1`, status: "investigating", body: "Looking.", created_at: at(0) },
    { id: `${id}-u2`, status: "identified", body: "Found.", created_at: at(5) }
  ],
  ...fields
})

const maintenance = (id: string, fields: Partial<SnapshotMaintenance> = {}): SnapshotMaintenance => ({
  id,
  title: `Maintenance ${id}`,
  status: "scheduled",
  scheduled_for: at(600),
  scheduled_until: at(720),
  components: ["c3"],
  url: null,
  ...fields
})

const snapshot = (fields: Partial<Snapshot> = {}): Snapshot => ({
  provider: "statuspage_io",
  status: "degraded",
  reported_status: "degraded",
  description: "",
  components: Array.from({ length: 20 }, (_, i) => ({
    id: `c${i + 1}`,
    name: `Component ${i + 1}`,
    description: "",
    status: i < 2 ? "degraded" as const : "operational" as const,
    parent_id: null,
    is_group: false,
    position: i,
    region: i % 2 === 0 ? "eu-west-1" : "us-east-1"
  })),
  incidents: [incident("i1"), incident("i2", { components: ["c4"], created_at: at(10), updates: [] })],
  maintenances: [maintenance("m1")],
  regions: [{ region: "eu-west-1", status: "degraded" }, { region: "us-east-1", status: "operational" }],
  warnings: [],
  ...fields
})

/** What the records tables hold for one source, in a comparable form. */
const recordsOf = (sourceId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const incidents = yield* sql<{ external_id: string; status: string; resolved: boolean; components: string; updates: string }>`
      SELECT i.external_id, i.status, i.resolved_at IS NOT NULL AS resolved,
        coalesce((SELECT string_agg(c.external_id, ',' ORDER BY c.external_id) FROM incident_components l
                  JOIN components c ON c.id = l.component_id WHERE l.incident_id = i.id), '') AS components,
        coalesce((SELECT string_agg(u.external_id || ':' || u.status || ':' || u.body, ',' ORDER BY u.created_at, u.external_id)
                  FROM incident_updates u WHERE u.incident_id = i.id), '') AS updates
      FROM incidents i WHERE i.source_id = ${sourceId} ORDER BY i.external_id`
    const maintenances = yield* sql<{ external_id: string; status: string; components: string }>`
      SELECT m.external_id, m.status,
        coalesce((SELECT string_agg(c.external_id, ',' ORDER BY c.external_id) FROM maintenance_components l
                  JOIN components c ON c.id = l.component_id WHERE l.maintenance_id = m.id), '') AS components
      FROM scheduled_maintenances m WHERE m.source_id = ${sourceId} ORDER BY m.external_id`
    const [source] = yield* sql<{ region_statuses: unknown; verified: boolean; has_history: boolean }>`
      SELECT region_statuses, verified, has_history FROM sources WHERE id = ${sourceId}`
    return { incidents: [...incidents], maintenances: [...maintenances], source }
  })

/** What a changed snapshot leaves in the records tables, on one store. */
const behaviour = <E>(name: string, database: Layer.Layer<SqlClient, E>) =>
  layer(withStore(database), { timeout: 180_000, excludeTestServices: true })(name, (it) => {
    it.effect("a changed snapshot stores incident updates and components, maintenances, regions and reliability flags", () =>
      Effect.gen(function*() {
        const store = yield* SourceStore
        const [source, synthetic] = [...(yield* addSources(["store-real"])), ...(yield* addSources(["store-sim"], true))]
        const when = new Date(t0 + 20 * 60_000)
        yield* store.applySnapshots([{ source: source!, snapshot: snapshot(), since: sinceAt(when), at: when }])
        // The same snapshot again changes nothing (the poller may save one twice after a failed commit).
        yield* store.applySnapshots([{ source: source!, snapshot: snapshot(), since: sinceAt(when), at: when }])
        assert.deepStrictEqual(yield* recordsOf(source!.id), {
          incidents: [
            { external_id: "i1", status: "investigating", resolved: false, components: "c1,c2", updates: "i1-u1:investigating:Looking.,i1-u2:identified:Found." },
            { external_id: "i2", status: "investigating", resolved: false, components: "c4", updates: "" }
          ],
          maintenances: [{ external_id: "m1", status: "scheduled", components: "c3" }],
          source: {
            region_statuses: [{ region: "eu-west-1", status: "degraded" }, { region: "us-east-1", status: "operational" }],
            verified: true,
            has_history: true
          }
        })
        // A synthetic source is never verified; without incidents it has no history yet.
        yield* store.applySnapshots([{ source: synthetic!, snapshot: snapshot({ incidents: [], regions: [] }), since: sinceAt(when), at: when }])
        assert.deepStrictEqual((yield* recordsOf(synthetic!.id)).source, { region_statuses: [], verified: false, has_history: false })
      }))

    it.effect("what the provider stops listing ends; changed links and updates follow the provider; bad input never fails a batch", () =>
      Effect.gen(function*() {
        const store = yield* SourceStore
        const [source] = yield* addSources(["store-lifecycle"])
        const started = maintenance("m-started", { scheduled_for: at(-60), scheduled_until: at(600), status: "in_progress" })
        const later = maintenance("m-later", { scheduled_for: new Date(Date.now() + 86_400_000).toISOString(), scheduled_until: null })
        yield* store.applySnapshots([{
          source: source!,
          snapshot: snapshot({ maintenances: [started, later] }),
          since: sinceAt(new Date(t0 + 20 * 60_000)),
          at: new Date(t0 + 20 * 60_000)
        }])

        const trimmed = snapshot({
          incidents: [
            // i1: now on c2 and c5, one update edited and one added; the provider dropped its first update.
            incident("i1", {
              components: ["c2", "c5", "c5", "no-such-component"],
              updates: [
                { id: "i1-u2", status: "identified", body: "Found: a bad deploy.", created_at: at(5) },
                { id: "i1-u3", status: "monitoring", body: "Fix out\u0000.", created_at: at(8) },
                { id: "i1-bad", status: "monitoring", body: "No time.", created_at: "yesterday" }
              ]
            }),
            // Listed twice by a careless provider.
            incident("i3", { components: [] }),
            incident("i3", { components: [] })
          ],
          // Unparseable times and a window ending before it starts.
          maintenances: [
            maintenance("m-bad", { scheduled_for: "soon" }),
            maintenance("m-backwards", { scheduled_for: at(900), scheduled_until: at(800) })
          ]
        })
        yield* store.applySnapshots([{ source: source!, snapshot: trimmed, since: sinceAt(new Date(t0 + 30 * 60_000)), at: new Date(t0 + 30 * 60_000) }])
        const records = yield* recordsOf(source!.id)
        assert.deepStrictEqual(records.incidents, [
          {
            external_id: "i1",
            status: "investigating",
            resolved: false,
            components: "c2,c5",
            updates: "i1-u1:investigating:Looking.,i1-u2:identified:Found: a bad deploy.,i1-u3:monitoring:Fix out."
          },
          // No longer listed: resolved at that check.
          { external_id: "i2", status: "resolved", resolved: true, components: "c4", updates: "" },
          { external_id: "i3", status: "investigating", resolved: false, components: "", updates: "i3-u1:investigating:Looking.,i3-u2:identified:Found." }
        ])
        assert.deepStrictEqual(records.maintenances, [
          { external_id: "m-backwards", status: "scheduled", components: "c3" },
          { external_id: "m-later", status: "cancelled", components: "c3" },
          { external_id: "m-started", status: "completed", components: "c3" }
        ])
        const sql = yield* SqlClient
        const [window] = yield* sql<{ same: boolean }>`
          SELECT scheduled_until = scheduled_for AS same FROM scheduled_maintenances WHERE external_id = 'm-backwards'`
        assert.isTrue(window!.same)
      }))

  })

describe("SourceStore records", () => {
  behaviour("on PostgreSQL", server)
  behaviour("on the embedded PGlite", embedded)

  layer(withStore(server), { timeout: 180_000, excludeTestServices: true })("on PostgreSQL, in bulk", (it) => {
    it.effect("the poller's batches of 200 changed snapshots, with their records, in one transaction each (figures printed)", () =>
      Effect.gen(function*() {
        const store = yield* SourceStore
        const sources = yield* addSources(Array.from({ length: 1000 }, (_, i) => `store-bulk-${String(i).padStart(4, "0")}`))
        const changes = (minute: number, status: Snapshot["status"]): Array<SnapshotChange> =>
          sources.map((source) => ({ source, snapshot: snapshot({ status }), since: sinceAt(new Date(t0 + minute * 60_000)), at: new Date(t0 + minute * 60_000) }))
        const run = (batch: ReadonlyArray<SnapshotChange>) =>
          Effect.gen(function*() {
            const started = performance.now()
            for (let i = 0; i < batch.length; i += 200) yield* store.applySnapshots(batch.slice(i, i + 200))
            return performance.now() - started
          })
        const firstMs = yield* run(changes(20, "degraded"))
        const againMs = yield* run(changes(21, "down"))
        const sql = yield* SqlClient
        const [counts] = yield* sql<{ updates: number; links: number; maintenances: number }>`
          SELECT (SELECT count(*)::int FROM incident_updates u JOIN incidents i ON i.id = u.incident_id
                  JOIN sources s ON s.id = i.source_id WHERE s.key LIKE 'store-bulk-%') AS updates,
                 (SELECT count(*)::int FROM incident_components l JOIN incidents i ON i.id = l.incident_id
                  JOIN sources s ON s.id = i.source_id WHERE s.key LIKE 'store-bulk-%') AS links,
                 (SELECT count(*)::int FROM scheduled_maintenances m
                  JOIN sources s ON s.id = m.source_id WHERE s.key LIKE 'store-bulk-%') AS maintenances`
        assert.deepStrictEqual(counts, { updates: 2000, links: 3000, maintenances: 1000 })
        console.log(JSON.stringify({
          figure: "applySnapshots",
          snapshots: sources.length,
          batch: 200,
          per_snapshot: "20 components, 2 incidents (2 updates, 3 component links), 1 maintenance, 2 regions",
          first_ms: Math.round(firstMs),
          again_ms: Math.round(againMs),
          ms_per_snapshot: Math.round((againMs / sources.length) * 100) / 100
        }))
      }))
  })

  layer(server, { timeout: 60_000, excludeTestServices: true })("an existing installation", (it) => {
    it.effect("migration 0015 fills the reliability flags of rows the poller had already written", () =>
      Effect.gen(function*() {
        // The schema as it was before 0015.
        const all = SqlFiles.migrationsDir("postgres")
        const before = yield* tempDir("migrations-before-0015")
        for (const file of Fs.readdirSync(all).filter((f) => /^\d{4}_/.test(f) && Number(f.slice(0, 4)) < 15)) {
          Fs.copyFileSync(Path.join(all, file), Path.join(before, file))
        }
        yield* Migrations.migratePostgres(before)
        const sql = yield* SqlClient
        yield* sql`
          INSERT INTO sources (key, name, kind, provider_type, status_page_url, synthetic, last_checked_at, last_error) VALUES
            ('old-read', 'Read', 'catalog', 'statuspage_io', 'https://a.example', false, now(), NULL),
            ('old-failing', 'Failing', 'catalog', 'statuspage_io', 'https://b.example', false, now(), 'HTTP 503'),
            ('old-never', 'Never', 'catalog', NULL, 'https://c.example', false, NULL, NULL),
            ('old-sim', 'Sim', 'catalog', 'statuspage_io', 'https://d.example', true, now(), NULL)`
        yield* sql`INSERT INTO incidents (source_id, external_id, title, status, started_at, updated_at)
          SELECT id, 'x', 'Outage', 'resolved', now(), now() FROM sources WHERE key IN ('old-failing', 'old-sim')`
        yield* Migrations.migratePostgres()
        const rows = yield* sql<{ key: string; verified: boolean; has_history: boolean; region_statuses: unknown }>`
          SELECT key, verified, has_history, region_statuses FROM sources WHERE key LIKE 'old-%' ORDER BY key`
        assert.deepStrictEqual(rows.map((r) => [r.key, r.verified, r.has_history, r.region_statuses]), [
          ["old-failing", false, true, []],
          ["old-never", false, false, []],
          ["old-read", true, false, []],
          ["old-sim", false, true, []]
        ])
        // Migration 0028 moved the check times to their own table: the sources checked, with their errors.
        const checks = yield* sql<{ key: string; error: string | null }>`
          SELECT s.key, c.error FROM source_checks c JOIN sources s ON s.id = c.source_id WHERE s.key LIKE 'old-%' ORDER BY s.key`
        assert.deepStrictEqual(checks.map((r) => [r.key, r.error]), [["old-failing", "HTTP 503"], ["old-read", null], ["old-sim", null]])
      }))
  })
})
