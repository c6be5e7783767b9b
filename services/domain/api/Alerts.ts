import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { AlertLevel } from "../Rule.ts"
import { OrgAuth } from "./Auth.ts"
import { Forbidden, NotFound } from "./Errors.ts"
import { Page, PageQuery } from "./Paging.ts"
import { NullOr } from "../NullOr.ts"

const Uuid = Schema.String.annotate({ format: "uuid" })
const Timestamp = Schema.String.annotate({ format: "date-time" })

/**
 * An alert: a rule's decision to notify about one subject (or about a stack's
 * changes grouped in a window), sent to the rule's channels; with an
 * escalation policy it goes on to the next steps until acknowledged.
 */
export const Alert = Schema.Struct({
  id: Uuid,
  rule_id: Schema.NullOr(Uuid),
  trigger: Schema.String.annotate({ description: "The rule trigger (component.critical, monitor.down, ...) or group." }),
  subject: Schema.String.annotate({ description: "component:<id>, monitor:<id>, incident:<source>:<id> or stack:<id> (a group)." }),
  level: AlertLevel,
  title: Schema.String,
  created_at: Timestamp,
  acknowledged_at: NullOr(Timestamp),
  acknowledged_by: Schema.NullOr(Schema.String).annotate({
    description: "user:<id>, api_key:<id>, link (the signed link in the message) or recovered (the subject recovered)."
  }),
  escalation_step: Schema.Int.annotate({ description: "Escalation steps sent so far." }),
  next_escalation_at: NullOr(Timestamp)
}).annotate({ identifier: "Alert" })
export type Alert = typeof Alert.Type

const IdParams = { id: Schema.String.check(Schema.isUUID(undefined, { message: "must be a UUID" })) }

export const AlertQuery = {
  ...PageQuery,
  open: Schema.optional(Schema.Literals(["true", "false"]).annotate({ description: "true: only alerts still escalating." }))
}

/** The organization's alerts and their acknowledgment. */
export class AlertsGroup extends HttpApiGroup.make("alerts")
  .add(
    HttpApiEndpoint.get("list", "/alerts", { query: AlertQuery, success: Page(Alert, "AlertList"), error: Forbidden })
      .annotateMerge(OpenApi.annotations({ summary: "List alerts, oldest first" })),
    HttpApiEndpoint.get("get", "/alerts/:id", { params: IdParams, success: Alert, error: [Forbidden, NotFound] })
      .annotateMerge(OpenApi.annotations({ summary: "One alert" })),
    HttpApiEndpoint.post("acknowledge", "/alerts/:id/acknowledge", { params: IdParams, success: Alert, error: [Forbidden, NotFound] })
      .annotateMerge(OpenApi.annotations({ summary: "Acknowledge an alert: its escalation stops (Admin, Member)" }))
  )
  .middleware(OrgAuth)
  .annotateMerge(OpenApi.annotations({ title: "Alerts", description: "Alerts sent by notification rules; acknowledging one stops its escalation." }))
{}

/** 410: the signed acknowledgment link is older than `ALERT_ACK_LINK_TTL_S`; acknowledge in the API instead. */
export class LinkExpired extends Schema.Error<LinkExpired>("LinkExpired")({
  _tag: Schema.tagDefaultOmit("LinkExpired"),
  code: Schema.tag("link_expired"),
  message: Schema.String,
  field: Schema.optionalKey(Schema.String)
}, { httpApiStatus: 410, identifier: "LinkExpired" }) {}

/** The SecretBox purpose that signs acknowledgment links: the notifier signs them, orgs/Alerts.ts checks them. */
export const ackPurpose = "alert-ack"

export const AlertAcknowledgment = Schema.Struct({ id: Uuid, acknowledged_at: Timestamp, acknowledged_by: Schema.String })
  .annotate({ identifier: "AlertAcknowledgment" })

/** One channel's delivery of an alert (its first message or an escalation step), for the alert page. */
export const AlertDelivery = Schema.Struct({
  channel_name: Schema.String,
  channel_type: Schema.String,
  status: Schema.Literals(["pending", "sending", "delivered", "failed", "cancelled"]),
  attempts: Schema.Int,
  last_error: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  delivered_at: NullOr(Timestamp),
  escalation: Schema.Boolean.annotate({ description: "Sent by an escalation step, not with the alert." })
}).annotate({ identifier: "AlertDelivery" })
export type AlertDelivery = typeof AlertDelivery.Type

/** What the alert page shows: the alert, what changed, where it is shown, its rule, and each channel's delivery. */
export const AlertDetail = Schema.Struct({
  alert: Alert,
  organization_slug: Schema.String,
  rule_name: Schema.NullOr(Schema.String),
  text: Schema.String,
  url: Schema.String.annotate({ description: "The dashboard link of the alert's message (its stack, or the dashboard)." }),
  stack: Schema.NullOr(Schema.Struct({ name: Schema.String, slug: Schema.String })),
  change: Schema.Struct({ name: Schema.String, previous_status: Schema.String, current_status: Schema.String, at: Schema.String }),
  escalates: Schema.Boolean.annotate({ description: "The rule escalates this alert: it can be acknowledged." }),
  deliveries: Schema.Array(AlertDelivery)
}).annotate({ identifier: "AlertDetail" })
export type AlertDetail = typeof AlertDetail.Type

/** What a signed acknowledgment link shows before anything is acknowledged. */
export const AlertLinkView = Schema.Struct({
  id: Uuid,
  title: Schema.String,
  level: AlertLevel,
  created_at: Timestamp,
  acknowledged_at: NullOr(Timestamp),
  acknowledged_by: Schema.NullOr(Schema.String)
}).annotate({ identifier: "AlertLinkView" })
export type AlertLinkView = typeof AlertLinkView.Type

const LinkQuery = { token: Schema.String.annotate({ description: "The signature from the alert's message." }) }

/**
 * The signed acknowledgment link put in escalating alerts' messages: no API
 * key, the token is the authority. GET only shows what the link would
 * acknowledge (mail scanners and chat previews open links), with a form
 * that POSTs to the same address; POST acknowledges. A link is valid for
 * `ALERT_ACK_LINK_TTL_S` after its alert was made.
 */
export class AlertLinksGroup extends HttpApiGroup.make("alertLinks")
  .add(
    HttpApiEndpoint.get("showAcknowledgeLink", "/alerts/:id/ack", {
      params: IdParams,
      query: LinkQuery,
      success: Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/html; charset=utf-8" })),
      error: [NotFound, LinkExpired]
    }).annotateMerge(OpenApi.annotations({ summary: "A page showing the alert the signed link acknowledges, with a button (acknowledges nothing)" })),
    HttpApiEndpoint.post("acknowledgeByLink", "/alerts/:id/ack", {
      params: IdParams,
      query: LinkQuery,
      success: AlertAcknowledgment,
      error: [NotFound, LinkExpired]
    }).annotateMerge(OpenApi.annotations({ summary: "Acknowledge an alert through the signed link of its message" }))
  )
  .annotateMerge(OpenApi.annotations({ title: "Alert links" }))
{}
