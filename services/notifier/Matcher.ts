import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { NotificationPayload } from "../domain/Channel.ts"
import type { StatusEvent } from "../domain/Event.ts"

/** The rule trigger a component status change fires, if any (spec: Notification rule, triggers). */
export const componentTrigger = (previous: string, current: string): string | undefined =>
  current === "critical" ? "component.critical"
  : current === "degraded" ? "component.degraded"
  : current === "maintenance" ? "component.maintenance"
  : current === "operational" && previous !== "operational" ? "component.recovered"
  : undefined

interface Match {
  readonly rule_id: string
  readonly organization_id: string
  readonly channel_id: string
  readonly stack_id: string
  readonly stack_name: string
  readonly stack_slug: string
  readonly component_uuid: string
  readonly cooldown_s: number
}

/**
 * Turns a component status change into outbox rows: for every organization
 * whose stacks show the component (or its whole source), every active rule
 * with the trigger whose scope covers it, one delivery per channel. The
 * idempotency key is the event id and the channel, so the same event reaching
 * one destination through several rules or stacks is sent once; a rule that
 * already alerted for this component with the same status within its cooldown
 * (15 minutes by default) stays quiet. Returns how many deliveries it wrote.
 */
export const enqueueComponentChange = (event: StatusEvent) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const component = event.component
    if (component === undefined) return 0
    const trigger = componentTrigger(component.previous_status, component.current_status)
    if (trigger === undefined) return 0
    const matches = yield* sql<Match>`
      WITH comp AS (
        SELECT c.id AS component_uuid, s.id AS source_id FROM components c JOIN sources s ON s.id = c.source_id
        WHERE s.key = ${event.source.key} AND c.external_id = ${component.id}
      ), shown AS (
        SELECT DISTINCT st.organization_id, st.id AS stack_id, st.name AS stack_name, st.slug AS stack_slug, comp.component_uuid
        FROM comp JOIN stack_items i ON i.component_id = comp.component_uuid OR i.source_id = comp.source_id
        JOIN stacks st ON st.id = i.stack_id
      )
      SELECT DISTINCT ON (r.id, rc.channel_id) r.id AS rule_id, r.organization_id, rc.channel_id, h.stack_id, h.stack_name,
        h.stack_slug, h.component_uuid, r.cooldown_s
      FROM notification_rules r
      JOIN shown h ON h.organization_id = r.organization_id
      JOIN rule_channels rc ON rc.rule_id = r.id
      WHERE r.active AND ${trigger} = ANY (r.triggers)
        AND (r.scope = 'all' OR EXISTS (
          SELECT 1 FROM rule_scope_items si WHERE si.rule_id = r.id
            AND (si.stack_id = h.stack_id OR si.component_id = h.component_uuid)))
      ORDER BY r.id, rc.channel_id, h.stack_name`
    let written = 0
    for (const m of matches) {
      const payload: NotificationPayload = {
        event: "component.status_changed",
        timestamp: event.timestamp,
        stack: { id: m.stack_id, name: m.stack_name, slug: m.stack_slug },
        component: {
          id: m.component_uuid,
          name: component.name,
          previous_status: component.previous_status,
          current_status: component.current_status
        },
        incident: {
          id: event.incident?.id ?? "",
          created_at: event.incident?.created_at ?? event.timestamp,
          resolved_at: event.incident?.resolved_at ?? null
        }
      }
      const rows = yield* sql<{ id: string }>`
        INSERT INTO deliveries (organization_id, rule_id, channel_id, event_id, event_type, idempotency_key, payload)
        SELECT ${m.organization_id}::uuid, ${m.rule_id}::uuid, ${m.channel_id}::uuid, ${event.id}, ${trigger},
          ${`${event.id}:${m.channel_id}`}, ${JSON.stringify(payload)}::jsonb
        WHERE NOT EXISTS (
          SELECT 1 FROM deliveries d
          WHERE d.rule_id = ${m.rule_id}::uuid AND d.event_type = ${trigger}
            AND d.payload -> 'component' ->> 'id' = ${m.component_uuid}
            AND d.created_at > now() - make_interval(secs => ${m.cooldown_s}))
        ON CONFLICT (idempotency_key) DO NOTHING
        RETURNING id`
      written += rows.length
    }
    return written
  })
