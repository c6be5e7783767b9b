import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { randomBytes } from "node:crypto"
import { Conflict, type Forbidden, type InvalidParameter, NotFound, type PlanLimitReached } from "../domain/api/Errors.ts"
import {
  stackLimits,
  type Stack,
  type StackCreate,
  type StackItem,
  type StackItemAdd,
  StackItemKind,
  type StackSummary,
  type StackUpdate,
  StackVisibility
} from "../domain/api/Stacks.ts"
import type { Principal } from "../domain/Principal.ts"
import { type ItemStatus, type StackHealth, stackHealth } from "../domain/StackHealth.ts"
import { ComponentStatus, MonitorState, SourceStatus } from "../domain/Status.ts"
import { slugOf } from "../domain/Text.ts"
import { rowsOf } from "../platform/Rows.ts"
import { requirePermission } from "./Access.ts"
import { recordAudit } from "./Audit.ts"
import { ensureWithinLimit, sourceItemWeight } from "./Limits.ts"
import { cursorAt, listPage, type PageRequest } from "./Paging.ts"
import type { Page } from "../domain/api/Paging.ts"

/** The rows of the queries below, decoded by Schemas compiled once (services/platform/Rows.ts). */
const stacksSlugRows = rowsOf("stacks", Schema.Struct({ slug: Schema.String }))
const maintenanceWindowsIdRows = rowsOf("maintenance_windows", Schema.Struct({ id: Schema.String }))
const componentsIdRows = rowsOf("components", Schema.Struct({ id: Schema.String }))
const sourcesIdRows = rowsOf("sources", Schema.Struct({ id: Schema.String }))
const monitorsIdRows = rowsOf("monitors", Schema.Struct({ id: Schema.String }))
const stackItemsIdRows = rowsOf("stack_items", Schema.Struct({ id: Schema.String }))

/** 24 random bytes, base64url: 192 bits, not guessable, short enough for a link. */
const newShareToken = () => randomBytes(24).toString("base64url")

export const shareUrl = (token: string) => `/share/${token}`

/** "Payments & Billing" -> "payments-and-billing"; room is left for a "-N" suffix. */
export const slugFromName = (name: string): string => slugOf(name, stackLimits.slug - 6, "stack")

/** The first of `base`, `base-2`, `base-3`... not in `taken`. */
export const freeSlug = (base: string, taken: ReadonlySet<string>): string => {
  if (!taken.has(base)) return base
  for (let n = 2;; n++) {
    const candidate = `${base}-${n}`
    if (!taken.has(candidate)) return candidate
  }
}

const StackRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  slug: Schema.String,
  description: Schema.String,
  team: Schema.String,
  visibility: StackVisibility,
  share_token: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  updated_at: Schema.Date,
  cursor_at: Schema.String
})
type StackRow = typeof StackRow.Type
const decodeStacks = rowsOf("stacks", StackRow)
const SummaryRow = Schema.Struct({ ...StackRow.fields, items_count: Schema.Number })
const decodeStackSummaries = rowsOf("stacks", SummaryRow)

const ItemRow = Schema.Struct({
  stack_id: Schema.String,
  id: Schema.String,
  kind: StackItemKind,
  position: Schema.Number,
  added_at: Schema.Date,
  component_id: Schema.NullOr(Schema.String),
  component_name: Schema.NullOr(Schema.String),
  component_status: Schema.NullOr(ComponentStatus),
  component_source_key: Schema.NullOr(Schema.String),
  source_key: Schema.NullOr(Schema.String),
  source_name: Schema.NullOr(Schema.String),
  source_status: Schema.NullOr(SourceStatus),
  monitor_id: Schema.NullOr(Schema.String),
  monitor_name: Schema.NullOr(Schema.String),
  monitor_state: Schema.NullOr(MonitorState)
})
type ItemRow = typeof ItemRow.Type
const decodeItems = rowsOf("stack_items", ItemRow)

const iso = (d: Date) => new Date(d).toISOString()

/** An item row's current status, as the health rule reads it. */
const itemStatus = (row: ItemRow): ItemStatus =>
  row.kind === "component"
    ? { kind: "component", status: row.component_status }
    : row.kind === "source"
    ? { kind: "source", status: row.source_status }
    : { kind: "monitor", status: row.monitor_state }

/** The health banner of each stack (by id) from its item rows; a stack without items is absent (use `emptyHealth`). */
const healthByStack = (rows: ReadonlyArray<ItemRow>): Map<string, StackHealth> => {
  const grouped = new Map<string, Array<ItemStatus>>()
  for (const row of rows) {
    const list = grouped.get(row.stack_id)
    if (list === undefined) grouped.set(row.stack_id, [itemStatus(row)])
    else list.push(itemStatus(row))
  }
  return new Map([...grouped].map(([id, statuses]) => [id, stackHealth(statuses)]))
}
const emptyHealth = stackHealth([])

const stackFields = (row: StackRow) => ({
  id: row.id,
  name: row.name,
  slug: row.slug,
  description: row.description,
  team: row.team,
  visibility: row.visibility,
  share_token: row.share_token,
  share_url: row.share_token === null ? null : shareUrl(row.share_token),
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at)
})

/** What the audit log keeps of a stack: its settings, not the share token (a bearer credential for the public page). */
const audited = (row: StackRow) => ({
  id: row.id,
  name: row.name,
  slug: row.slug,
  description: row.description,
  team: row.team,
  visibility: row.visibility
})

const toItem = (row: ItemRow): StackItem => ({
  id: row.id,
  kind: row.kind,
  position: row.position,
  ...(row.component_id === null ? {} : {
    component: {
      id: row.component_id,
      name: row.component_name!,
      status: row.component_status!,
      source_key: row.component_source_key!
    }
  }),
  ...(row.source_key === null ? {} : { source: { key: row.source_key, name: row.source_name!, status: row.source_status! } }),
  ...(row.monitor_id === null ? {} : { monitor: { id: row.monitor_id, name: row.monitor_name!, state: row.monitor_state! } }),
  added_at: iso(row.added_at)
})

/** What the audit log keeps of an item: what it points at. */
const auditedItem = (stackId: string, item: StackItem) => ({
  stack_id: stackId,
  kind: item.kind,
  position: item.position,
  ...(item.component === undefined ? {} : { component_id: item.component.id }),
  ...(item.source === undefined ? {} : { source_key: item.source.key }),
  ...(item.monitor === undefined ? {} : { monitor_id: item.monitor.id })
})

/** A stack as a wall screen or a public page shows it: no share token, no settings. */
export interface StackView {
  readonly id: string
  readonly name: string
  readonly slug: string
  readonly description: string
  readonly health: StackHealth
  readonly items: ReadonlyArray<StackItem>
}

/** The request field and the stack_items column of each kind of item. */
const itemField = { component: "component_id", source: "source_key", monitor: "monitor_id" } as const
const itemColumn = { component: "component_id", source: "source_id", monitor: "monitor_id" } as const

const columns = "t.id, t.name, t.slug, t.description, t.team, t.visibility, t.share_token, t.created_at, t.updated_at"

const slugTaken = (slug: string) => new Conflict({ field: "slug", message: `the slug ${slug} is taken by another stack of this organization` })
const stackNotFound = (id: string) => new NotFound({ field: "id", message: `no stack ${id} in this organization` })

/** A unique violation (a slug taken by a concurrent request) becomes 409; any other SQL failure is a defect. */
const conflictOnUnique = (slug: string | undefined) => (error: SqlError) =>
  error.reason._tag === "UniqueViolation" && slug !== undefined ? Effect.fail(slugTaken(slug)) : Effect.die(error)


/**
 * An organization's stacks: components of catalog or custom sources, whole
 * sources and website monitors grouped for a dashboard, each private or
 * public with an unguessable share link. Every change is audited in its
 * transaction; creating stacks and adding items count against the plan.
 */
export class Stacks extends Context.Service<Stacks, {
  list(principal: Principal, page: PageRequest): Effect.Effect<Page<StackSummary>, Forbidden | InvalidParameter>
  create(principal: Principal, input: StackCreate): Effect.Effect<Stack, Forbidden | Conflict | PlanLimitReached>
  get(principal: Principal, id: string): Effect.Effect<Stack, Forbidden | NotFound>
  update(principal: Principal, id: string, input: StackUpdate): Effect.Effect<Stack, Forbidden | NotFound | Conflict>
  remove(principal: Principal, id: string): Effect.Effect<void, Forbidden | NotFound>
  addItem(principal: Principal, id: string, input: StackItemAdd): Effect.Effect<StackItem, Forbidden | NotFound | Conflict | PlanLimitReached>
  removeItem(principal: Principal, id: string, itemId: string): Effect.Effect<void, Forbidden | NotFound>
  /** Moves an item one place up (earlier) or down (later) in its stack; at either end it stays where it is. */
  moveItem(principal: Principal, id: string, itemId: string, direction: "up" | "down"): Effect.Effect<ReadonlyArray<StackItem>, Forbidden | NotFound>
  /**
   * Some stacks as a screen shows them (name, health, items), in the order of `ids`, missing ones left out.
   * No permission check: for callers that already know the reader may see them (a share token, a TV link).
   */
  views(ids: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<StackView>>
}>()("statusgrid/orgs/Stacks") {
  static readonly layer = Layer.effect(
    Stacks,
    Effect.gen(function*() {
      const sql = yield* SqlClient

      const stackRow = (orgId: string, id: string, lock = false) =>
        sql`
          SELECT ${sql.literal(columns)}, ${sql.literal(cursorAt)} FROM stacks t
          WHERE t.id = ${id}::uuid AND t.organization_id = ${orgId}::uuid ${sql.literal(lock ? "FOR UPDATE" : "")}`.pipe(Effect.flatMap(decodeStacks),
          Effect.map((rows) => rows[0])
        )

      /**
       * The item rows of some stacks with their targets' current status (PostgreSQL's components,
       * sources and monitors, which the poller and the monitor agents keep current): the one query behind
       * the items and the health banner of every stack read.
       */
      const itemRows = (stackIds: ReadonlyArray<string>, itemId?: string) =>
        stackIds.length === 0 ? Effect.succeed([]) : sql`
          SELECT i.stack_id, i.id, i.kind, i.position, i.added_at,
            c.id AS component_id, c.name AS component_name, c.status AS component_status, cs.key AS component_source_key,
            s.key AS source_key, s.name AS source_name, s.status AS source_status,
            m.id AS monitor_id, m.name AS monitor_name, m.state AS monitor_state
          FROM stack_items i
          LEFT JOIN components c ON c.id = i.component_id
          LEFT JOIN sources cs ON cs.id = c.source_id
          LEFT JOIN sources s ON s.id = i.source_id
          LEFT JOIN monitors m ON m.id = i.monitor_id
          WHERE i.stack_id = ANY(${stackIds}::uuid[]) ${itemId === undefined ? sql`` : sql`AND i.id = ${itemId}::uuid`}
          ORDER BY i.stack_id, i.position, i.added_at, i.id`.pipe(Effect.flatMap(decodeItems))

      const items = (stackId: string, itemId?: string) => itemRows([stackId], itemId).pipe(Effect.map((rows) => rows.map(toItem)))

      const withItems = (row: StackRow) =>
        Effect.map(itemRows([row.id]), (rows): Stack => ({
          ...stackFields(row),
          health: healthByStack(rows).get(row.id) ?? emptyHealth,
          items: rows.map(toItem)
        }))

      const list = Effect.fn("Stacks.list")(function*(principal: Principal, page: PageRequest) {
        yield* requirePermission(principal, "view")
        return yield* listPage({
          page,
          select: (where, limit) =>
            sql`
              SELECT ${sql.literal(columns)}, ${sql.literal(cursorAt)},
                (SELECT count(*)::int FROM stack_items i WHERE i.stack_id = t.id) AS items_count
              FROM stacks t WHERE t.organization_id = ${principal.organization_id}::uuid AND ${where}
              ORDER BY t.created_at, t.id LIMIT ${limit}`.pipe(
              Effect.flatMap(decodeStackSummaries),
              Effect.flatMap((rows) =>
                Effect.map(itemRows(rows.map((r) => r.id)), (items) => {
                  const health = healthByStack(items)
                  return rows.map((row) => ({ ...row, health: health.get(row.id) ?? emptyHealth }))
                })
              )
            ),
          map: (row): StackSummary => ({ ...stackFields(row), health: row.health, items_count: Number(row.items_count) })
        })
      })

      const create = Effect.fn("Stacks.create")(function*(principal: Principal, input: StackCreate) {
        yield* requirePermission(principal, "content.write")
        const orgId = principal.organization_id
        const visibility = input.visibility ?? "private"
        return yield* sql.withTransaction(Effect.gen(function*() {
          // Locks the organization's row: concurrent creates in it wait here, so the free slug stays free.
          yield* ensureWithinLimit(orgId, "max_stacks")
          let slug = input.slug
          if (slug === undefined) {
            const base = slugFromName(input.name)
            const taken = yield* sql`
              SELECT slug FROM stacks WHERE organization_id = ${orgId}::uuid AND (slug = ${base} OR slug LIKE ${`${base}-%`})`.pipe(Effect.flatMap(stacksSlugRows))
            slug = freeSlug(base, new Set(taken.map((r) => r.slug)))
          }
          const [row] = yield* sql`
            INSERT INTO stacks AS t (organization_id, name, slug, description, team, visibility, share_token, created_by)
            VALUES (${orgId}::uuid, ${input.name}, ${slug}, ${input.description ?? ""}, ${input.team ?? ""}, ${visibility},
              ${visibility === "public" ? newShareToken() : null},
              ${principal.actor.kind === "user" ? principal.actor.id : null}::uuid)
            ON CONFLICT (organization_id, slug) DO NOTHING
            RETURNING ${sql.literal(columns)}, ${sql.literal(cursorAt)}`.pipe(Effect.flatMap(decodeStacks))
          if (row === undefined) return yield* slugTaken(slug)
          yield* recordAudit(principal, { action: "stack.created", entity_type: "stack", entity_id: row.id, after: audited(row) })
          return { ...stackFields(row), health: emptyHealth, items: [] } satisfies Stack
        })).pipe(Effect.catchTag("SqlError", conflictOnUnique(input.slug)))
      })

      const get = Effect.fn("Stacks.get")(function*(principal: Principal, id: string) {
        yield* requirePermission(principal, "view")
        const row = yield* stackRow(principal.organization_id, id).pipe(Effect.orDie)
        if (row === undefined) return yield* stackNotFound(id)
        return yield* withItems(row).pipe(Effect.orDie)
      })

      const update = Effect.fn("Stacks.update")(function*(principal: Principal, id: string, input: StackUpdate) {
        yield* requirePermission(principal, "content.write")
        const orgId = principal.organization_id
        return yield* sql.withTransaction(Effect.gen(function*() {
          const before = yield* stackRow(orgId, id, true)
          if (before === undefined) return yield* stackNotFound(id)
          if (input.slug !== undefined && input.slug !== before.slug) {
            const [other] = yield* sql`SELECT 1 FROM stacks WHERE organization_id = ${orgId}::uuid AND slug = ${input.slug}`
            if (other !== undefined) return yield* slugTaken(input.slug)
          }
          const visibility = input.visibility ?? before.visibility
          // A new token each time a stack becomes public: an old link stays dead.
          const shareToken = visibility === "private" ? null : before.share_token ?? newShareToken()
          const next = {
            name: input.name ?? before.name,
            slug: input.slug ?? before.slug,
            description: input.description ?? before.description,
            team: input.team ?? before.team,
            visibility
          }
          const unchanged = (Object.keys(next) as Array<keyof typeof next>).every((k) => next[k] === before[k])
          if (unchanged) return yield* withItems(before)
          const [after] = yield* sql`
            UPDATE stacks AS t SET name = ${next.name}, slug = ${next.slug}, description = ${next.description}, team = ${next.team},
              visibility = ${next.visibility}, share_token = ${shareToken}, updated_at = now()
            WHERE t.id = ${id}::uuid
            RETURNING ${sql.literal(columns)}, ${sql.literal(cursorAt)}`.pipe(Effect.flatMap(decodeStacks))
          yield* recordAudit(principal, {
            action: "stack.updated",
            entity_type: "stack",
            entity_id: id,
            before: audited(before),
            after: audited(after!)
          })
          return yield* withItems(after!)
        })).pipe(Effect.catchTag("SqlError", conflictOnUnique(input.slug)))
      })

      const remove = Effect.fn("Stacks.remove")(function*(principal: Principal, id: string) {
        yield* requirePermission(principal, "content.delete")
        const orgId = principal.organization_id
        yield* sql.withTransaction(Effect.gen(function*() {
          const before = yield* stackRow(orgId, id, true)
          if (before === undefined) return yield* stackNotFound(id)
          const list = yield* items(id)
          // Its maintenance windows go with it (ON DELETE CASCADE); the entry says which.
          const windows = yield* sql`SELECT id FROM maintenance_windows WHERE stack_id = ${id}::uuid ORDER BY created_at, id`.pipe(Effect.flatMap(maintenanceWindowsIdRows))
          yield* sql`DELETE FROM stacks WHERE id = ${id}::uuid`
          yield* recordAudit(principal, {
            action: "stack.deleted",
            entity_type: "stack",
            entity_id: id,
            before: {
              ...audited(before),
              items: list.map((item) => auditedItem(id, item)),
              maintenance_window_ids: windows.map((w) => w.id)
            }
          })
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      /**
       * The item's target as a stack_items column, or 404 when the organization cannot see it: its own
       * sources, and the catalog's enabled ones (the public API's; not the demo's synthetic sources
       * outside a demo).
       */
      const target = Effect.fn("Stacks.target")(function*(orgId: string, input: StackItemAdd) {
        // The schema guarantees the one field `kind` names.
        const ref = input[itemField[input.kind]]!
        const [row] = yield* (input.kind === "component"
          ? sql`
                SELECT c.id FROM components c JOIN sources s ON s.id = c.source_id
                WHERE c.id = ${ref}::uuid AND ((s.organization_id IS NULL AND s.enabled) OR s.organization_id = ${orgId}::uuid)`.pipe(Effect.flatMap(componentsIdRows))
          : input.kind === "source"
          ? sql`
                SELECT s.id FROM sources s WHERE s.key = ${ref} AND ((s.organization_id IS NULL AND s.enabled) OR s.organization_id = ${orgId}::uuid)`.pipe(Effect.flatMap(sourcesIdRows))
          : sql`SELECT m.id FROM monitors m WHERE m.id = ${ref}::uuid AND m.organization_id = ${orgId}::uuid`.pipe(Effect.flatMap(monitorsIdRows)))
        if (row === undefined) {
          return yield* new NotFound({ field: itemField[input.kind], message: `no ${input.kind} ${ref} visible to this organization` })
        }
        return { column: itemColumn[input.kind], value: row.id }
      })

      const addItem = Effect.fn("Stacks.addItem")(function*(principal: Principal, id: string, input: StackItemAdd) {
        yield* requirePermission(principal, "content.write")
        const orgId = principal.organization_id
        return yield* sql.withTransaction(Effect.gen(function*() {
          const stack = yield* stackRow(orgId, id, true)
          if (stack === undefined) return yield* stackNotFound(id)
          const { column, value } = yield* target(orgId, input)
          const [present] = yield* sql`SELECT 1 FROM stack_items WHERE stack_id = ${id}::uuid AND ${sql(column)} = ${value}::uuid`
          const alreadyIn = () => new Conflict({ field: itemField[input.kind], message: `this ${input.kind} is already in the stack` })
          if (present !== undefined) return yield* alreadyIn()
          // Locks the organization's row: two adds cannot both take the last free place.
          // A whole source takes as many places as it has components.
          const places = input.kind === "source" ? yield* sourceItemWeight(value) : 1
          yield* ensureWithinLimit(orgId, "max_components", places)
          const [inserted] = yield* sql`
            INSERT INTO stack_items (stack_id, kind, ${sql(column)}, position)
            VALUES (${id}::uuid, ${input.kind}, ${value}::uuid,
              (SELECT coalesce(max(position) + 1, 0) FROM stack_items WHERE stack_id = ${id}::uuid))
            ON CONFLICT DO NOTHING
            RETURNING id`.pipe(Effect.flatMap(stackItemsIdRows))
          if (inserted === undefined) return yield* alreadyIn()
          const [item] = yield* items(id, inserted.id)
          yield* recordAudit(principal, {
            action: "stack.item_added",
            entity_type: "stack_item",
            entity_id: item!.id,
            after: auditedItem(id, item!)
          })
          return item!
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      const removeItem = Effect.fn("Stacks.removeItem")(function*(principal: Principal, id: string, itemId: string) {
        yield* requirePermission(principal, "content.write")
        const orgId = principal.organization_id
        yield* sql.withTransaction(Effect.gen(function*() {
          const stack = yield* stackRow(orgId, id, true)
          if (stack === undefined) return yield* stackNotFound(id)
          const [item] = yield* items(id, itemId)
          if (item === undefined) return yield* new NotFound({ field: "item_id", message: `no item ${itemId} in stack ${id}` })
          yield* sql`DELETE FROM stack_items WHERE id = ${itemId}::uuid`
          yield* recordAudit(principal, {
            action: "stack.item_removed",
            entity_type: "stack_item",
            entity_id: itemId,
            before: auditedItem(id, item)
          })
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      const moveItem = Effect.fn("Stacks.moveItem")(function*(principal: Principal, id: string, itemId: string, direction: "up" | "down") {
        yield* requirePermission(principal, "content.write")
        const orgId = principal.organization_id
        return yield* sql.withTransaction(Effect.gen(function*() {
          const stack = yield* stackRow(orgId, id, true)
          if (stack === undefined) return yield* stackNotFound(id)
          const list = yield* items(id)
          const at = list.findIndex((i) => i.id === itemId)
          if (at < 0) return yield* new NotFound({ field: "item_id", message: `no item ${itemId} in stack ${id}` })
          const to = direction === "up" ? at - 1 : at + 1
          if (to < 0 || to >= list.length) return list
          // Positions renumbered 0..n-1 in the new order (older rows may share a position).
          const order = [...list]
          ;[order[at], order[to]] = [order[to]!, order[at]!]
          const ids = order.map((i) => i.id)
          yield* sql`
            UPDATE stack_items i SET position = o.ord - 1
            FROM unnest(${ids}::uuid[]) WITH ORDINALITY AS o(id, ord) WHERE i.id = o.id AND i.stack_id = ${id}::uuid`
          yield* recordAudit(principal, {
            action: "stack.item_moved",
            entity_type: "stack_item",
            entity_id: itemId,
            before: { stack_id: id, position: at },
            after: { stack_id: id, position: to }
          })
          return yield* items(id)
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      // The audit log, limits and paging run on this layer's connection (and so inside its transactions).
      const onSql = <A, E>(effect: Effect.Effect<A, E, SqlClient>) => Effect.provideService(effect, SqlClient, sql)
      const views = (ids: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          if (ids.length === 0) return []
          const rows = yield* sql`
            SELECT ${sql.literal(columns)}, ${sql.literal(cursorAt)} FROM stacks t WHERE t.id = ANY(${ids}::uuid[])`.pipe(Effect.flatMap(decodeStacks))
          const itemList = yield* itemRows(rows.map((r) => r.id))
          const health = healthByStack(itemList)
          const byId = new Map(rows.map((r) => [r.id, r]))
          return ids.flatMap((id): Array<StackView> => {
            const row = byId.get(id)
            if (row === undefined) return []
            return [{
              id: row.id,
              name: row.name,
              slug: row.slug,
              description: row.description,
              health: health.get(row.id) ?? emptyHealth,
              items: itemList.filter((i) => i.stack_id === row.id).map(toItem)
            }]
          })
        }).pipe(Effect.orDie)

      return Stacks.of({
        views,
        list: (principal, page) => onSql(list(principal, page)),
        create: (principal, input) => onSql(create(principal, input)),
        get: (principal, id) => get(principal, id),
        update: (principal, id, input) => onSql(update(principal, id, input)),
        remove: (principal, id) => onSql(remove(principal, id)),
        addItem: (principal, id, input) => onSql(addItem(principal, id, input)),
        removeItem: (principal, id, itemId) => onSql(removeItem(principal, id, itemId)),
        moveItem: (principal, id, itemId, direction) => onSql(moveItem(principal, id, itemId, direction))
      })
    })
  )
}
