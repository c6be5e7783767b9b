import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Conflict, Forbidden, type InvalidParameter, NotFound } from "../domain/api/Errors.ts"
import { PlanId } from "../domain/Organization.ts"
import type { AuditEntry, Organization, OrganizationSettingsUpdate } from "../domain/api/Organization.ts"
import { can } from "../domain/Permissions.ts"
import type { Principal } from "../domain/Principal.ts"
import { requirePermission } from "./Access.ts"
import { recordAudit, recordOperatorAudit } from "./Audit.ts"
import { rowsOf, TextArrayColumn } from "../platform/Rows.ts"
import { countRows, PlanLimit } from "./Limits.ts"
import { cursorAt, listPage, type PageRequest } from "./Paging.ts"
import type { Page } from "../domain/api/Paging.ts"

/** The rows of the queries below, decoded by Schemas compiled once (services/platform/Rows.ts). */
const decodeOrganizations = rowsOf("organizations", Schema.Struct({
  id: Schema.String,
  slug: Schema.String,
  name: Schema.String,
  plan_id: PlanId,
  created_at: Schema.Date,
  channel_types: TextArrayColumn(Schema.String),
  max_stacks: Schema.NullOr(Schema.Number),
  max_components: Schema.NullOr(Schema.Number),
  max_monitors: Schema.NullOr(Schema.Number),
  max_users: Schema.NullOr(Schema.Number),
  max_rules: Schema.NullOr(Schema.Number),
  max_custom_sources: Schema.NullOr(Schema.Number),
  max_channels_per_rule: Schema.NullOr(Schema.Number),
  frame_ancestors: TextArrayColumn(Schema.String)
}))
const frameAncestorRows = rowsOf("organizations", Schema.Struct({ frame_ancestors: TextArrayColumn(Schema.String) }))
const organizationsIdRows = rowsOf("organizations", Schema.Struct({ id: Schema.String }))
const organizationsIdPlanIdRows = rowsOf("organizations", Schema.Struct({
  id: Schema.String,
  plan_id: PlanId
}))
const organizationsPlanIdRows = rowsOf("organizations", Schema.Struct({ plan_id: PlanId }))
const auditLogRows = rowsOf("audit_log", Schema.Struct({
  id: Schema.String,
  cursor_at: Schema.String,
  action: Schema.String,
  entity_type: Schema.String,
  entity_id: Schema.NullOr(Schema.String),
  actor_user_id: Schema.NullOr(Schema.String),
  actor_api_key_id: Schema.NullOr(Schema.String),
  actor_operator: Schema.NullOr(Schema.String),
  before: Schema.Unknown,
  after: Schema.Unknown,
  ip: Schema.NullOr(Schema.String),
  created_at: Schema.Date
}))


/**
 * What the audit log may be narrowed to: the actor (a user's or API key's id,
 * or the operator's name), the record type (`entity_type`), and the instants
 * `since` (inclusive) and `until` (exclusive), ISO 8601.
 */
export interface AuditFilter {
  readonly actor?: string | undefined
  readonly entity_type?: string | undefined
  readonly since?: string | undefined
  readonly until?: string | undefined
}

const slugPattern = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/**
 * Organizations: creation (sign-up, CLI), the caller's own organization and
 * plan, and its audit log. The plan is changed only by the installation's
 * operator (`statusgrid org plan`), never through the organization's own keys.
 */
export class Organizations extends Context.Service<Organizations, {
  create(input: { readonly name: string; readonly slug: string; readonly plan?: PlanId }): Effect.Effect<{ readonly id: string }, Conflict>
  get(principal: Principal): Effect.Effect<Organization>
  /** The operator (`operator`: who ran the command) moves the organization `slug` to `plan`; audited as the operator. */
  setPlanAsOperator(slug: string, plan: PlanId, operator: string): Effect.Effect<Organization, NotFound>
  /**
   * Changes the organization's settings (Admin: who may reach the organization's pages follows "Invite
   * members"); audited as `organization.updated`. The input is decoded by `OrganizationSettingsUpdate` (`PATCH /organization/settings`).
   */
  updateSettings(principal: Principal, input: OrganizationSettingsUpdate): Effect.Effect<Organization, Forbidden>
  /**
   * The origins allowed to frame the organization's TV links and share pages (the pages' CSP
   * `frame-ancestors`, services/api/SecurityHeaders.ts); empty for an unknown organization.
   */
  frameAncestors(organizationId: string): Effect.Effect<ReadonlyArray<string>>
  /** The audit log, oldest first; `filter` narrows it (the portal's audit page: actor, record type, dates). */
  auditLog(principal: Principal, page: PageRequest, filter?: AuditFilter): Effect.Effect<Page<AuditEntry>, Forbidden | InvalidParameter>
}>()("statusgrid/orgs/Organizations") {
  static readonly layer = Layer.effect(
    Organizations,
    Effect.gen(function*() {
      const sql = yield* SqlClient

      const create = Effect.fn("Organizations.create")(function*(input: { readonly name: string; readonly slug: string; readonly plan?: PlanId }) {
        if (!slugPattern.test(input.slug)) {
          return yield* new Conflict({ field: "slug", message: "slug must be 1-63 lower-case letters, digits or inner hyphens" })
        }
        const rows = yield* sql`
          INSERT INTO organizations (slug, name, plan_id) VALUES (${input.slug}, ${input.name}, ${input.plan ?? "free"})
          ON CONFLICT (slug) DO NOTHING RETURNING id`.pipe(Effect.flatMap(organizationsIdRows), Effect.orDie)
        if (rows.length === 0) return yield* new Conflict({ field: "slug", message: `the slug ${input.slug} is taken` })
        return { id: rows[0]!.id }
      })

      const byId = Effect.fn("Organizations.byId")(function*(organizationId: string) {
        const [row] = yield* sql`
          SELECT o.id, o.slug, o.name, o.plan_id, o.created_at, o.frame_ancestors, p.channel_types, p.max_stacks, p.max_components, p.max_monitors,
            p.max_users, p.max_rules, coalesce(o.custom_sources_limit, p.max_custom_sources) AS max_custom_sources,
            p.max_channels_per_rule
          FROM organizations o JOIN plans p ON p.id = o.plan_id WHERE o.id = ${organizationId}::uuid`.pipe(Effect.flatMap(decodeOrganizations), Effect.orDie)
        const used = yield* Effect.forEach(
          ["max_stacks", "max_components", "max_monitors", "max_users", "max_rules", "max_custom_sources"] as const,
          (limit) =>
            sql.unsafe(PlanLimit[limit].count, [organizationId]).pipe(
              Effect.flatMap(countRows),
              Effect.map((r) => [limit, { limit: row![limit], used: Number(r[0]?.n ?? 0) }] as const),
              Effect.orDie
            )
        )
        return {
          id: row!.id,
          slug: row!.slug,
          name: row!.name,
          plan: row!.plan_id,
          channel_types: [...row!.channel_types],
          limits: {
            ...(Object.fromEntries(used) as Record<(typeof used)[number][0], { limit: number | null; used: number }>),
            max_channels_per_rule: row!.max_channels_per_rule
          },
          frame_ancestors: [...row!.frame_ancestors],
          created_at: row!.created_at.toISOString()
        } satisfies Organization
      })

      const get = (principal: Principal) => byId(principal.organization_id)

      const setPlanAsOperator = Effect.fn("Organizations.setPlanAsOperator")(function*(slug: string, plan: PlanId, operator: string) {
        const [found] = yield* sql`
          SELECT id, plan_id FROM organizations WHERE slug = ${slug}`.pipe(Effect.flatMap(organizationsIdPlanIdRows), Effect.orDie)
        if (found === undefined) return yield* new NotFound({ field: "slug", message: `no organization with slug ${slug}` })
        yield* sql.withTransaction(Effect.gen(function*() {
          const [locked] = yield* sql`SELECT plan_id FROM organizations WHERE id = ${found.id}::uuid FOR UPDATE`.pipe(Effect.flatMap(organizationsPlanIdRows))
          yield* sql`UPDATE organizations SET plan_id = ${plan}, updated_at = now() WHERE id = ${found.id}::uuid`
          yield* recordOperatorAudit(found.id, operator, {
            action: "organization.plan_changed",
            entity_type: "organization",
            entity_id: found.id,
            before: { plan: locked?.plan_id ?? found.plan_id },
            after: { plan }
          })
        })).pipe(Effect.provideService(SqlClient, sql), Effect.orDie)
        return yield* byId(found.id)
      })

      const updateSettings = Effect.fn("Organizations.updateSettings")(function*(principal: Principal, input: OrganizationSettingsUpdate) {
        if (!can(principal.role, "members.manage")) {
          return yield* new Forbidden({ message: `the ${principal.role} role cannot change the organization's settings (Admin only)` })
        }
        if (input.frame_ancestors !== undefined) {
          const frameAncestors = [...input.frame_ancestors]
          yield* sql.withTransaction(Effect.gen(function*() {
            const [before] = yield* sql`
              SELECT frame_ancestors FROM organizations WHERE id = ${principal.organization_id}::uuid FOR UPDATE`.pipe(Effect.flatMap(frameAncestorRows))
            yield* sql`
              UPDATE organizations SET frame_ancestors = ${frameAncestors}::text[], updated_at = now()
              WHERE id = ${principal.organization_id}::uuid`
            yield* recordAudit(principal, {
              action: "organization.updated",
              entity_type: "organization",
              entity_id: principal.organization_id,
              before: { frame_ancestors: before?.frame_ancestors ?? [] },
              after: { frame_ancestors: frameAncestors }
            })
          })).pipe(Effect.provideService(SqlClient, sql), Effect.orDie)
        }
        return yield* byId(principal.organization_id)
      })

      const frameAncestors = Effect.fn("Organizations.frameAncestors")(function*(organizationId: string) {
        const [row] = yield* sql`
          SELECT frame_ancestors FROM organizations WHERE id = ${organizationId}::uuid`.pipe(Effect.flatMap(frameAncestorRows), Effect.orDie)
        return row?.frame_ancestors ?? []
      })

      const auditLog = Effect.fn("Organizations.auditLog")(function*(principal: Principal, page: PageRequest, filter: AuditFilter = {}) {
        yield* requirePermission(principal, "audit.view")
        const actor = filter.actor ?? null
        const entityType = filter.entity_type ?? null
        // A date is its midnight UTC (as JavaScript reads it), whatever the database's time zone.
        const since = filter.since === undefined ? null : new Date(filter.since).toISOString()
        const until = filter.until === undefined ? null : new Date(filter.until).toISOString()
        return yield* listPage({
          page,
          idType: "bigint",
          select: (where, limit) =>
            sql`
              SELECT t.id::text AS id, t.action, t.entity_type, t.entity_id, t.actor_user_id, t.actor_api_key_id, t.actor_operator,
                t.before, t.after, host(t.ip) AS ip, t.created_at, ${sql.literal(cursorAt)}
              FROM audit_log t WHERE t.organization_id = ${principal.organization_id}::uuid AND ${where}
                AND (${actor}::text IS NULL OR t.actor_user_id::text = ${actor} OR t.actor_api_key_id::text = ${actor}
                  OR t.actor_operator = ${actor})
                AND (${entityType}::text IS NULL OR t.entity_type = ${entityType})
                AND (${since}::timestamptz IS NULL OR t.created_at >= ${since}::timestamptz)
                AND (${until}::timestamptz IS NULL OR t.created_at < ${until}::timestamptz)
              ORDER BY t.created_at, t.id LIMIT ${limit}`.pipe(Effect.flatMap(auditLogRows)),
          map: (row): AuditEntry => ({
            id: row.id,
            action: row.action,
            entity_type: row.entity_type,
            entity_id: row.entity_id,
            actor: row.actor_user_id !== null
              ? { kind: "user", id: row.actor_user_id }
              : row.actor_api_key_id !== null
              ? { kind: "api_key", id: row.actor_api_key_id }
              : row.actor_operator !== null
              ? { kind: "operator", id: row.actor_operator }
              : { kind: "system", id: null },
            before: row.before,
            after: row.after,
            ip: row.ip,
            created_at: new Date(row.created_at).toISOString()
          })
        }).pipe(Effect.provideService(SqlClient, sql))
      })

      return Organizations.of({ create, get, setPlanAsOperator, updateSettings, frameAncestors, auditLog })
    })
  )
}
