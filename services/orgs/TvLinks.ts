import { Clock, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { randomBytes } from "node:crypto"
import { type Forbidden, NotFound, PlanLimitReached } from "../domain/api/Errors.ts"
import { tvFeature, type TvLink, type TvLinkCreate, type TvLinkList, tvLinkLimits, tvTokenPattern } from "../domain/api/TvLinks.ts"
import type { Principal } from "../domain/Principal.ts"
import { IncidentImpact, IncidentStatus } from "../domain/Status.ts"
import { rowsOf, TextArrayColumn } from "../platform/Rows.ts"
import { requirePermission } from "./Access.ts"
import { recordAudit } from "./Audit.ts"
import { LiveTargets } from "./LiveTargets.ts"
import { Stacks, type StackView } from "./Stacks.ts"
import { NullOr } from "../domain/NullOr.ts"

/** `tv_` and 24 random bytes in base64url (192 bits): unguessable, and never an organization's slug. */
const newTvToken = () => `tv_${randomBytes(24).toString("base64url")}`

export const tvUrl = (token: string) => `/tv/${token}`

const LinkRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  token: Schema.String,
  rotation_s: Schema.Number,
  stack_ids: TextArrayColumn(Schema.String),
  created_at: Schema.Date
})
type LinkRow = typeof LinkRow.Type
const decodeLinks = rowsOf("tv_links", LinkRow)
const planRows = rowsOf("plans", Schema.Struct({ name: Schema.String, features: TextArrayColumn(Schema.String) }))
const idRows = rowsOf("stacks", Schema.Struct({ id: Schema.String }))

const FeedRow = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  status: IncidentStatus,
  impact: IncidentImpact,
  source_key: Schema.String,
  source_name: Schema.String,
  started_at: Schema.Date,
  updated_at: Schema.Date,
  resolved_at: NullOr(Schema.Date),
  latest_update: Schema.NullOr(Schema.String)
})
const decodeFeed = rowsOf("incidents", FeedRow)

const iso = (d: Date) => new Date(d).toISOString()

const toLink = (row: LinkRow): TvLink => ({
  id: row.id,
  name: row.name,
  token: row.token,
  url: tvUrl(row.token),
  rotation_s: row.rotation_s,
  stack_ids: [...row.stack_ids],
  created_at: iso(row.created_at)
})

/** What the audit log keeps of a link: not its token (a bearer credential). */
const audited = (link: TvLink) => ({ id: link.id, name: link.name, rotation_s: link.rotation_s, stack_ids: link.stack_ids })

/** An incident of a source that a screen's stacks show, for its feed. */
export interface FeedIncident {
  readonly id: string
  readonly title: string
  readonly status: IncidentStatus
  readonly impact: IncidentImpact
  readonly source: { readonly key: string; readonly name: string }
  readonly started_at: string
  readonly updated_at: string
  readonly resolved_at: string | null
  /** The provider's latest update, if it wrote one. */
  readonly latest_update: string | null
}

/** What a screen shows: stacks in order, and the incidents of their sources. */
export interface Screen {
  readonly name: string
  readonly organization_id: string
  readonly rotation_s: number
  readonly stacks: ReadonlyArray<StackView>
  readonly incidents: ReadonlyArray<FeedIncident>
}

/** How far back a TV feed shows resolved incidents. */
const feedWindowMs = 24 * 3600_000
const feedLimit = 30

/**
 * TV links and the screens that read them. A TV link shows some of an
 * organization's stacks at `/tv/<token>` without signing in, one after
 * another every `rotation_s` seconds, with a feed of their sources'
 * incidents. TV links are a Pro-plan feature (`plans.features`
 * `tv_dashboard`): creating one checks the plan, and so does every opening
 * (an organization moved back to Free sees its links answer 404). Creating
 * and revoking are audited; revoking makes the link 404 at once.
 *
 * Tokens are looked up by LiveTargets, as the live streams look them up.
 * `share` and `organizationScreen` read the other two screens: a public
 * stack by its share token (open incidents only), and every stack of an
 * organization for its signed-in members' `/tv/<org>`.
 */
export class TvLinks extends Context.Service<TvLinks, {
  list(principal: Principal): Effect.Effect<TvLinkList, Forbidden>
  create(principal: Principal, input: TvLinkCreate): Effect.Effect<TvLink, Forbidden | NotFound | PlanLimitReached>
  revoke(principal: Principal, id: string): Effect.Effect<void, Forbidden | NotFound>
  /** The screen of a TV link; undefined when the token is unknown or revoked or the plan lacks TV dashboards. */
  screen(token: string): Effect.Effect<Screen | undefined>
  /** Every stack of the organization as a TV screen (the caller checked membership); PlanLimitReached without the feature. */
  organizationScreen(principal: Principal, rotationS?: number): Effect.Effect<Screen, Forbidden | PlanLimitReached>
  /** The public stack of a share token with its sources' open incidents; undefined once the token is revoked. */
  share(token: string): Effect.Effect<Screen | undefined>
}>()("statusgrid/orgs/TvLinks") {
  static readonly layer = Layer.effect(
    TvLinks,
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const stacks = yield* Stacks
      const targets = yield* LiveTargets

      const planOf = (organizationId: string) =>
        sql`
          SELECT p.name, p.features FROM organizations o JOIN plans p ON p.id = o.plan_id
          WHERE o.id = ${organizationId}::uuid`.pipe(Effect.flatMap(planRows), Effect.map((rows) => rows[0]))

      const requireFeature = Effect.fnUntraced(function*(organizationId: string) {
        const plan = yield* planOf(organizationId).pipe(Effect.orDie)
        if (plan?.features.includes(tvFeature)) return
        return yield* new PlanLimitReached({
          field: tvFeature,
          message: `TV dashboards are a Pro-plan feature (${tvFeature}); the ${plan?.name ?? "current"} plan does not include it`
        })
      })

      const linkColumns = sql`
        l.id, l.name, l.token, l.rotation_s, l.created_at,
        coalesce(array(SELECT ls.stack_id::text FROM tv_link_stacks ls WHERE ls.tv_link_id = l.id ORDER BY ls.position), '{}') AS stack_ids`

      /**
       * Incidents of the sources the stacks show (whole sources and components' sources): open ones
       * first, then those resolved after `resolvedSince` (none when undefined), latest change first.
       */
      const incidentsOf = (stackIds: ReadonlyArray<string>, resolvedSince: Date | undefined) =>
        stackIds.length === 0 ? Effect.succeed([]) : sql`
          SELECT i.id, i.title, i.status, i.impact, s.key AS source_key, s.name AS source_name,
            i.started_at, i.updated_at, i.resolved_at,
            (SELECT u.body FROM incident_updates u WHERE u.incident_id = i.id ORDER BY u.created_at DESC, u.id DESC LIMIT 1) AS latest_update
          FROM incidents i JOIN sources s ON s.id = i.source_id
          WHERE i.source_id IN (
              SELECT coalesce(si.source_id, c.source_id) FROM stack_items si LEFT JOIN components c ON c.id = si.component_id
              WHERE si.stack_id = ANY(${stackIds}::uuid[]))
            AND (i.resolved_at IS NULL ${resolvedSince === undefined ? sql`` : sql`OR i.resolved_at > ${resolvedSince}`})
          ORDER BY i.resolved_at IS NULL DESC, i.updated_at DESC, i.id
          LIMIT ${feedLimit}`.pipe(
            Effect.flatMap(decodeFeed),
            Effect.map((rows) =>
              rows.map((r): FeedIncident => ({
                id: r.id,
                title: r.title,
                status: r.status,
                impact: r.impact,
                source: { key: r.source_key, name: r.source_name },
                started_at: iso(r.started_at),
                updated_at: iso(r.updated_at),
                resolved_at: r.resolved_at === null ? null : iso(r.resolved_at),
                latest_update: r.latest_update
              }))
            )
          )

      const screenOf = (
        head: { readonly name: string; readonly organization_id: string; readonly rotation_s: number },
        stackIds: ReadonlyArray<string>,
        withResolved: boolean
      ) =>
        Effect.gen(function*() {
          const since = withResolved ? new Date((yield* Clock.currentTimeMillis) - feedWindowMs) : undefined
          const [views, incidents] = yield* Effect.all([stacks.views(stackIds), incidentsOf(stackIds, since)], { concurrency: 2 })
          return { ...head, stacks: views, incidents } satisfies Screen
        })

      const list = Effect.fn("TvLinks.list")(function*(principal: Principal) {
        yield* requirePermission(principal, "view")
        const rows = yield* sql`
          SELECT ${linkColumns} FROM tv_links l
          WHERE l.organization_id = ${principal.organization_id}::uuid AND l.revoked_at IS NULL
          ORDER BY l.created_at, l.id`.pipe(Effect.flatMap(decodeLinks), Effect.orDie)
        return { data: rows.map(toLink) }
      })

      const create = Effect.fn("TvLinks.create")(function*(principal: Principal, input: TvLinkCreate) {
        yield* requirePermission(principal, "content.write")
        const orgId = principal.organization_id
        yield* requireFeature(orgId)
        const wanted = [...new Set(input.stack_ids)]
        const found = yield* sql`
          SELECT id FROM stacks WHERE organization_id = ${orgId}::uuid AND id = ANY(${wanted}::uuid[])`.pipe(Effect.flatMap(idRows), Effect.orDie)
        const known = new Set(found.map((r) => r.id))
        const missing = wanted.find((id) => !known.has(id))
        if (missing !== undefined) return yield* new NotFound({ field: "stack_ids", message: `no stack ${missing} in this organization` })
        return yield* sql.withTransaction(Effect.gen(function*() {
          const [row] = yield* sql`
            INSERT INTO tv_links (organization_id, name, token, rotation_s, created_by)
            VALUES (${orgId}::uuid, ${input.name}, ${newTvToken()}, ${input.rotation_s ?? tvLinkLimits.rotationDefault},
              ${principal.actor.kind === "user" ? principal.actor.id : null}::uuid)
            RETURNING id`.pipe(Effect.flatMap(idRows))
          const id = row!.id
          yield* sql`
            INSERT INTO tv_link_stacks (tv_link_id, stack_id, position)
            SELECT ${id}::uuid, s.id::uuid, s.ord - 1 FROM unnest(${wanted}::text[]) WITH ORDINALITY AS s(id, ord)`
          const [created] = yield* sql`SELECT ${linkColumns} FROM tv_links l WHERE l.id = ${id}::uuid`.pipe(Effect.flatMap(decodeLinks))
          const link = toLink(created!)
          yield* recordAudit(principal, { action: "tv_link.created", entity_type: "tv_link", entity_id: id, after: audited(link) })
          return link
        })).pipe(Effect.provideService(SqlClient, sql), Effect.catchTag("SqlError", Effect.die))
      })

      const revoke = Effect.fn("TvLinks.revoke")(function*(principal: Principal, id: string) {
        yield* requirePermission(principal, "content.write")
        yield* sql.withTransaction(Effect.gen(function*() {
          const [before] = yield* sql`
            UPDATE tv_links l SET revoked_at = now()
            WHERE l.id = ${id}::uuid AND l.organization_id = ${principal.organization_id}::uuid AND l.revoked_at IS NULL
            RETURNING ${linkColumns}`.pipe(Effect.flatMap(decodeLinks))
          if (before === undefined) return yield* new NotFound({ field: "id", message: `no TV link ${id} in this organization` })
          yield* recordAudit(principal, { action: "tv_link.revoked", entity_type: "tv_link", entity_id: id, before: audited(toLink(before)) })
        })).pipe(Effect.provideService(SqlClient, sql), Effect.catchTag("SqlError", Effect.die))
      })

      const screen = Effect.fn("TvLinks.screen")(function*(token: string) {
        if (!tvTokenPattern.test(token)) return undefined
        const link = yield* targets.tvLink(token)
        if (link === undefined) return undefined
        return yield* screenOf(link, link.stack_ids, true)
      }, Effect.orDie)

      const organizationScreen = Effect.fn("TvLinks.organizationScreen")(function*(principal: Principal, rotationS?: number) {
        yield* requirePermission(principal, "view")
        yield* requireFeature(principal.organization_id)
        const rows = yield* sql`
          SELECT t.id FROM stacks t
          WHERE t.organization_id = ${principal.organization_id}::uuid ORDER BY t.created_at, t.id`.pipe(
            Effect.flatMap(idRows),
            Effect.orDie
          )
        return yield* screenOf(
          { name: "All stacks", organization_id: principal.organization_id, rotation_s: rotationS ?? tvLinkLimits.rotationDefault },
          rows.map((r) => r.id),
          true
        ).pipe(Effect.orDie)
      })

      const share = Effect.fn("TvLinks.share")(function*(token: string) {
        const stack = yield* targets.stackByShareToken(token)
        if (stack === undefined) return undefined
        return yield* screenOf({ name: "", organization_id: stack.organization_id, rotation_s: 0 }, [stack.id], false)
      }, Effect.orDie)

      return TvLinks.of({ list, create, revoke, screen, organizationScreen, share })
    })
  )
}
