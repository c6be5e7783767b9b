import { Clock, Effect, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { StreamEvent } from "../domain/Event.ts"
import { AlertLevel, EscalationStep, RuleSchedule, RuleTemplate } from "../domain/Rule.ts"
import { JsonColumn, rowsOf } from "../platform/Rows.ts"
import {
  addToGroup,
  channelUsable,
  type LinkContext,
  type PreparedAlert,
  prepareAlert,
  writeAlerts
} from "./AlertStore.ts"
import { type Candidate, candidateOf, subjectOf } from "./Candidate.ts"
import { links, messageOf, payloadOf } from "./Compose.ts"
import { nextAllowed, scheduleAllows } from "./RuleSchedule.ts"

/**
 * One active rule whose trigger and scope match the candidate at `idx` of a batch, in the placement it matched;
 * its settings (jsonb) decoded once per row by a decoder compiled once, their filters not run again (validated on write).
 */
const Match = Schema.Struct({
  organization_slug: Schema.String,
  stack_id: Schema.NullOr(Schema.String),
  stack_name: Schema.String,
  stack_slug: Schema.String,
  component_uuid: Schema.NullOr(Schema.String),
  idx: Schema.Number,
  rule_id: Schema.String,
  organization_id: Schema.String,
  alert_levels: JsonColumn(Schema.Array(AlertLevel)),
  schedule: Schema.NullOr(JsonColumn(RuleSchedule)),
  group_window_s: Schema.NullOr(Schema.Number),
  cooldown_s: Schema.Number,
  escalation: Schema.NullOr(JsonColumn(Schema.Array(EscalationStep))),
  template: Schema.NullOr(JsonColumn(RuleTemplate)),
  channel_ids: JsonColumn(Schema.Array(Schema.String)),
  /** One of the organization's maintenance windows covers the stack (or the whole organization) at the event's time. */
  in_maintenance: Schema.Boolean
})
type Match = typeof Match.Type
const decodeMatches = rowsOf("notification_rules", Match, { validatedOnWrite: true })
const decodeStates = rowsOf("rule_subject_state", Schema.Struct({
  rule_id: Schema.String,
  subject: Schema.String,
  last_status: Schema.String,
  last_alert_at: Schema.Date
}))

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A candidate as the batch queries read it (`jsonb_to_recordset`). */
interface Input {
  readonly idx: number
  readonly kind: Candidate["kind"]
  readonly source_key: string | null
  readonly external_id: string | null
  readonly incident_id: string | null
  readonly monitor_id: string | null
  readonly trigger: string
  readonly ts: string
  /** An incident's affected components (external ids); null when it names none. */
  readonly components: ReadonlyArray<string> | null
  /** A crowd signal's confidence now, and its peak before a rise (null for a start). */
  readonly confidence: number | null
  readonly previous_peak: number | null
}

const inputOf = (candidate: Candidate, idx: number): Input => ({
  idx,
  kind: candidate.kind,
  source_key: candidate.kind === "monitor" ? null : candidate.event.source.key,
  external_id: candidate.kind === "component" ? candidate.event.component.id : null,
  incident_id: candidate.kind === "incident" ? candidate.event.incident.id : null,
  monitor_id: candidate.kind === "monitor" && uuidPattern.test(candidate.event.monitor.id) ? candidate.event.monitor.id : null,
  trigger: candidate.trigger,
  ts: candidate.event.timestamp,
  components: candidate.kind === "incident" && (candidate.event.incident.components?.length ?? 0) > 0
    ? candidate.event.incident.components!
    : null,
  confidence: candidate.kind === "crowd" ? candidate.event.crowd.confidence : null,
  previous_peak: candidate.kind === "crowd" ? candidate.event.crowd.previous_peak : null
})

/** The same subject within one batch, whatever its database id: recoveries later in a batch stop its escalations. */
const batchKey = (c: Candidate): string =>
  c.kind === "monitor" ? `m|${c.event.monitor.id}`
  : c.kind === "incident" ? `i|${c.event.source.key}|${c.event.incident.id}`
  : c.kind === "source" ? `s|${c.event.source.key}`
  : c.kind === "crowd" ? `g|${c.event.source.key}`
  : `c|${c.event.source.key}|${c.event.component.id}`

const inputColumns =
  "idx int, kind text, source_key text, external_id text, incident_id text, monitor_id uuid, trigger text, ts timestamptz, components jsonb, confidence int, previous_peak int"

/**
 * The active rules whose trigger and scope match each candidate of a batch,
 * one row per candidate and rule, in one statement. Where a candidate is
 * shown: a component by stacks holding it or its whole source; an incident
 * by stacks holding its whole source or one of the components it affects
 * (any component of the source when it names none); a source's own status,
 * for a source without components, by stacks holding it; a monitor by its
 * own organization (no stack) and by stacks holding it. Of several
 * placements a rule takes a stack not under maintenance, then one in a stack
 * rather than none, then the first by name. Each row carries the channels
 * the rule may send to now (enabled, allowed by the plan, SMS within the
 * month's allowance).
 */
const matchingRules = Effect.fn("Matcher.matchingRules")(function*(inputs: ReadonlyArray<Input>) {
  const sql = yield* SqlClient
  return yield* sql`
      WITH x AS (SELECT * FROM jsonb_to_recordset(${JSON.stringify(inputs)}::jsonb) AS t(${sql.literal(inputColumns)})),
      placed AS (
        SELECT x.idx, st.organization_id, st.id AS stack_id, st.name AS stack_name, st.slug AS stack_slug,
          c.id AS component_uuid, NULL::uuid AS monitor_id
        FROM x JOIN sources s ON s.key = x.source_key JOIN components c ON c.source_id = s.id AND c.external_id = x.external_id
        JOIN stack_items i ON i.component_id = c.id JOIN stacks st ON st.id = i.stack_id
        WHERE x.kind = 'component'
        UNION
        SELECT x.idx, st.organization_id, st.id, st.name, st.slug, c.id, NULL::uuid
        FROM x JOIN sources s ON s.key = x.source_key JOIN components c ON c.source_id = s.id AND c.external_id = x.external_id
        JOIN stack_items i ON i.source_id = s.id JOIN stacks st ON st.id = i.stack_id
        WHERE x.kind = 'component'
        UNION
        SELECT x.idx, st.organization_id, st.id, st.name, st.slug, NULL::uuid, NULL::uuid
        FROM x JOIN sources s ON s.key = x.source_key JOIN stack_items i ON i.source_id = s.id JOIN stacks st ON st.id = i.stack_id
        WHERE x.kind IN ('incident', 'crowd')
        UNION
        SELECT x.idx, st.organization_id, st.id, st.name, st.slug, c.id, NULL::uuid
        FROM x JOIN sources s ON s.key = x.source_key JOIN components c ON c.source_id = s.id
        JOIN stack_items i ON i.component_id = c.id JOIN stacks st ON st.id = i.stack_id
        WHERE x.kind = 'crowd'
        UNION
        SELECT x.idx, st.organization_id, st.id, st.name, st.slug, c.id, NULL::uuid
        FROM x JOIN sources s ON s.key = x.source_key JOIN components c ON c.source_id = s.id
        JOIN stack_items i ON i.component_id = c.id JOIN stacks st ON st.id = i.stack_id
        WHERE x.kind = 'incident'
          AND (x.components IS NULL OR c.external_id IN (SELECT jsonb_array_elements_text(x.components)))
        UNION
        SELECT x.idx, st.organization_id, st.id, st.name, st.slug, NULL::uuid, NULL::uuid
        FROM x JOIN sources s ON s.key = x.source_key JOIN stack_items i ON i.source_id = s.id JOIN stacks st ON st.id = i.stack_id
        WHERE x.kind = 'source' AND NOT EXISTS (SELECT 1 FROM components c WHERE c.source_id = s.id)
        UNION
        SELECT x.idx, st.organization_id, st.id, st.name, st.slug, NULL::uuid, m.id
        FROM x JOIN monitors m ON m.id = x.monitor_id JOIN stack_items i ON i.monitor_id = m.id JOIN stacks st ON st.id = i.stack_id
        WHERE x.kind = 'monitor'
        UNION
        SELECT x.idx, m.organization_id, NULL::uuid, '', '', NULL::uuid, m.id
        FROM x JOIN monitors m ON m.id = x.monitor_id
        WHERE x.kind = 'monitor'
      )
      SELECT DISTINCT ON (h.idx, r.id) h.idx, r.id AS rule_id, r.organization_id, o.slug AS organization_slug,
        to_jsonb(r.alert_levels) AS alert_levels, r.schedule, r.group_window_s, r.cooldown_s, r.escalation, r.template,
        h.stack_id, h.stack_name, h.stack_slug, h.component_uuid,
        EXISTS (SELECT 1 FROM maintenance_windows w
          WHERE w.organization_id = r.organization_id AND (w.stack_id IS NULL OR w.stack_id = h.stack_id)
            AND w.starts_at <= x.ts AND w.ends_at > x.ts
        ) AS in_maintenance,
        COALESCE((SELECT jsonb_agg(c.id ORDER BY c.id) FROM rule_channels rc JOIN channels c ON c.id = rc.channel_id
          WHERE rc.rule_id = r.id AND ${channelUsable(sql)}), '[]'::jsonb) AS channel_ids
      FROM placed h
      JOIN x ON x.idx = h.idx
      JOIN notification_rules r ON r.organization_id = h.organization_id AND r.active AND x.trigger = ANY (r.triggers)
        -- A crowd signal: once it has reached the rule's minimum (at its start, or at the rise that crossed it).
        AND (x.kind <> 'crowd' OR (x.confidence >= r.crowd_min_confidence
          AND (x.previous_peak IS NULL OR x.previous_peak < r.crowd_min_confidence)))
      JOIN organizations o ON o.id = r.organization_id
      JOIN plans p ON p.id = o.plan_id
      WHERE r.scope = 'all' OR EXISTS (
        SELECT 1 FROM rule_scope_items si WHERE si.rule_id = r.id
          AND (si.stack_id = h.stack_id OR si.component_id = h.component_uuid OR si.monitor_id = h.monitor_id))
      ORDER BY h.idx, r.id, in_maintenance, h.stack_id IS NULL, h.stack_name`.pipe(Effect.flatMap(decodeMatches))
})

/**
 * Recoveries in the batch stop the escalations of alerts already made about
 * their subjects, in every organization (recorded as acknowledged by
 * `recovered`).
 */
const stopEscalations = Effect.fn("Matcher.stopEscalations")(function*(recoveries: ReadonlyArray<Input>) {
  if (recoveries.length === 0) return
  const sql = yield* SqlClient
  yield* sql`
      WITH ${recoverySubjects(sql, recoveries)}
      UPDATE alerts SET acknowledged_at = now(), acknowledged_by = 'recovered', next_escalation_at = NULL
      WHERE next_escalation_at IS NOT NULL AND subject IN (SELECT subject FROM subjects)`
})

/**
 * The `x` and `subjects` CTEs of a batch's recoveries: each recovery's alert
 * subject (as the matcher names them) with the time it recovered, `ts`.
 */
const recoverySubjects = (sql: SqlClient, recoveries: ReadonlyArray<Input>) => sql`
  x AS (SELECT * FROM jsonb_to_recordset(${JSON.stringify(recoveries)}::jsonb) AS t(${sql.literal(inputColumns)})),
  subjects AS (
    SELECT 'monitor:' || x.monitor_id AS subject, x.ts FROM x WHERE x.kind = 'monitor'
    UNION ALL SELECT 'incident:' || x.source_key || ':' || x.incident_id, x.ts FROM x WHERE x.kind = 'incident'
    UNION ALL SELECT 'source:' || x.source_key, x.ts FROM x WHERE x.kind = 'source'
    UNION ALL SELECT 'component:' || c.id, x.ts FROM x JOIN sources s ON s.key = x.source_key
      JOIN components c ON c.source_id = s.id AND c.external_id = x.external_id WHERE x.kind = 'component'
  )`

interface SubjectState {
  readonly status: string
  readonly at: number
}

/** The cooldown state of the batch's (rule, subject) pairs, locked until the batch commits. */
const loadStates = Effect.fn("Matcher.loadStates")(function*(pairs: ReadonlyArray<{ readonly rule_id: string; readonly subject: string }>) {
  const states = new Map<string, SubjectState>()
  if (pairs.length === 0) return states
  const sql = yield* SqlClient
  const rows = yield* sql`
      SELECT s.rule_id, s.subject, s.last_status, s.last_alert_at FROM rule_subject_state s
      JOIN jsonb_to_recordset(${JSON.stringify(pairs)}::jsonb) AS p(rule_id uuid, subject text)
        ON p.rule_id = s.rule_id AND p.subject = s.subject
      ORDER BY s.rule_id, s.subject
      FOR UPDATE OF s`.pipe(Effect.flatMap(decodeStates))
  for (const row of rows) states.set(`${row.rule_id}|${row.subject}`, { status: row.last_status, at: row.last_alert_at.getTime() })
  return states
})

const saveStates = Effect.fn("Matcher.saveStates")(function*(states: ReadonlyMap<string, SubjectState>) {
  if (states.size === 0) return
  const sql = yield* SqlClient
  const rows = [...states].map(([key, s]) => {
    const bar = key.indexOf("|")
    return { rule_id: key.slice(0, bar), subject: key.slice(bar + 1), last_status: s.status, last_alert_at: new Date(s.at).toISOString() }
  })
  yield* sql`
      INSERT INTO rule_subject_state (rule_id, subject, last_status, last_alert_at)
      SELECT rule_id, subject, last_status, last_alert_at
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS t(rule_id uuid, subject text, last_status text, last_alert_at timestamptz)
      ON CONFLICT (rule_id, subject) DO UPDATE SET last_status = EXCLUDED.last_status, last_alert_at = EXCLUDED.last_alert_at`
})

/**
 * Why a matched rule did not alert, or "alert"/"grouped"/"held" (paused by
 * the schedule until its window opens): for logs and tests.
 */
export type Outcome = "alert" | "grouped" | "held" | "maintenance" | "level" | "schedule" | "cooldown" | "no-channels"

/** An alert the rule's schedule paused, sent when the window opens unless its subject recovers first. */
interface Hold {
  readonly organization_id: string
  readonly rule_id: string
  readonly subject: string
  readonly event_at: string
  readonly release_at: string
  readonly item: {
    readonly event_id: string
    readonly trigger: string
    readonly level: AlertLevel
    readonly status: string
    readonly payload: PreparedAlert["payload"]
    readonly message: PreparedAlert["message"]
  }
}

/** Writes the batch's holds: one open per rule and subject, the latest change of the subject replacing an earlier one. */
const writeHolds = Effect.fn("Matcher.writeHolds")(function*(holds: ReadonlyArray<Hold>) {
  if (holds.length === 0) return
  const sql = yield* SqlClient
  const latest = new Map<string, Hold>()
  for (const h of holds) {
    const key = `${h.rule_id}|${h.subject}`
    const before = latest.get(key)
    if (before === undefined || Date.parse(before.event_at) <= Date.parse(h.event_at)) latest.set(key, h)
  }
  yield* sql`
      INSERT INTO held_alerts (organization_id, rule_id, subject, event_at, release_at, item)
      SELECT organization_id, rule_id, subject, event_at, release_at, item
      FROM jsonb_to_recordset(${JSON.stringify([...latest.values()])}::jsonb)
        AS t(organization_id uuid, rule_id uuid, subject text, event_at timestamptz, release_at timestamptz, item jsonb)
      ON CONFLICT (rule_id, subject) WHERE closed_at IS NULL DO UPDATE
        SET event_at = EXCLUDED.event_at, release_at = EXCLUDED.release_at, item = EXCLUDED.item, held_at = now()
        WHERE held_alerts.event_at <= EXCLUDED.event_at`
})

/**
 * Recoveries in the batch close the held alerts of their subjects that
 * changed before them, for every rule (whether or not it triggers on
 * recoveries): nothing is sent when the window opens.
 */
const cancelHolds = Effect.fn("Matcher.cancelHolds")(function*(recoveries: ReadonlyArray<Input>) {
  if (recoveries.length === 0) return
  const sql = yield* SqlClient
  yield* sql`
      WITH ${recoverySubjects(sql, recoveries)}
      UPDATE held_alerts h SET closed_at = now(), outcome = 'recovered'
      FROM subjects WHERE h.closed_at IS NULL AND h.subject = subjects.subject AND h.event_at <= subjects.ts`
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

/** When the paused rule's window next opens after the event; undefined when not within eight days (the alert is dropped). */
const opening = (schedule: RuleSchedule, candidate: Candidate): Date | undefined => {
  const at = new Date(candidate.event.timestamp)
  return Number.isNaN(at.getTime()) ? undefined : nextAllowed(schedule, candidate.level, at)
}

/**
 * Turns a batch of events (in stream order) into alerts, in one transaction
 * of a few statements whatever the batch's size: for every organization
 * showing an event's subject and every active rule with the trigger and
 * scope, the organization's maintenance windows (alerts in their scope
 * held), the alert level filter, the schedule (in the rule's time zone, at
 * the event's time; outside it the alert is held until the window opens,
 * and dropped if its subject recovers first), the cooldown (per rule and subject, a new alert within
 * `cooldown_s` needs a new status; judged in event order, at the events' own
 * times), then either the rule's grouping window for the stack or an alert
 * with one delivery per channel. Recoveries stop their subjects'
 * escalations. Returns each event's outcomes, one per matched rule.
 */
export const enqueueEvents = Effect.fn("Matcher.enqueueEvents")(function*(events: ReadonlyArray<StreamEvent>, context: LinkContext) {
  const sql = yield* SqlClient
  const candidates = events.map(candidateOf)
  const outcomes: Array<Array<Outcome>> = events.map(() => [])
  const inputs = candidates.flatMap((c, idx) => (c === undefined ? [] : [inputOf(c, idx)]))
  if (inputs.length === 0) return outcomes
  return yield* sql.withTransaction(Effect.gen(function*() {
    const matches = yield* matchingRules(inputs)
    yield* stopEscalations(inputs.filter((i) => candidates[i.idx]!.recovery))
    const subjects = matches.map((m) => subjectOf(candidates[m.idx]!, m.component_uuid))
    const states = yield* loadStates([...new Set(matches.map((m, i) => `${m.rule_id}|${subjects[i]}`))].map((key) => ({
      rule_id: key.slice(0, key.indexOf("|")),
      subject: key.slice(key.indexOf("|") + 1)
    })))
    const changed = new Map<string, SubjectState>()
    const alerts: Array<PreparedAlert & { readonly batchKey: string; readonly idx: number }> = []
    const holds: Array<Hold> = []
    for (const [n, m] of matches.entries()) {
      const candidate = candidates[m.idx]!
      const outcome = yield* decide(candidate, m, subjects[n]!, states, changed, context, alerts, holds)
      outcomes[m.idx]!.push(outcome)
    }
    yield* writeHolds(holds)
    yield* cancelHolds(inputs.filter((i) => candidates[i.idx]!.recovery))
    // A recovery later in the batch ends the escalation of an alert made earlier in it.
    const lastRecovery = new Map<string, number>()
    for (const [idx, c] of candidates.entries()) if (c?.recovery === true) lastRecovery.set(batchKey(c), idx)
    for (const a of alerts) if ((lastRecovery.get(a.batchKey) ?? -1) > a.idx) a.recovered = true
    yield* saveStates(changed)
    yield* writeAlerts(alerts)
    return outcomes
  }))
})

const decide = Effect.fnUntraced(function*(
  candidate: Candidate,
  m: Match,
  subject: string,
  states: Map<string, SubjectState>,
  changed: Map<string, SubjectState>,
  context: LinkContext,
  alerts: Array<PreparedAlert & { readonly batchKey: string; readonly idx: number }>,
  holds: Array<Hold>
) {
  if (m.in_maintenance) return "maintenance" as const
  const levels = m.alert_levels
  if (levels.length > 0 && !levels.includes(candidate.level)) return "level" as const
  const schedule = m.schedule
  const paused = !allowedNow(schedule, candidate)
  // A recovery while paused is not held: it closes the held alerts of its subject instead (cancelHolds).
  if (paused && candidate.recovery) return "schedule" as const
  const opens = paused ? opening(schedule!, candidate) : undefined
  if (paused && opens === undefined) return "schedule" as const
  const channelIds = m.channel_ids
  const escalation = m.escalation ?? []
  if (channelIds.length === 0 && escalation.length === 0) return "no-channels" as const
  if (opens !== undefined) {
    const link = links(context.publicUrl, m.organization_slug)
    const url = candidate.kind === "monitor" && m.stack_id === null ? link.monitor(candidate.event.monitor.id)
      : m.stack_id === null ? link.dashboard : link.stack(m.stack_slug)
    const payload = payloadOf(candidate, m)
    const message = messageOf(candidate, payload, url, m.template)
    holds.push({
      organization_id: m.organization_id,
      rule_id: m.rule_id,
      subject,
      event_at: candidate.event.timestamp,
      release_at: opens.toISOString(),
      item: { event_id: candidate.event.id, trigger: candidate.trigger, level: candidate.level, status: candidate.status, payload, message }
    })
    return "held" as const
  }
  const stateKey = `${m.rule_id}|${subject}`
  const at = Date.parse(candidate.event.timestamp)
  const last = states.get(stateKey)
  if (last !== undefined && last.status === candidate.status && at - last.at < m.cooldown_s * 1000) return "cooldown" as const
  const state = { status: candidate.status, at: Number.isNaN(at) ? yield* Clock.currentTimeMillis : at }
  states.set(stateKey, state)
  changed.set(stateKey, state)

  const link = links(context.publicUrl, m.organization_slug)
  const url = candidate.kind === "monitor" && m.stack_id === null ? link.monitor(candidate.event.monitor.id)
    : m.stack_id === null ? link.dashboard : link.stack(m.stack_slug)
  const payload = payloadOf(candidate, m)
  const message = messageOf(candidate, payload, url, m.template)
  if (m.group_window_s !== null && m.stack_id !== null) {
    yield* addToGroup(
      { organization_id: m.organization_id, rule_id: m.rule_id, stack_id: m.stack_id, window_s: m.group_window_s },
      { event_id: candidate.event.id, trigger: candidate.trigger, level: candidate.level, subject, payload, message }
    )
    return "grouped" as const
  }
  alerts.push({
    ...prepareAlert({
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
    }, context),
    batchKey: batchKey(candidate),
    idx: m.idx
  })
  return "alert" as const
})
