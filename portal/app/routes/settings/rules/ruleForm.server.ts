import type { Rule } from "#services/domain/api/Notifications.ts"
import { ruleLimits } from "#services/domain/Rule.ts"

const listOf = (text: string) => text.split(/[\n,]/).map((v) => v.trim()).filter((v) => v !== "")
const all = (form: FormData, name: string) => form.getAll(name).filter((v): v is string => typeof v === "string" && v !== "")
const text = (form: FormData, name: string) => {
  const v = form.get(name)
  return typeof v === "string" ? v : ""
}
/** A number field: its number, or its text for the Schema to refuse ("must be an integer…"). */
const numberOr = (value: string): number | string => (/^\s*-?\d+\s*$/.test(value) ? Number(value) : value.trim())

/**
 * The rule editor's fields as the API's rule body (RuleCreate; also the
 * full PATCH of an edit): checkboxes as lists, "only at certain hours" as a
 * schedule or null, escalation rows with a delay as steps, a template with a
 * body or null. Blank numbers take the defaults. The service validates it
 * with `validateRule`, the API's rule, and names the field at fault
 * (`schedule.timezone`, `escalation.1.delay_s`).
 */
export const ruleBodyFromForm = (form: FormData): Record<string, unknown> => {
  const scope = text(form, "scope") === "specific" ? "specific" : "all"
  const body: Record<string, unknown> = {
    name: text(form, "name"),
    active: form.get("active") === "on",
    triggers: all(form, "trigger"),
    scope,
    stack_ids: scope === "specific" ? all(form, "stack_id") : [],
    component_ids: scope === "specific" ? all(form, "component_id") : [],
    monitor_ids: scope === "specific" ? all(form, "monitor_id") : [],
    alert_levels: all(form, "alert_level"),
    channel_ids: all(form, "channel_id"),
    schedule: form.get("scheduled") === "on"
      ? {
        timezone: text(form, "schedule.timezone").trim(),
        days: all(form, "schedule.day"),
        start: text(form, "schedule.start") || "00:00",
        end: text(form, "schedule.end") || "24:00",
        holidays: listOf(text(form, "schedule.holidays")),
        critical_always: form.get("schedule.critical_always") === "on"
      }
      : null,
    group_window_s: text(form, "group_window_s").trim() === "" ? null : numberOr(text(form, "group_window_s")),
    escalation: null,
    template: text(form, "template.body").trim() === ""
      ? null
      : { body: text(form, "template.body"), ...(text(form, "template.subject").trim() === "" ? {} : { subject: text(form, "template.subject") }) }
  }
  if (text(form, "cooldown_s").trim() !== "") body["cooldown_s"] = numberOr(text(form, "cooldown_s"))
  if (text(form, "crowd_min_confidence").trim() !== "") body["crowd_min_confidence"] = numberOr(text(form, "crowd_min_confidence"))
  const steps: Array<Record<string, unknown>> = []
  for (let i = 0; i < ruleLimits.escalationSteps; i++) {
    const delay = text(form, `escalation.${i}.delay_s`).trim()
    const channels = all(form, `escalation.${i}.channel_id`)
    if (delay === "" && channels.length === 0) continue
    steps.push({ delay_s: numberOr(delay), channel_ids: channels })
  }
  if (steps.length > 0) body["escalation"] = steps
  return body
}

/** A stored rule as the form's body (the same shape `ruleBodyFromForm` reads), for the edit form. */
export const ruleBodyOf = (rule: Rule): Record<string, unknown> => ({
  name: rule.name,
  active: rule.active,
  triggers: rule.triggers,
  scope: rule.scope,
  stack_ids: rule.stack_ids,
  component_ids: rule.component_ids,
  monitor_ids: rule.monitor_ids,
  alert_levels: rule.alert_levels,
  channel_ids: rule.channel_ids,
  schedule: rule.schedule,
  group_window_s: rule.group_window_s,
  cooldown_s: rule.cooldown_s,
  crowd_min_confidence: rule.crowd_min_confidence,
  escalation: rule.escalation,
  template: rule.template
})
