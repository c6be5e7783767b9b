import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { MonitorAgents } from "../poller/MonitorAgents.ts"
import { SecretBox } from "../platform/SecretBox.ts"
import { checkUrlTarget, type TargetRefused } from "./AddressGuard.ts"
import { type FieldIssue, MonitorInvalid, type MonitorSettings, validateMonitor } from "./Validate.ts"

export class MonitorNotFound extends Schema.TaggedError<MonitorNotFound>()("MonitorNotFound", {
  id: Schema.String
}) {}

export interface CreatedMonitor {
  readonly id: string
  readonly settings: MonitorSettings
  /** The spec's recommendations the settings do not follow: accepted, shown to the user. */
  readonly warnings: ReadonlyArray<FieldIssue>
}

/**
 * An organization's website monitors in PostgreSQL: validated settings,
 * credentials encrypted, and a URL whose addresses are public (unless the
 * operator allows private targets, MONITOR_ALLOW_PRIVATE). The shards pick a
 * new monitor up on their next refresh, or at once through ShardReloads.
 */
export class Monitors extends Context.Service<Monitors, {
  create(organizationId: string, input: unknown): Effect.Effect<CreatedMonitor, MonitorInvalid>
  setPaused(organizationId: string, id: string, paused: boolean): Effect.Effect<void, MonitorNotFound>
}>()("statusgrid/monitors/Monitors") {
  static readonly layer = Layer.effect(
    Monitors,
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const box = yield* SecretBox
      const { allowPrivate } = yield* MonitorAgents

      const create = Effect.fn("Monitors.create")(function*(organizationId: string, input: unknown) {
        const { settings, warnings } = yield* validateMonitor(input)
        yield* checkUrlTarget(settings.url, { allowPrivate }).pipe(
          Effect.mapError((refused: TargetRefused) =>
            new MonitorInvalid({ issues: [{ field: "url", message: refused.message }], message: `invalid monitor: url ${refused.message}` })
          )
        )
        const secret = settings.auth === undefined ? null : box.seal(JSON.stringify(settings.auth))
        const [row] = yield* sql<{ id: string }>`
          INSERT INTO monitors (organization_id, name, url, check_type, method, interval_s, alert_threshold, timeout_ms,
            expected_status, headers, auth_type, auth_secret, body, keyword, keyword_mode, degraded_after_ms,
            ssl_expiry_days, follow_redirects, tls_verify, state)
          VALUES (${organizationId}::uuid, ${settings.name}, ${settings.url}, ${settings.check_type}, ${settings.method},
            ${settings.interval}, ${settings.alert_threshold}, ${settings.timeout}, ${settings.expected_status},
            ${JSON.stringify(settings.headers)}::jsonb, ${settings.auth?.type ?? "none"}, ${secret}::bytea,
            ${settings.body ?? null}, ${settings.keyword ?? null}, ${settings.keyword_mode}, ${settings.degraded_after_ms ?? null}::int,
            ${settings.ssl_expiry_days}::int[], ${settings.follow_redirects}, ${settings.tls_verify},
            ${settings.paused ? "paused" : "pending"})
          RETURNING id`.pipe(Effect.orDie)
        return { id: row!.id, settings, warnings } satisfies CreatedMonitor
      })

      const setPaused = Effect.fn("Monitors.setPaused")(function*(organizationId: string, id: string, paused: boolean) {
        const rows = yield* sql<{ id: string }>`
          UPDATE monitors SET
            state = CASE WHEN ${paused} THEN 'paused' WHEN state = 'paused' THEN 'pending' ELSE state END,
            consecutive_failures = CASE WHEN ${paused} OR state = 'paused' THEN 0 ELSE consecutive_failures END,
            last_changed_at = CASE WHEN (state = 'paused') <> ${paused} THEN now() ELSE last_changed_at END,
            updated_at = now()
          WHERE id = ${id}::uuid AND organization_id = ${organizationId}::uuid
          RETURNING id`.pipe(Effect.orDie)
        if (rows.length === 0) return yield* new MonitorNotFound({ id })
      })

      return Monitors.of({ create, setPaused })
    })
  )
}
