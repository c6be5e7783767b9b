import { Context, Duration, Effect, Layer, Option, Result, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { randomUUID } from "node:crypto"
import { Conflict, type Forbidden, InvalidParameter, NotFound, type PlanLimitReached } from "../domain/api/Errors.ts"
import { type MonitorCheckResult, MonitorRecord, type MonitorPatch, type MonitorSaved } from "../domain/api/Monitors.ts"
import { AuthType, type MonitorAuth, MonitorAuth as MonitorAuthSchema, MonitorState } from "../domain/Monitor.ts"
import { requestFromSettings, runCheck } from "../monitors/HttpCheck.ts"
import type { Principal } from "../domain/Principal.ts"
import { requirePermission } from "./Access.ts"
import { recordAudit } from "./Audit.ts"
import { ensureWithinLimit } from "./Limits.ts"
import { cursorAt, listPage, type PageRequest } from "./Paging.ts"
import type { Page } from "../domain/api/Paging.ts"
import { rowsOf } from "../platform/Rows.ts"
import { SecretBox, secretBinding } from "../platform/SecretBox.ts"
import { MonitorAgents } from "../monitors/MonitorAgents.ts"
import { ShardReloads } from "../domain/ShardReloads.ts"
import { checkUrlTarget, type TargetRefused } from "../platform/AddressGuard.ts"
import { MonitorSettingsRow, settingsOfRow } from "../monitors/MonitorRow.ts"
import { type FieldIssue, MonitorInvalid, type MonitorSettings, validateMonitor } from "../monitors/Validate.ts"
import { NullOr } from "../domain/NullOr.ts"

export class MonitorNotFound extends Schema.TaggedError<MonitorNotFound>()("MonitorNotFound", {
  id: Schema.String
}) {}

export interface CreatedMonitor {
  readonly id: string
  readonly settings: MonitorSettings
  /** The recommended ranges (monitors/Validate.ts) the settings do not follow: accepted, shown to the user. */
  readonly warnings: ReadonlyArray<FieldIssue>
}


/** A row of `monitors` as the API reads it (never the credentials). */
const MonitorRow = Schema.Struct({
  ...MonitorSettingsRow.fields,
  id: Schema.String,
  organization_id: Schema.String,
  auth_type: AuthType,
  state: MonitorState,
  consecutive_failures: Schema.Number,
  last_checked_at: NullOr(Schema.DateTimeUtcFromDate),
  last_changed_at: NullOr(Schema.DateTimeUtcFromDate),
  last_error: Schema.NullOr(Schema.String),
  last_response_ms: Schema.NullOr(Schema.Number),
  last_http_status: Schema.NullOr(Schema.Number),
  tls_valid_to: NullOr(Schema.DateTimeUtcFromDate),
  tls_issuer: Schema.NullOr(Schema.String),
  created_at: Schema.DateTimeUtcFromDate,
  updated_at: Schema.DateTimeUtcFromDate,
  /** updated_at to the microsecond: an update applies only to the version it was validated against. */
  version: Schema.String,
  cursor_at: Schema.String
})
type MonitorRow = typeof MonitorRow.Type
const decodeMonitors = rowsOf("monitors", MonitorRow)

/** What every query of this module selects from `monitors t`. */
const columns = `t.id, t.organization_id, t.name, t.url, t.check_type, t.method, t.interval_s, t.alert_threshold, t.timeout_ms,
  t.expected_status, t.headers, t.auth_type, t.body, t.keyword, t.keyword_mode, t.degraded_after_ms, t.ssl_expiry_days,
  t.follow_redirects, t.tls_verify, t.state, t.consecutive_failures, t.last_checked_at, t.last_changed_at, t.last_error,
  t.last_response_ms, t.last_http_status, t.tls_valid_to, t.tls_issuer, t.created_at, t.updated_at,
  to_char(t.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS version, ${cursorAt}`

export const toMonitorRecord = (row: MonitorRow): MonitorRecord => ({
  id: row.id,
  organization_id: row.organization_id,
  name: row.name,
  url: row.url,
  check_type: row.check_type,
  interval: row.interval_s,
  alert_threshold: row.alert_threshold,
  timeout: row.timeout_ms,
  expected_status: row.expected_status,
  method: row.method,
  headers: row.headers,
  auth: { type: row.auth_type },
  body: row.body,
  keyword: row.keyword,
  keyword_mode: row.keyword_mode,
  degraded_after_ms: row.degraded_after_ms,
  ssl_expiry_days: row.ssl_expiry_days,
  follow_redirects: row.follow_redirects,
  tls_verify: row.tls_verify,
  paused: row.state === "paused",
  state: row.state,
  consecutive_failures: row.consecutive_failures,
  last_checked_at: row.last_checked_at,
  last_changed_at: row.last_changed_at,
  last_error: row.last_error,
  last_response_ms: row.last_response_ms,
  last_http_status: row.last_http_status,
  tls_valid_to: row.tls_valid_to,
  tls_issuer: row.tls_issuer,
  created_at: row.created_at,
  updated_at: row.updated_at
})

const encodeRecord = Schema.encodeSync(MonitorRecord)
const secretRows = rowsOf("monitors", Schema.Struct({ auth_secret: Schema.NullOr(Schema.Uint8Array) }))
const decodeAuth = Schema.decodeUnknownEffect(Schema.fromJsonString(MonitorAuthSchema))

/** The outcome of a check not run because the monitor's stored credentials cannot be opened. */
const credentialsUnreadable = (url: string, error: string): MonitorCheckResult => ({
  status: "down",
  http_status: 0,
  error_code: "credentials",
  error: `the stored credentials cannot be read, so no request was sent: ${error}`,
  phases: { dns_ms: 0, connect_ms: 0, tls_ms: 0, first_byte_ms: 0, total_ms: 0 },
  reused: false,
  redirects: 0,
  final_url: url,
  bytes: 0,
  truncated: false,
  tls: null,
  checked_at: new Date().toISOString()
})

/** Stands in for stored credentials while validating merged settings: only their presence matters there. */
const authPlaceholder = (type: AuthType): MonitorAuth | undefined =>
  type === "basic"
    ? { type: "basic", username: "", password: "" }
    : type === "bearer"
    ? { type: "bearer", token: "stored" }
    : undefined

/** A stored monitor's settings as a create body, to merge a patch into (pausing has its own endpoints). */
const storedInput = (row: MonitorRow): Record<string, unknown> => {
  const { paused: _paused, ...settings } = settingsOfRow(row, authPlaceholder(row.auth_type))
  return settings
}

/**
 * The settings a patch leads to, as a create body: the patch's fields over
 * the stored ones, `null` removing a setting. A new interval (either
 * spelling) replaces the stored one; a new URL without `check_type` takes
 * its scheme's.
 */
export const mergePatch = (stored: Readonly<Record<string, unknown>>, patch: MonitorPatch): Record<string, unknown> => {
  const merged: Record<string, unknown> = { ...stored }
  if (patch.interval !== undefined || patch.check_interval !== undefined) delete merged["interval"]
  if (patch.url !== undefined && patch.check_type === undefined) delete merged["check_type"]
  for (const [field, value] of Object.entries(patch)) {
    if (value === null) delete merged[field]
    else if (value !== undefined) merged[field] = value
  }
  return merged
}

/** PostgreSQL text cannot hold NUL: such settings are invalid rather than a failed write. */
const validate = (input: unknown) =>
  Effect.flatMap(validateMonitor(input), (validated) => {
    const issues = (["name", "body", "keyword"] as const)
      .filter((field) => validated.settings[field]?.includes("\u0000"))
      .map((field) => ({ field, message: "must not contain NUL characters" }))
    return issues.length === 0 ? Effect.succeed(validated) : Effect.fail(
      new MonitorInvalid({ issues, message: `invalid monitor: ${issues.map((i) => `${i.field} ${i.message}`).join("; ")}` })
    )
  })

/** Invalid settings as the API's 400: the first field at fault, every problem in the message. */
const toInvalidParameter = (invalid: MonitorInvalid): InvalidParameter =>
  new InvalidParameter({ field: invalid.issues[0]?.field ?? "body", message: invalid.message })

const notFound = (id: string) => new NotFound({ field: "id", message: `no monitor ${id} in this organization` })

/** Times an optimistic update is retried when the monitor changed between reading and writing it. */
const updateAttempts = 3

/**
 * An organization's website monitors in PostgreSQL: validated settings,
 * credentials encrypted, and a URL whose addresses are public (unless the
 * operator allows private targets, MONITOR_ALLOW_PRIVATE). The shards pick a
 * change up on their next refresh, or at once through ShardReloads when the
 * process has it (a runner with the poller).
 *
 * The methods taking a Principal are the API's: permission first, plan limit
 * and audit entry in the change's transaction, another organization's
 * monitors answered as not found. `create` and `setPaused` act without a
 * caller (tests, tools): no permission, limit or audit.
 */
export class Monitors extends Context.Service<Monitors, {
  create(organizationId: string, input: unknown): Effect.Effect<CreatedMonitor, MonitorInvalid>
  setPaused(organizationId: string, id: string, paused: boolean): Effect.Effect<void, MonitorNotFound>
  list(principal: Principal, page: PageRequest): Effect.Effect<Page<MonitorRecord>, Forbidden | InvalidParameter>
  get(principal: Principal, id: string): Effect.Effect<MonitorRecord, Forbidden | NotFound>
  add(principal: Principal, input: unknown): Effect.Effect<MonitorSaved, Forbidden | InvalidParameter | PlanLimitReached>
  update(principal: Principal, id: string, patch: MonitorPatch): Effect.Effect<MonitorSaved, Forbidden | InvalidParameter | NotFound | Conflict>
  pause(principal: Principal, id: string): Effect.Effect<MonitorRecord, Forbidden | NotFound>
  resume(principal: Principal, id: string): Effect.Effect<MonitorRecord, Forbidden | NotFound>
  remove(principal: Principal, id: string): Effect.Effect<void, Forbidden | NotFound>
  /** Runs one check at once with the stored settings and credentials (a trial: state, alerts and check log untouched). */
  checkNow(principal: Principal, id: string): Effect.Effect<MonitorCheckResult, Forbidden | NotFound>
}>()("statusgrid/orgs/Monitors") {
  static readonly layer = Layer.effect(
    Monitors,
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const box = yield* SecretBox
      const { allowPrivate, pool } = yield* MonitorAgents
      const reloads = yield* Effect.serviceOption(ShardReloads)

      /** Tells the monitor's shard, when this process reaches the shards; bounded, as the shards also refresh on their own. */
      const reload = (id: string) =>
        Option.isNone(reloads) ? Effect.void : reloads.value.monitors([id]).pipe(Effect.timeout(Duration.seconds(2)), Effect.ignore)

      const guard = (url: string) =>
        checkUrlTarget(url, { allowPrivate }).pipe(
          Effect.mapError((refused: TargetRefused) =>
            new MonitorInvalid({ issues: [{ field: "url", message: refused.message }], message: `invalid monitor: url ${refused.message}` })
          )
        )

      /** Validated and guarded settings, ready to store. */
      const accept = Effect.fn("Monitors.accept")(function*(input: unknown) {
        const validated = yield* validate(input)
        yield* guard(validated.settings.url)
        return validated
      })

      const insert = (organizationId: string, settings: MonitorSettings) => {
        // The id is made here, not by PostgreSQL: the credentials are sealed for this row before it is written.
        const id = randomUUID()
        const secret = settings.auth === undefined ? null : box.seal(JSON.stringify(settings.auth), secretBinding("monitor auth", organizationId, id))
        return sql`
          INSERT INTO monitors AS t (id, organization_id, name, url, check_type, method, interval_s, alert_threshold, timeout_ms,
            expected_status, headers, auth_type, auth_secret, body, keyword, keyword_mode, degraded_after_ms,
            ssl_expiry_days, follow_redirects, tls_verify, state)
          VALUES (${id}::uuid, ${organizationId}::uuid, ${settings.name}, ${settings.url}, ${settings.check_type}, ${settings.method},
            ${settings.interval}, ${settings.alert_threshold}, ${settings.timeout}, ${settings.expected_status},
            ${JSON.stringify(settings.headers)}::jsonb, ${settings.auth?.type ?? "none"}, ${secret}::bytea,
            ${settings.body ?? null}, ${settings.keyword ?? null}, ${settings.keyword_mode}, ${settings.degraded_after_ms ?? null}::int,
            ${settings.ssl_expiry_days}::int[], ${settings.follow_redirects}, ${settings.tls_verify},
            ${settings.paused ? "paused" : "pending"})
          RETURNING ${sql.literal(columns)}`.pipe(Effect.flatMap(decodeMonitors), Effect.map((rows) => rows[0]!))
      }

      const selectOne = (organizationId: string, id: string, lock: boolean) =>
        sql`
          SELECT ${sql.literal(columns)} FROM monitors t
          WHERE t.id = ${id}::uuid AND t.organization_id = ${organizationId}::uuid ${sql.literal(lock ? "FOR UPDATE" : "")}`.pipe(Effect.flatMap(decodeMonitors),
            Effect.map((rows) => rows[0])
          )

      /** Pausing resets the failure count; resuming starts again from pending. */
      const updatePaused = (organizationId: string, id: string, paused: boolean) =>
        sql`
          UPDATE monitors AS t SET
            state = CASE WHEN ${paused} THEN 'paused' WHEN t.state = 'paused' THEN 'pending' ELSE t.state END,
            consecutive_failures = CASE WHEN ${paused} OR t.state = 'paused' THEN 0 ELSE t.consecutive_failures END,
            last_changed_at = CASE WHEN (t.state = 'paused') <> ${paused} THEN now() ELSE t.last_changed_at END,
            updated_at = now()
          WHERE t.id = ${id}::uuid AND t.organization_id = ${organizationId}::uuid
          RETURNING ${sql.literal(columns)}`.pipe(Effect.flatMap(decodeMonitors), Effect.map((rows) => rows[0]))

      const create = Effect.fn("Monitors.create")(function*(organizationId: string, input: unknown) {
        const { settings, warnings } = yield* accept(input)
        const row = yield* insert(organizationId, settings).pipe(Effect.orDie)
        return { id: row.id, settings, warnings } satisfies CreatedMonitor
      })

      const setPaused = Effect.fn("Monitors.setPaused")(function*(organizationId: string, id: string, paused: boolean) {
        const row = yield* updatePaused(organizationId, id, paused).pipe(Effect.orDie)
        if (row === undefined) return yield* new MonitorNotFound({ id })
      })

      const list = Effect.fn("Monitors.list")(function*(principal: Principal, page: PageRequest) {
        yield* requirePermission(principal, "view")
        return yield* listPage({
          page,
          select: (where, limit) =>
            sql`
              SELECT ${sql.literal(columns)} FROM monitors t
              WHERE t.organization_id = ${principal.organization_id}::uuid AND ${where}
              ORDER BY t.created_at, t.id LIMIT ${limit}`.pipe(Effect.flatMap(decodeMonitors)),
          map: toMonitorRecord
        })
      })

      const get = Effect.fn("Monitors.get")(function*(principal: Principal, id: string) {
        yield* requirePermission(principal, "view")
        const row = yield* selectOne(principal.organization_id, id, false).pipe(Effect.orDie)
        if (row === undefined) return yield* notFound(id)
        return toMonitorRecord(row)
      })

      const add = Effect.fn("Monitors.add")(function*(principal: Principal, input: unknown) {
        yield* requirePermission(principal, "content.write")
        // Validation and the DNS lookup happen before the transaction: no lock is held while resolving.
        const { settings, warnings } = yield* accept(input).pipe(Effect.mapError(toInvalidParameter))
        const record = yield* sql.withTransaction(Effect.gen(function*() {
          yield* ensureWithinLimit(principal.organization_id, "max_monitors")
          const record = toMonitorRecord(yield* insert(principal.organization_id, settings))
          yield* recordAudit(principal, { action: "monitor.created", entity_type: "monitor", entity_id: record.id, after: encodeRecord(record) })
          return record
        })).pipe(Effect.catchTag("SqlError", Effect.die))
        yield* reload(record.id)
        return { ...record, warnings } satisfies MonitorSaved
      })

      const updateOnce = Effect.fn("Monitors.updateOnce")(function*(principal: Principal, id: string, patch: MonitorPatch) {
        const current = yield* selectOne(principal.organization_id, id, false).pipe(Effect.orDie)
        if (current === undefined) return yield* notFound(id)
        const { settings, warnings } = yield* validate(mergePatch(storedInput(current), patch)).pipe(
          Effect.mapError(toInvalidParameter)
        )
        if (settings.url !== current.url) yield* guard(settings.url).pipe(Effect.mapError(toInvalidParameter))
        // Credentials: kept unless the patch gives new ones (sealed here) or null (removed).
        const auth = patch.auth === undefined
          ? sql`auth_type = t.auth_type, auth_secret = t.auth_secret`
          : patch.auth === null
          ? sql`auth_type = 'none', auth_secret = NULL`
          : sql`auth_type = ${patch.auth.type}, auth_secret = ${box.seal(JSON.stringify(patch.auth), secretBinding("monitor auth", principal.organization_id, current.id))}::bytea`
        const saved = yield* sql.withTransaction(Effect.gen(function*() {
          const before = yield* selectOne(principal.organization_id, id, true)
          if (before === undefined || before.version !== current.version) return undefined
          const [after] = yield* sql`
              UPDATE monitors AS t SET name = ${settings.name}, url = ${settings.url}, check_type = ${settings.check_type},
                method = ${settings.method}, interval_s = ${settings.interval}, alert_threshold = ${settings.alert_threshold},
                timeout_ms = ${settings.timeout}, expected_status = ${settings.expected_status},
                headers = ${JSON.stringify(settings.headers)}::jsonb, ${auth}, body = ${settings.body ?? null},
                keyword = ${settings.keyword ?? null}, keyword_mode = ${settings.keyword_mode},
                degraded_after_ms = ${settings.degraded_after_ms ?? null}::int, ssl_expiry_days = ${settings.ssl_expiry_days}::int[],
                follow_redirects = ${settings.follow_redirects}, tls_verify = ${settings.tls_verify},
                updated_at = clock_timestamp()
              WHERE t.id = ${id}::uuid
              RETURNING ${sql.literal(columns)}`.pipe(Effect.flatMap(decodeMonitors))
          const record = toMonitorRecord(after!)
          yield* recordAudit(principal, {
            action: "monitor.updated",
            entity_type: "monitor",
            entity_id: id,
            before: encodeRecord(toMonitorRecord(before)),
            after: encodeRecord(record)
          })
          return record
        })).pipe(Effect.catchTag("SqlError", Effect.die))
        return saved === undefined ? undefined : { ...saved, warnings } satisfies MonitorSaved
      })

      const update = Effect.fn("Monitors.update")(function*(principal: Principal, id: string, patch: MonitorPatch) {
        yield* requirePermission(principal, "content.write")
        for (let attempt = 0; attempt < updateAttempts; attempt++) {
          const saved = yield* updateOnce(principal, id, patch)
          if (saved !== undefined) {
            yield* reload(id)
            return saved
          }
        }
        return yield* new Conflict({ message: `monitor ${id} kept changing while being updated; try again` })
      })

      const changePaused = Effect.fn("Monitors.changePaused")(function*(principal: Principal, id: string, paused: boolean) {
        yield* requirePermission(principal, "content.write")
        const changed = yield* sql.withTransaction(Effect.gen(function*() {
          const before = yield* selectOne(principal.organization_id, id, true)
          if (before === undefined) return undefined
          // Already in the asked state: nothing changes, nothing is recorded.
          if ((before.state === "paused") === paused) return { record: toMonitorRecord(before), changed: false }
          const after = yield* updatePaused(principal.organization_id, id, paused)
          const record = toMonitorRecord(after!)
          yield* recordAudit(principal, {
            action: paused ? "monitor.paused" : "monitor.resumed",
            entity_type: "monitor",
            entity_id: id,
            before: encodeRecord(toMonitorRecord(before)),
            after: encodeRecord(record)
          })
          return { record, changed: true }
        })).pipe(Effect.orDie)
        if (changed === undefined) return yield* notFound(id)
        if (changed.changed) yield* reload(id)
        return changed.record
      })

      const pause = Effect.fn("Monitors.pause")((principal: Principal, id: string) => changePaused(principal, id, true))
      const resume = Effect.fn("Monitors.resume")((principal: Principal, id: string) => changePaused(principal, id, false))

      const remove = Effect.fn("Monitors.remove")(function*(principal: Principal, id: string) {
        yield* requirePermission(principal, "content.delete")
        const removed = yield* sql.withTransaction(Effect.gen(function*() {
          const [before] = yield* sql`
            DELETE FROM monitors AS t WHERE t.id = ${id}::uuid AND t.organization_id = ${principal.organization_id}::uuid
            RETURNING ${sql.literal(columns)}`.pipe(Effect.flatMap(decodeMonitors))
          if (before === undefined) return false
          yield* recordAudit(principal, {
            action: "monitor.deleted",
            entity_type: "monitor",
            entity_id: id,
            before: encodeRecord(toMonitorRecord(before))
          })
          return true
        })).pipe(Effect.orDie)
        if (!removed) return yield* notFound(id)
        yield* reload(id)
      })

      const checkNow = Effect.fn("Monitors.checkNow")(function*(principal: Principal, id: string) {
        // It sends a request (with the stored credentials) on the organization's behalf: an editor's action.
        yield* requirePermission(principal, "content.write")
        const row = yield* selectOne(principal.organization_id, id, false).pipe(Effect.orDie)
        if (row === undefined) return yield* notFound(id)
        const [stored] = yield* sql`SELECT auth_secret FROM monitors WHERE id = ${id}::uuid`.pipe(
          Effect.flatMap(secretRows),
          Effect.orDie
        )
        const opened = stored?.auth_secret == null
          ? undefined
          : yield* Effect.result(box.open(stored.auth_secret, secretBinding("monitor auth", principal.organization_id, row.id)))
        // Credentials that open under no configured key: no request is sent, the outcome says why.
        if (opened !== undefined && Result.isFailure(opened)) return credentialsUnreadable(row.url, opened.failure.message)
        const secret = opened === undefined ? undefined : yield* decodeAuth(opened.success).pipe(Effect.orDie)
        const request = requestFromSettings(settingsOfRow(row, secret))
        const outcome = yield* Effect.promise(() => runCheck(request, { agentPool: pool, allowPrivate }))
        return { ...outcome, tls: outcome.tls ?? null } satisfies MonitorCheckResult
      })

      // The audit log, limits and paging run on this layer's connection (and so inside its transactions).
      const onSql = <A, E>(effect: Effect.Effect<A, E, SqlClient>) => Effect.provideService(effect, SqlClient, sql)
      return Monitors.of({
        create,
        setPaused,
        list: (principal, page) => onSql(list(principal, page)),
        get,
        add: (principal, input) => onSql(add(principal, input)),
        update: (principal, id, patch) => onSql(update(principal, id, patch)),
        pause: (principal, id) => onSql(pause(principal, id)),
        resume: (principal, id) => onSql(resume(principal, id)),
        remove: (principal, id) => onSql(remove(principal, id)),
        checkNow
      })
    })
  )
}
