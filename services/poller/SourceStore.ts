import { Array as Arr, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { Snapshot } from "../domain/Snapshot.ts"
import { Observation, type Since } from "./Changes.ts"

/** What a shard needs to know of one of its sources. */
export interface PolledSource {
  readonly id: string
  readonly key: string
  readonly name: string
  /** NULL until the poller has detected it */
  readonly provider_type: string | null
  /** The document to read: where detection found it, else the status page. */
  readonly url: string
  readonly poll_interval_s: number
  readonly regions: ReadonlyArray<string>
}

export interface SnapshotChange {
  readonly source: PolledSource
  readonly snapshot: Snapshot
  /** Since when the snapshot's statuses have held (saved with it, see `loadObservations`) */
  readonly since: Since
  readonly at: Date
}

export interface CheckMark {
  readonly key: string
  readonly checkedAt: Date
  readonly error: string | null
}

/** A timestamptz expression as JSON's ISO 8601 UTC text, as `Date.toISOString` writes it. */
const isoOf = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

// Array parameters must not hold nulls (the driver cannot encode them): "" stands for NULL, undone by NULLIF.

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
   * Writes changed snapshots, several sources in one transaction (one commit
   * instead of one per source): status and counts, components (with
   * hierarchy), incidents, and the observation itself (`source_observations`).
   */
  applySnapshots(changes: ReadonlyArray<SnapshotChange>): Effect.Effect<void>
}>()("statusgrid/poller/SourceStore") {
  static readonly layer = Layer.effect(
    SourceStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient

      const loadShard = (shard: number, shards: number) =>
        sql.unsafe<PolledSource>(
          `SELECT id, key, name, provider_type, coalesce(poll_url, status_page_url) AS url, poll_interval_s, regions
           FROM sources
           WHERE enabled AND kind <> 'manual' AND status_page_url IS NOT NULL
             AND ${shardExpr(shards)} = $1
           ORDER BY key`,
          [shard]
        ).pipe(Effect.orDie)

      const markChecked = (marks: ReadonlyArray<CheckMark>) => {
        if (marks.length === 0) return Effect.void
        return sql`
          UPDATE sources AS s SET last_checked_at = v.checked_at::timestamptz, last_error = NULLIF(v.error, '')
          FROM (SELECT * FROM unnest(${marks.map((m) => m.key)}::text[], ${marks.map((m) => m.checkedAt.toISOString())}::text[],
                                     ${marks.map((m) => m.error ?? "")}::text[]) AS t(key, checked_at, error)) AS v
          WHERE s.key = v.key`.pipe(Effect.asVoid, Effect.orDie)
      }

      const setDetected = (id: string, provider: string, url: string) =>
        sql`UPDATE sources SET provider_type = ${provider},
              poll_url = CASE WHEN ${url} = status_page_url THEN NULL ELSE ${url} END, updated_at = now()
            WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

      const decodeObservation = Schema.decodeUnknownEffect(Observation)
      const loadObservations = (ids: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          const found = new Map<string, Observation>()
          if (ids.length === 0) return found
          const rows = yield* sql<{ source_id: string; observation: unknown }>`
            SELECT source_id, jsonb_build_object('snapshot', snapshot, 'since', since) AS observation
            FROM source_observations WHERE source_id = ANY(${ids}::uuid[])`.pipe(Effect.orDie)
          const missing = ids.filter((id) => !rows.some((r) => r.source_id === id))
          const rebuilt = missing.length === 0 ? [] : yield* sql<{ source_id: string; observation: unknown }>`
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
            WHERE s.id = ANY(${missing}::uuid[]) AND EXISTS (SELECT 1 FROM components c WHERE c.source_id = s.id)`.pipe(
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

      const applyOne = ({ source, snapshot, since, at }: SnapshotChange) =>
        Effect.gen(function*() {
          const when = at.toISOString()
          const leaves = snapshot.components.filter((c) => !c.is_group).length
          const open = snapshot.incidents.filter((i) => i.resolved_at === null).length
          yield* sql`
            UPDATE sources SET status = ${snapshot.status}, components_count = ${leaves}, incidents_count = ${open},
              last_changed_at = CASE WHEN status <> ${snapshot.status} THEN ${when}::timestamptz ELSE last_changed_at END,
              updated_at = now()
            WHERE id = ${source.id}`

          const components: Array<Record<string, unknown>> = snapshot.components.map((c) => ({
            source_id: source.id,
            external_id: c.id,
            name: c.name,
            description: c.description,
            status: c.status,
            is_group: c.is_group,
            region: c.region,
            position: c.position,
            last_changed_at: when
          }))
          if (Arr.isReadonlyArrayNonEmpty(components)) {
            const ids = yield* sql<{ id: string; external_id: string }>`
              INSERT INTO components ${sql.insert(components)}
              ON CONFLICT (source_id, external_id) DO UPDATE SET
                name = EXCLUDED.name, description = EXCLUDED.description, is_group = EXCLUDED.is_group,
                region = EXCLUDED.region, position = EXCLUDED.position, updated_at = now(),
                last_changed_at = CASE WHEN components.status <> EXCLUDED.status THEN EXCLUDED.last_changed_at
                                       ELSE components.last_changed_at END,
                status = EXCLUDED.status
              RETURNING id, external_id`
            const byExternal = new Map(ids.map((r) => [r.external_id, r.id]))
            const children = snapshot.components.map((c) => ({
              id: byExternal.get(c.id)!,
              parent: c.parent_id === null ? null : byExternal.get(c.parent_id) ?? null
            }))
            yield* sql`
              UPDATE components AS c SET parent_id = NULLIF(v.parent, '')::uuid
              FROM (SELECT * FROM unnest(${children.map((c) => c.id)}::uuid[], ${children.map((c) => c.parent ?? "")}::text[])
                    AS t(id, parent)) AS v
              WHERE c.id = v.id AND c.parent_id IS DISTINCT FROM NULLIF(v.parent, '')::uuid`
          }
          yield* sql`
            DELETE FROM components WHERE source_id = ${source.id}
              AND NOT (external_id = ANY(${snapshot.components.map((c) => c.id)}::text[]))`

          const incidents: Array<Record<string, unknown>> = snapshot.incidents.map((i) => ({
            source_id: source.id,
            external_id: i.id,
            title: i.title,
            status: i.status,
            impact: i.impact,
            url: i.url,
            region: i.region,
            update_count: i.update_count,
            started_at: i.created_at,
            updated_at: i.updated_at,
            // A resolution time before the start (providers' clocks disagree) is clamped to the start.
            resolved_at: i.resolved_at === null ? null : i.resolved_at < i.created_at ? i.created_at : i.resolved_at
          }))
          if (Arr.isReadonlyArrayNonEmpty(incidents)) {
            yield* sql`
              INSERT INTO incidents ${sql.insert(incidents)}
              ON CONFLICT (source_id, external_id) DO UPDATE SET
                title = EXCLUDED.title, status = EXCLUDED.status, impact = EXCLUDED.impact, url = EXCLUDED.url,
                region = EXCLUDED.region, update_count = EXCLUDED.update_count, updated_at = EXCLUDED.updated_at,
                resolved_at = EXCLUDED.resolved_at`
          }
          // Open incidents the provider no longer lists are over.
          yield* sql`
            UPDATE incidents SET resolved_at = greatest(${when}::timestamptz, started_at), status = 'resolved'
            WHERE source_id = ${source.id} AND resolved_at IS NULL
              AND NOT (external_id = ANY(${snapshot.incidents.map((i) => i.id)}::text[]))`

          // What the next shard to run the source compares its first snapshot with.
          yield* sql`
            INSERT INTO source_observations (source_id, snapshot, since, observed_at)
            VALUES (${source.id}::uuid, ${JSON.stringify(snapshot)}::jsonb, ${JSON.stringify(since)}::jsonb, ${when}::timestamptz)
            ON CONFLICT (source_id) DO UPDATE SET
              snapshot = EXCLUDED.snapshot, since = EXCLUDED.since, observed_at = EXCLUDED.observed_at`
        })

      const applySnapshots = (changes: ReadonlyArray<SnapshotChange>) =>
        changes.length === 0
          ? Effect.void
          : sql.withTransaction(Effect.forEach(changes, applyOne, { discard: true })).pipe(Effect.orDie)

      return SourceStore.of({ loadShard, loadObservations, setDetected, markChecked, applySnapshots })
    })
  )
}
