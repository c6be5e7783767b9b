import { Context, Effect, Layer, Result, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { randomBytes, randomUUID } from "node:crypto"
import { Channel, type ChannelCreate, type ChannelUpdate, type Delivery, DeliveryStatus } from "../domain/api/Notifications.ts"
import { Conflict, type Forbidden, InvalidParameter, NotFound, PlanLimitReached } from "../domain/api/Errors.ts"
import { EscalationStep } from "../domain/Rule.ts"
import { ChannelType, decodeChannelSettings, secretFields, splitSecrets, testPayload } from "../domain/Channel.ts"
import type { Principal } from "../domain/Principal.ts"
import { JsonColumn, recordOf, rowsOf } from "../platform/Rows.ts"
import { SecretBox, type SecretBinding, secretBinding, type SecretBoxError } from "../platform/SecretBox.ts"
import { requirePermission } from "./Access.ts"
import { recordAudit } from "./Audit.ts"
import { channelAllowance } from "./Limits.ts"
import { cursorAt, decodeCursor, encodeCursor, listPage, type PageRequest } from "./Paging.ts"
import { defaultPageSize, type Page, pageOf } from "../domain/api/Paging.ts"
import { NullOr } from "../domain/NullOr.ts"

/** The notification center's filters: a page, one status, one channel. */
export type DeliveryFilter = PageRequest & {
  readonly status?: DeliveryStatus | undefined
  readonly channel_id?: string | undefined
}

/** The rows of the queries below, decoded by Schemas compiled once (services/platform/Rows.ts). */
const ruleChannelsRuleIdRows = rowsOf("rule_channels", Schema.Struct({ rule_id: Schema.String }))
const escalatingRuleRows = rowsOf("notification_rules", Schema.Struct({
  id: Schema.String,
  escalation: JsonColumn(Schema.Array(EscalationStep))
}))
const deliveriesIdRows = rowsOf("deliveries", Schema.Struct({ id: Schema.String }))

const ChannelRow = Schema.Struct({
  id: Schema.String,
  type: ChannelType,
  name: Schema.String,
  settings: JsonColumn(Schema.Record(Schema.String, Schema.Unknown)),
  enabled: Schema.Boolean,
  created_at: Schema.Date,
  updated_at: Schema.Date,
  cursor_at: Schema.String
})
type ChannelRow = typeof ChannelRow.Type
const decodeChannels = rowsOf("channels", ChannelRow)
const decodeChannelsWithSecrets = rowsOf("channels", Schema.Struct({ ...ChannelRow.fields, secrets: Schema.NullOr(Schema.Uint8Array) }))
/** The sealed secret settings: JSON of an object, decoded by a Schema compiled once. */
const sealedSettings = recordOf("channels", Schema.fromJsonString(Schema.Record(Schema.String, Schema.Unknown)))
/** The stored settings are the type's view: the record is checked against the API's Channel Schema, not cast. */
const channelRecord = recordOf("channels", Channel)

const channelColumns = `t.id, t.type, t.name, t.settings, t.enabled, t.created_at, t.updated_at, ${cursorAt}`

const toChannel = (row: ChannelRow): Channel =>
  channelRecord({
    id: row.id,
    type: row.type,
    name: row.name,
    enabled: row.enabled,
    settings: row.settings,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString()
  })

const DeliveryRow = Schema.Struct({
  id: Schema.String,
  status: DeliveryStatus,
  attempts: Schema.Number,
  last_error: Schema.NullOr(Schema.String),
  event_type: Schema.String,
  created_at: Schema.Date,
  delivered_at: NullOr(Schema.Date),
  channel_id: Schema.String,
  channel_type: ChannelType,
  channel_name: Schema.String,
  rule_id: Schema.NullOr(Schema.String),
  rule_name: Schema.NullOr(Schema.String),
  cursor_at: Schema.String
})
type DeliveryRow = typeof DeliveryRow.Type
const decodeDeliveries = rowsOf("deliveries", DeliveryRow)

const deliveryColumns = `t.id, t.status, t.attempts, t.last_error, t.event_type, t.created_at, t.delivered_at,
  c.id AS channel_id, c.type AS channel_type, c.name AS channel_name, r.id AS rule_id, r.name AS rule_name, ${cursorAt}`
const deliveryFrom = `deliveries t JOIN channels c ON c.id = t.channel_id LEFT JOIN notification_rules r ON r.id = t.rule_id`

const toDelivery = (row: DeliveryRow): Delivery => ({
  id: row.id,
  status: row.status,
  attempts: row.attempts,
  last_error: row.last_error,
  channel: { id: row.channel_id, type: row.channel_type, name: row.channel_name },
  rule: row.rule_id === null ? null : { id: row.rule_id, name: row.rule_name ?? "" },
  event_type: row.event_type,
  created_at: new Date(row.created_at).toISOString(),
  delivered_at: row.delivered_at === null ? null : new Date(row.delivered_at).toISOString()
})

/** JSON with object keys sorted: jsonb does not keep key order, so compare settings this way. */
export const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).toSorted(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v)

/**
 * The signing secret generated for a webhook channel created without one: a
 * Standard Webhooks secret, `whsec_` + base64 of 32 random bytes, which their
 * libraries take as it is (services/notifier/README.md, "Signing secrets").
 * Channels made before kept their hex secrets, which still sign as they did.
 */
const newSigningSecret = () => `whsec_${randomBytes(32).toString("base64")}`

const invalid = (issue: { readonly field: string; readonly message: string }) =>
  new InvalidParameter({ field: issue.field, message: `${issue.field} ${issue.message}` })

const notFound = (id: string) => new NotFound({ field: "id", message: `no channel ${id} in this organization` })

/**
 * Validated settings of a `type` channel, split into the stored view (secrets
 * masked) and the sealed secrets; a webhook without a signing secret gets one,
 * returned as `generated` to be shown once.
 */
const prepareSettings = (box: SecretBox["Service"], binding: SecretBinding, type: ChannelType, input: unknown) => {
  const decoded = decodeChannelSettings(type, input)
  if (Result.isFailure(decoded)) return Result.fail(invalid(decoded.failure))
  const settings = { ...(decoded.success as Record<string, unknown>) }
  let generated: string | undefined
  if (type === "webhook" && settings["signing_secret"] === undefined) {
    generated = newSigningSecret()
    settings["signing_secret"] = generated
  }
  const { view, secrets } = splitSecrets(type, settings)
  const sealed = Object.keys(secrets).length === 0 ? null : box.seal(JSON.stringify(secrets), binding)
  return Result.succeed({ view, secrets, sealed, generated })
}

/** Sets `key` as an own property: a field named `__proto__` stays a field (and is refused as unknown), not a prototype. */
const setOwn = (target: Record<string, unknown>, key: string, value: unknown) =>
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })

/** The settings shown, without the secret fields (their masked values stand for secrets that cannot be opened). */
const withoutSecretFields = (type: ChannelType, settings: Readonly<Record<string, unknown>>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(settings).filter(([field]) => !secretFields[type].includes(field)))

/** A PATCH's settings without the secret fields sent back exactly as shown (masked): they keep nothing when the stored secrets cannot be opened. */
const withoutMaskedSecrets = (
  type: ChannelType,
  view: Readonly<Record<string, unknown>>,
  patch: Readonly<Record<string, unknown>>
): Record<string, unknown> =>
  Object.fromEntries(Object.entries(patch).filter(([field, value]) =>
    !(secretFields[type].includes(field) && Object.hasOwn(view, field) && canonicalJson(value) === canonicalJson(view[field]))
  ))

/**
 * A PATCH's settings over the stored ones: `null` removes a setting; a secret
 * sent back exactly as shown (masked) keeps the stored secret, so a client
 * can send a channel it read back unchanged.
 */
const mergeSettings = (
  type: ChannelType,
  view: Readonly<Record<string, unknown>>,
  stored: Readonly<Record<string, unknown>>,
  patch: Readonly<Record<string, unknown>>
): Record<string, unknown> => {
  const merged: Record<string, unknown> = { ...view, ...stored }
  for (const [field, value] of Object.entries(patch)) {
    if (value === null) {
      delete merged[field]
    } else if (secretFields[type].includes(field) && canonicalJson(value) === canonicalJson(view[field])) {
      // the masked value as shown: unchanged
    } else if (field === "headers" && secretFields[type].includes(field) && typeof value === "object" && !Array.isArray(value)) {
      // Header by header: a value shown masked and sent back keeps the stored value.
      const shown = (view[field] ?? {}) as Record<string, unknown>
      const kept = (stored[field] ?? {}) as Record<string, unknown>
      setOwn(merged, field, Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([name, v]) =>
        [name, Object.hasOwn(shown, name) && v === shown[name] && Object.hasOwn(kept, name) ? kept[name] : v]
      )))
    } else {
      setOwn(merged, field, value)
    }
  }
  return merged
}

/**
 * Notification channels of an organization: settings validated per type,
 * secrets sealed with SecretBox into `channels.secrets` and shown masked;
 * the plan decides which types may be used. Also the send-test-notification
 * action and the notification center (the `deliveries` outbox).
 */
export class Channels extends Context.Service<Channels, {
  /** A page of the organization's channels, oldest first; of one type when `type` is given. */
  list(principal: Principal, page: PageRequest, type?: Channel["type"]): Effect.Effect<Page<Channel>, Forbidden | InvalidParameter>
  get(principal: Principal, id: string): Effect.Effect<Channel, Forbidden | NotFound>
  create(principal: Principal, input: ChannelCreate): Effect.Effect<Channel, Forbidden | InvalidParameter | PlanLimitReached>
  update(principal: Principal, id: string, patch: ChannelUpdate): Effect.Effect<Channel, Forbidden | NotFound | InvalidParameter | PlanLimitReached>
  remove(principal: Principal, id: string): Effect.Effect<void, Forbidden | NotFound>
  /** Queues a test notification (a `deliveries` row, event_type `test`) for the notifier to send. */
  sendTest(principal: Principal, id: string): Effect.Effect<Delivery, Forbidden | NotFound | PlanLimitReached | Conflict>
  /** The notification center, newest first. */
  deliveries(principal: Principal, query: DeliveryFilter): Effect.Effect<Page<Delivery>, Forbidden | InvalidParameter>
  delivery(principal: Principal, id: string): Effect.Effect<Delivery, Forbidden | NotFound>
  /** A failed delivery is tried once more, now (its attempts so far count; Conflict unless it failed). */
  retryDelivery(principal: Principal, id: string): Effect.Effect<Delivery, Forbidden | NotFound | Conflict>
}>()("statusgrid/orgs/Channels") {
  static readonly layer = Layer.effect(
    Channels,
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const box = yield* SecretBox

      /** 402 naming `type` unless the organization's plan allows channels of `type`. */
      const requireType = Effect.fnUntraced(function*(principal: Principal, type: ChannelType) {
        const allowance = yield* channelAllowance(principal.organization_id)
        if (!allowance.channelTypes.includes(type)) {
          return yield* new PlanLimitReached({
            field: "type",
            message: `the ${allowance.plan} plan allows ${allowance.channelTypes.join(", ")} channels only, not ${type}`
          })
        }
      })

      const selectChannel = (principal: Principal, id: string, lock: boolean) =>
        sql`
          SELECT ${sql.literal(channelColumns)}, t.secrets FROM channels t
          WHERE t.id = ${id}::uuid AND t.organization_id = ${principal.organization_id}::uuid
          ${sql.literal(lock ? "FOR UPDATE" : "")}`.pipe(Effect.flatMap(decodeChannelsWithSecrets), Effect.orDie, Effect.map((rows) => rows[0]))

      /** The channel's secret settings; a value that opens under no configured key (or not for this row) is a SecretBoxError. */
      const openSecrets = (sealed: Uint8Array | null, binding: SecretBinding): Effect.Effect<Record<string, unknown>, SecretBoxError> =>
        sealed === null ? Effect.succeed({}) : box.open(sealed, binding).pipe(Effect.map(sealedSettings))

      const list = Effect.fn("Channels.list")(function*(principal: Principal, page: PageRequest, type?: Channel["type"]) {
        yield* requirePermission(principal, "view")
        return yield* listPage({
          page,
          select: (where, limit) =>
            sql`
              SELECT ${sql.literal(channelColumns)} FROM channels t
              WHERE t.organization_id = ${principal.organization_id}::uuid AND ${where}
                ${type === undefined ? sql`` : sql`AND t.type = ${type}`}
              ORDER BY t.created_at, t.id LIMIT ${limit}`.pipe(Effect.flatMap(decodeChannels)),
          map: toChannel
        })
      })

      const get = Effect.fn("Channels.get")(function*(principal: Principal, id: string) {
        yield* requirePermission(principal, "view")
        const row = yield* selectChannel(principal, id, false)
        if (row === undefined) return yield* notFound(id)
        return toChannel(row)
      })

      const create = Effect.fn("Channels.create")(function*(principal: Principal, input: ChannelCreate) {
        yield* requirePermission(principal, "notifications.manage")
        yield* requireType(principal, input.type)
        // The id is made here, not by PostgreSQL: the secrets are sealed for this row before it is written.
        const id = randomUUID()
        const prepared = prepareSettings(box, secretBinding("channel secrets", principal.organization_id, id), input.type, input.settings)
        if (Result.isFailure(prepared)) return yield* prepared.failure
        const { view, sealed, generated } = prepared.success
        return yield* sql.withTransaction(Effect.gen(function*() {
          const [row] = yield* sql`
            INSERT INTO channels AS t (id, organization_id, type, name, settings, secrets, enabled)
            VALUES (${id}::uuid, ${principal.organization_id}::uuid, ${input.type}, ${input.name}, ${JSON.stringify(view)}::jsonb,
              ${sealed}::bytea, ${input.enabled ?? true})
            RETURNING ${sql.literal(channelColumns)}`.pipe(Effect.flatMap(decodeChannels))
          const channel = toChannel(row!)
          yield* recordAudit(principal, { action: "channel.created", entity_type: "channel", entity_id: channel.id, after: channel })
          return generated === undefined ? channel : ({ ...channel, signing_secret: generated } as Channel)
        })).pipe(Effect.orDie)
      })

      const update = Effect.fn("Channels.update")(function*(principal: Principal, id: string, patch: ChannelUpdate) {
        yield* requirePermission(principal, "notifications.manage")
        return yield* sql.withTransaction(Effect.gen(function*() {
          const row = yield* selectChannel(principal, id, true)
          if (row === undefined) return yield* notFound(id)
          // Renaming or disabling stays possible after a downgrade; changing what is sent is not.
          if (patch.settings !== undefined || (patch.enabled === true && !row.enabled)) yield* requireType(principal, row.type)
          let settings = row.settings
          let sealed = row.secrets
          let generated: string | undefined
          if (patch.settings !== undefined) {
            const binding = secretBinding("channel secrets", principal.organization_id, row.id)
            const opened = yield* Effect.result(openSecrets(row.secrets, binding))
            // Stored secrets that cannot be opened (another key, a value copied from another row) are not kept:
            // the patch gives them again, and their masked values sent back stand for nothing.
            const unreadable = Result.isFailure(opened) ? opened.failure : undefined
            const stored = Result.isSuccess(opened) ? opened.success : {}
            const merged = unreadable === undefined
              ? mergeSettings(row.type, row.settings, stored, patch.settings)
              : mergeSettings(row.type, withoutSecretFields(row.type, row.settings), {}, withoutMaskedSecrets(row.type, row.settings, patch.settings))
            const prepared = prepareSettings(box, binding, row.type, merged)
            if (Result.isFailure(prepared)) {
              return yield* unreadable === undefined ? prepared.failure : new InvalidParameter({
                field: prepared.failure.field,
                message: `${prepared.failure.message} (the stored secret settings cannot be opened, so give them again: ${unreadable.message})`
              })
            }
            generated = prepared.success.generated
            if (unreadable !== undefined || canonicalJson(prepared.success.secrets) !== canonicalJson(stored)) sealed = prepared.success.sealed
            settings = prepared.success.view
          }
          const name = patch.name ?? row.name
          const enabled = patch.enabled ?? row.enabled
          const before = toChannel(row)
          const unchanged = name === row.name && enabled === row.enabled && sealed === row.secrets &&
            canonicalJson(settings) === canonicalJson(row.settings)
          if (unchanged) return before
          const [updated] = yield* sql`
            UPDATE channels AS t SET name = ${name}, enabled = ${enabled}, settings = ${JSON.stringify(settings)}::jsonb,
              secrets = ${sealed}::bytea, updated_at = now()
            WHERE t.id = ${id}::uuid
            RETURNING ${sql.literal(channelColumns)}`.pipe(Effect.flatMap(decodeChannels))
          const after = toChannel(updated!)
          yield* recordAudit(principal, { action: "channel.updated", entity_type: "channel", entity_id: id, before, after })
          return generated === undefined ? after : ({ ...after, signing_secret: generated } as Channel)
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      const remove = Effect.fn("Channels.remove")(function*(principal: Principal, id: string) {
        yield* requirePermission(principal, "notifications.manage")
        return yield* sql.withTransaction(Effect.gen(function*() {
          const row = yield* selectChannel(principal, id, true)
          if (row === undefined) return yield* notFound(id)
          // Rules stop sending to it: rule_channels rows go with it (FK); escalation steps lose it here.
          const rules = yield* sql`SELECT rule_id FROM rule_channels WHERE channel_id = ${id}::uuid ORDER BY rule_id`.pipe(Effect.flatMap(ruleChannelsRuleIdRows))
          const escalating = yield* sql`
            SELECT id, escalation FROM notification_rules
            WHERE organization_id = ${principal.organization_id}::uuid AND escalation IS NOT NULL
              AND strpos(escalation::text, ${id}) > 0 FOR UPDATE`.pipe(Effect.flatMap(escalatingRuleRows))
          for (const rule of escalating) {
            const steps = rule.escalation
              .map((s) => ({ ...s, channel_ids: s.channel_ids.filter((c) => c !== id) }))
              .filter((s) => s.channel_ids.length > 0)
            yield* sql`UPDATE notification_rules SET escalation = ${steps.length === 0 ? null : JSON.stringify(steps)}::jsonb,
              updated_at = now() WHERE id = ${rule.id}::uuid`
          }
          yield* sql`DELETE FROM channels WHERE id = ${id}::uuid`
          yield* recordAudit(principal, {
            action: "channel.deleted",
            entity_type: "channel",
            entity_id: id,
            before: {
              ...toChannel(row),
              used_by_rules: [...new Set([...rules.map((r) => r.rule_id), ...escalating.map((r) => r.id)])].toSorted()
            }
          })
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      const sendTest = Effect.fn("Channels.sendTest")(function*(principal: Principal, id: string) {
        yield* requirePermission(principal, "notifications.manage")
        return yield* sql.withTransaction(Effect.gen(function*() {
          const row = yield* selectChannel(principal, id, false)
          if (row === undefined) return yield* notFound(id)
          yield* requireType(principal, row.type)
          if (!row.enabled) {
            return yield* new Conflict({ field: "enabled", message: "the channel is disabled; enable it to send a test notification" })
          }
          // One key per request: every test is sent, however often it is asked for.
          const [inserted] = yield* sql`
            INSERT INTO deliveries (organization_id, channel_id, event_type, idempotency_key, payload)
            VALUES (${principal.organization_id}::uuid, ${id}::uuid, 'test', 'test:' || gen_random_uuid()::text,
              ${JSON.stringify(testPayload(new Date()))}::jsonb)
            RETURNING id`.pipe(Effect.flatMap(deliveriesIdRows))
          const [delivery] = yield* sql`
            SELECT ${sql.literal(deliveryColumns)} FROM ${sql.literal(deliveryFrom)} WHERE t.id = ${inserted!.id}::uuid`.pipe(Effect.flatMap(decodeDeliveries))
          const sent = toDelivery(delivery!)
          yield* recordAudit(principal, {
            action: "channel.test_sent",
            entity_type: "channel",
            entity_id: id,
            after: { delivery_id: sent.id, event_type: "test" }
          })
          return sent
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      const deliveries = Effect.fn("Channels.deliveries")(function*(
        principal: Principal,
        query: DeliveryFilter
      ) {
        yield* requirePermission(principal, "view")
        const limit = query.limit ?? defaultPageSize
        const before = yield* decodeCursor(query.cursor)
        const rows = yield* sql`
          SELECT ${sql.literal(deliveryColumns)} FROM ${sql.literal(deliveryFrom)}
          WHERE t.organization_id = ${principal.organization_id}::uuid
            AND ${query.status === undefined ? sql`true` : sql`t.status = ${query.status}`}
            AND ${query.channel_id === undefined ? sql`true` : sql`t.channel_id = ${query.channel_id}::uuid`}
            AND ${before === undefined ? sql`true` : sql`(t.created_at, t.id) < (${before.at}::timestamptz, ${before.id}::uuid)`}
          ORDER BY t.created_at DESC, t.id DESC LIMIT ${limit + 1}`.pipe(Effect.flatMap(decodeDeliveries), Effect.orDie)
        return pageOf(rows, limit, (last) => encodeCursor({ at: last.cursor_at, id: last.id }), toDelivery)
      })

      const delivery = Effect.fn("Channels.delivery")(function*(principal: Principal, id: string) {
        yield* requirePermission(principal, "view")
        const [row] = yield* sql`
          SELECT ${sql.literal(deliveryColumns)} FROM ${sql.literal(deliveryFrom)}
          WHERE t.id = ${id}::uuid AND t.organization_id = ${principal.organization_id}::uuid`.pipe(Effect.flatMap(decodeDeliveries), Effect.orDie)
        if (row === undefined) return yield* new NotFound({ field: "id", message: `no delivery ${id} in this organization` })
        return toDelivery(row)
      })

      const retryDelivery = Effect.fn("Channels.retryDelivery")(function*(principal: Principal, id: string) {
        yield* requirePermission(principal, "notifications.manage")
        return yield* sql.withTransaction(Effect.gen(function*() {
          const [row] = yield* sql<{ status: string }>`
            SELECT status FROM deliveries WHERE id = ${id}::uuid AND organization_id = ${principal.organization_id}::uuid FOR UPDATE`
          if (row === undefined) return yield* new NotFound({ field: "id", message: `no delivery ${id} in this organization` })
          if (row.status !== "failed") {
            return yield* new Conflict({ field: "status", message: `only a failed delivery can be retried; this one is ${row.status}` })
          }
          yield* sql`UPDATE deliveries SET status = 'pending', next_attempt_at = now() WHERE id = ${id}::uuid`
          yield* recordAudit(principal, { action: "delivery.retried", entity_type: "delivery", entity_id: id })
          const [after] = yield* sql`
            SELECT ${sql.literal(deliveryColumns)} FROM ${sql.literal(deliveryFrom)} WHERE t.id = ${id}::uuid`.pipe(Effect.flatMap(decodeDeliveries))
          return toDelivery(after!)
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      // The audit log, limits and paging run on this layer's connection (and so inside its transactions).
      const onSql = <A, E>(effect: Effect.Effect<A, E, SqlClient>) => Effect.provideService(effect, SqlClient, sql)
      return Channels.of({
        list: (principal, page, type) => onSql(list(principal, page, type)),
        get: (principal, id) => onSql(get(principal, id)),
        create: (principal, input) => onSql(create(principal, input)),
        update: (principal, id, patch) => onSql(update(principal, id, patch)),
        remove: (principal, id) => onSql(remove(principal, id)),
        sendTest: (principal, id) => onSql(sendTest(principal, id)),
        deliveries: (principal, query) => onSql(deliveries(principal, query)),
        delivery: (principal, id) => onSql(delivery(principal, id)),
        retryDelivery: (principal, id) => onSql(retryDelivery(principal, id))
      })
    })
  )
}
