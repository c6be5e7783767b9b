import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { StreamEvent } from "../domain/Event.ts"
import type { AlertLevel, RuleSchedule, RuleTemplate } from "../domain/Rule.ts"
import { addToGroup, channelUsable, createAlert, type EscalationStep, fromJson, type LinkContext, stopEscalations } from "./AlertStore.ts"
import { type Candidate, candidateOf, subjectOf } from "./Candidate.ts"
import { links, messageOf, payloadOf, type Placement } from "./Compose.ts"
import { scheduleAllows } from "./Schedule.ts"

/** One active rule whose trigger and scope match a candidate, in the placement it matched. */
interface Match extends Placement {
  readonly rule_id: string
  readonly organization_id: string
  readonly alert_levels: ReadonlyArray<AlertLevel> | string
  readonly schedule: RuleSchedule | string | null
  readonly group_window_s: number | null
  readonly cooldown_s: number
  readonly escalation: ReadonlyArray<EscalationStep> | string | null
  readonly template: RuleTemplate | string | null
  readonly channel_ids: ReadonlyArray<string> | string
  /** One of the organization's maintenance windows covers the stack (or the whole organization) at the event's time. */
  readonly in_maintenance: boolean
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Where a candidate is shown, per organization: `(organization_id,
 * stack_id, stack_name, stack_slug, component_uuid, monitor_id)` rows. A
 * component is shown by stacks holding it or its whole source; an incident by
 * stacks holding its source or any of its components; a monitor by its own
 * organization (no stack) and by stacks holding it.
 */
const placements = (sql: SqlClient, candidate: Candidate) => {
  switch (candidate.kind) {
    case "component":
      return sql`
        SELECT DISTINCT st.organization_id, st.id AS stack_id, st.name AS stack_name, st.slug AS stack_slug,
          c.id AS component_uuid, NULL::uuid AS monitor_id
        FROM components c JOIN sources s ON s.id = c.source_id
        JOIN stack_items i ON i.component_id = c.id OR i.source_id = s.id
        JOIN stacks st ON st.id = i.stack_id
        WHERE s.key = ${candidate.event.source.key} AND c.external_id = ${candidate.event.component.id}`
    case "incident":
      return sql`
        SELECT DISTINCT st.organization_id, st.id AS stack_id, st.name AS stack_name, st.slug AS stack_slug,
          i.component_id AS component_uuid, NULL::uuid AS monitor_id
        FROM sources s
        JOIN stack_items i ON i.source_id = s.id OR i.component_id IN (SELECT id FROM components WHERE source_id = s.id)
        JOIN stacks st ON st.id = i.stack_id
        WHERE s.key = ${candidate.event.source.key}`
    case "monitor": {
      const id = candidate.event.monitor.id
      if (!uuidPattern.test(id)) return sql`SELECT NULL::uuid AS organization_id WHERE false`
      return sql`
        SELECT st.organization_id, st.id AS stack_id, st.name AS stack_name, st.slug AS stack_slug,
          NULL::uuid AS component_uuid, m.id AS monitor_id
        FROM monitors m JOIN stack_items i ON i.monitor_id = m.id JOIN stacks st ON st.id = i.stack_id
        WHERE m.id = ${id}::uuid
        UNION ALL
        SELECT m.organization_id, NULL::uuid, '', '', NULL::uuid, m.id FROM monitors m WHERE m.id = ${id}::uuid`
    }
  }
}

/**
 * The active rules with the candidate's trigger whose scope covers it, one
 * row per rule (a stack not under maintenance, in a stack rather than none,
 * then the first stack by name),
 * with the channels it may send to now (enabled, allowed by the plan, SMS
 * within the month's allowance).
 */
const matchingRules = (candidate: Candidate) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    return yield* sql<Match>`
      WITH placed AS (${placements(sql, candidate)})
      SELECT DISTINCT ON (r.id) r.id AS rule_id, r.organization_id, o.slug AS organization_slug,
        to_jsonb(r.alert_levels) AS alert_levels, r.schedule, r.group_window_s, r.cooldown_s, r.escalation, r.template,
        h.stack_id, h.stack_name, h.stack_slug, h.component_uuid,
        EXISTS (SELECT 1 FROM maintenance_windows w
          WHERE w.organization_id = r.organization_id AND (w.stack_id IS NULL OR w.stack_id = h.stack_id)
            AND w.starts_at <= ${candidate.event.timestamp}::timestamptz AND w.ends_at > ${candidate.event.timestamp}::timestamptz
        ) AS in_maintenance,
        COALESCE((SELECT jsonb_agg(c.id ORDER BY c.id) FROM rule_channels rc JOIN channels c ON c.id = rc.channel_id
          WHERE rc.rule_id = r.id AND ${channelUsable(sql)}), '[]'::jsonb) AS channel_ids
      FROM notification_rules r
      JOIN placed h ON h.organization_id = r.organization_id
      JOIN organizations o ON o.id = r.organization_id
      JOIN plans p ON p.id = o.plan_id
      WHERE r.active AND ${candidate.trigger} = ANY (r.triggers)
        AND (r.scope = 'all' OR EXISTS (
          SELECT 1 FROM rule_scope_items si WHERE si.rule_id = r.id
            AND (si.stack_id = h.stack_id OR si.component_id = h.component_uuid OR si.monitor_id = h.monitor_id)))
      ORDER BY r.id, in_maintenance, h.stack_id IS NULL, h.stack_name`
  })

/**
 * The cooldown (at most one alert per rule and subject per `cooldown_s`
 * unless the status changes again), decided and recorded at once: true when
 * this alert may go. Times are the events' own, so a backlog is judged by
 * when the changes happened.
 */
const passCooldown = (ruleId: string, subject: string, status: string, at: string, cooldownS: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const rows = yield* sql<{ rule_id: string }>`
      INSERT INTO rule_subject_state (rule_id, subject, last_status, last_alert_at)
      VALUES (${ruleId}::uuid, ${subject}, ${status}, ${at}::timestamptz)
      ON CONFLICT (rule_id, subject) DO UPDATE SET last_status = EXCLUDED.last_status, last_alert_at = EXCLUDED.last_alert_at
      WHERE rule_subject_state.last_status IS DISTINCT FROM EXCLUDED.last_status
        OR rule_subject_state.last_alert_at <= EXCLUDED.last_alert_at - make_interval(secs => ${cooldownS})
      RETURNING rule_id`
    return rows.length > 0
  })

/** Why a matched rule did not alert, or "alert"/"grouped": for logs and tests. */
export type Outcome = "alert" | "grouped" | "maintenance" | "level" | "schedule" | "cooldown" | "no-channels"

/**
 * Turns one event into alerts, in one transaction: for every organization
 * showing its subject and every active rule with the trigger and scope, the
 * organization's maintenance windows (alerts in their scope held), the
 * alert level filter, the schedule (in the rule's time zone, at the event's
 * time), the cooldown, then either the rule's grouping window for the stack
 * or an alert with one delivery per channel (idempotency key = event id and
 * channel, so several rules or stacks sending the same event to one
 * destination send it once). A recovery stops the subject's escalations.
 * Returns each matched rule's outcome.
 */
export const enqueueEvent = (event: StreamEvent, context: LinkContext) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const candidate = candidateOf(event)
    if (candidate === undefined) return []
    return yield* sql.withTransaction(Effect.gen(function*() {
      const matches = yield* matchingRules(candidate)
      if (candidate.recovery) {
        const subjects = new Map<string, string>()
        if (candidate.kind === "component" || candidate.kind === "incident") {
          // Placements of every organization, matched by rules or not: recovery ends escalation everywhere.
          const shown = yield* sql<{ organization_id: string; component_uuid: string | null }>`
            SELECT DISTINCT organization_id, component_uuid FROM (${placements(sql, candidate)}) AS p`
          for (const s of shown) subjects.set(`${s.organization_id}|${subjectOf(candidate, s.component_uuid)}`, s.organization_id)
        } else {
          const shown = yield* sql<{ organization_id: string }>`SELECT DISTINCT organization_id FROM (${placements(sql, candidate)}) AS p`
          for (const s of shown) subjects.set(`${s.organization_id}|${subjectOf(candidate, null)}`, s.organization_id)
        }
        for (const [key, organizationId] of subjects) yield* stopEscalations(organizationId, key.slice(key.indexOf("|") + 1))
      }
      const outcomes: Array<Outcome> = []
      for (const m of matches) outcomes.push(yield* alertFor(candidate, m, context))
      return outcomes
    }))
  })

/**
 * The schedule's verdict at the event's time. A zone the runtime no longer
 * knows, or an event without a valid time, cannot be judged: the alert goes
 * (a lost alert is worse than one outside hours).
 */
const allowedNow = (schedule: RuleSchedule | null, candidate: Candidate): boolean => {
  try {
    return scheduleAllows(schedule, candidate.level, new Date(candidate.event.timestamp))
  } catch {
    return true
  }
}

const alertFor = (candidate: Candidate, m: Match, context: LinkContext) =>
  Effect.gen(function*() {
    if (m.in_maintenance) return "maintenance" as const
    const levels = fromJson<ReadonlyArray<AlertLevel>>(m.alert_levels)
    if (levels.length > 0 && !levels.includes(candidate.level)) return "level" as const
    if (!allowedNow(fromJson<RuleSchedule | null>(m.schedule), candidate)) return "schedule" as const
    const channelIds = fromJson<ReadonlyArray<string>>(m.channel_ids)
    const escalation = fromJson<ReadonlyArray<EscalationStep> | null>(m.escalation)
    if (channelIds.length === 0 && (escalation ?? []).length === 0) return "no-channels" as const
    const subject = subjectOf(candidate, m.component_uuid)
    if (!(yield* passCooldown(m.rule_id, subject, candidate.status, candidate.event.timestamp, m.cooldown_s))) return "cooldown" as const
    const link = links(context.publicUrl, m.organization_slug)
    const url = candidate.kind === "monitor" && m.stack_id === null ? link.monitor(candidate.event.monitor.id)
      : m.stack_id === null ? link.dashboard : link.stack(m.stack_slug)
    const payload = payloadOf(candidate, m)
    const message = messageOf(candidate, payload, url, fromJson<RuleTemplate | null>(m.template))
    if (m.group_window_s !== null && m.stack_id !== null) {
      yield* addToGroup(
        { organization_id: m.organization_id, rule_id: m.rule_id, stack_id: m.stack_id, window_s: m.group_window_s },
        { event_id: candidate.event.id, trigger: candidate.trigger, level: candidate.level, subject, payload, message }
      )
      return "grouped" as const
    }
    yield* createAlert({
      organization_id: m.organization_id,
      rule_id: m.rule_id,
      trigger: candidate.trigger,
      subject,
      level: candidate.level,
      payload,
      message,
      event_id: candidate.event.id,
      key: candidate.event.id,
      channel_ids: channelIds,
      escalation
    }, context)
    return "alert" as const
  })
