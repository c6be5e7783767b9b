import { renderTemplate, templatePlaceholders } from "#services/domain/Channel/Placeholders.ts"
import type { Trigger } from "#services/domain/Rule.ts"
import { useState } from "react"
import { Form } from "react-router"
import { CsrfField, Field, FormError } from "../../Forms.tsx"
import { Control } from "../monitors/MonitorForm.tsx"

interface Option {
  readonly id: string
  readonly name: string
}

/** The rule's bounds, from services/domain/Rule.ts through the loader (the browser does not load Effect). */
export interface RuleBounds {
  readonly weekdays: ReadonlyArray<string>
  readonly groupWindow: { readonly minimum: number; readonly maximum: number }
  readonly cooldown: { readonly minimum: number; readonly maximum: number }
  readonly crowdConfidence: { readonly minimum: number; readonly maximum: number }
  readonly escalationSteps: number
}

/** What the editor offers to choose from: the organization's records. */
export interface RuleOptions {
  readonly stacks: ReadonlyArray<Option>
  readonly components: ReadonlyArray<Option & { readonly stack: string }>
  readonly monitors: ReadonlyArray<Option>
  readonly channels: ReadonlyArray<Option & { readonly type: string }>
}

const triggerGroups: ReadonlyArray<{ readonly legend: string; readonly triggers: ReadonlyArray<readonly [Trigger, string]> }> = [
  {
    legend: "Components of your stacks",
    triggers: [["component.critical", "major outage"], ["component.degraded", "degraded or partial outage"], ["component.recovered", "recovered"], [
      "component.maintenance",
      "under maintenance"
    ]]
  },
  {
    legend: "Your website monitors",
    triggers: [["monitor.down", "down"], ["monitor.degraded", "slow (degraded)"], ["monitor.recovered", "recovered"], ["monitor.ssl_expiring", "certificate expiring"]]
  },
  { legend: "Providers' incidents", triggers: [["incident.created", "opened"], ["incident.updated", "updated"], ["incident.resolved", "resolved"]] },
  { legend: "statusgrid users", triggers: [["crowd.signal", "report problems with a provider (before its status page may show them)"]] }
]

const levelWords = [["critical", "Critical (Alert)"], ["degraded", "Degraded (Warning)"], ["info", "Info"]] as const
const dayWords: Readonly<Record<string, string>> = { mon: "Mon", tue: "Tue", wed: "Wed", thu: "Thu", fri: "Fri", sat: "Sat", sun: "Sun" }

/** The preview's example: API in Payments went critical 65 minutes into an incident. */
const sampleVars = (origin: string): Readonly<Record<string, string>> => ({
  status_emoji: "🔴",
  component_name: "API",
  status: "critical",
  stack_name: "Payments",
  previous_status: "operational",
  current_status: "critical",
  duration: "1h 5m",
  incident_title: "Elevated error rates",
  incident_update_count: "2",
  stack_url: `${origin}/dashboard/acme/stacks/payments`
})

const listOf = (value: unknown): ReadonlyArray<string> => (Array.isArray(value) ? value.map(String) : [])
const recordOf = (value: unknown): Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : {}

function Checks({ name, options, chosen, idPrefix }: {
  readonly name: string
  readonly options: ReadonlyArray<readonly [string, string]>
  readonly chosen: ReadonlyArray<string>
  readonly idPrefix: string
}) {
  return (
    <>
      {options.map(([value, label]) => (
        <div className="choice" key={value}>
          <input type="checkbox" id={`${idPrefix}-${value}`} name={name} value={value} defaultChecked={chosen.includes(value)} />
          <label htmlFor={`${idPrefix}-${value}`}>{label}</label>
        </div>
      ))}
    </>
  )
}

function FieldMessage({ id, label, error }: { readonly id: string; readonly label: string; readonly error: string | undefined }) {
  return error === undefined ? null : <p className="field-error" id={id}>{label} {error}</p>
}

/**
 * Every part of a notification rule (spec: Notification rule): name and
 * switch, triggers, scope, alert levels, channels, active hours, grouping
 * and cooldown, escalation steps, the template with its placeholders and a
 * live preview. Values are the API's rule body; errors are keyed by the
 * API's field names (`schedule.timezone`, `escalation.0.delay_s`).
 */
export function RuleForm({ body, errors, options, limits, bounds, canEscalate, origin, submitLabel }: {
  readonly body: Readonly<Record<string, unknown>>
  readonly errors: Readonly<Record<string, string>>
  readonly options: RuleOptions
  readonly limits: { readonly channelsPerRule: number | null }
  readonly bounds: RuleBounds
  /** Escalation and templates: the Enterprise plan. */
  readonly canEscalate: boolean
  readonly origin: string
  readonly submitLabel: string
}) {
  const schedule = body["schedule"] === null || body["schedule"] === undefined ? null : recordOf(body["schedule"])
  const template = recordOf(body["template"])
  const [subject, setSubject] = useState(String(template["subject"] ?? ""))
  const [text, setText] = useState(String(template["body"] ?? ""))
  const vars = sampleVars(origin)
  const escalation = Array.isArray(body["escalation"]) ? body["escalation"].map(recordOf) : []
  // The stored steps and one empty row to add a step (two rows at least), up to the limit.
  const escalationRows = Math.min(bounds.escalationSteps, Math.max(escalation.length + 1, 2))
  const err = (field: string) => errors[field]
  return (
    <Form method="post" className="stack-form rule-form">
      <CsrfField />
      <FormError message={errors["form"] ?? errors["body"]} />
      <Field name="name" label="Name" defaultValue={String(body["name"] ?? "")} error={err("name")} hint="e.g. “Checkout is down”." />
      <div className="choice">
        <input type="checkbox" id="field-active" name="active" defaultChecked={body["active"] !== false} />
        <label htmlFor="field-active">Active (a paused rule sends nothing)</label>
      </div>

      <fieldset aria-describedby={err("triggers") ? "triggers-error" : undefined}>
        <legend>When</legend>
        <FieldMessage id="triggers-error" label="Triggers" error={err("triggers")} />
        {triggerGroups.map((g) => (
          <fieldset key={g.legend} className="rule-group">
            <legend>{g.legend}</legend>
            <Checks name="trigger" idPrefix="trigger" options={g.triggers} chosen={listOf(body["triggers"])} />
          </fieldset>
        ))}
        <Control name="crowd_min_confidence" label="Users' reports: at least this confidence (%)" error={err("crowd_min_confidence")} hint="70 to 100. A crowd signal starts at 70 %; a higher minimum waits until the reports reach it.">
          {(attrs) => <input {...attrs} type="number" min={bounds.crowdConfidence.minimum} max={bounds.crowdConfidence.maximum} defaultValue={body["crowd_min_confidence"] === undefined ? "" : String(body["crowd_min_confidence"])} />}
        </Control>
      </fieldset>

      <fieldset aria-describedby={err("scope") ? "scope-error" : undefined}>
        <legend>About what</legend>
        <FieldMessage id="scope-error" label="Scope" error={err("scope") ?? err("stack_ids") ?? err("component_ids") ?? err("monitor_ids")} />
        <div className="choice">
          <input type="radio" id="scope-all" name="scope" value="all" defaultChecked={body["scope"] !== "specific"} />
          <label htmlFor="scope-all">Everything in the organization's stacks and monitors</label>
        </div>
        <div className="choice">
          <input type="radio" id="scope-specific" name="scope" value="specific" defaultChecked={body["scope"] === "specific"} />
          <label htmlFor="scope-specific">Only what is ticked below</label>
        </div>
        <div className="rule-scope">
          {options.stacks.length === 0 ? null : (
            <fieldset className="rule-group">
              <legend>Stacks</legend>
              <Checks name="stack_id" idPrefix="stack" options={options.stacks.map((s) => [s.id, s.name])} chosen={listOf(body["stack_ids"])} />
            </fieldset>
          )}
          {options.components.length === 0 ? null : (
            <fieldset className="rule-group">
              <legend>Components</legend>
              <Checks name="component_id" idPrefix="component" options={options.components.map((c) => [c.id, `${c.name} (${c.stack})`])} chosen={listOf(body["component_ids"])} />
            </fieldset>
          )}
          {options.monitors.length === 0 ? null : (
            <fieldset className="rule-group">
              <legend>Monitors</legend>
              <Checks name="monitor_id" idPrefix="monitor" options={options.monitors.map((m) => [m.id, m.name])} chosen={listOf(body["monitor_ids"])} />
            </fieldset>
          )}
        </div>
      </fieldset>

      <fieldset>
        <legend>At which levels</legend>
        <p className="hint">None ticked: every level.</p>
        <Checks name="alert_level" idPrefix="level" options={levelWords} chosen={listOf(body["alert_levels"])} />
      </fieldset>

      <fieldset aria-describedby={err("channel_ids") ? "channels-error" : undefined}>
        <legend>Send to</legend>
        <FieldMessage id="channels-error" label="Channels" error={err("channel_ids")} />
        {limits.channelsPerRule === null ? null : <p className="hint">Your plan allows {limits.channelsPerRule} channels per rule.</p>}
        {options.channels.length === 0
          ? <p>No channel yet: create one on the Channels page first.</p>
          : <Checks name="channel_id" idPrefix="channel" options={options.channels.map((c) => [c.id, `${c.name} (${c.type})`])} chosen={listOf(body["channel_ids"])} />}
      </fieldset>

      <fieldset>
        <legend>Active hours</legend>
        <div className="choice">
          <input type="checkbox" id="field-scheduled" name="scheduled" defaultChecked={schedule !== null} />
          <label htmlFor="field-scheduled">Only at certain hours (otherwise always)</label>
        </div>
        <FieldMessage id="schedule-error" label="Schedule" error={err("schedule")} />
        <Control name="schedule.timezone" id="field-schedule-timezone" label="Time zone" error={err("schedule.timezone")} hint="IANA name: UTC, Europe/Paris…">
          {(attrs) => <input {...attrs} type="text" defaultValue={String(schedule?.["timezone"] ?? "UTC")} spellCheck={false} />}
        </Control>
        <fieldset className="rule-group rule-days">
          <legend>Days</legend>
          <FieldMessage id="days-error" label="Days" error={err("schedule.days")} />
          <Checks name="schedule.day" idPrefix="day" options={bounds.weekdays.map((d) => [d, dayWords[d] ?? d])} chosen={schedule === null ? bounds.weekdays : listOf(schedule["days"])} />
        </fieldset>
        <div className="window-times">
          <Control name="schedule.start" id="field-schedule-start" label="From" error={err("schedule.start")}>
            {(attrs) => <input {...attrs} type="text" inputMode="numeric" placeholder="00:00" defaultValue={String(schedule?.["start"] ?? "09:00")} />}
          </Control>
          <Control name="schedule.end" id="field-schedule-end" label="To" error={err("schedule.end")} hint="HH:MM; before “From” spans midnight.">
            {(attrs) => <input {...attrs} type="text" inputMode="numeric" placeholder="24:00" defaultValue={String(schedule?.["end"] ?? "18:00")} />}
          </Control>
        </div>
        <Control name="schedule.holidays" id="field-schedule-holidays" label="Holidays" error={err("schedule.holidays")} hint="Dates YYYY-MM-DD, one per line: the rule rests all day.">
          {(attrs) => <textarea {...attrs} rows={2} defaultValue={listOf(schedule?.["holidays"]).join("\n")} />}
        </Control>
        <div className="choice">
          <input type="checkbox" id="field-critical-always" name="schedule.critical_always" defaultChecked={schedule?.["critical_always"] === true} />
          <label htmlFor="field-critical-always">Critical alerts at any hour</label>
        </div>
      </fieldset>

      <fieldset>
        <legend>Grouping and repeats</legend>
        <div className="window-times">
          <Control name="group_window_s" label="Group alerts for (seconds)" error={err("group_window_s")} hint="Blank: each alert alone. e.g. 300: one message for a stack's changes within 5 min.">
            {(attrs) => <input {...attrs} type="number" min={bounds.groupWindow.minimum} max={bounds.groupWindow.maximum} defaultValue={body["group_window_s"] === null || body["group_window_s"] === undefined ? "" : String(body["group_window_s"])} />}
          </Control>
          <Control name="cooldown_s" label="Quiet time per subject (seconds)" error={err("cooldown_s")} hint="The same alert is not repeated within it. Default 900.">
            {(attrs) => <input {...attrs} type="number" min={bounds.cooldown.minimum} max={bounds.cooldown.maximum} defaultValue={body["cooldown_s"] === undefined ? "" : String(body["cooldown_s"])} />}
          </Control>
        </div>
      </fieldset>

      <fieldset aria-describedby={err("escalation") ? "escalation-error" : undefined}>
        <legend>Escalation</legend>
        {canEscalate ? null : <p className="limit-note">Escalation and templates are on the Enterprise plan.</p>}
        <p className="hint">Unless someone acknowledges the alert, also notify these channels after the delay (seconds after the first alert; each step later than the one before).</p>
        <FieldMessage id="escalation-error" label="Escalation" error={err("escalation")} />
        {Array.from({ length: escalationRows }, (_, i) => {
          const step = escalation[i] ?? {}
          return (
            <fieldset key={i} className="rule-group escalation-step">
              <legend>Step {i + 1}</legend>
              <Control name={`escalation.${i}.delay_s`} id={`field-escalation-${i}-delay`} label="After (seconds)" error={err(`escalation.${i}.delay_s`)}>
                {(attrs) => <input {...attrs} type="number" min={1} defaultValue={step["delay_s"] === undefined ? "" : String(step["delay_s"])} />}
              </Control>
              <FieldMessage id={`escalation-${i}-channels-error`} label="Channels" error={err(`escalation.${i}.channel_ids`)} />
              <Checks name={`escalation.${i}.channel_id`} idPrefix={`escalation-${i}-channel`} options={options.channels.map((c) => [c.id, c.name])} chosen={listOf(step["channel_ids"])} />
            </fieldset>
          )
        })}
      </fieldset>

      <fieldset>
        <legend>Message</legend>
        <p className="hint">
          Blank: the default text of each channel. Placeholders: {templatePlaceholders.map((p) => <code key={p}>{`{${p}}`} </code>)}
        </p>
        <Control name="template.subject" id="field-template-subject" label="Subject (e-mail)" error={err("template.subject")}>
          {(attrs) => <input {...attrs} type="text" value={subject} onChange={(e) => setSubject(e.currentTarget.value)} />}
        </Control>
        <Control name="template.body" id="field-template-body" label="Text" error={err("template.body") ?? err("template")}>
          {(attrs) => <textarea {...attrs} rows={3} value={text} onChange={(e) => setText(e.currentTarget.value)} />}
        </Control>
        {text.trim() === "" ? null : (
          <div className="template-preview" aria-live="polite" data-testid="template-preview">
            <p className="muted">Preview, for API in Payments going critical:</p>
            {subject.trim() === "" ? null : <p><strong>{renderTemplate(subject, vars)}</strong></p>}
            <p className="preview-text">{renderTemplate(text, vars)}</p>
          </div>
        )}
      </fieldset>

      <button type="submit" name="intent" value="save" className="button">{submitLabel}</button>
    </Form>
  )
}
