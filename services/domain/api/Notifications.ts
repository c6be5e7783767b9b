import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { channelKinds, ChannelType, channelTypes } from "../Channel.ts"
import { AlertLevel, RuleInput, RuleScope, ruleFields, Trigger, Weekday } from "../Rule.ts"
import { OrgAuth } from "./Auth.ts"
import { Conflict, Forbidden, NotFound, PlanLimitReached } from "./Errors.ts"
import { Page, PageQuery } from "./Paging.ts"
import { NullOr } from "../NullOr.ts"

const Id = Schema.String.annotate({ format: "uuid" })
const Timestamp = Schema.String.annotate({ format: "date-time" })
const Name = Schema.Trim.check(Schema.isBetweenLength(1, 200, { message: "must be 1 to 200 characters" }))

// ---------------------------------------------------------------------------
// Channels

const channelRecord = <T extends ChannelType>(type: T) => {
  const { extra, record, view } = channelKinds[type]
  return Schema.Struct({
    id: Id,
    type: Schema.Literal(type),
    name: Schema.String,
    enabled: Schema.Boolean,
    settings: view,
    created_at: Timestamp,
    updated_at: Timestamp,
    ...extra
  }).annotate({ identifier: record })
}
type ChannelRecord = {
  readonly [T in ChannelType]: Schema.Struct<
    Extract<{
      readonly id: typeof Id
      readonly type: Schema.Literal<T>
      readonly name: Schema.String
      readonly enabled: Schema.Boolean
      readonly settings: (typeof channelKinds)[T]["view"]
      readonly created_at: typeof Timestamp
      readonly updated_at: typeof Timestamp
    } & (typeof channelKinds)[T]["extra"], Schema.Struct.Fields>
  >
}[ChannelType]

/**
 * A channel as the API shows it: every setting of its type, secrets masked
 * (`https://hooks.slack.com/…/abcd`, `…abcd`, header values `…`). One member
 * per entry of `channelKinds` (domain/Channel.ts).
 */
export const Channel = Schema.Union(channelTypes.map((type) => channelRecord(type) as ChannelRecord)).annotate({ identifier: "Channel" })
export type Channel = typeof Channel.Type

const SettingsInput = Schema.Record(Schema.String, Schema.Unknown)

export const ChannelCreate = Schema.Struct({
  name: Name,
  type: ChannelType,
  enabled: Schema.optionalKey(Schema.Boolean),
  settings: SettingsInput.annotate({
    description: `The settings of the type (${channelTypes.map((t) => channelKinds[t].settings.ast.annotations?.["identifier"]).join(", ")}: ` +
      "the fields of the matching *SettingsView, secrets in clear). A field at fault is named settings.<field>."
  })
}).annotate({ identifier: "ChannelCreate" })
export type ChannelCreate = typeof ChannelCreate.Type

export const ChannelUpdate = Schema.Struct({
  name: Schema.optionalKey(Name),
  enabled: Schema.optionalKey(Schema.Boolean),
  settings: Schema.optionalKey(SettingsInput.annotate({
    description: "Settings to change, merged into the stored ones; null removes an optional setting (its default applies). " +
      "Secrets change only when given (a masked value sent back unchanged keeps the secret)."
  }))
}).annotate({ identifier: "ChannelUpdate" })
export type ChannelUpdate = typeof ChannelUpdate.Type

// ---------------------------------------------------------------------------
// Rules

export const RuleScheduleView = Schema.Struct({
  timezone: Schema.String,
  days: Schema.Array(Weekday),
  start: Schema.String,
  end: Schema.String,
  holidays: Schema.Array(Schema.String),
  critical_always: Schema.Boolean
}).annotate({ identifier: "RuleScheduleView" })

export const Rule = Schema.Struct({
  id: Id,
  name: Schema.String,
  active: Schema.Boolean,
  triggers: Schema.Array(Trigger),
  scope: RuleScope,
  stack_ids: Schema.Array(Id).annotate({ description: "Sorted." }),
  component_ids: Schema.Array(Id).annotate({ description: "Sorted." }),
  monitor_ids: Schema.Array(Id).annotate({ description: "Sorted." }),
  alert_levels: Schema.Array(AlertLevel).annotate({ description: "Empty: every level." }),
  schedule: Schema.NullOr(RuleScheduleView),
  group_window_s: Schema.NullOr(Schema.Int),
  cooldown_s: Schema.Int,
  crowd_min_confidence: Schema.Int.annotate({ description: "The crowd.signal trigger: the least confidence (70-100) a crowd signal must reach." }),
  escalation: Schema.NullOr(Schema.Array(Schema.Struct({ delay_s: Schema.Int, channel_ids: Schema.Array(Id) }))),
  template: Schema.NullOr(Schema.Struct({ subject: Schema.optionalKey(Schema.String), body: Schema.String })),
  channel_ids: Schema.Array(Id).annotate({ description: "Sorted." }),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotate({ identifier: "Rule" })
export type Rule = typeof Rule.Type

/** Nested parts are validated field by field by the service, so that an error names `schedule.timezone`, not `schedule`. */
const nested = {
  schedule: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)).annotate({
    description: "RuleSchedule: { timezone (IANA), days [mon..sun] (default all), start \"HH:MM\" (default 00:00), " +
      "end \"HH:MM\" (default 24:00; before start spans midnight), holidays [\"YYYY-MM-DD\"], critical_always (default false) }; null: always."
  }),
  escalation: Schema.NullOr(Schema.Array(Schema.Unknown)).annotate({
    description: "Enterprise. Ordered steps [{ delay_s, channel_ids }], delays increasing; null: none."
  }),
  template: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)).annotate({
    description: "Enterprise. { subject?, body } with placeholders {status_emoji} {component_name} {status} {stack_name} " +
      "{previous_status} {current_status} {duration} {incident_title} {incident_update_count} {stack_url}; null: the default text."
  })
}

export const RuleCreate = Schema.Struct({
  ...RuleInput.fields,
  schedule: Schema.optionalKey(nested.schedule),
  escalation: Schema.optionalKey(nested.escalation),
  template: Schema.optionalKey(nested.template)
}).annotate({ identifier: "RuleCreate" })
export type RuleCreate = typeof RuleCreate.Type

export const RuleUpdate = Schema.Struct({
  name: Schema.optionalKey(ruleFields.name),
  active: Schema.optionalKey(ruleFields.active),
  triggers: Schema.optionalKey(ruleFields.triggers),
  scope: Schema.optionalKey(ruleFields.scope),
  stack_ids: Schema.optionalKey(ruleFields.stack_ids),
  component_ids: Schema.optionalKey(ruleFields.component_ids),
  monitor_ids: Schema.optionalKey(ruleFields.monitor_ids),
  alert_levels: Schema.optionalKey(ruleFields.alert_levels),
  schedule: Schema.optionalKey(nested.schedule),
  group_window_s: Schema.optionalKey(ruleFields.group_window_s),
  cooldown_s: Schema.optionalKey(ruleFields.cooldown_s),
  crowd_min_confidence: Schema.optionalKey(ruleFields.crowd_min_confidence),
  escalation: Schema.optionalKey(nested.escalation),
  template: Schema.optionalKey(nested.template),
  channel_ids: Schema.optionalKey(ruleFields.channel_ids)
}).annotate({ identifier: "RuleUpdate" })
export type RuleUpdate = typeof RuleUpdate.Type

// ---------------------------------------------------------------------------
// The notification center: the delivery outbox.

export const DeliveryStatus = Schema.Literals(["pending", "sending", "delivered", "failed", "cancelled"])
export type DeliveryStatus = typeof DeliveryStatus.Type

export const Delivery = Schema.Struct({
  id: Id,
  status: DeliveryStatus,
  attempts: Schema.Int,
  last_error: Schema.NullOr(Schema.String),
  channel: Schema.Struct({ id: Id, type: ChannelType, name: Schema.String }),
  rule: Schema.NullOr(Schema.Struct({ id: Id, name: Schema.String })).annotate({ description: "null for test notifications." }),
  event_type: Schema.String.annotate({ description: "A rule trigger, or `test`." }),
  created_at: Timestamp,
  delivered_at: NullOr(Timestamp)
}).annotate({ identifier: "Delivery" })
export type Delivery = typeof Delivery.Type

export const DeliveryQuery = {
  ...PageQuery,
  status: Schema.optional(DeliveryStatus.annotate({ description: "Only deliveries in this status." })),
  channel_id: Schema.optional(Schema.String.check(Schema.isUUID(undefined, { message: "must be a UUID" })).annotate({ description: "Only deliveries to this channel." }))
}

const IdParams = { id: Schema.String.check(Schema.isUUID(undefined, { message: "must be a UUID" })) }
const summary = (text: string) => OpenApi.annotations({ summary: text })

/** Notification channels and rules, test sends and the notification center. */
export class NotificationsGroup extends HttpApiGroup.make("notifications")
  .add(
    HttpApiEndpoint.get("listChannels", "/channels", { query: PageQuery, success: Page(Channel, "ChannelList"), error: Forbidden })
      .annotateMerge(summary("List notification channels, oldest first")),
    HttpApiEndpoint.post("createChannel", "/channels", {
      payload: ChannelCreate,
      success: Channel.pipe(HttpApiSchema.status(201)),
      error: [Forbidden, PlanLimitReached]
    }).annotateMerge(summary("Create a channel (Admin, Member); the plan must allow its type")),
    HttpApiEndpoint.get("getChannel", "/channels/:id", { params: IdParams, success: Channel, error: [Forbidden, NotFound] })
      .annotateMerge(summary("One channel, secrets masked")),
    HttpApiEndpoint.patch("updateChannel", "/channels/:id", {
      params: IdParams,
      payload: ChannelUpdate,
      success: Channel,
      error: [Forbidden, NotFound, PlanLimitReached]
    }).annotateMerge(summary("Change a channel's name, enabled flag or settings (Admin, Member)")),
    HttpApiEndpoint.delete("deleteChannel", "/channels/:id", { params: IdParams, success: HttpApiSchema.NoContent, error: [Forbidden, NotFound] })
      .annotateMerge(summary("Delete a channel; rules stop sending to it (Admin, Member)")),
    HttpApiEndpoint.post("testChannel", "/channels/:id/test", {
      params: IdParams,
      success: Delivery.pipe(HttpApiSchema.status(202)),
      error: [Forbidden, NotFound, PlanLimitReached, Conflict]
    }).annotateMerge(summary("Send a test notification: queues a delivery with a sample payload (Admin, Member)")),
    HttpApiEndpoint.get("listRules", "/rules", { query: PageQuery, success: Page(Rule, "RuleList"), error: Forbidden })
      .annotateMerge(summary("List notification rules, oldest first")),
    HttpApiEndpoint.post("createRule", "/rules", {
      payload: RuleCreate,
      success: Rule.pipe(HttpApiSchema.status(201)),
      error: [Forbidden, NotFound, PlanLimitReached]
    }).annotateMerge(summary("Create a rule (Admin, Member); limits max_rules and max_channels_per_rule")),
    HttpApiEndpoint.get("getRule", "/rules/:id", { params: IdParams, success: Rule, error: [Forbidden, NotFound] })
      .annotateMerge(summary("One notification rule")),
    HttpApiEndpoint.patch("updateRule", "/rules/:id", {
      params: IdParams,
      payload: RuleUpdate,
      success: Rule,
      error: [Forbidden, NotFound, PlanLimitReached]
    }).annotateMerge(summary("Change a rule; lists given replace the stored ones (Admin, Member)")),
    HttpApiEndpoint.delete("deleteRule", "/rules/:id", { params: IdParams, success: HttpApiSchema.NoContent, error: [Forbidden, NotFound] })
      .annotateMerge(summary("Delete a rule (Admin, Member)")),
    HttpApiEndpoint.get("listDeliveries", "/deliveries", { query: DeliveryQuery, success: Page(Delivery, "DeliveryList"), error: Forbidden })
      .annotateMerge(summary("The notification center: deliveries, newest first, optionally of one status")),
    HttpApiEndpoint.get("getDelivery", "/deliveries/:id", { params: IdParams, success: Delivery, error: [Forbidden, NotFound] })
      .annotateMerge(summary("One delivery")),
    HttpApiEndpoint.post("retryDelivery", "/deliveries/:id/retry", {
      params: IdParams,
      success: Delivery.pipe(HttpApiSchema.status(202)),
      error: [Forbidden, NotFound, Conflict]
    }).annotateMerge(summary("Try a failed delivery once more, now (Admin, Member); 409 unless it failed"))
  )
  .middleware(OrgAuth)
  .annotateMerge(OpenApi.annotations({ title: "Notifications", description: "Notification channels and rules, test sends and the notification center." }))
{}
