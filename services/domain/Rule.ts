import { Effect, Result, Schema, SchemaTransformation } from "effect"
import { decodeFields, type FieldIssue, TemplateText } from "./Channel.ts"
import { Text } from "./Text.ts"
import { isTimeZone } from "./WallClock.ts"

export { isTimeZone } from "./WallClock.ts"

/**
 * Notification rules: which events, in which
 * scope, at which levels and hours, go to which channels. This is what is
 * stored and validated; the notifier (issue #7) applies it.
 */

export const Trigger = Schema.Literals([
  "component.critical",
  "component.degraded",
  "component.recovered",
  "component.maintenance",
  "monitor.down",
  "monitor.degraded",
  "monitor.recovered",
  "monitor.ssl_expiring",
  "incident.created",
  "incident.updated",
  "incident.resolved",
  // The crowd's signal on a source (services/crowd, decision 0015): users report problems; `crowd_min_confidence` applies.
  "crowd.signal"
])
export type Trigger = typeof Trigger.Type

/** The stored alert levels, in order of severity. */
export const AlertLevel = Schema.Literals(["critical", "degraded", "info"])
export type AlertLevel = typeof AlertLevel.Type

/**
 * Levels have two sets of names: Critical, Degraded, Info (notifications)
 * and Alert, Warning, Info (dashboard). Both are accepted, in
 * any case, and stored as the first: Alert = critical, Warning = degraded.
 */
export const alertLevelAliases: Readonly<Record<string, AlertLevel>> = {
  critical: "critical",
  degraded: "degraded",
  info: "info",
  alert: "critical",
  warning: "degraded"
}

export const RuleScope = Schema.Literals(["all", "specific"])
export type RuleScope = typeof RuleScope.Type

export const Weekday = Schema.Literals(["mon", "tue", "wed", "thu", "fri", "sat", "sun"])
export type Weekday = typeof Weekday.Type
export const weekdays: ReadonlyArray<Weekday> = Weekday.literals

export const ruleLimits = {
  nameLength: 200,
  ids: 200,
  channels: 50,
  holidays: 366,
  escalationSteps: 10,
  delay: { minimum: 1, maximum: 7 * 86_400 },
  groupWindow: { minimum: 1, maximum: 86_400 },
  /** A crowd signal starts at 70 % (decision 0014): a lower minimum would mean nothing. */
  crowdConfidence: { minimum: 70, maximum: 100 },
  cooldown: { minimum: 0, maximum: 7 * 86_400 },
  subjectLength: 200,
  bodyLength: 4000
} as const

export const ruleDefaults = { active: true, scope: "all", cooldown_s: 900, start: "00:00", end: "24:00", crowd_min_confidence: 70 } as const

const withDefault = <S extends Schema.Constraint>(self: S, value: S["Type"]) =>
  Schema.withDecodingDefaultType<S, never>(Effect.succeed(value))(self)

const IntBetween = (range: { readonly minimum: number; readonly maximum: number }, unit: string) =>
  Schema.Int.check(Schema.isBetween(range, { message: `must be an integer from ${range.minimum} to ${range.maximum}${unit}` }))

const Uuid = Schema.String.check(Schema.isUUID(undefined, { message: "must be a UUID" }))

const IdList = (max: number) =>
  Schema.Array(Uuid).check(
    Schema.isMaxLength(max, { message: `at most ${max} ids` }),
    Schema.isUnique({ message: "ids must be distinct" })
  )

const isCalendarDate = (s: string): boolean => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false
  const d = new Date(`${s}T00:00:00Z`)
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s
}

const Time = (latest: "23:59" | "24:00") =>
  Schema.String.check(Schema.isPattern(latest === "24:00" ? /^(?:(?:[01][0-9]|2[0-3]):[0-5][0-9]|24:00)$/ : /^(?:[01][0-9]|2[0-3]):[0-5][0-9]$/, {
    message: `must be a time HH:MM from 00:00 to ${latest}`
  }))

/**
 * Active hours: alerts outside them are held back, except critical ones when
 * `critical_always`. `end` before `start` spans midnight; the defaults
 * 00:00-24:00 are whole days. Holidays pause the rule all day (local dates).
 */
export const RuleSchedule = Schema.Struct({
  timezone: Schema.String.check(Schema.makeFilter((tz: string) => isTimeZone(tz) || "must be an IANA time zone such as Europe/Paris or UTC")),
  days: withDefault(
    Schema.Array(Weekday).check(
      Schema.isMinLength(1, { message: "must list at least one day" }),
      Schema.isUnique({ message: "days must be distinct" })
    ),
    weekdays
  ),
  start: withDefault(Time("23:59"), ruleDefaults.start),
  end: withDefault(Time("24:00"), ruleDefaults.end),
  holidays: withDefault(
    Schema.Array(Schema.String.check(Schema.makeFilter((s: string) => isCalendarDate(s) || "must be a date YYYY-MM-DD"))).check(
      Schema.isMaxLength(ruleLimits.holidays, { message: `at most ${ruleLimits.holidays} holidays` }),
      Schema.isUnique({ message: "holidays must be distinct" })
    ),
    []
  ),
  critical_always: withDefault(Schema.Boolean, false)
}).check(Schema.makeFilter((s) => s.start !== s.end || { path: ["end"], issue: "must differ from start (00:00 to 24:00 is the whole day)" }))
  .annotate({ identifier: "RuleSchedule" })
export type RuleSchedule = typeof RuleSchedule.Type

/** One step of an escalation: `delay_s` after the first alert, unless acknowledged, also notify `channel_ids`. */
export const EscalationStep = Schema.Struct({
  delay_s: IntBetween(ruleLimits.delay, " seconds"),
  channel_ids: IdList(ruleLimits.channels).check(Schema.isMinLength(1, { message: "must list at least one channel" }))
}).annotate({ identifier: "EscalationStep" })

export const Escalation = Schema.Array(EscalationStep).check(
  Schema.isBetweenLength(1, ruleLimits.escalationSteps, { message: `must have 1 to ${ruleLimits.escalationSteps} steps` }),
  Schema.makeFilter((steps: ReadonlyArray<{ readonly delay_s: number }>) => {
    const i = steps.findIndex((s, n) => n > 0 && s.delay_s <= steps[n - 1]!.delay_s)
    return i < 0 || { path: [i, "delay_s"], issue: "must be later than the previous step's delay_s (steps are ordered)" }
  })
)

export const RuleTemplate = Schema.Struct({
  subject: Schema.optionalKey(TemplateText(ruleLimits.subjectLength)),
  body: TemplateText(ruleLimits.bodyLength)
}).annotate({ identifier: "RuleTemplate" })
export type RuleTemplate = typeof RuleTemplate.Type

/** Levels in either vocabulary, any case; decoded to the stored levels, distinct, by severity. */
export const AlertLevels = Schema.Array(
  Schema.String.check(Schema.makeFilter((s: string) =>
    Object.hasOwn(alertLevelAliases, s.toLowerCase()) || "must be one of critical, degraded, info (or Alert, Warning, Info)"
  ))
).pipe(
  Schema.decodeTo(
    Schema.Array(AlertLevel),
    SchemaTransformation.transform<ReadonlyArray<AlertLevel>, ReadonlyArray<string>>({
      decode: (levels) => {
        const given = new Set(levels.map((l) => alertLevelAliases[l.toLowerCase()]!))
        return AlertLevel.literals.filter((l) => given.has(l))
      },
      encode: (levels) => levels
    })
  )
).annotate({ description: "Empty: every level. critical, degraded, info; Alert = critical, Warning = degraded, Info = info." })

/** Each field of a rule as given, without defaults: the PATCH body makes them all optional. */
export const ruleFields = {
  name: Text(ruleLimits.nameLength),
  active: Schema.Boolean,
  triggers: Schema.Array(Trigger).check(
    Schema.isMinLength(1, { message: "must list at least one trigger" }),
    Schema.isUnique({ message: "triggers must be distinct" })
  ),
  scope: RuleScope,
  stack_ids: IdList(ruleLimits.ids),
  component_ids: IdList(ruleLimits.ids),
  monitor_ids: IdList(ruleLimits.ids),
  alert_levels: AlertLevels,
  schedule: Schema.NullOr(RuleSchedule),
  group_window_s: Schema.NullOr(IntBetween(ruleLimits.groupWindow, " seconds")),
  cooldown_s: IntBetween(ruleLimits.cooldown, " seconds"),
  /** The `crowd.signal` trigger fires when a signal starts at, or an open one first reaches, this confidence (70: every signal). */
  crowd_min_confidence: IntBetween(ruleLimits.crowdConfidence, " %"),
  escalation: Schema.NullOr(Escalation),
  template: Schema.NullOr(RuleTemplate),
  channel_ids: IdList(ruleLimits.channels)
}

/** A whole rule as given on create, defaults applied. */
export const RuleInput = Schema.Struct({
  name: ruleFields.name,
  active: withDefault(ruleFields.active, ruleDefaults.active),
  triggers: ruleFields.triggers,
  scope: withDefault(ruleFields.scope, ruleDefaults.scope),
  stack_ids: withDefault(ruleFields.stack_ids, []),
  component_ids: withDefault(ruleFields.component_ids, []),
  monitor_ids: withDefault(ruleFields.monitor_ids, []),
  alert_levels: withDefault(ruleFields.alert_levels, []),
  schedule: withDefault(ruleFields.schedule, null),
  group_window_s: withDefault(ruleFields.group_window_s, null),
  cooldown_s: withDefault(ruleFields.cooldown_s, ruleDefaults.cooldown_s),
  crowd_min_confidence: withDefault(ruleFields.crowd_min_confidence, ruleDefaults.crowd_min_confidence),
  escalation: withDefault(ruleFields.escalation, null),
  template: withDefault(ruleFields.template, null),
  channel_ids: ruleFields.channel_ids
}).annotate({ identifier: "RuleInput" })
export type RuleInput = typeof RuleInput.Type

const scopeLists = ["stack_ids", "component_ids", "monitor_ids"] as const

/**
 * Validates a whole rule (create, or stored rule merged with a PATCH):
 * fields, then the scope: `all` takes no ids, `specific` at least one; and
 * at least one channel, unless `channelsGiven` is false (a PATCH that leaves
 * the channels alone, when deleting channels has left none, can still rename
 * or pause the rule).
 */
export const validateRule = (input: unknown, options: { readonly channelsGiven: boolean } = { channelsGiven: true }): Result.Result<RuleInput, FieldIssue> => {
  const decoded = decodeFields(RuleInput, input, "", "a field of notification rules")
  if (Result.isFailure(decoded)) return decoded
  const rule = decoded.success
  if (options.channelsGiven && rule.channel_ids.length === 0) return Result.fail({ field: "channel_ids", message: "must list at least one channel" })
  if (rule.scope === "all") {
    const given = scopeLists.find((list) => rule[list].length > 0)
    if (given !== undefined) return Result.fail({ field: given, message: "must be empty when scope is all (set scope to specific)" })
  } else if (scopeLists.every((list) => rule[list].length === 0)) {
    return Result.fail({ field: "scope", message: "specific needs at least one of stack_ids, component_ids, monitor_ids" })
  }
  return Result.succeed(rule)
}

/** Every channel id a rule sends to: its channels and its escalation steps' channels. */
export const ruleChannelIds = (rule: Pick<RuleInput, "channel_ids" | "escalation">): ReadonlyArray<string> => [
  ...new Set([...rule.channel_ids, ...(rule.escalation ?? []).flatMap((s) => s.channel_ids)])
]
