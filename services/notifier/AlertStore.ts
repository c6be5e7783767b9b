import { Effect, Schema } from "effect"
import { randomBytes } from "node:crypto"
import { SqlClient } from "effect/sql/SqlClient"
import { NotificationPayload } from "../domain/Channel.ts"
import { AlertLevel, EscalationStep } from "../domain/Rule.ts"
import { JsonColumn, rowsOf } from "../platform/Rows.ts"
import { links } from "./Compose.ts"
import { escalationMessage, GroupItem, groupMessage, withAckLink } from "./Compose.ts"
import { Message } from "./Sender.ts"

/** The rows of the queries below, decoded by Schemas compiled once (services/platform/Rows.ts). */
const deliveriesIdRows = rowsOf("deliveries", Schema.Struct({ id: Schema.String }))
const channelsIdRows = rowsOf("channels", Schema.Struct({ id: Schema.String }))

/**
 * The engine's records in PostgreSQL: alerts (with their deliveries,
 * escalation and acknowledgment), and the grouping windows. Every function
 * runs inside the caller's transaction when there is one.
 */

/** A rule's escalation column: its steps, or null. */
const Escalation = Schema.NullOr(JsonColumn(Schema.Array(EscalationStep)))

/** How to link back: the service's public URL, and the signer of acknowledgment links. */
export interface LinkContext {
  readonly publicUrl: string
  readonly ackToken: (alertId: string) => string
}

/**
 * The signed acknowledgment link of an escalating alert's message: the portal's page
 * (`/alerts/<id>/ack`), which shows the alert and POSTs; `/api/v1/alerts/<id>/ack` takes the same token.
 */
export const ackUrl = (context: LinkContext, alertId: string): string =>
  `${context.publicUrl.replace(/\/$/, "")}/alerts/${alertId}/ack?token=${context.ackToken(alertId)}`

/** `<PUBLIC_URL>/a/<code>`: 8 characters of code (48 random bits), redirecting to the alert's page (services/api/ShortLinks.ts). */
export const shortUrl = (context: LinkContext, code: string): string => `${context.publicUrl.replace(/\/$/, "")}/a/${code}`

export interface NewAlert {
  readonly organization_id: string
  readonly rule_id: string
  readonly trigger: string
  readonly subject: string
  readonly level: AlertLevel
  readonly payload: NotificationPayload
  readonly message: Message
  /** The event the alert is about, for the deliveries' record; null for a group. */
  readonly event_id: string | null
  /** `<key>:<channel id>` is each delivery's idempotency key: the same event to the same channel is sent once. */
  readonly key: string
  readonly channel_ids: ReadonlyArray<string>
  readonly escalation: ReadonlyArray<typeof EscalationStep.Type> | null
}

/**
 * Writes `deliveries` for an alert, one per channel; a key already used
 * writes nothing. They send the alert's payload and message, or `message`
 * when given (an escalation step's). Returns how many were written.
 */
const insertDeliveries = Effect.fn("AlertStore.insertDeliveries")(function*(
  alert: {
    readonly id: string
    readonly organization_id: string
    readonly rule_id: string | null
    readonly event_id: string | null
    readonly trigger: string
    readonly subject: string
  },
  key: string,
  channelIds: ReadonlyArray<string>,
  message?: Message
) {
  if (channelIds.length === 0) return 0
  const sql = yield* SqlClient
  const rows = yield* sql`
      INSERT INTO deliveries (organization_id, rule_id, channel_id, event_id, event_type, idempotency_key, order_key, payload, message, alert_id)
      SELECT ${alert.organization_id}::uuid, ${alert.rule_id}::uuid, c.id, ${alert.event_id}, ${alert.trigger},
        ${key} || ':' || c.id, ${alert.subject}, NULL, ${message === undefined ? null : JSON.stringify(message)}::jsonb, ${alert.id}::uuid
      FROM channels c WHERE c.id IN ${sql.in(channelIds)} AND c.organization_id = ${alert.organization_id}::uuid
      ON CONFLICT (idempotency_key) DO NOTHING
      RETURNING id`.pipe(Effect.flatMap(deliveriesIdRows))
  return rows.length
})

/** An alert ready to be written: its id, short code and final words decided. */
export interface PreparedAlert extends Omit<NewAlert, "escalation"> {
  readonly id: string
  readonly short_code: string
  readonly first_delay: number | null
  /** A recovery of the subject is already known (later in the same batch): no escalation. */
  recovered: boolean
}

/**
 * An alert's id and short code, and its message with the short link (for
 * SMS) and, with an escalation policy, the acknowledgment link.
 */
export const prepareAlert = (alert: NewAlert, context: LinkContext): PreparedAlert => {
  const id = crypto.randomUUID()
  const shortCode = randomBytes(6).toString("base64url")
  const escalation = alert.escalation ?? []
  const linked = { ...alert.message, shortUrl: shortUrl(context, shortCode) }
  const { channel_ids, escalation: _, ...rest } = alert
  return {
    ...rest,
    id,
    message: escalation.length > 0 ? withAckLink(linked, ackUrl(context, id)) : linked,
    short_code: shortCode,
    first_delay: escalation[0]?.delay_s ?? null,
    channel_ids,
    recovered: false
  }
}

/**
 * Records alerts and queues their deliveries in the caller's transaction,
 * in two statements whatever their number: the alerts (the first escalation
 * step scheduled), then one delivery per channel (idempotency key
 * `<key>:<channel id>`, so several rules or stacks reaching one channel with
 * one event send once; a key already used writes nothing). Deliveries send
 * their alert's payload and message. Returns the deliveries written.
 */
export const writeAlerts = Effect.fn("AlertStore.writeAlerts")(function*(alerts: ReadonlyArray<PreparedAlert>) {
  if (alerts.length === 0) return 0
  const sql = yield* SqlClient
  yield* sql`
      INSERT INTO alerts (id, organization_id, rule_id, trigger, subject, level, payload, message, short_code,
        next_escalation_at, acknowledged_at, acknowledged_by)
      SELECT id, organization_id, rule_id, trigger, subject, level, payload, message, short_code,
        CASE WHEN first_delay IS NULL OR recovered THEN NULL ELSE now() + make_interval(secs => first_delay) END,
        CASE WHEN recovered AND first_delay IS NOT NULL THEN now() END,
        CASE WHEN recovered AND first_delay IS NOT NULL THEN 'recovered' END
      FROM jsonb_to_recordset(${JSON.stringify(alerts.map(({ channel_ids: _, ...a }) => a))}::jsonb)
        AS t(id uuid, organization_id uuid, rule_id uuid, trigger text, subject text, level text, payload jsonb, message jsonb,
          short_code text, first_delay int, recovered boolean)`
  const seen = new Set<string>()
  const deliveries = alerts.flatMap((a) =>
    a.channel_ids.flatMap((channel_id) => {
      const key = `${a.key}:${channel_id}`
      if (seen.has(key)) return []
      seen.add(key)
      return [{
        alert_id: a.id,
        organization_id: a.organization_id,
        rule_id: a.rule_id,
        channel_id,
        event_id: a.event_id,
        event_type: a.trigger,
        key,
        order_key: a.subject
      }]
    })).map((d, ord) => ({ ...d, ord }))
  if (deliveries.length === 0) return 0
  const rows = yield* sql`
      INSERT INTO deliveries (organization_id, rule_id, channel_id, event_id, event_type, idempotency_key, order_key, alert_id)
      SELECT t.organization_id, t.rule_id, c.id, t.event_id, t.event_type, t.key, t.order_key, t.alert_id
      FROM jsonb_to_recordset(${JSON.stringify(deliveries)}::jsonb)
        AS t(alert_id uuid, organization_id uuid, rule_id uuid, channel_id uuid, event_id text, event_type text, key text, order_key text, ord int)
      JOIN channels c ON c.id = t.channel_id AND c.organization_id = t.organization_id
      ORDER BY t.ord
      ON CONFLICT (idempotency_key) DO NOTHING
      RETURNING id`.pipe(Effect.flatMap(deliveriesIdRows))
  return rows.length
})

/** Adds an alert to its rule's open window for the stack, opening one that closes in `windowS` seconds. */
export const addToGroup = Effect.fn("AlertStore.addToGroup")(function*(
  group: { readonly organization_id: string; readonly rule_id: string; readonly stack_id: string; readonly window_s: number },
  item: GroupItem
) {
  const sql = yield* SqlClient
  yield* sql`
      INSERT INTO alert_groups (organization_id, rule_id, stack_id, flush_at, items)
      VALUES (${group.organization_id}::uuid, ${group.rule_id}::uuid, ${group.stack_id}::uuid,
        now() + make_interval(secs => ${group.window_s}), jsonb_build_array(${JSON.stringify(item)}::jsonb))
      ON CONFLICT (rule_id, stack_id) WHERE flushed_at IS NULL
      DO UPDATE SET items = alert_groups.items || EXCLUDED.items`
})

/** The channels a rule sends to now: enabled, of a type the plan allows, SMS within the month's allowance. */
export const allowedChannels = Effect.fn("AlertStore.allowedChannels")(function*(ruleId: string, among?: ReadonlyArray<string>) {
  const sql = yield* SqlClient
  const rows = yield* sql`
      SELECT c.id FROM channels c
      JOIN organizations o ON o.id = c.organization_id JOIN plans p ON p.id = o.plan_id
      WHERE ${among === undefined ? sql`c.id IN (SELECT channel_id FROM rule_channels WHERE rule_id = ${ruleId}::uuid)` : among.length === 0 ? sql`false` : sql`c.id IN ${sql.in(among)}`}
        AND c.organization_id = (SELECT organization_id FROM notification_rules WHERE id = ${ruleId}::uuid)
        AND ${channelUsable(sql)}
      ORDER BY c.id`.pipe(Effect.flatMap(channelsIdRows))
  return rows.map((r) => r.id)
})

/**
 * The SQL condition (on `c`, the channel, and `p`, its organization's plan)
 * for a channel that may be sent to: SMS while the month's allowance has
 * messages left (SMS segments sent, `deliveries.sms_segments`); whether one
 * delivery fits is decided when it is sent (`Outbox.reserveSms`).
 */
export const channelUsable = (sql: SqlClient) =>
  sql`c.enabled AND c.type = ANY (p.channel_types) AND (c.type <> 'sms' OR p.sms_per_month IS NULL OR p.sms_per_month > (
    SELECT COALESCE(sum(d.sms_segments), 0) FROM deliveries d
    WHERE d.organization_id = c.organization_id AND d.sms_segments > 0 AND d.created_at >= date_trunc('month', now())))`

const decodeDueGroups = rowsOf("alert_groups", Schema.Struct({
  id: Schema.String,
  organization_id: Schema.String,
  organization_slug: Schema.String,
  rule_id: Schema.String,
  stack_id: Schema.String,
  stack_name: Schema.String,
  stack_slug: Schema.String,
  items: JsonColumn(Schema.Array(GroupItem)),
  escalation: Escalation
}))

/**
 * Closes the windows that are due: one alert per window (the lone item as it
 * was, several as one combined message), to the rule's channels at that
 * time. Returns how many windows closed.
 */
export const flushDueGroups = Effect.fn("AlertStore.flushDueGroups")(function*(context: LinkContext, limit = 50) {
  const sql = yield* SqlClient
  return yield* sql.withTransaction(Effect.gen(function*() {
    const due = yield* sql`
        SELECT g.id, g.organization_id, o.slug AS organization_slug, g.rule_id, g.stack_id, st.name AS stack_name, st.slug AS stack_slug,
          g.items, r.escalation
        FROM alert_groups g JOIN notification_rules r ON r.id = g.rule_id JOIN stacks st ON st.id = g.stack_id
        JOIN organizations o ON o.id = g.organization_id
        WHERE g.flushed_at IS NULL AND g.flush_at <= now()
        ORDER BY g.flush_at LIMIT ${limit}
        FOR UPDATE OF g SKIP LOCKED`.pipe(Effect.flatMap(decodeDueGroups))
    for (const group of due) {
      const items = group.items
      const channelIds = yield* allowedChannels(group.rule_id)
      const escalation = group.escalation
      const lone = items.length === 1 ? items[0]! : undefined
      const message = lone?.message ??
        groupMessage(items, { name: group.stack_name }, links(context.publicUrl, group.organization_slug).stack(group.stack_slug))
      yield* writeAlerts([prepareAlert({
        organization_id: group.organization_id,
        rule_id: group.rule_id,
        trigger: lone?.trigger ?? "group",
        subject: lone?.subject ?? `stack:${group.stack_id}`,
        level: message.level,
        payload: message.payload,
        message,
        event_id: lone?.event_id ?? null,
        key: lone === undefined ? `group:${group.id}` : lone.event_id,
        channel_ids: channelIds,
        escalation
      }, context)])
      yield* sql`UPDATE alert_groups SET flushed_at = now() WHERE id = ${group.id}::uuid`
    }
    return due.length
  }))
})

/**
 * Sends the alerts a schedule paused whose window has opened: one alert per
 * held row (rule and subject), to the rule's channels at that time, with a
 * line saying since when it waited; the cooldown state of the rule and
 * subject records it. A held alert of a rule since paused or deleted is
 * dropped. Returns how many were sent. A hold is released no sooner than
 * `settleMs` after it was made, even when its window opened long ago (an event
 * read late): a recovery already on the stream behind it closes it first.
 */
export const releaseHeld = Effect.fn("AlertStore.releaseHeld")(function*(context: LinkContext, settleMs: number, limit = 50) {
  const sql = yield* SqlClient
  return yield* sql.withTransaction(Effect.gen(function*() {
    const due = yield* sql`
        SELECT h.id, h.organization_id, h.rule_id, h.subject, h.event_at, h.item, r.active, r.escalation
        FROM held_alerts h JOIN notification_rules r ON r.id = h.rule_id
        WHERE h.closed_at IS NULL AND h.release_at <= now()
          AND h.held_at <= now() - make_interval(secs => ${settleMs / 1000})
        ORDER BY h.release_at LIMIT ${limit}
        FOR UPDATE OF h SKIP LOCKED`.pipe(Effect.flatMap(decodeHeld))
    let sent = 0
    for (const held of due) {
      if (!held.active) {
        yield* sql`UPDATE held_alerts SET closed_at = now(), outcome = 'dropped' WHERE id = ${held.id}::uuid`
        continue
      }
      const item = held.item
      const since = held.event_at.toISOString()
      yield* writeAlerts([prepareAlert({
        organization_id: held.organization_id,
        rule_id: held.rule_id,
        trigger: item.trigger,
        subject: held.subject,
        level: item.level,
        payload: item.payload,
        message: { ...item.message, text: `${item.message.text}\nSince ${since} (held by the rule's schedule until now).` },
        event_id: item.event_id,
        key: item.event_id,
        channel_ids: yield* allowedChannels(held.rule_id),
        escalation: held.escalation
      }, context)])
      yield* sql`
          INSERT INTO rule_subject_state (rule_id, subject, last_status, last_alert_at)
          VALUES (${held.rule_id}::uuid, ${held.subject}, ${item.status}, now())
          ON CONFLICT (rule_id, subject) DO UPDATE SET last_status = EXCLUDED.last_status, last_alert_at = EXCLUDED.last_alert_at`
      yield* sql`UPDATE held_alerts SET closed_at = now(), outcome = 'sent' WHERE id = ${held.id}::uuid`
      sent += 1
    }
    return sent
  }))
})

/** What a held alert would have sent (held_alerts.item). */
const HeldItem = Schema.Struct({
  event_id: Schema.String,
  trigger: Schema.String,
  level: AlertLevel,
  status: Schema.String,
  payload: NotificationPayload,
  message: Message
})

const decodeHeld = rowsOf("held_alerts", Schema.Struct({
  id: Schema.String,
  organization_id: Schema.String,
  rule_id: Schema.String,
  subject: Schema.String,
  event_at: Schema.Date,
  item: JsonColumn(HeldItem),
  active: Schema.Boolean,
  escalation: Escalation
}))

/**
 * Sends the escalation steps that are due for alerts nobody acknowledged:
 * step n goes to its channels with the alert's message marked as an
 * escalation, then the next step is scheduled (delays count from the alert).
 * Returns how many steps were sent.
 */
export const escalateDue = Effect.fn("AlertStore.escalateDue")(function*(limit = 50) {
  const sql = yield* SqlClient
  return yield* sql.withTransaction(Effect.gen(function*() {
    const due = yield* sql`
        SELECT a.id, a.organization_id, a.rule_id, a.trigger, a.subject, a.escalation_step, a.payload, a.message, r.escalation
        FROM alerts a LEFT JOIN notification_rules r ON r.id = a.rule_id
        WHERE a.next_escalation_at IS NOT NULL AND a.next_escalation_at <= now()
        ORDER BY a.next_escalation_at LIMIT ${limit}
        FOR UPDATE OF a SKIP LOCKED`.pipe(Effect.flatMap(decodeEscalating))
    let sent = 0
    for (const alert of due) {
      const steps = alert.escalation ?? []
      const step = steps[alert.escalation_step]
      if (step !== undefined && alert.rule_id !== null) {
        const channelIds = yield* allowedChannels(alert.rule_id, step.channel_ids)
        const message = escalationMessage(alert.message, alert.escalation_step + 1)
        yield* insertDeliveries(
          { ...alert, event_id: null },
          `${alert.id}:escalation:${alert.escalation_step + 1}`,
          channelIds,
          message
        )
        sent += 1
      }
      const next = step === undefined ? undefined : steps[alert.escalation_step + 1]
      yield* sql`
          UPDATE alerts SET escalation_step = escalation_step + 1,
            next_escalation_at = CASE WHEN ${next?.delay_s ?? null}::int IS NULL THEN NULL
              ELSE created_at + make_interval(secs => ${next?.delay_s ?? null}::int) END
          WHERE id = ${alert.id}::uuid`
    }
    return sent
  }))
})

const decodeEscalating = rowsOf("alerts", Schema.Struct({
  id: Schema.String,
  organization_id: Schema.String,
  rule_id: Schema.NullOr(Schema.String),
  trigger: Schema.String,
  subject: Schema.String,
  escalation_step: Schema.Number,
  payload: JsonColumn(NotificationPayload),
  message: JsonColumn(Message),
  escalation: Escalation
}))
