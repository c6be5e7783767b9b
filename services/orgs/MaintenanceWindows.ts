import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { type Forbidden, InvalidParameter, NotFound } from "../domain/api/Errors.ts"
import {
  type MaintenanceWindow,
  type MaintenanceWindowCreate,
  type MaintenanceWindowUpdate,
  parseInstant
} from "../domain/api/Maintenance.ts"
import type { Principal } from "../domain/Principal.ts"
import { rowsOf } from "../platform/Rows.ts"
import { requirePermission } from "./Access.ts"
import { recordAudit } from "./Audit.ts"
import { cursorAt, listPage, type PageRequest } from "./Paging.ts"
import type { Page } from "../domain/api/Paging.ts"

const WindowRow = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  description: Schema.String,
  stack_id: Schema.NullOr(Schema.String),
  starts_at: Schema.Date,
  ends_at: Schema.Date,
  active: Schema.Boolean,
  created_at: Schema.Date,
  cursor_at: Schema.String
})
type WindowRow = typeof WindowRow.Type
const decodeWindows = rowsOf("maintenance_windows", WindowRow)

const iso = (d: Date) => new Date(d).toISOString()

const toWindow = (row: WindowRow): MaintenanceWindow => ({
  id: row.id,
  title: row.title,
  description: row.description,
  stack_id: row.stack_id,
  starts_at: iso(row.starts_at),
  ends_at: iso(row.ends_at),
  active: row.active,
  created_at: iso(row.created_at)
})

/** What the audit log keeps: the settings, not whether the window happened to be active at the time. */
const audited = ({ active: _, created_at: __, ...settings }: MaintenanceWindow) => settings

const columns = `t.id, t.title, t.description, t.stack_id, t.starts_at, t.ends_at, t.created_at,
  (t.starts_at <= now() AND t.ends_at > now()) AS active`

const windowNotFound = (id: string) => new NotFound({ field: "id", message: `no maintenance window ${id} in this organization` })

/** A date-time the schema has already checked. */
const instant = (text: string): Date => parseInstant(text)!

const endsAfterStarts = (starts: Date, ends: Date): Effect.Effect<void, InvalidParameter> =>
  ends.getTime() > starts.getTime()
    ? Effect.void
    : Effect.fail(new InvalidParameter({ field: "ends_at", message: "ends_at must be after starts_at" }))


/**
 * An organization's own maintenance windows, for the whole organization or
 * one of its stacks: while one is active, alerts in its scope are held.
 * Every change is audited in its transaction.
 */
export class MaintenanceWindows extends Context.Service<MaintenanceWindows, {
  list(principal: Principal, query: PageRequest & { readonly active?: "true" | "false" | undefined }): Effect.Effect<Page<MaintenanceWindow>, Forbidden | InvalidParameter>
  create(principal: Principal, input: MaintenanceWindowCreate): Effect.Effect<MaintenanceWindow, Forbidden | NotFound | InvalidParameter>
  get(principal: Principal, id: string): Effect.Effect<MaintenanceWindow, Forbidden | NotFound>
  update(principal: Principal, id: string, input: MaintenanceWindowUpdate): Effect.Effect<MaintenanceWindow, Forbidden | NotFound | InvalidParameter>
  remove(principal: Principal, id: string): Effect.Effect<void, Forbidden | NotFound>
}>()("statusgrid/orgs/MaintenanceWindows") {
  static readonly layer = Layer.effect(
    MaintenanceWindows,
    Effect.gen(function*() {
      const sql = yield* SqlClient

      const windowRow = (orgId: string, id: string, lock = false) =>
        sql`
          SELECT ${sql.literal(columns)}, ${sql.literal(cursorAt)} FROM maintenance_windows t
          WHERE t.id = ${id}::uuid AND t.organization_id = ${orgId}::uuid ${sql.literal(lock ? "FOR UPDATE" : "")}`.pipe(Effect.flatMap(decodeWindows),
          Effect.map((rows) => rows[0])
        )

      /** 404 unless the stack is the organization's; its row stays locked (shared) so it cannot go before the window is written. */
      const ensureStack = Effect.fn("MaintenanceWindows.ensureStack")(function*(orgId: string, stackId: string | null) {
        if (stackId === null) return
        const [row] = yield* sql`SELECT 1 FROM stacks WHERE id = ${stackId}::uuid AND organization_id = ${orgId}::uuid FOR SHARE`
        if (row === undefined) return yield* new NotFound({ field: "stack_id", message: `no stack ${stackId} in this organization` })
      })

      const list = Effect.fn("MaintenanceWindows.list")(function*(
        principal: Principal,
        query: PageRequest & { readonly active?: "true" | "false" | undefined }
      ) {
        yield* requirePermission(principal, "view")
        const covering = sql`(t.starts_at <= now() AND t.ends_at > now())`
        const filter = query.active === "true" ? covering : query.active === "false" ? sql`NOT ${covering}` : sql`true`
        return yield* listPage({
          page: query,
          select: (where, limit) =>
            sql`
              SELECT ${sql.literal(columns)}, ${sql.literal(cursorAt)}
              FROM maintenance_windows t
              WHERE t.organization_id = ${principal.organization_id}::uuid AND ${filter} AND ${where}
              ORDER BY t.created_at, t.id LIMIT ${limit}`.pipe(Effect.flatMap(decodeWindows)),
          map: toWindow
        })
      })

      const create = Effect.fn("MaintenanceWindows.create")(function*(principal: Principal, input: MaintenanceWindowCreate) {
        yield* requirePermission(principal, "content.write")
        const orgId = principal.organization_id
        const starts = instant(input.starts_at)
        const ends = instant(input.ends_at)
        yield* endsAfterStarts(starts, ends)
        const stackId = input.stack_id ?? null
        return yield* sql.withTransaction(Effect.gen(function*() {
          yield* ensureStack(orgId, stackId)
          const [row] = yield* sql`
            INSERT INTO maintenance_windows AS t (organization_id, title, description, stack_id, starts_at, ends_at, created_by)
            VALUES (${orgId}::uuid, ${input.title}, ${input.description ?? ""}, ${stackId}::uuid,
              ${starts.toISOString()}::timestamptz, ${ends.toISOString()}::timestamptz,
              ${principal.actor.kind === "user" ? principal.actor.id : null}::uuid)
            RETURNING ${sql.literal(columns)}, ${sql.literal(cursorAt)}`.pipe(Effect.flatMap(decodeWindows))
          const created = toWindow(row!)
          yield* recordAudit(principal, {
            action: "maintenance_window.created",
            entity_type: "maintenance_window",
            entity_id: created.id,
            after: audited(created)
          })
          return created
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      const get = Effect.fn("MaintenanceWindows.get")(function*(principal: Principal, id: string) {
        yield* requirePermission(principal, "view")
        const row = yield* windowRow(principal.organization_id, id).pipe(Effect.orDie)
        if (row === undefined) return yield* windowNotFound(id)
        return toWindow(row)
      })

      const update = Effect.fn("MaintenanceWindows.update")(function*(principal: Principal, id: string, input: MaintenanceWindowUpdate) {
        yield* requirePermission(principal, "content.write")
        const orgId = principal.organization_id
        return yield* sql.withTransaction(Effect.gen(function*() {
          const row = yield* windowRow(orgId, id, true)
          if (row === undefined) return yield* windowNotFound(id)
          const before = toWindow(row)
          const starts = input.starts_at === undefined ? new Date(row.starts_at) : instant(input.starts_at)
          const ends = input.ends_at === undefined ? new Date(row.ends_at) : instant(input.ends_at)
          yield* endsAfterStarts(starts, ends)
          const stackId = input.stack_id === undefined ? row.stack_id : input.stack_id
          if (stackId !== row.stack_id) yield* ensureStack(orgId, stackId)
          const next = {
            title: input.title ?? row.title,
            description: input.description ?? row.description,
            stack_id: stackId,
            starts_at: starts.toISOString(),
            ends_at: ends.toISOString()
          }
          const unchanged = (Object.keys(next) as Array<keyof typeof next>).every((k) => next[k] === before[k])
          if (unchanged) return before
          const [updated] = yield* sql`
            UPDATE maintenance_windows AS t SET title = ${next.title}, description = ${next.description}, stack_id = ${next.stack_id}::uuid,
              starts_at = ${next.starts_at}::timestamptz, ends_at = ${next.ends_at}::timestamptz,
              revision = t.revision + 1, updated_at = now()
            WHERE t.id = ${id}::uuid
            RETURNING ${sql.literal(columns)}, ${sql.literal(cursorAt)}`.pipe(Effect.flatMap(decodeWindows))
          const after = toWindow(updated!)
          yield* recordAudit(principal, {
            action: "maintenance_window.updated",
            entity_type: "maintenance_window",
            entity_id: id,
            before: audited(before),
            after: audited(after)
          })
          return after
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      const remove = Effect.fn("MaintenanceWindows.remove")(function*(principal: Principal, id: string) {
        yield* requirePermission(principal, "content.delete")
        const orgId = principal.organization_id
        yield* sql.withTransaction(Effect.gen(function*() {
          const row = yield* windowRow(orgId, id, true)
          if (row === undefined) return yield* windowNotFound(id)
          yield* sql`DELETE FROM maintenance_windows WHERE id = ${id}::uuid`
          yield* recordAudit(principal, {
            action: "maintenance_window.deleted",
            entity_type: "maintenance_window",
            entity_id: id,
            before: audited(toWindow(row))
          })
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      // The audit log and paging run on this layer's connection (and so inside its transactions).
      const onSql = <A, E>(effect: Effect.Effect<A, E, SqlClient>) => Effect.provideService(effect, SqlClient, sql)
      return MaintenanceWindows.of({
        list: (principal, query) => onSql(list(principal, query)),
        create: (principal, input) => onSql(create(principal, input)),
        get: (principal, id) => get(principal, id),
        update: (principal, id, input) => onSql(update(principal, id, input)),
        remove: (principal, id) => onSql(remove(principal, id))
      })
    })
  )
}
