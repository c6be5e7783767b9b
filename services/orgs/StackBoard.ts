import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { NotFound, type Forbidden } from "../domain/api/Errors.ts"
import type { Principal } from "../domain/Principal.ts"
import { type BoardItem, boardHealth } from "../domain/BoardItem.ts"
import type { StackHealth } from "../domain/StackHealth.ts"
import { ComponentStatus, IncidentImpact, IncidentStatus, MonitorState, SourceStatus } from "../domain/Status.ts"
import { rowsOf } from "../platform/Rows.ts"
import { lastCheckedAt } from "../platform/SourceRow.ts"
import { requirePermission } from "./Access.ts"
import { NullOr } from "../domain/NullOr.ts"

/** A component as a board shows it; `external_id` is the source's own id, which live deltas name. */
export interface BoardComponent {
  readonly id: string
  readonly external_id: string
  readonly name: string
  readonly status: ComponentStatus
  readonly last_changed_at: string | null
  /** In a source added whole: this component is also an item of its own (`boardItems` counts it once more). */
  readonly picked?: true
}

/**
 * A source of a stack with the components the stack shows of it: the ones
 * picked as items, or (`whole`) every component of a source added whole.
 */
export interface BoardSource {
  readonly key: string
  readonly name: string
  readonly status: SourceStatus
  readonly status_page_url: string | null
  readonly last_checked_at: string | null
  readonly last_changed_at: string | null
  readonly whole: boolean
  readonly components: ReadonlyArray<BoardComponent>
}

export interface BoardMonitor {
  readonly id: string
  readonly name: string
  readonly url: string
  readonly state: MonitorState
  readonly last_checked_at: string | null
  readonly last_changed_at: string | null
}

export type { BoardItem }

export interface BoardStack {
  readonly id: string
  readonly slug: string
  readonly name: string
  readonly description: string
  readonly health: StackHealth
  readonly items: ReadonlyArray<BoardItem>
  readonly sources: ReadonlyArray<BoardSource>
  readonly monitors: ReadonlyArray<BoardMonitor>
}

export interface BoardIncident {
  readonly id: string
  readonly source_key: string
  readonly source_name: string
  readonly title: string
  readonly status: IncidentStatus
  readonly impact: IncidentImpact
  readonly url: string | null
  readonly started_at: string
  readonly updated_at: string
  /** Names of the affected components. */
  readonly components: ReadonlyArray<string>
}

export interface BoardMaintenance {
  readonly id: string
  readonly source_key: string
  readonly source_name: string
  readonly title: string
  readonly status: string
  readonly url: string | null
  readonly scheduled_for: string
  readonly scheduled_until: string | null
}

/** What a dashboard or a stack page shows, read in a handful of queries however many stacks there are. */
export interface Board {
  readonly stacks: ReadonlyArray<BoardStack>
  /** Open incidents of the sources the stacks show, newest first. */
  readonly incidents: ReadonlyArray<BoardIncident>
  /** Maintenances of those sources under way or announced, soonest first. */
  readonly maintenances: ReadonlyArray<BoardMaintenance>
}

/** How many components of a source added whole a board lists (a 300-component provider stays readable). */
export const wholeSourceComponents = 200
const incidentLimit = 50
const maintenanceLimit = 50

const StackRow = Schema.Struct({ id: Schema.String, slug: Schema.String, name: Schema.String, description: Schema.String })
const stackRows = rowsOf("stacks", StackRow)

const ItemRow = Schema.Struct({
  stack_id: Schema.String,
  kind: Schema.Literals(["component", "source", "monitor"]),
  component_id: Schema.NullOr(Schema.String),
  component_external_id: Schema.NullOr(Schema.String),
  component_name: Schema.NullOr(Schema.String),
  component_status: Schema.NullOr(ComponentStatus),
  component_changed_at: NullOr(Schema.Date),
  source_id: Schema.NullOr(Schema.String),
  source_key: Schema.NullOr(Schema.String),
  source_name: Schema.NullOr(Schema.String),
  source_status: Schema.NullOr(SourceStatus),
  source_page: Schema.NullOr(Schema.String),
  source_checked_at: NullOr(Schema.Date),
  source_changed_at: NullOr(Schema.Date),
  monitor_id: Schema.NullOr(Schema.String),
  monitor_name: Schema.NullOr(Schema.String),
  monitor_url: Schema.NullOr(Schema.String),
  monitor_state: Schema.NullOr(MonitorState),
  monitor_checked_at: NullOr(Schema.Date),
  monitor_changed_at: NullOr(Schema.Date)
})
type ItemRow = typeof ItemRow.Type
const itemRows = rowsOf("stack_items", ItemRow)

const ComponentRow = Schema.Struct({
  source_id: Schema.String,
  id: Schema.String,
  external_id: Schema.String,
  name: Schema.String,
  status: ComponentStatus,
  last_changed_at: NullOr(Schema.Date)
})
const componentRows = rowsOf("components", ComponentRow)

const incidentRows = rowsOf("incidents", Schema.Struct({
  id: Schema.String,
  source_key: Schema.String,
  source_name: Schema.String,
  title: Schema.String,
  status: IncidentStatus,
  impact: IncidentImpact,
  url: Schema.NullOr(Schema.String),
  started_at: Schema.Date,
  updated_at: Schema.Date,
  components: Schema.Array(Schema.String)
}))

const maintenanceRows = rowsOf("scheduled_maintenances", Schema.Struct({
  id: Schema.String,
  source_key: Schema.String,
  source_name: Schema.String,
  title: Schema.String,
  status: Schema.String,
  url: Schema.NullOr(Schema.String),
  scheduled_for: Schema.Date,
  scheduled_until: NullOr(Schema.Date)
}))

const iso = (d: Date | null) => (d === null ? null : new Date(d).toISOString())

const itemOf = (row: ItemRow): BoardItem | undefined =>
  row.kind === "component" && row.component_external_id !== null && row.source_key !== null
    ? { kind: "component", source_key: row.source_key, external_id: row.component_external_id, status: row.component_status! }
    : row.kind === "source" && row.source_key !== null
    ? { kind: "source", key: row.source_key, status: row.source_status! }
    : row.kind === "monitor" && row.monitor_id !== null
    ? { kind: "monitor", id: row.monitor_id, status: row.monitor_state! }
    : undefined

/**
 * The components a source added whole lists (its first `wholeSourceComponents`), with those also added
 * on their own marked `picked` (any beyond the listed appended): each of those is an item too.
 */
const wholeWithPicked = (listed: ReadonlyArray<BoardComponent>, picked: ReadonlyArray<BoardComponent>): Array<BoardComponent> => {
  if (picked.length === 0) return [...listed]
  const ids = new Set(picked.map((c) => c.id))
  const marked = listed.map((c) => (ids.has(c.id) ? { ...c, picked: true as const } : c))
  const beyond = picked.filter((p) => !listed.some((c) => c.id === p.id)).map((c) => ({ ...c, picked: true as const }))
  return [...marked, ...beyond]
}

/**
 * The live view of an organization's stacks for the portal's dashboard, stack
 * page and TV mode: each stack's items with their current status (PostgreSQL's
 * components, sources and monitors, which the poller and the monitor agents
 * keep current) and its health banner by the domain rule, the components it
 * shows grouped by source, its monitors, and the open incidents and the
 * maintenances of its sources. Five queries for any number of stacks.
 */
export class StackBoard extends Context.Service<StackBoard, {
  /** Every stack of the principal's organization, oldest first. */
  organization(principal: Principal): Effect.Effect<Board, Forbidden>
  /** One stack by slug; NotFound (`field: slug`) when the organization has none. */
  stack(principal: Principal, slug: string): Effect.Effect<Board, Forbidden | NotFound>
}>()("statusgrid/orgs/StackBoard") {
  static readonly layer = Layer.effect(
    StackBoard,
    Effect.gen(function*() {
      const sql = yield* SqlClient

      const build = (stacks: ReadonlyArray<typeof StackRow.Type>) =>
        Effect.gen(function*() {
          const ids = stacks.map((s) => s.id)
          if (ids.length === 0) return { stacks: [], incidents: [], maintenances: [] } satisfies Board
          const items = yield* sql`
            SELECT i.stack_id, i.kind,
              c.id AS component_id, c.external_id AS component_external_id, c.name AS component_name,
              c.status AS component_status, c.last_changed_at AS component_changed_at,
              s.id AS source_id, s.key AS source_key, s.name AS source_name, s.status AS source_status,
              s.status_page_url AS source_page, ${sql.literal(lastCheckedAt("s", "source_checked_at"))}, s.last_changed_at AS source_changed_at,
              m.id AS monitor_id, m.name AS monitor_name, m.url AS monitor_url, m.state AS monitor_state,
              m.last_checked_at AS monitor_checked_at, m.last_changed_at AS monitor_changed_at
            FROM stack_items i
            LEFT JOIN components c ON c.id = i.component_id
            LEFT JOIN sources s ON s.id = coalesce(i.source_id, c.source_id)
            LEFT JOIN monitors m ON m.id = i.monitor_id
            WHERE i.stack_id = ANY(${ids}::uuid[])
            ORDER BY i.stack_id, i.position, i.added_at, i.id`.pipe(Effect.flatMap(itemRows))

          const wholeIds = [...new Set(items.filter((r) => r.kind === "source" && r.source_id !== null).map((r) => r.source_id!))]
          const sourceIds = [...new Set(items.filter((r) => r.source_id !== null).map((r) => r.source_id!))]
          const [whole, incidents, maintenances] = yield* Effect.all([
            wholeIds.length === 0 ? Effect.succeed([]) : sql`
              SELECT source_id, id, external_id, name, status, last_changed_at FROM (
                SELECT c.*, row_number() OVER (PARTITION BY c.source_id ORDER BY c.position, c.name, c.id) AS n
                FROM components c WHERE c.source_id = ANY(${wholeIds}::uuid[]) AND NOT c.is_group
              ) t WHERE n <= ${wholeSourceComponents}
              ORDER BY source_id, n`.pipe(Effect.flatMap(componentRows)),
            sourceIds.length === 0 ? Effect.succeed([]) : sql`
              SELECT i.id, s.key AS source_key, s.name AS source_name, i.title, i.status, i.impact, i.url, i.started_at, i.updated_at,
                coalesce((SELECT array_agg(c.name ORDER BY c.position, c.name) FROM incident_components ic
                  JOIN components c ON c.id = ic.component_id WHERE ic.incident_id = i.id), '{}') AS components
              FROM incidents i JOIN sources s ON s.id = i.source_id
              WHERE i.source_id = ANY(${sourceIds}::uuid[]) AND i.resolved_at IS NULL AND i.status NOT IN ('resolved', 'postmortem')
              ORDER BY i.started_at DESC, i.id LIMIT ${incidentLimit}`.pipe(Effect.flatMap(incidentRows)),
            sourceIds.length === 0 ? Effect.succeed([]) : sql`
              SELECT m.id, s.key AS source_key, s.name AS source_name, m.title, m.status, m.url, m.scheduled_for, m.scheduled_until
              FROM scheduled_maintenances m JOIN sources s ON s.id = m.source_id
              WHERE m.source_id = ANY(${sourceIds}::uuid[]) AND m.status IN ('scheduled', 'in_progress', 'verifying')
                AND (m.scheduled_until IS NULL OR m.scheduled_until > now())
              ORDER BY m.scheduled_for, m.id LIMIT ${maintenanceLimit}`.pipe(Effect.flatMap(maintenanceRows))
          ], { concurrency: "unbounded" })

          const componentsOf = new Map<string, Array<BoardComponent>>()
          for (const c of whole) {
            const list = componentsOf.get(c.source_id) ?? []
            list.push({ id: c.id, external_id: c.external_id, name: c.name, status: c.status, last_changed_at: iso(c.last_changed_at) })
            componentsOf.set(c.source_id, list)
          }

          const boardStacks = stacks.map((stack): BoardStack => {
            const rows = items.filter((r) => r.stack_id === stack.id)
            const sources = new Map<string, { source: Omit<BoardSource, "components">; components: Array<BoardComponent> }>()
            const monitors: Array<BoardMonitor> = []
            for (const row of rows) {
              if (row.kind === "monitor" && row.monitor_id !== null) {
                monitors.push({
                  id: row.monitor_id,
                  name: row.monitor_name!,
                  url: row.monitor_url!,
                  state: row.monitor_state!,
                  last_checked_at: iso(row.monitor_checked_at),
                  last_changed_at: iso(row.monitor_changed_at)
                })
                continue
              }
              if (row.source_id === null) continue
              const entry = sources.get(row.source_id) ?? {
                source: {
                  key: row.source_key!,
                  name: row.source_name!,
                  status: row.source_status!,
                  status_page_url: row.source_page,
                  last_checked_at: iso(row.source_checked_at),
                  last_changed_at: iso(row.source_changed_at),
                  whole: false
                },
                components: []
              }
              sources.set(row.source_id, entry)
              if (row.kind === "source") entry.source = { ...entry.source, whole: true }
              else if (row.component_id !== null && !entry.components.some((c) => c.id === row.component_id)) {
                entry.components.push({
                  id: row.component_id,
                  external_id: row.component_external_id!,
                  name: row.component_name!,
                  status: row.component_status!,
                  last_changed_at: iso(row.component_changed_at)
                })
              }
            }
            const boardItems = rows.flatMap((r) => itemOf(r) ?? [])
            return {
              ...stack,
              health: boardHealth(boardItems),
              items: boardItems,
              sources: [...sources].map(([id, { source, components }]) => ({
                ...source,
                components: source.whole ? wholeWithPicked(componentsOf.get(id) ?? [], components) : components
              })),
              monitors
            }
          })

          return {
            stacks: boardStacks,
            incidents: incidents.map((i) => ({ ...i, started_at: iso(i.started_at)!, updated_at: iso(i.updated_at)! })),
            maintenances: maintenances.map((m) => ({ ...m, scheduled_for: iso(m.scheduled_for)!, scheduled_until: iso(m.scheduled_until) }))
          } satisfies Board
        }).pipe(Effect.orDie)

      const organization = Effect.fn("StackBoard.organization")(function*(principal: Principal) {
        yield* requirePermission(principal, "view")
        const stacks = yield* sql`
          SELECT id, slug, name, description FROM stacks WHERE organization_id = ${principal.organization_id}::uuid
          ORDER BY created_at, id`.pipe(Effect.flatMap(stackRows), Effect.orDie)
        return yield* build(stacks)
      })

      const stack = Effect.fn("StackBoard.stack")(function*(principal: Principal, slug: string) {
        yield* requirePermission(principal, "view")
        const stacks = yield* sql`
          SELECT id, slug, name, description FROM stacks
          WHERE organization_id = ${principal.organization_id}::uuid AND slug = ${slug}`.pipe(Effect.flatMap(stackRows), Effect.orDie)
        if (stacks.length === 0) return yield* new NotFound({ field: "slug", message: `no stack ${slug} in this organization` })
        return yield* build(stacks)
      })

      return StackBoard.of({ organization, stack })
    })
  )
}
