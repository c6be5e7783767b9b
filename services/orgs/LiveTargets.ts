import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { LiveFilter } from "../platform/LiveHub.ts"
import { rowsOf } from "../platform/Rows.ts"

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const organizationRows = rowsOf("organizations", Schema.Struct({ id: Schema.String, slug: Schema.String }))
const stackIdRows = rowsOf("stacks", Schema.Struct({ id: Schema.String, organization_id: Schema.String }))
const membershipRows = rowsOf("memberships", Schema.Struct({ role: Schema.String }))
const targetRows = rowsOf("stack_items", Schema.Struct({
  kind: Schema.Literals(["component", "source", "monitor"]),
  source_key: Schema.NullOr(Schema.String),
  component_id: Schema.NullOr(Schema.String),
  monitor_id: Schema.NullOr(Schema.String)
}))

/** A stack a live stream may show: its id and organization. */
export interface StackRef {
  readonly id: string
  readonly organization_id: string
}

/**
 * What the live streams of the API (services/api/LiveStream.ts) look up: the
 * organization a path names, whether a user belongs to it, a stack by slug or
 * by share token, and the live filter of some stacks: their whole sources by
 * key, their components by the source's own ids (as deltas name them) and
 * their monitors.
 */
export class LiveTargets extends Context.Service<LiveTargets, {
  /** An organization by slug or id; undefined when there is none. */
  organization(ref: string): Effect.Effect<{ readonly id: string; readonly slug: string } | undefined>
  isMember(organizationId: string, userId: string): Effect.Effect<boolean>
  stackBySlug(organizationId: string, slug: string): Effect.Effect<StackRef | undefined>
  /** The public stack of a share token; undefined once the token is revoked (the stack made private). */
  stackByShareToken(token: string): Effect.Effect<StackRef | undefined>
  /** The filter of one stack, or of every stack of the organization. */
  filter(organizationId: string, stackId?: string): Effect.Effect<LiveFilter>
}>()("statusgrid/orgs/LiveTargets") {
  static readonly layer = Layer.effect(
    LiveTargets,
    Effect.gen(function*() {
      const sql = yield* SqlClient

      const organization = (ref: string) =>
        (uuidPattern.test(ref)
          ? sql`SELECT id, slug FROM organizations WHERE id = ${ref}::uuid OR slug = ${ref}`
          : sql`SELECT id, slug FROM organizations WHERE slug = ${ref}`).pipe(
            Effect.flatMap(organizationRows),
            Effect.map((rows) => rows[0]),
            Effect.orDie
          )

      const isMember = (organizationId: string, userId: string) =>
        sql`SELECT role FROM memberships WHERE organization_id = ${organizationId}::uuid AND user_id = ${userId}::uuid`.pipe(
          Effect.flatMap(membershipRows),
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        )

      const stackBySlug = (organizationId: string, slug: string) =>
        sql`SELECT id, organization_id FROM stacks WHERE organization_id = ${organizationId}::uuid AND slug = ${slug}`.pipe(
          Effect.flatMap(stackIdRows),
          Effect.map((rows) => rows[0]),
          Effect.orDie
        )

      const stackByShareToken = (token: string) =>
        sql`SELECT id, organization_id FROM stacks WHERE share_token = ${token} AND visibility = 'public'`.pipe(
          Effect.flatMap(stackIdRows),
          Effect.map((rows) => rows[0]),
          Effect.orDie
        )

      const filter = (organizationId: string, stackId?: string) =>
        sql`
          SELECT i.kind, coalesce(s.key, cs.key) AS source_key, c.external_id AS component_id, i.monitor_id
          FROM stack_items i
          JOIN stacks t ON t.id = i.stack_id
          LEFT JOIN components c ON c.id = i.component_id
          LEFT JOIN sources cs ON cs.id = c.source_id
          LEFT JOIN sources s ON s.id = i.source_id
          WHERE t.organization_id = ${organizationId}::uuid ${stackId === undefined ? sql`` : sql`AND t.id = ${stackId}::uuid`}`.pipe(
            Effect.flatMap(targetRows),
            Effect.map((rows): LiveFilter => {
              const sources = new Set<string>()
              const components = new Map<string, Set<string>>()
              const monitors = new Set<string>()
              for (const row of rows) {
                if (row.kind === "source" && row.source_key !== null) sources.add(row.source_key)
                else if (row.kind === "monitor" && row.monitor_id !== null) monitors.add(row.monitor_id)
                else if (row.kind === "component" && row.source_key !== null && row.component_id !== null) {
                  const set = components.get(row.source_key)
                  if (set === undefined) components.set(row.source_key, new Set([row.component_id]))
                  else set.add(row.component_id)
                }
              }
              return { sources, components, monitors }
            }),
            Effect.orDie
          )

      return LiveTargets.of({ organization, isMember, stackBySlug, stackByShareToken, filter })
    })
  )
}
