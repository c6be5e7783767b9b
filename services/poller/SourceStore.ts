import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { Snapshot } from "../domain/Snapshot.ts"
import { Observation, type Since } from "../domain/Changes.ts"
import { rowsOf, TextArrayColumn } from "../platform/Rows.ts"
import { NullOr } from "../domain/NullOr.ts"

/** What a shard needs to know of one of its sources. */
export const PolledSource = Schema.Struct({
  id: Schema.String,
  key: Schema.String,
  name: Schema.String,
  /** NULL until the poller has detected it */
  provider_type: Schema.NullOr(Schema.String),
  /** The document to read: where detection found it, else the status page. */
  url: Schema.String,
  poll_interval_s: Schema.Number,
  regions: TextArrayColumn(Schema.String),
  /** A catalog source (the operator's): read without the address guard; an organization's custom source is guarded (decision 0009). */
  trusted: Schema.Boolean,
  /** When a shard last checked it (its first check after a restart keeps the cadence, `FirstChecks.ts`). */
  last_checked_at: NullOr(Schema.Date)
})
export type PolledSource = typeof PolledSource.Type

/** Compiled once: a shard loads thousands of sources at start. */
const decodeShard = rowsOf("sources", PolledSource)
const decodeObservationRows = rowsOf("source_observations", Schema.Struct({ source_id: Schema.String, observation: Schema.Unknown }))
/** The uuid of each record a batch wrote, with its source and external id. */
const decodeRecordIds = rowsOf("source records", Schema.Struct({ id: Schema.String, source_id: Schema.String, external_id: Schema.String }))

export interface SnapshotChange {
  readonly source: PolledSource
  readonly snapshot: Snapshot
  /** Since when the snapshot's statuses have held (saved with it, see `loadObservations`) */
  readonly since: Since
  readonly at: Date
}

export interface CheckMark {
  readonly sourceId: string
  readonly key: string
  readonly checkedAt: Date
  readonly error: string | null
}

/** A timestamptz expression as JSON's ISO 8601 UTC text, as `Date.toISOString` writes it. */
const isoOf = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

// Array parameters must not hold nulls (the driver cannot encode them): "" stands for NULL, undone by NULLIF.

/** The first of each id, in order: a provider listing one record twice must not fail the batch's upsert. */
const uniqueById = <A extends { readonly id: string }>(items: ReadonlyArray<A>): Array<A> => {
  const seen = new Set<string>()
  return items.filter((item) => !seen.has(item.id) && seen.add(item.id) !== undefined)
}

/** `<source id> <external id>`: one record of one source, as the batch statements pair them. */
const pair = (sourceId: string, externalId: string) => `${sourceId} ${externalId}`
const byPair = (rows: ReadonlyArray<{ id: string; source_id: string; external_id: string }>) =>
  new Map(rows.map((r) => [pair(r.source_id, r.external_id), r.id]))

/** The last change of each source: the batch statements take one row per source. */
const uniqueBySource = (changes: ReadonlyArray<SnapshotChange>): Array<SnapshotChange> => [
  ...new Map(changes.map((c) => [c.source.id, c])).values()
]

/** Adapters keep an unparseable time as sent; such a record is left out rather than failing the batch. */
const isTimestamp = (value: string): boolean => !Number.isNaN(Date.parse(value))

/** JSON for a jsonb column: jsonb refuses the `\u0000` escape, so NUL characters are dropped. */
const jsonbText = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) => typeof v === "string" ? v.replaceAll("\u0000", "") : v)

/** PostgreSQL text cannot hold NUL. */
const withoutNul = (text: string): string => text.replaceAll("\u0000", "")

/** The shard of a source key: PostgreSQL's own text hash, so SQL and code agree. */
export const shardExpr = (shards: number, column = "key") =>
  `((hashtextextended(${column}, 0) % ${shards}) + ${shards}) % ${shards}`

/**
 * The poller's view of PostgreSQL: the sources of a shard, and the state a
 * check leaves there (status, counts, components, incidents, last check).
 * Errors are defects: PostgreSQL being unreachable stops the shard, and the
 * cluster restarts it.
 */
export class SourceStore extends Context.Service<SourceStore, {
  /** Enabled, readable sources whose key falls in `shard` of `shards`. */
  loadShard(shard: number, shards: number): Effect.Effect<ReadonlyArray<PolledSource>>
  /**
   * The last observation saved of each of these sources (by id). A source observed before observations
   * were saved (an installation upgraded to this version) is rebuilt from its rows: status, components,
   * open incidents, since their `last_changed_at`. Sources never observed, or whose saved observation
   * this version cannot read, are absent.
   */
  loadObservations(ids: ReadonlyArray<string>): Effect.Effect<ReadonlyMap<string, Observation>>
  /** Stores the provider type the poller detected, and where it reads the source when that is not the status page. */
  setDetected(id: string, provider: string, url: string): Effect.Effect<void>
  /** Records when sources were last checked (and their last error), in one statement. */
  markChecked(marks: ReadonlyArray<CheckMark>): Effect.Effect<void>
  /**
   * Writes changed snapshots, several sources in one transaction and the same
   * dozen statements whatever their number: status and counts, components (with
   * hierarchy), incidents with their updates and affected components,
   * maintenances with theirs, per-region status and reliability flags, and the
   * observation itself (`source_observations`). Records with a time PostgreSQL
   * cannot read are left out rather than failing the batch.
   */
  applySnapshots(changes: ReadonlyArray<SnapshotChange>): Effect.Effect<void>
}>()("statusgrid/poller/SourceStore") {
  static readonly layer = Layer.effect(
    SourceStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient

      const loadShard = (shard: number, shards: number) =>
        sql.unsafe(
          `SELECT s.id, s.key, s.name, s.provider_type, coalesce(s.poll_url, s.status_page_url) AS url, s.poll_interval_s, s.regions,
             s.organization_id IS NULL AS trusted, c.checked_at AS last_checked_at
           FROM sources s LEFT JOIN source_checks c ON c.source_id = s.id
           WHERE s.enabled AND s.kind <> 'manual' AND s.status_page_url IS NOT NULL
             AND ${shardExpr(shards, "s.key")} = $1
           ORDER BY s.key`,
          [shard]
        ).pipe(Effect.orDie, Effect.flatMap(decodeShard))

      const markChecked = (marks: ReadonlyArray<CheckMark>) => {
        if (marks.length === 0) return Effect.void
        // A source deleted since its check is left out (its row would fail the foreign key).
        return sql`
          INSERT INTO source_checks AS c (source_id, checked_at, error)
          SELECT v.id, v.checked_at::timestamptz, NULLIF(v.error, '')
          FROM unnest(${marks.map((m) => m.sourceId)}::uuid[], ${marks.map((m) => m.checkedAt.toISOString())}::text[],
                      ${marks.map((m) => m.error ?? "")}::text[]) AS v(id, checked_at, error)
          WHERE EXISTS (SELECT 1 FROM sources s WHERE s.id = v.id)
          ON CONFLICT (source_id) DO UPDATE SET checked_at = excluded.checked_at, error = excluded.error`.pipe(Effect.asVoid, Effect.orDie)
      }

      const setDetected = (id: string, provider: string, url: string) =>
        sql`UPDATE sources SET provider_type = ${provider},
              poll_url = CASE WHEN ${url} = status_page_url THEN NULL ELSE ${url} END, updated_at = now()
            WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

      const decodeObservation = Schema.decodeUnknownEffect(Observation)
      const loadObservations = Effect.fn("SourceStore.loadObservations")(function*(ids: ReadonlyArray<string>) {
        const found = new Map<string, Observation>()
        if (ids.length === 0) return found
        const rows = yield* sql`
            SELECT source_id, jsonb_build_object('snapshot', snapshot, 'since', since) AS observation
            FROM source_observations WHERE source_id = ANY(${ids}::uuid[])`.pipe(Effect.flatMap(decodeObservationRows), Effect.orDie)
        const missing = ids.filter((id) => !rows.some((r) => r.source_id === id))
        const rebuilt = missing.length === 0 ? [] : yield* sql`
            SELECT s.id AS source_id, jsonb_build_object(
              'snapshot', jsonb_build_object(
                'provider', coalesce(s.provider_type, ''), 'status', s.status, 'reported_status', NULL,
                'description', '', 'maintenances', '[]'::jsonb, 'regions', '[]'::jsonb, 'warnings', '[]'::jsonb,
                'components', (SELECT jsonb_agg(jsonb_build_object(
                    'id', c.external_id, 'name', c.name, 'description', c.description, 'status', c.status,
                    'parent_id', p.external_id, 'is_group', c.is_group, 'position', c.position, 'region', c.region
                  ) ORDER BY c.position, c.external_id)
                  FROM components c LEFT JOIN components p ON p.id = c.parent_id WHERE c.source_id = s.id),
                'incidents', coalesce((SELECT jsonb_agg(jsonb_build_object(
                    'id', i.external_id, 'title', i.title, 'status', i.status, 'impact', i.impact,
                    'created_at', ${sql.literal(isoOf("i.started_at"))}, 'updated_at', ${sql.literal(isoOf("i.updated_at"))}, 'resolved_at', NULL,
                    'update_count', i.update_count, 'components', '[]'::jsonb, 'url', i.url, 'region', i.region
                  ) ORDER BY i.started_at DESC)
                  FROM incidents i WHERE i.source_id = s.id AND i.resolved_at IS NULL), '[]'::jsonb)),
              'since', jsonb_build_object(
                'source', ${sql.literal(isoOf("coalesce(s.last_changed_at, s.updated_at)"))},
                'components', (SELECT jsonb_object_agg(c.external_id, ${sql.literal(isoOf("coalesce(c.last_changed_at, c.updated_at)"))})
                  FROM components c WHERE c.source_id = s.id))) AS observation
            FROM sources s
            WHERE s.id = ANY(${missing}::uuid[]) AND EXISTS (SELECT 1 FROM components c WHERE c.source_id = s.id)`.pipe(Effect.flatMap(decodeObservationRows),
          Effect.orDie
        )
        for (const row of [...rows, ...rebuilt]) {
          const decoded = yield* decodeObservation(row.observation).pipe(Effect.result)
          if (decoded._tag === "Success") found.set(row.source_id, decoded.success)
          else yield* Effect.logWarning("saved observation unreadable, first snapshot compared with nothing").pipe(
            Effect.annotateLogs({ source_id: row.source_id })
          )
        }
        return found
      })

      // Every statement below covers the whole batch (arrays bound as parameters and unnested), so a
      // batch of 200 changes costs the same dozen statements as one: the poller writes thousands.
      const applyBatch = Effect.fn("SourceStore.applyBatch")(function*(changes: ReadonlyArray<SnapshotChange>) {
        const sourceIds = changes.map((c) => c.source.id)

        // Status and counts; per-region status; reliability (services/api/README.md): a curated catalog
        // source read in a known format is verified, and has history once an incident is on record.
        yield* sql`
            UPDATE sources AS s SET status = v.status, components_count = v.leaves::int, incidents_count = v.open::int,
              last_changed_at = CASE WHEN s.status <> v.status THEN v.at::timestamptz ELSE s.last_changed_at END,
              region_statuses = v.regions::jsonb,
              verified = (s.kind = 'catalog' AND NOT s.synthetic),
              has_history = s.has_history OR v.incidents::boolean,
              updated_at = now()
            FROM unnest(${sourceIds}::uuid[], ${changes.map((c) => c.snapshot.status)}::text[],
                        ${changes.map((c) => String(c.snapshot.components.filter((x) => !x.is_group).length))}::text[],
                        ${changes.map((c) => String(c.snapshot.incidents.filter((i) => i.resolved_at === null).length))}::text[],
                        ${changes.map((c) => c.at.toISOString())}::text[],
                        ${changes.map((c) => JSON.stringify(c.snapshot.regions.map((r) => ({ region: r.region, status: r.status }))))}::text[],
                        ${changes.map((c) => String(c.snapshot.incidents.length > 0))}::text[])
                 AS v(id, status, leaves, open, at, regions, incidents)
            WHERE s.id = v.id`

        const components = changes.flatMap(({ source, snapshot, at }) =>
          uniqueById(snapshot.components).map((c) => ({ source: source.id, c, at: at.toISOString() }))
        )
        const componentIds = byPair(
          components.length === 0 ? [] : yield* sql`
              INSERT INTO components AS c (source_id, external_id, name, description, status, is_group, region, position,
                                           last_changed_at)
              SELECT source_id, external_id, name, description, status, is_group::boolean, NULLIF(region, ''), position::int,
                     last_changed_at::timestamptz
              FROM unnest(${components.map((x) => x.source)}::uuid[], ${components.map((x) => x.c.id)}::text[],
                          ${components.map((x) => withoutNul(x.c.name))}::text[],
                          ${components.map((x) => withoutNul(x.c.description))}::text[],
                          ${components.map((x) => x.c.status)}::text[], ${components.map((x) => String(x.c.is_group))}::text[],
                          ${components.map((x) => x.c.region ?? "")}::text[], ${components.map((x) => String(x.c.position))}::text[],
                          ${components.map((x) => x.at)}::text[])
                   AS t(source_id, external_id, name, description, status, is_group, region, position, last_changed_at)
              ON CONFLICT (source_id, external_id) DO UPDATE SET
                name = EXCLUDED.name, description = EXCLUDED.description, is_group = EXCLUDED.is_group,
                region = EXCLUDED.region, position = EXCLUDED.position, updated_at = now(),
                last_changed_at = CASE WHEN c.status <> EXCLUDED.status THEN EXCLUDED.last_changed_at
                                       ELSE c.last_changed_at END,
                status = EXCLUDED.status
              RETURNING id, source_id, external_id`.pipe(Effect.flatMap(decodeRecordIds))
        )
        if (components.length > 0) {
          const ids = components.map((x) => componentIds.get(pair(x.source, x.c.id))!)
          const parents = components.map((x) =>
            x.c.parent_id === null ? "" : componentIds.get(pair(x.source, x.c.parent_id)) ?? ""
          )
          yield* sql`
              UPDATE components AS c SET parent_id = NULLIF(v.parent, '')::uuid
              FROM unnest(${ids}::uuid[], ${parents}::text[]) AS v(id, parent)
              WHERE c.id = v.id AND c.parent_id IS DISTINCT FROM NULLIF(v.parent, '')::uuid`
        }
        yield* sql`
            DELETE FROM components AS c WHERE c.source_id = ANY(${sourceIds}::uuid[])
              AND NOT EXISTS (SELECT 1 FROM unnest(${components.map((x) => x.source)}::uuid[], ${components.map((x) => x.c.id)}::text[])
                              AS l(source_id, external_id)
                              WHERE l.source_id = c.source_id AND l.external_id = c.external_id)`

        const incidents = changes.flatMap(({ source, snapshot }) =>
          uniqueById(snapshot.incidents)
            .filter((i) => isTimestamp(i.created_at) && isTimestamp(i.updated_at) && (i.resolved_at === null || isTimestamp(i.resolved_at)))
            .map((i) => ({ source: source.id, i }))
        )
        const incidentIds = byPair(
          incidents.length === 0 ? [] : yield* sql`
              INSERT INTO incidents (source_id, external_id, title, status, impact, url, region, update_count, started_at,
                                     updated_at, resolved_at)
              SELECT source_id, external_id, title, status, impact, NULLIF(url, ''), NULLIF(region, ''), update_count::int,
                     started_at::timestamptz, updated_at::timestamptz,
                     -- A resolution time before the start (providers' clocks disagree) is clamped to the start.
                     CASE WHEN resolved_at <> '' THEN greatest(resolved_at::timestamptz, started_at::timestamptz) END
              FROM unnest(${incidents.map((x) => x.source)}::uuid[], ${incidents.map((x) => x.i.id)}::text[],
                          ${incidents.map((x) => withoutNul(x.i.title))}::text[], ${incidents.map((x) => x.i.status)}::text[],
                          ${incidents.map((x) => x.i.impact)}::text[], ${incidents.map((x) => x.i.url ?? "")}::text[],
                          ${incidents.map((x) => x.i.region ?? "")}::text[], ${incidents.map((x) => String(x.i.update_count))}::text[],
                          ${incidents.map((x) => x.i.created_at)}::text[], ${incidents.map((x) => x.i.updated_at)}::text[],
                          ${incidents.map((x) => x.i.resolved_at ?? "")}::text[])
                   AS t(source_id, external_id, title, status, impact, url, region, update_count, started_at, updated_at,
                        resolved_at)
              ON CONFLICT (source_id, external_id) DO UPDATE SET
                title = EXCLUDED.title, status = EXCLUDED.status, impact = EXCLUDED.impact, url = EXCLUDED.url,
                region = EXCLUDED.region, update_count = EXCLUDED.update_count, updated_at = EXCLUDED.updated_at,
                resolved_at = EXCLUDED.resolved_at
              RETURNING id, source_id, external_id`.pipe(Effect.flatMap(decodeRecordIds))
        )
        if (incidents.length > 0) {
          yield* linkComponents("incident_components", "incident_id", incidents.map((x) => ({
            owner: incidentIds.get(pair(x.source, x.i.id))!,
            components: x.i.components.flatMap((id) => componentIds.get(pair(x.source, id)) ?? [])
          })))
          // Updates stay once recorded (a provider may trim its list); a changed one is rewritten.
          const updates = incidents.flatMap((x) =>
            uniqueById((x.i.updates ?? []).filter((u) => isTimestamp(u.created_at)))
              .map((u) => ({ incident: incidentIds.get(pair(x.source, x.i.id))!, u }))
          )
          if (updates.length > 0) {
            yield* sql`
                INSERT INTO incident_updates AS u (incident_id, external_id, status, body, created_at)
                SELECT incident_id, external_id, status, body, created_at::timestamptz
                FROM unnest(${updates.map((x) => x.incident)}::uuid[], ${updates.map((x) => x.u.id)}::text[],
                            ${updates.map((x) => x.u.status)}::text[], ${updates.map((x) => withoutNul(x.u.body))}::text[],
                            ${updates.map((x) => x.u.created_at)}::text[])
                     AS t(incident_id, external_id, status, body, created_at)
                ON CONFLICT (incident_id, external_id) DO UPDATE SET
                  status = EXCLUDED.status, body = EXCLUDED.body, created_at = EXCLUDED.created_at
                WHERE (u.status, u.body, u.created_at) IS DISTINCT FROM (EXCLUDED.status, EXCLUDED.body, EXCLUDED.created_at)`
          }
        }
        // Open incidents the provider no longer lists are over.
        const listedIncidents = changes.flatMap(({ source, snapshot }) => snapshot.incidents.map((i) => ({ source: source.id, id: i.id })))
        yield* sql`
            UPDATE incidents AS i SET resolved_at = greatest(v.at::timestamptz, i.started_at), status = 'resolved'
            FROM unnest(${sourceIds}::uuid[], ${changes.map((c) => c.at.toISOString())}::text[]) AS v(source_id, at)
            WHERE i.source_id = v.source_id AND i.resolved_at IS NULL
              AND NOT EXISTS (SELECT 1 FROM unnest(${listedIncidents.map((x) => x.source)}::uuid[],
                                                   ${listedIncidents.map((x) => x.id)}::text[]) AS l(source_id, external_id)
                              WHERE l.source_id = i.source_id AND l.external_id = i.external_id)`

        const maintenances = changes.flatMap(({ source, snapshot }) =>
          uniqueById(snapshot.maintenances)
            .filter((m) => isTimestamp(m.scheduled_for) && (m.scheduled_until === null || isTimestamp(m.scheduled_until)))
            .map((m) => ({ source: source.id, m }))
        )
        if (maintenances.length > 0) {
          const maintenanceIds = byPair(yield* sql`
              INSERT INTO scheduled_maintenances (source_id, external_id, title, status, url, scheduled_for, scheduled_until)
              SELECT source_id, external_id, title, status, NULLIF(url, ''), scheduled_for::timestamptz,
                     -- An end before the start (a provider's typo) is clamped to the start, as resolutions are.
                     CASE WHEN scheduled_until <> '' THEN greatest(scheduled_until::timestamptz, scheduled_for::timestamptz) END
              FROM unnest(${maintenances.map((x) => x.source)}::uuid[], ${maintenances.map((x) => x.m.id)}::text[],
                          ${maintenances.map((x) => withoutNul(x.m.title))}::text[], ${maintenances.map((x) => x.m.status)}::text[],
                          ${maintenances.map((x) => x.m.url ?? "")}::text[], ${maintenances.map((x) => x.m.scheduled_for)}::text[],
                          ${maintenances.map((x) => x.m.scheduled_until ?? "")}::text[])
                   AS t(source_id, external_id, title, status, url, scheduled_for, scheduled_until)
              ON CONFLICT (source_id, external_id) DO UPDATE SET
                title = EXCLUDED.title, status = EXCLUDED.status, url = EXCLUDED.url,
                scheduled_for = EXCLUDED.scheduled_for, scheduled_until = EXCLUDED.scheduled_until, updated_at = now()
              RETURNING id, source_id, external_id`.pipe(Effect.flatMap(decodeRecordIds)))
          yield* linkComponents("maintenance_components", "maintenance_id", maintenances.map((x) => ({
            owner: maintenanceIds.get(pair(x.source, x.m.id))!,
            components: x.m.components.flatMap((id) => componentIds.get(pair(x.source, id)) ?? [])
          })))
        }
        // Maintenances the provider no longer lists are over: completed once their window had begun, else cancelled.
        const listedMaintenances = changes.flatMap(({ source, snapshot }) =>
          snapshot.maintenances.map((m) => ({ source: source.id, id: m.id }))
        )
        yield* sql`
            UPDATE scheduled_maintenances AS m
            SET status = CASE WHEN m.scheduled_for <= now() THEN 'completed' ELSE 'cancelled' END, updated_at = now()
            WHERE m.source_id = ANY(${sourceIds}::uuid[]) AND m.status IN ('scheduled', 'in_progress', 'verifying')
              AND NOT EXISTS (SELECT 1 FROM unnest(${listedMaintenances.map((x) => x.source)}::uuid[],
                                                   ${listedMaintenances.map((x) => x.id)}::text[]) AS l(source_id, external_id)
                              WHERE l.source_id = m.source_id AND l.external_id = m.external_id)`

        // What the next shard to run each source compares its first snapshot with.
        yield* sql`
            INSERT INTO source_observations (source_id, snapshot, since, observed_at)
            SELECT source_id, snapshot::jsonb, since::jsonb, observed_at::timestamptz
            FROM unnest(${sourceIds}::uuid[], ${changes.map((c) => jsonbText(c.snapshot))}::text[],
                        ${changes.map((c) => JSON.stringify(c.since))}::text[], ${changes.map((c) => c.at.toISOString())}::text[])
                 AS t(source_id, snapshot, since, observed_at)
            ON CONFLICT (source_id) DO UPDATE SET
              snapshot = EXCLUDED.snapshot, since = EXCLUDED.since, observed_at = EXCLUDED.observed_at`
      })

      /**
       * Sets the affected components of each record (incident or maintenance) to the given ones, in one
       * statement for the batch: links no longer named go, new ones are added.
       */
      const linkComponents = (
        table: "incident_components" | "maintenance_components",
        column: "incident_id" | "maintenance_id",
        records: ReadonlyArray<{ readonly owner: string; readonly components: ReadonlyArray<string> }>
      ) => {
        const owners: Array<string> = []
        const targets: Array<string> = []
        for (const record of records) {
          for (const component of new Set(record.components)) {
            owners.push(record.owner)
            targets.push(component)
          }
        }
        return sql`
          WITH wanted AS (SELECT * FROM unnest(${owners}::uuid[], ${targets}::uuid[]) AS t(owner, component_id)),
          gone AS (
            DELETE FROM ${sql(table)} AS l WHERE l.${sql(column)} = ANY(${records.map((r) => r.owner)}::uuid[])
              AND NOT EXISTS (SELECT 1 FROM wanted w WHERE w.owner = l.${sql(column)} AND w.component_id = l.component_id))
          INSERT INTO ${sql(table)} (${sql(column)}, component_id) SELECT owner, component_id FROM wanted
          ON CONFLICT DO NOTHING`
      }

      const applySnapshots = (changes: ReadonlyArray<SnapshotChange>) =>
        changes.length === 0
          ? Effect.void
          : sql.withTransaction(applyBatch(uniqueBySource(changes))).pipe(Effect.orDie)

      return SourceStore.of({ loadShard, loadObservations, setDetected, markChecked, applySnapshots })
    })
  )
}
