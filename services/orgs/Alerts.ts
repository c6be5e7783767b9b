import { Config, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { ackPurpose, type Alert, type AlertDetail, type AlertLinkView, LinkExpired } from "../domain/api/Alerts.ts"
import { type Forbidden, type InvalidParameter, NotFound } from "../domain/api/Errors.ts"
import type { Principal } from "../domain/Principal.ts"
import { AlertLevel } from "../domain/Rule.ts"
import { firstOf, rowsOf } from "../platform/Rows.ts"
import { SecretBox } from "../platform/SecretBox.ts"
import { requirePermission } from "./Access.ts"
import { recordAudit } from "./Audit.ts"
import { cursorAt, listPage, type PageRequest } from "./Paging.ts"
import type { Page } from "../domain/api/Paging.ts"
import { NullOr } from "../domain/NullOr.ts"

const AlertRow = Schema.Struct({
  id: Schema.String,
  rule_id: Schema.NullOr(Schema.String),
  trigger: Schema.String,
  subject: Schema.String,
  level: AlertLevel,
  title: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  acknowledged_at: NullOr(Schema.Date),
  acknowledged_by: Schema.NullOr(Schema.String),
  escalation_step: Schema.Number,
  next_escalation_at: NullOr(Schema.Date),
  cursor_at: Schema.String
})
type AlertRow = typeof AlertRow.Type
const decodeAlerts = rowsOf("alerts", AlertRow)
const decodeAlert = firstOf("alerts", AlertRow)

const iso = (d: Date) => new Date(d).toISOString()

const toAlert = (row: AlertRow): Alert => ({
  id: row.id,
  rule_id: row.rule_id,
  trigger: row.trigger,
  subject: row.subject,
  level: row.level,
  title: row.title ?? "",
  created_at: iso(row.created_at),
  acknowledged_at: row.acknowledged_at === null ? null : iso(row.acknowledged_at),
  acknowledged_by: row.acknowledged_by,
  escalation_step: row.escalation_step,
  next_escalation_at: row.next_escalation_at === null ? null : iso(row.next_escalation_at)
})

const columns = `t.id, t.rule_id, t.trigger, t.subject, t.level, t.message ->> 'title' AS title, t.created_at,
  t.acknowledged_at, t.acknowledged_by, t.escalation_step, t.next_escalation_at`

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** What the alert page adds to the alert: its words, where it is shown, its rule and organization. */
const DetailRow = Schema.Struct({
  organization_slug: Schema.String,
  rule_name: Schema.NullOr(Schema.String),
  text: Schema.NullOr(Schema.String),
  url: Schema.NullOr(Schema.String),
  stack_name: Schema.NullOr(Schema.String),
  stack_slug: Schema.NullOr(Schema.String),
  component_name: Schema.NullOr(Schema.String),
  previous_status: Schema.NullOr(Schema.String),
  current_status: Schema.NullOr(Schema.String),
  changed_at: Schema.NullOr(Schema.String),
  escalates: Schema.Boolean
})
const decodeDetail = firstOf("alerts", DetailRow)

const DeliveryRow = Schema.Struct({
  channel_name: Schema.String,
  channel_type: Schema.String,
  status: Schema.Literals(["pending", "sending", "delivered", "failed", "cancelled"]),
  attempts: Schema.Number,
  last_error: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  delivered_at: NullOr(Schema.Date),
  escalation: Schema.Boolean
})
const decodeDeliveries = rowsOf("deliveries", DeliveryRow)
const decodeOrganizationOf = firstOf("alerts", Schema.Struct({ organization_id: Schema.String }))

const alertNotFound = (id: string) => new NotFound({ field: "id", message: `no alert ${id} in this organization` })

/** How long the signed acknowledgment link of an alert's message works, from the alert's creation (default 7 days). */
export const AckLinkTtl = Config.Int("ALERT_ACK_LINK_TTL_S").pipe(Config.withDefault(7 * 86_400))

const LinkedAlert = Schema.Struct({
  organization_id: Schema.String,
  level: AlertLevel,
  title: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  acknowledged_at: NullOr(Schema.Date),
  acknowledged_by: Schema.NullOr(Schema.String),
  expired: Schema.Boolean
})
type LinkedAlert = typeof LinkedAlert.Type
const decodeLinked = firstOf("alerts", LinkedAlert)

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

/**
 * The page a signed link opens: what it would acknowledge, and a button
 * that POSTs to the same address. Opening it acknowledges nothing, so mail
 * scanners and chat link previews cannot stop an escalation.
 */
const ackPage = (id: string, token: string, alert: LinkedAlert): string => {
  const title = escapeHtml(alert.title ?? "Alert")
  const action = `/api/v1/alerts/${encodeURIComponent(id)}/ack?token=${encodeURIComponent(token)}`
  const state = alert.acknowledged_at === null
    ? `<form method="post" action="${escapeHtml(action)}"><button type="submit">Acknowledge and stop the escalation</button></form>`
    : `<p role="status">Already acknowledged at ${iso(alert.acknowledged_at)} by ${escapeHtml(alert.acknowledged_by ?? "")}.</p>`
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>Acknowledge: ${title}</title></head>
<body><main><h1>Acknowledge this alert?</h1>
<dl><dt>Alert</dt><dd>${title}</dd><dt>Level</dt><dd>${escapeHtml(alert.level)}</dd><dt>Raised</dt><dd>${iso(alert.created_at)}</dd></dl>
${state}
</main></body></html>
`
}


/**
 * The organization's alerts (services/notifier/AlertStore.ts writes them) and
 * their acknowledgment, by a member or API key, or by the signed link of an
 * escalating alert's message. The first acknowledgment stands; each is
 * audited.
 */
/**
 * Acknowledges an alert of the organization: its escalation stops. Returns
 * the alert's acknowledgment (the first one stands) or undefined when there
 * is no such alert.
 */
const decodeAcknowledged = firstOf("alerts", Schema.Struct({ acknowledged_at: Schema.Date, acknowledged_by: Schema.String }))

const acknowledgeAlert = Effect.fn("Alerts.acknowledgeAlert")(function*(organizationId: string | null, alertId: string, by: string) {
  const sql = yield* SqlClient
  yield* sql`
      UPDATE alerts SET acknowledged_at = now(), acknowledged_by = ${by}, next_escalation_at = NULL
      WHERE id = ${alertId}::uuid AND acknowledged_at IS NULL
        ${organizationId === null ? sql`` : sql`AND organization_id = ${organizationId}::uuid`}`
  return yield* sql`
      SELECT acknowledged_at, acknowledged_by FROM alerts
      WHERE id = ${alertId}::uuid ${organizationId === null ? sql`` : sql`AND organization_id = ${organizationId}::uuid`}`.pipe(
    Effect.flatMap(decodeAcknowledged)
  )
})

export class Alerts extends Context.Service<Alerts, {
  list(principal: Principal, query: PageRequest & { readonly open?: "true" | "false" | undefined }): Effect.Effect<Page<Alert>, Forbidden | InvalidParameter>
  get(principal: Principal, id: string): Effect.Effect<Alert, Forbidden | NotFound>
  /** The alert page: the alert, what changed, its rule, stack and each channel's delivery. */
  detail(principal: Principal, id: string): Effect.Effect<AlertDetail, Forbidden | NotFound>
  /** The organization an alert belongs to (to choose the viewer's membership); NotFound for any other id. */
  organizationOf(id: string): Effect.Effect<string, NotFound>
  /** What a signed acknowledgment link would acknowledge (acknowledges nothing). */
  linkView(id: string, token: string): Effect.Effect<AlertLinkView, NotFound | LinkExpired>
  acknowledge(principal: Principal, id: string): Effect.Effect<Alert, Forbidden | NotFound>
  showLink(id: string, token: string): Effect.Effect<string, NotFound | LinkExpired>
  acknowledgeByLink(id: string, token: string): Effect.Effect<{ id: string; acknowledged_at: string; acknowledged_by: string }, NotFound | LinkExpired>
}>()("statusgrid/orgs/Alerts") {
  static readonly layer = Layer.effect(
    Alerts,
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const box = yield* SecretBox
      const linkTtlS = yield* Effect.orDie(AckLinkTtl)

      const alertRow = (orgId: string, id: string) =>
        sql`SELECT ${sql.literal(columns)}, ${sql.literal(cursorAt)} FROM alerts t
          WHERE t.id = ${id}::uuid AND t.organization_id = ${orgId}::uuid`.pipe(Effect.orDie, Effect.flatMap(decodeAlert))

      const list = Effect.fn("Alerts.list")(function*(principal: Principal, query: PageRequest & { readonly open?: "true" | "false" | undefined }) {
        yield* requirePermission(principal, "view")
        const filter = query.open === "true" ? sql`t.next_escalation_at IS NOT NULL`
          : query.open === "false" ? sql`t.next_escalation_at IS NULL` : sql`true`
        return yield* listPage({
          page: query,
          select: (where, limit) =>
            sql`
              SELECT ${sql.literal(columns)}, ${sql.literal(cursorAt)} FROM alerts t
              WHERE t.organization_id = ${principal.organization_id}::uuid AND ${filter} AND ${where}
              ORDER BY t.created_at, t.id LIMIT ${limit}`.pipe(Effect.flatMap(decodeAlerts)),
          map: toAlert
        })
      })

      const get = Effect.fn("Alerts.get")(function*(principal: Principal, id: string) {
        yield* requirePermission(principal, "view")
        const row = yield* alertRow(principal.organization_id, id)
        if (row === undefined) return yield* alertNotFound(id)
        return toAlert(row)
      })

      const detail = Effect.fn("Alerts.detail")(function*(principal: Principal, id: string) {
        const alert = yield* get(principal, id)
        const row = yield* sql`
          SELECT o.slug AS organization_slug, r.name AS rule_name, t.message ->> 'text' AS text, t.message ->> 'url' AS url,
            NULLIF(t.payload -> 'stack' ->> 'name', '') AS stack_name, NULLIF(t.payload -> 'stack' ->> 'slug', '') AS stack_slug,
            t.payload -> 'component' ->> 'name' AS component_name,
            t.payload -> 'component' ->> 'previous_status' AS previous_status,
            t.payload -> 'component' ->> 'current_status' AS current_status,
            t.payload ->> 'timestamp' AS changed_at,
            (t.next_escalation_at IS NOT NULL OR t.escalation_step > 0
              OR COALESCE(jsonb_array_length(r.escalation), 0) > 0) AS escalates
          FROM alerts t JOIN organizations o ON o.id = t.organization_id
          LEFT JOIN notification_rules r ON r.id = t.rule_id
          WHERE t.id = ${id}::uuid AND t.organization_id = ${principal.organization_id}::uuid`.pipe(Effect.orDie, Effect.flatMap(decodeDetail))
        if (row === undefined) return yield* alertNotFound(id)
        const deliveries = yield* sql`
          SELECT c.name AS channel_name, c.type AS channel_type, d.status, d.attempts, d.last_error, d.created_at, d.delivered_at,
            d.message IS NOT NULL AS escalation
          FROM deliveries d JOIN channels c ON c.id = d.channel_id
          WHERE d.alert_id = ${id}::uuid AND d.organization_id = ${principal.organization_id}::uuid
          ORDER BY d.created_at, c.name`.pipe(Effect.orDie, Effect.flatMap(decodeDeliveries))
        return {
          alert,
          organization_slug: row.organization_slug,
          rule_name: row.rule_name,
          text: row.text ?? "",
          url: row.url ?? "",
          stack: row.stack_name === null || row.stack_slug === null ? null : { name: row.stack_name, slug: row.stack_slug },
          change: {
            name: row.component_name ?? alert.title,
            previous_status: row.previous_status ?? "",
            current_status: row.current_status ?? "",
            at: row.changed_at ?? alert.created_at
          },
          escalates: row.escalates,
          deliveries: deliveries.map((d) => ({
            ...d,
            created_at: iso(d.created_at),
            delivered_at: d.delivered_at === null ? null : iso(d.delivered_at)
          }))
        } satisfies AlertDetail
      })

      const organizationOf = Effect.fn("Alerts.organizationOf")(function*(id: string) {
        const row = uuidPattern.test(id)
          ? yield* sql`SELECT organization_id FROM alerts WHERE id = ${id}::uuid`.pipe(Effect.orDie, Effect.flatMap(decodeOrganizationOf))
          : undefined
        if (row === undefined) return yield* new NotFound({ field: "id", message: `no alert ${id}` })
        return row.organization_id
      })

      const acknowledge = Effect.fn("Alerts.acknowledge")(function*(principal: Principal, id: string) {
        yield* requirePermission(principal, "notifications.manage")
        return yield* sql.withTransaction(Effect.gen(function*() {
          const before = yield* alertRow(principal.organization_id, id)
          if (before === undefined) return yield* alertNotFound(id)
          yield* acknowledgeAlert(principal.organization_id, id, `${principal.actor.kind}:${principal.actor.id}`)
          const after = toAlert((yield* alertRow(principal.organization_id, id))!)
          if (before.acknowledged_at === null) {
            yield* recordAudit(principal, {
              action: "alert.acknowledged",
              entity_type: "alert",
              entity_id: id,
              before: { acknowledged_at: null },
              after: { acknowledged_at: after.acknowledged_at, acknowledged_by: after.acknowledged_by }
            })
          }
          return after
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      /**
       * The alert a link signs, if its token is right and the link is younger
       * than the TTL (counted from the alert, whose message carries the link).
       */
      const linkedAlert = Effect.fn("Alerts.linkedAlert")(function*(id: string, token: string, lock: boolean) {
        // A wrong token answers like a missing alert: the link tells nothing about alerts it does not sign.
        const missing = new NotFound({ field: "id", message: `no alert ${id} for this link` })
        if (!box.verify(ackPurpose, id, token)) return yield* missing
        const row = yield* sql`
          SELECT organization_id, level, message ->> 'title' AS title, created_at, acknowledged_at, acknowledged_by,
            created_at + make_interval(secs => ${linkTtlS}) <= now() AS expired
          FROM alerts WHERE id = ${id}::uuid ${lock ? sql`FOR UPDATE` : sql``}`.pipe(Effect.orDie, Effect.flatMap(decodeLinked))
        if (row === undefined) return yield* missing
        if (row.expired) {
          return yield* new LinkExpired({
            field: "token",
            message: `this acknowledgment link expired (links are valid ${linkTtlS} s after the alert); acknowledge the alert in the API or the dashboard`
          })
        }
        return row
      })

      const linkView = Effect.fn("Alerts.linkView")(function*(id: string, token: string) {
        const row = yield* linkedAlert(id, token, false)
        return {
          id,
          title: row.title ?? "Alert",
          level: row.level,
          created_at: iso(row.created_at),
          acknowledged_at: row.acknowledged_at === null ? null : iso(row.acknowledged_at),
          acknowledged_by: row.acknowledged_by
        } satisfies AlertLinkView
      })

      const showLink = Effect.fn("Alerts.showLink")(function*(id: string, token: string) {
        return ackPage(id, token, yield* linkedAlert(id, token, false))
      })

      const acknowledgeByLink = Effect.fn("Alerts.acknowledgeByLink")(function*(id: string, token: string) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const before = yield* linkedAlert(id, token, true)
          const row = yield* acknowledgeAlert(null, id, "link")
          if (before.acknowledged_at === null) {
            yield* sql`
              INSERT INTO audit_log (organization_id, action, entity_type, entity_id, before, after)
              VALUES (${before.organization_id}::uuid, 'alert.acknowledged', 'alert', ${id},
                ${JSON.stringify({ acknowledged_at: null })}::jsonb, ${JSON.stringify({ acknowledged_by: "link" })}::jsonb)`
          }
          return { id, acknowledged_at: iso(row!.acknowledged_at), acknowledged_by: row!.acknowledged_by }
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      const onSql = <A, E>(effect: Effect.Effect<A, E, SqlClient>) => Effect.provideService(effect, SqlClient, sql)
      return Alerts.of({
        list: (principal, query) => onSql(list(principal, query)),
        get: (principal, id) => onSql(get(principal, id)),
        detail: (principal, id) => onSql(detail(principal, id)),
        organizationOf: (id) => onSql(organizationOf(id)),
        linkView: (id, token) => onSql(linkView(id, token)),
        acknowledge: (principal, id) => onSql(acknowledge(principal, id)),
        showLink: (id, token) => onSql(showLink(id, token)),
        acknowledgeByLink: (id, token) => onSql(acknowledgeByLink(id, token))
      })
    })
  )
}
