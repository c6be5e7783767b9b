import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { AuthType, MonitorAuth, MonitorState } from "../domain/Monitor.ts"
import type { MonitorCheckState, NextState } from "../monitors/MonitorState.ts"
import { MonitorSettingsRow, settingsOfRow } from "../monitors/MonitorRow.ts"
import type { MonitorSettings } from "../monitors/Validate.ts"
import { rowsOf } from "../platform/Rows.ts"
import { SecretBox, secretBinding } from "../platform/SecretBox.ts"
import { shardExpr } from "./SourceStore.ts"
import { NullOr } from "../domain/NullOr.ts"

/** What a shard needs to know of one of its website monitors. */
export interface PolledMonitor {
  readonly id: string
  readonly organization_id: string
  readonly settings: MonitorSettings
  /** updated_at: a changed value means the settings were edited */
  readonly version: string
  readonly state: MonitorCheckState
}

/** What one check leaves in the monitor's row. */
export interface MonitorCheckSave {
  readonly id: string
  readonly next: NextState
  readonly response_ms: number
  readonly http_status: number
  readonly tls_valid_to: string | null
  readonly tls_issuer: string | null
}

const MonitorRow = Schema.Struct({
  ...MonitorSettingsRow.fields,
  id: Schema.String,
  organization_id: Schema.String,
  auth_type: AuthType,
  auth_secret: Schema.NullOr(Schema.Uint8Array),
  state: MonitorState,
  consecutive_failures: Schema.Number,
  ssl_notified_days: Schema.NullOr(Schema.Number),
  last_changed_at: NullOr(Schema.Date),
  last_checked_at: NullOr(Schema.Date),
  last_error: Schema.NullOr(Schema.String),
  updated_at: Schema.Date
})
type MonitorRow = typeof MonitorRow.Type
/** Compiled once: a shard loads thousands of rows at start. */
const decodeMonitors = rowsOf("monitors", MonitorRow)
const decodeVersions = rowsOf("monitors", Schema.Struct({ id: Schema.String, version: Schema.Date }))

const iso = (value: Date | null): string | null => value === null ? null : value.toISOString()

const decodeAuth = Schema.decodeUnknownEffect(Schema.fromJsonString(MonitorAuth))

/**
 * The poller's view of the `monitors` table: the monitors of a shard (with
 * their credentials decrypted) and the state each check leaves. A monitor's
 * shard is PostgreSQL's hash of its id, as for source keys.
 */
export class MonitorStore extends Context.Service<MonitorStore, {
  /** Id and version (updated_at) of the monitors that are not paused and whose id falls in `shard` of `shards`. */
  versions(shard: number, shards: number): Effect.Effect<ReadonlyArray<{ readonly id: string; readonly version: string }>>
  /** These monitors, decoded (credentials decrypted); paused ones are left out. */
  loadByIds(ids: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<PolledMonitor>>
  /** State, counters and the last check's figures of many monitors, in one statement. */
  saveChecks(saves: ReadonlyArray<MonitorCheckSave>): Effect.Effect<void>
}>()("statusgrid/poller/MonitorStore") {
  static readonly layer = Layer.effect(
    MonitorStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const box = yield* SecretBox

      const toPolled = Effect.fnUntraced(function*(row: MonitorRow) {
        const auth = row.auth_secret === null ? undefined : yield* box.open(row.auth_secret, secretBinding("monitor auth", row.organization_id, row.id)).pipe(
          Effect.flatMap((json) => decodeAuth(json)),
          Effect.mapError((e) => new Error(`monitor ${row.id}: stored credentials unreadable: ${e.message}`))
        )
        // Loaded monitors are never paused (the query leaves those out).
        const settings = settingsOfRow(row, auth)
        return {
          id: row.id,
          organization_id: row.organization_id,
          settings,
          version: row.updated_at.toISOString(),
          state: {
            state: row.state,
            consecutive_failures: row.consecutive_failures,
            last_ssl_threshold_notified: row.ssl_notified_days,
            last_changed_at: iso(row.last_changed_at),
            last_checked_at: iso(row.last_checked_at),
            last_error: row.last_error
          }
        } satisfies PolledMonitor
      })

      const decodeAll = (rows: ReadonlyArray<unknown>) =>
        decodeMonitors(rows).pipe(
          // One unreadable monitor (a key changed) must not stop the others: it is logged and skipped.
          Effect.flatMap((rows) =>
            Effect.forEach(rows, (row) =>
              toPolled(row).pipe(
                Effect.map((m): PolledMonitor | undefined => m),
                Effect.catch((error) => Effect.logWarning(error.message).pipe(Effect.as(undefined)))
              ))
          ),
          Effect.map((all) => all.filter((m): m is PolledMonitor => m !== undefined))
        )

      const versions = (shard: number, shards: number) =>
        sql.unsafe(
          `SELECT id, updated_at AS version FROM monitors WHERE state <> 'paused' AND ${shardExpr(shards, "id::text")} = $1`,
          [shard]
        ).pipe(Effect.orDie, Effect.flatMap(decodeVersions), Effect.map((rows) => rows.map((r) => ({ id: r.id, version: r.version.toISOString() }))))

      const loadByIds = (ids: ReadonlyArray<string>) =>
        ids.length === 0
          ? Effect.succeed([])
          : sql`SELECT * FROM monitors WHERE state <> 'paused' AND id = ANY(${ids}::uuid[])`.pipe(
            Effect.orDie,
            Effect.flatMap(decodeAll)
          )

      const saveChecks = (saves: ReadonlyArray<MonitorCheckSave>) => {
        if (saves.length === 0) return Effect.void
        const col = <A>(f: (s: MonitorCheckSave) => A) => saves.map(f)
        // Arrays must not hold nulls (the driver cannot encode them): "" and -1 stand for NULL.
        return sql`
          UPDATE monitors AS m SET
            state = CASE WHEN m.state = 'paused' THEN m.state ELSE v.state END,
            consecutive_failures = v.failures,
            ssl_notified_days = NULLIF(v.ssl, -1),
            last_changed_at = NULLIF(v.changed, '')::timestamptz,
            last_checked_at = v.checked::timestamptz,
            last_error = NULLIF(v.error, ''),
            last_response_ms = v.response,
            last_http_status = v.http,
            tls_valid_to = COALESCE(NULLIF(v.tls_to, '')::timestamptz, m.tls_valid_to),
            tls_issuer = COALESCE(NULLIF(v.tls_issuer, ''), m.tls_issuer)
          FROM (SELECT * FROM unnest(
            ${col((s) => s.id)}::uuid[], ${col((s) => s.next.state)}::text[], ${col((s) => s.next.consecutive_failures)}::int[],
            ${col((s) => s.next.last_ssl_threshold_notified ?? -1)}::int[], ${col((s) => s.next.last_changed_at ?? "")}::text[],
            ${col((s) => s.next.last_checked_at ?? new Date().toISOString())}::text[], ${col((s) => s.next.last_error ?? "")}::text[],
            ${col((s) => Math.round(s.response_ms))}::int[], ${col((s) => s.http_status)}::int[],
            ${col((s) => s.tls_valid_to ?? "")}::text[], ${col((s) => s.tls_issuer ?? "")}::text[]
          ) AS t(id, state, failures, ssl, changed, checked, error, response, http, tls_to, tls_issuer)) AS v
          WHERE m.id = v.id`.pipe(Effect.asVoid, Effect.orDie)
      }

      return MonitorStore.of({ versions, loadByIds, saveChecks })
    })
  )
}
