import { Context, Effect, Layer, Result, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { type Forbidden, InvalidParameter, NotFound, PlanLimitReached } from "../domain/api/Errors.ts"
import { Rule, type RuleCreate, type RuleUpdate } from "../domain/api/Notifications.ts"
import type { Principal } from "../domain/Principal.ts"
import { type RuleInput, validateRule } from "../domain/Rule.ts"
import { rowsOf, TextArrayColumn } from "../platform/Rows.ts"
import { publicSourceCondition } from "../platform/SourceRow.ts"
import { requirePermission } from "./Access.ts"
import { recordAudit } from "./Audit.ts"
import { canonicalJson } from "./Channels.ts"
import { ensureWithinLimit } from "./Limits.ts"
import { cursorAt, listPage, type PageRequest } from "./Paging.ts"
import type { Page } from "../domain/api/Paging.ts"

/** The rows of the queries below, decoded by Schemas compiled once (services/platform/Rows.ts). */
const stacksIdRows = rowsOf("stacks", Schema.Struct({ id: Schema.String }))
const componentsIdRows = rowsOf("components", Schema.Struct({ id: Schema.String }))
const monitorsIdRows = rowsOf("monitors", Schema.Struct({ id: Schema.String }))
const channelsIdRows = rowsOf("channels", Schema.Struct({ id: Schema.String }))
const planFeatureRows = rowsOf("organizations", Schema.Struct({
  name: Schema.String,
  features: TextArrayColumn(Schema.String),
  channel_types: TextArrayColumn(Schema.String),
  max: Schema.NullOr(Schema.Number)
}))
const channelsIdTypeRows = rowsOf("channels", Schema.Struct({
  id: Schema.String,
  type: Schema.String
}))
const notificationRulesIdRows = rowsOf("notification_rules", Schema.Struct({ id: Schema.String }))

/** A rule as selected (ids aggregated, enum arrays as jsonb): the API record with its times as Dates. */
const RuleRow = Schema.Struct({
  ...Rule.fields,
  created_at: Schema.Date,
  updated_at: Schema.Date,
  cursor_at: Schema.String
})
type RuleRow = typeof RuleRow.Type
const decodeRules = rowsOf("notification_rules", RuleRow)

const idsOf = (table: string, column: string) =>
  `coalesce((SELECT jsonb_agg(x.${column} ORDER BY x.${column}) FROM ${table} x WHERE x.rule_id = t.id AND x.${column} IS NOT NULL), '[]'::jsonb) AS ${
    column.replace(/_id$/, "_ids")
  }`

const ruleColumns = [
  "t.id, t.name, t.active, to_jsonb(t.triggers) AS triggers, t.scope, to_jsonb(t.alert_levels) AS alert_levels",
  "t.schedule, t.group_window_s, t.cooldown_s, t.crowd_min_confidence, t.escalation, t.template, t.created_at, t.updated_at",
  idsOf("rule_scope_items", "stack_id"),
  idsOf("rule_scope_items", "component_id"),
  idsOf("rule_scope_items", "monitor_id"),
  idsOf("rule_channels", "channel_id"),
  cursorAt
].join(", ")

const toRule = (row: RuleRow): Rule => ({
  id: row.id,
  name: row.name,
  active: row.active,
  triggers: row.triggers,
  scope: row.scope,
  stack_ids: row.stack_ids,
  component_ids: row.component_ids,
  monitor_ids: row.monitor_ids,
  alert_levels: row.alert_levels,
  schedule: row.schedule,
  group_window_s: row.group_window_s,
  cooldown_s: row.cooldown_s,
  crowd_min_confidence: row.crowd_min_confidence,
  escalation: row.escalation,
  template: row.template,
  channel_ids: row.channel_ids,
  created_at: new Date(row.created_at).toISOString(),
  updated_at: new Date(row.updated_at).toISOString()
})

/** The settings of a rule record, as a rule input (what a PATCH is merged into). */
const inputOf = (rule: Rule): RuleInput => {
  const { id: _id, created_at: _created, updated_at: _updated, ...input } = rule
  return input
}

/** The rule with its id lists sorted, as they are read back: to tell whether a PATCH changes anything. */
const sortedIds = (rule: RuleInput): RuleInput => ({
  ...rule,
  stack_ids: rule.stack_ids.toSorted(),
  component_ids: rule.component_ids.toSorted(),
  monitor_ids: rule.monitor_ids.toSorted(),
  channel_ids: rule.channel_ids.toSorted()
})

const invalid = (issue: { readonly field: string; readonly message: string }) =>
  new InvalidParameter({ field: issue.field, message: `${issue.field} ${issue.message}` })

const notFound = (id: string) => new NotFound({ field: "id", message: `no notification rule ${id} in this organization` })

const scopeLists = [
  { field: "stack_ids", column: "stack_id", what: "stack" },
  { field: "component_ids", column: "component_id", what: "component" },
  { field: "monitor_ids", column: "monitor_id", what: "monitor" }
] as const

/** 404 naming `field` for the ids of `wanted` that the query did not find. */
const missing = (field: string, what: string, wanted: ReadonlyArray<string>, found: ReadonlyArray<{ id: string }>) => {
  const known = new Set(found.map((r) => r.id))
  const absent = wanted.filter((id) => !known.has(id))
  return absent.length === 0
    ? Effect.void
    : Effect.fail(new NotFound({ field, message: `no ${what} ${absent.join(", ")} in this organization` }))
}

/** A nullable jsonb column's parameter. */
const json = (value: unknown) => (value === null ? null : JSON.stringify(value))

/** Which parts of a rule a write sets, and so which references and plan features to check. */
interface Touched {
  readonly scope: boolean
  readonly channels: boolean
  readonly escalation: boolean
  readonly template: boolean
}

/**
 * Notification rules of an organization: validated (domain/Rule.ts), scope
 * and channels checked to be the organization's own, plan limits (max_rules,
 * max_channels_per_rule) and Enterprise features (escalation,
 * custom_templates) enforced, every change audited in its transaction.
 */
export class Rules extends Context.Service<Rules, {
  list(principal: Principal, page: PageRequest): Effect.Effect<Page<Rule>, Forbidden | InvalidParameter>
  get(principal: Principal, id: string): Effect.Effect<Rule, Forbidden | NotFound>
  create(principal: Principal, input: RuleCreate): Effect.Effect<Rule, Forbidden | InvalidParameter | NotFound | PlanLimitReached>
  update(principal: Principal, id: string, patch: RuleUpdate): Effect.Effect<Rule, Forbidden | InvalidParameter | NotFound | PlanLimitReached>
  remove(principal: Principal, id: string): Effect.Effect<void, Forbidden | NotFound>
}>()("statusgrid/orgs/Rules") {
  static readonly layer = Layer.effect(
    Rules,
    Effect.gen(function*() {
      const sql = yield* SqlClient

      const load = (principal: Principal, id: string) =>
        sql`
          SELECT ${sql.literal(ruleColumns)} FROM notification_rules t
          WHERE t.id = ${id}::uuid AND t.organization_id = ${principal.organization_id}::uuid`.pipe(Effect.flatMap(decodeRules),
          Effect.map((rows) => (rows[0] === undefined ? undefined : toRule(rows[0]))),
          Effect.orDie
        )

      /**
       * 404 naming the field for any id that is not the organization's (or, for components, visible to it).
       * The rows found are locked (FOR SHARE) until the rule is written, so a concurrent delete waits.
       */
      const checkReferences = Effect.fnUntraced(function*(principal: Principal, rule: RuleInput, touched: Touched) {
        const org = principal.organization_id
        if (touched.scope) {
          yield* missing("stack_ids", "stack", rule.stack_ids, yield* sql`
            SELECT id FROM stacks WHERE organization_id = ${org}::uuid AND id = ANY(${rule.stack_ids}::uuid[]) FOR SHARE`.pipe(Effect.flatMap(stacksIdRows)))
          // Catalog components (enabled catalog sources) and the organization's own custom sources' components.
          yield* missing("component_ids", "component", rule.component_ids, yield* sql`
            SELECT c.id FROM components c JOIN sources s ON s.id = c.source_id
            WHERE c.id = ANY(${rule.component_ids}::uuid[])
              AND (s.organization_id = ${org}::uuid OR (${sql.literal(publicSourceCondition)}))
            FOR SHARE OF c`.pipe(Effect.flatMap(componentsIdRows)))
          yield* missing("monitor_ids", "monitor", rule.monitor_ids, yield* sql`
            SELECT id FROM monitors WHERE organization_id = ${org}::uuid AND id = ANY(${rule.monitor_ids}::uuid[]) FOR SHARE`.pipe(Effect.flatMap(monitorsIdRows)))
        }
        const channelsOf = (ids: ReadonlyArray<string>) =>
          sql`SELECT id FROM channels WHERE organization_id = ${org}::uuid AND id = ANY(${ids}::uuid[]) FOR SHARE`.pipe(Effect.flatMap(channelsIdRows))
        if (touched.channels) yield* missing("channel_ids", "channel", rule.channel_ids, yield* channelsOf(rule.channel_ids))
        if (touched.escalation) {
          for (const [i, step] of (rule.escalation ?? []).entries()) {
            yield* missing(`escalation.${i}.channel_ids`, "channel", step.channel_ids, yield* channelsOf(step.channel_ids))
          }
        }
      })

      /** 402 for an Enterprise feature the plan lacks, more channels than it allows per rule, or a channel type it does not allow. */
      const checkPlan = Effect.fnUntraced(function*(principal: Principal, rule: RuleInput, touched: Touched) {
        const [plan] = yield* sql`
          SELECT p.name, to_jsonb(p.features) AS features, to_jsonb(p.channel_types) AS channel_types, p.max_channels_per_rule AS max
          FROM organizations o JOIN plans p ON p.id = o.plan_id WHERE o.id = ${principal.organization_id}::uuid`.pipe(Effect.flatMap(planFeatureRows))
        const features = new Set(plan?.features ?? [])
        if (touched.escalation && rule.escalation !== null && !features.has("escalation")) {
          return yield* new PlanLimitReached({
            field: "escalation",
            message: `escalation policies are an Enterprise feature (escalation); the ${plan?.name} plan does not include it`
          })
        }
        if (touched.template && rule.template !== null && !features.has("custom_templates")) {
          return yield* new PlanLimitReached({
            field: "custom_templates",
            message: `custom templates (template) are an Enterprise feature (custom_templates); the ${plan?.name} plan does not include it`
          })
        }
        if (!touched.channels) return
        if (plan?.max != null && rule.channel_ids.length > plan.max) {
          return yield* new PlanLimitReached({
            field: "max_channels_per_rule",
            message: `the ${plan.name} plan allows ${plan.max} channels per rule; this rule has ${rule.channel_ids.length}`
          })
        }
        const types = yield* sql`
          SELECT id, type FROM channels WHERE id = ANY(${rule.channel_ids}::uuid[]) ORDER BY id`.pipe(Effect.flatMap(channelsIdTypeRows))
        const refused = types.find((c) => !(plan?.channel_types ?? []).includes(c.type))
        if (refused !== undefined) {
          return yield* new PlanLimitReached({
            field: "channel_ids",
            message: `the ${plan?.name} plan allows ${(plan?.channel_types ?? []).join(", ")} channels only; channel ${refused.id} is ${refused.type}`
          })
        }
      })

      const writeScope = Effect.fnUntraced(function*(id: string, rule: RuleInput, replace: boolean) {
        if (replace) yield* sql`DELETE FROM rule_scope_items WHERE rule_id = ${id}::uuid`
        for (const { field, column } of scopeLists) {
          if (rule[field].length === 0) continue
          yield* sql`
            INSERT INTO rule_scope_items (rule_id, ${sql(column)})
            SELECT ${id}::uuid, x FROM unnest(${rule[field]}::uuid[]) AS x`
        }
      })

      const writeChannels = Effect.fnUntraced(function*(id: string, rule: RuleInput, replace: boolean) {
        if (replace) yield* sql`DELETE FROM rule_channels WHERE rule_id = ${id}::uuid`
        yield* sql`INSERT INTO rule_channels (rule_id, channel_id) SELECT ${id}::uuid, x FROM unnest(${rule.channel_ids}::uuid[]) AS x`
      })

      const list = Effect.fn("Rules.list")(function*(principal: Principal, page: PageRequest) {
        yield* requirePermission(principal, "view")
        return yield* listPage({
          page,
          select: (where, limit) =>
            sql`
              SELECT ${sql.literal(ruleColumns)} FROM notification_rules t
              WHERE t.organization_id = ${principal.organization_id}::uuid AND ${where}
              ORDER BY t.created_at, t.id LIMIT ${limit}`.pipe(Effect.flatMap(decodeRules)),
          map: toRule
        })
      })

      const get = Effect.fn("Rules.get")(function*(principal: Principal, id: string) {
        yield* requirePermission(principal, "view")
        const rule = yield* load(principal, id)
        if (rule === undefined) return yield* notFound(id)
        return rule
      })

      const create = Effect.fn("Rules.create")(function*(principal: Principal, input: RuleCreate) {
        yield* requirePermission(principal, "notifications.manage")
        const validated = validateRule(input)
        if (Result.isFailure(validated)) return yield* invalid(validated.failure)
        const rule = validated.success
        const all: Touched = { scope: true, channels: true, escalation: true, template: true }
        return yield* sql.withTransaction(Effect.gen(function*() {
          // Locks the organization's row: two concurrent creates cannot both take the last place.
          yield* ensureWithinLimit(principal.organization_id, "max_rules")
          yield* checkReferences(principal, rule, all)
          yield* checkPlan(principal, rule, all)
          const [row] = yield* sql`
            INSERT INTO notification_rules (organization_id, name, active, triggers, scope, alert_levels, schedule,
              group_window_s, cooldown_s, crowd_min_confidence, escalation, template, created_by)
            VALUES (${principal.organization_id}::uuid, ${rule.name}, ${rule.active}, ${rule.triggers}::text[], ${rule.scope},
              ${rule.alert_levels}::text[], ${json(rule.schedule)}::jsonb, ${rule.group_window_s}::int, ${rule.cooldown_s},
              ${rule.crowd_min_confidence}, ${json(rule.escalation)}::jsonb, ${json(rule.template)}::jsonb,
              ${principal.actor.kind === "user" ? principal.actor.id : null}::uuid)
            RETURNING id`.pipe(Effect.flatMap(notificationRulesIdRows))
          yield* writeScope(row!.id, rule, false)
          yield* writeChannels(row!.id, rule, false)
          const created = (yield* load(principal, row!.id))!
          yield* recordAudit(principal, { action: "rule.created", entity_type: "notification_rule", entity_id: created.id, after: created })
          return created
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      /** The organization's rule, its row locked for the rest of the transaction; NotFound when it has none of this id. */
      const lockedRule = (principal: Principal, id: string) =>
        Effect.gen(function*() {
          const [locked] = yield* sql`
            SELECT id FROM notification_rules WHERE id = ${id}::uuid AND organization_id = ${principal.organization_id}::uuid FOR UPDATE`
          if (locked === undefined) return yield* notFound(id)
          return (yield* load(principal, id))!
        })

      const update = Effect.fn("Rules.update")(function*(principal: Principal, id: string, patch: RuleUpdate) {
        yield* requirePermission(principal, "notifications.manage")
        return yield* sql.withTransaction(Effect.gen(function*() {
          const before = yield* lockedRule(principal, id)
          const merged: Record<string, unknown> = { ...inputOf(before), ...patch }
          // Widening the scope to all drops the ids, unless the same request gives them (then it is an error).
          if (patch.scope === "all") for (const { field } of scopeLists) if (!(field in patch)) merged[field] = []
          const validated = validateRule(merged, { channelsGiven: "channel_ids" in patch })
          if (Result.isFailure(validated)) return yield* invalid(validated.failure)
          const rule = validated.success
          const touched: Touched = {
            scope: "scope" in patch || scopeLists.some(({ field }) => field in patch),
            channels: "channel_ids" in patch,
            escalation: "escalation" in patch,
            template: "template" in patch
          }
          yield* checkReferences(principal, rule, touched)
          yield* checkPlan(principal, rule, touched)
          if (canonicalJson(sortedIds(rule)) === canonicalJson(sortedIds(inputOf(before)))) return before
          yield* sql`
            UPDATE notification_rules SET name = ${rule.name}, active = ${rule.active}, triggers = ${rule.triggers}::text[],
              scope = ${rule.scope}, alert_levels = ${rule.alert_levels}::text[], schedule = ${json(rule.schedule)}::jsonb,
              group_window_s = ${rule.group_window_s}::int, cooldown_s = ${rule.cooldown_s},
              crowd_min_confidence = ${rule.crowd_min_confidence}, escalation = ${json(rule.escalation)}::jsonb, template = ${json(rule.template)}::jsonb, updated_at = now()
            WHERE id = ${id}::uuid`
          if (touched.scope) yield* writeScope(id, rule, true)
          if (touched.channels) yield* writeChannels(id, rule, true)
          const after = (yield* load(principal, id))!
          yield* recordAudit(principal, { action: "rule.updated", entity_type: "notification_rule", entity_id: id, before, after })
          return after
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      const remove = Effect.fn("Rules.remove")(function*(principal: Principal, id: string) {
        yield* requirePermission(principal, "notifications.manage")
        return yield* sql.withTransaction(Effect.gen(function*() {
          const before = yield* lockedRule(principal, id)
          yield* sql`DELETE FROM notification_rules WHERE id = ${id}::uuid`
          yield* recordAudit(principal, { action: "rule.deleted", entity_type: "notification_rule", entity_id: id, before })
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      // The audit log, limits and paging run on this layer's connection (and so inside its transactions).
      const onSql = <A, E>(effect: Effect.Effect<A, E, SqlClient>) => Effect.provideService(effect, SqlClient, sql)
      return Rules.of({
        list: (principal, page) => onSql(list(principal, page)),
        get: (principal, id) => onSql(get(principal, id)),
        create: (principal, input) => onSql(create(principal, input)),
        update: (principal, id, patch) => onSql(update(principal, id, patch)),
        remove: (principal, id) => onSql(remove(principal, id))
      })
    })
  )
}
