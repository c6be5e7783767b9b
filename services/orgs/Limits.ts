import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { PlanLimitReached } from "../domain/api/Errors.ts"
import { rowsOf, TextArrayColumn } from "../platform/Rows.ts"

/** The rows of the queries below, decoded by Schemas compiled once (services/platform/Rows.ts). */
/** A count (`n`) of what a plan limit counts: an int, or a bigint (a BigInt or text, by driver). */
export const countRows = rowsOf("plan limits", Schema.Struct({ n: Schema.Union([Schema.Number, Schema.NumberFromString, Schema.BigInt]) }))
const planMaxRows = rowsOf("plans", Schema.Struct({ plan: Schema.String, max: Schema.NullOr(Schema.Number) }))
const channelAllowanceRows = rowsOf("organizations", Schema.Struct({
  plan: Schema.String,
  channel_types: TextArrayColumn(Schema.String),
  max_channels_per_rule: Schema.NullOr(Schema.Number)
}))

/** What a whole-source stack item counts for `max_components`: the source's components, at least 1. */
const sourceWeight = (sourceId: string) => `greatest((SELECT count(*) FROM components c WHERE c.source_id = ${sourceId}), 1)`

/** What adding the source `sourceId` as one stack item counts for `max_components`. */
export const sourceItemWeight = Effect.fn("Limits.sourceItemWeight")(function*(sourceId: string) {
  const sql = yield* SqlClient
  const [row] = yield* sql.unsafe(`SELECT ${sourceWeight("$1::uuid")}::int AS n`, [sourceId]).pipe(Effect.orDie, Effect.flatMap(countRows))
  return Number(row?.n ?? 1)
})

/** The plan limits (columns of `plans`) and what each counts. */
export const PlanLimit = {
  max_stacks: { what: "stacks", count: "SELECT count(*)::int AS n FROM stacks WHERE organization_id = $1" },
  // A whole source counts as its components (at least 1): adding AWS as one item must not pass the limit.
  max_components: {
    what: "components in stacks",
    count: `SELECT coalesce(sum(CASE WHEN i.kind = 'source' THEN ${sourceWeight("i.source_id")} ELSE 1 END), 0)::int AS n
            FROM stack_items i JOIN stacks s ON s.id = i.stack_id WHERE s.organization_id = $1`
  },
  max_monitors: { what: "website monitors", count: "SELECT count(*)::int AS n FROM monitors WHERE organization_id = $1" },
  max_users: {
    what: "users (members and open invitations)",
    count: `SELECT (SELECT count(*) FROM memberships WHERE organization_id = $1)
              + (SELECT count(*) FROM invitations WHERE organization_id = $1 AND accepted_at IS NULL
                   AND revoked_at IS NULL AND expires_at > now()) AS n`
  },
  max_rules: { what: "notification rules", count: "SELECT count(*)::int AS n FROM notification_rules WHERE organization_id = $1" },
  max_custom_sources: {
    what: "custom sources",
    count: "SELECT count(*)::int AS n FROM sources WHERE organization_id = $1"
  }
} as const
export type PlanLimit = keyof typeof PlanLimit

/**
 * Fails with 402 when adding `adding` more of `limit` would pass the
 * organization's plan. Call it inside the transaction that adds them: it
 * locks the organization's row, so two concurrent additions cannot both pass
 * the last free place.
 */
export const ensureWithinLimit = Effect.fn("Limits.ensureWithinLimit")(function*(organizationId: string, limit: PlanLimit, adding = 1) {
  const sql = yield* SqlClient
  const column = limit === "max_custom_sources" ? "coalesce(o.custom_sources_limit, p.max_custom_sources)" : `p.${limit}`
  const [plan] = yield* sql.unsafe(
    `SELECT p.name AS plan, ${column} AS max FROM organizations o JOIN plans p ON p.id = o.plan_id
       WHERE o.id = $1 FOR UPDATE OF o`,
    [organizationId]
  ).pipe(Effect.orDie, Effect.flatMap(planMaxRows))
  if (plan === undefined || plan.max === null) return
  const [row] = yield* sql.unsafe(PlanLimit[limit].count, [organizationId]).pipe(Effect.orDie, Effect.flatMap(countRows))
  const current = Number(row?.n ?? 0)
  if (current + adding > plan.max) {
    return yield* new PlanLimitReached({
      field: limit,
      message: `the ${plan.plan} plan allows ${plan.max} ${PlanLimit[limit].what}; this organization has ${current}`
    })
  }
})

/** Channel types the organization's plan allows, and the most channels one rule may have (null: no limit). */
export const channelAllowance = Effect.fn("Limits.channelAllowance")(function*(organizationId: string) {
  const sql = yield* SqlClient
  const [row] = yield* sql`
      SELECT p.name AS plan, p.channel_types, p.max_channels_per_rule FROM organizations o JOIN plans p ON p.id = o.plan_id
      WHERE o.id = ${organizationId}::uuid`.pipe(Effect.flatMap(channelAllowanceRows), Effect.orDie)
  const types = [...(row?.channel_types ?? [])]
  return { plan: row?.plan ?? "", channelTypes: types, maxChannelsPerRule: row?.max_channels_per_rule ?? null }
})
