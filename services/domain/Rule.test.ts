import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import type { FieldIssue } from "./Channel.ts"
import { isTimeZone, ruleChannelIds, type RuleInput, validateRule } from "./Rule.ts"

const c1 = "11111111-1111-4111-8111-111111111111"
const c2 = "22222222-2222-4222-8222-222222222222"
const base = { name: "Production down", triggers: ["component.critical"], channel_ids: [c1] }

const valid = (input: Record<string, unknown>, replace = false): RuleInput => {
  const r = validateRule(replace ? input : { ...base, ...input })
  if (Result.isFailure(r)) throw new Error(`${r.failure.field} ${r.failure.message}`)
  return r.success
}
const issue = (input: Record<string, unknown>, replace = false): FieldIssue => {
  const r = validateRule(replace ? input : { ...base, ...input })
  if (Result.isSuccess(r)) throw new Error(`accepted: ${JSON.stringify(r.success)}`)
  return r.failure
}

describe("validateRule: defaults", () => {
  it("a name, triggers and channels are enough", () => {
    assert.deepStrictEqual(valid({}), {
      name: "Production down",
      active: true,
      triggers: ["component.critical"],
      scope: "all",
      stack_ids: [],
      component_ids: [],
      monitor_ids: [],
      alert_levels: [],
      schedule: null,
      group_window_s: null,
      cooldown_s: 900,
      crowd_min_confidence: 70,
      escalation: null,
      template: null,
      channel_ids: [c1]
    })
  })
  it("a schedule with only a time zone is every day, all day", () => {
    assert.deepStrictEqual(valid({ schedule: { timezone: "Europe/Paris" } }).schedule, {
      timezone: "Europe/Paris",
      days: ["mon", "tue", "wed", "thu", "fri", "sat", "sun"],
      start: "00:00",
      end: "24:00",
      holidays: [],
      critical_always: false
    })
  })
  it("an overnight window (end before start) is accepted", () => {
    const s = valid({ schedule: { timezone: "UTC", days: ["sat", "sun"], start: "22:00", end: "06:00", holidays: ["2026-12-25"], critical_always: true } }).schedule
    assert.deepStrictEqual(s, { timezone: "UTC", days: ["sat", "sun"], start: "22:00", end: "06:00", holidays: ["2026-12-25"], critical_always: true })
  })
})

describe("validateRule: alert levels in both vocabularies", () => {
  it("Alert = critical, Warning = degraded, Info = info, any case, distinct, by severity", () => {
    assert.deepStrictEqual(valid({ alert_levels: ["Info", "Alert"] }).alert_levels, ["critical", "info"])
    assert.deepStrictEqual(valid({ alert_levels: ["warning", "Degraded", "CRITICAL", "alert"] }).alert_levels, ["critical", "degraded"])
  })
  it("other words are refused, naming the entry", () => {
    const found = issue({ alert_levels: ["critical", "fatal"] })
    assert.strictEqual(found.field, "alert_levels.1")
    assert.match(found.message, /Alert, Warning, Info/)
  })
})

describe("validateRule: refusals name the field", () => {
  const cases: Array<[Record<string, unknown>, string, RegExp]> = [
    [{ name: "  " }, "name", /1 to 200/],
    [{ triggers: [] }, "triggers", /at least one trigger/],
    [{ triggers: ["component.exploded"] }, "triggers.0", /Expected/],
    [{ triggers: ["monitor.down", "monitor.down"] }, "triggers", /distinct/],
    [{ channel_ids: [] }, "channel_ids", /at least one channel/],
    [{ channel_ids: ["nope"] }, "channel_ids.0", /UUID/],
    [{ scope: "some" }, "scope", /Expected/],
    [{ scope: "specific" }, "scope", /at least one of stack_ids/],
    [{ stack_ids: [c2] }, "stack_ids", /empty when scope is all/],
    [{ cooldown_s: -1 }, "cooldown_s", /0 to 604800/],
    [{ group_window_s: 0 }, "group_window_s", /1 to 86400/],
    [{ schedule: { timezone: "Mars/Olympus_Mons" } }, "schedule.timezone", /IANA time zone/],
    [{ schedule: { timezone: "UTC", days: ["mon", "funday"] } }, "schedule.days.1", /Expected/],
    [{ schedule: { timezone: "UTC", days: [] } }, "schedule.days", /at least one day/],
    [{ schedule: { timezone: "UTC", start: "9:00" } }, "schedule.start", /HH:MM/],
    [{ schedule: { timezone: "UTC", start: "24:00" } }, "schedule.start", /00:00 to 23:59/],
    [{ schedule: { timezone: "UTC", start: "09:00", end: "09:00" } }, "schedule.end", /differ from start/],
    [{ schedule: { timezone: "UTC", holidays: ["2026-02-30"] } }, "schedule.holidays.0", /YYYY-MM-DD/],
    [{ schedule: { timezone: "UTC", quiet: true } }, "schedule.quiet", /is not a field of notification rules/],
    [{ escalation: [] }, "escalation", /1 to 10 steps/],
    [{ escalation: [{ delay_s: 300, channel_ids: [c1] }, { delay_s: 300, channel_ids: [c2] }] }, "escalation.1.delay_s", /later than the previous/],
    [{ escalation: [{ delay_s: 0, channel_ids: [c1] }] }, "escalation.0.delay_s", /1 to 604800/],
    [{ escalation: [{ delay_s: 60, channel_ids: [] }] }, "escalation.0.channel_ids", /at least one channel/],
    [{ template: { body: "{component_name} {bogus}" } }, "template.body", /unknown placeholder \{bogus\}/],
    [{ template: { subject: "{whatever}", body: "x" } }, "template.subject", /unknown placeholder/],
    [{ template: { subject: "x" } }, "template.body", /is required/],
    [{ colour: "red" }, "colour", /is not a field of notification rules/]
  ]
  for (const [input, field, message] of cases) {
    it(`${JSON.stringify(input).slice(0, 90)} → ${field}`, () => {
      const found = issue(input)
      assert.strictEqual(found.field, field)
      assert.match(found.message, message)
    })
  }
  it("a PATCH that leaves channels alone may keep a rule whose channels were all deleted", () => {
    assert.isTrue(Result.isSuccess(validateRule({ ...base, channel_ids: [] }, { channelsGiven: false })))
  })
})

describe("rule helpers", () => {
  it("isTimeZone knows IANA names", () => {
    assert.isTrue(isTimeZone("America/New_York"))
    assert.isTrue(isTimeZone("UTC"))
    assert.isFalse(isTimeZone("Europe/Atlantis"))
    assert.isFalse(isTimeZone(""))
  })
  it("ruleChannelIds: channels and escalation channels, once each", () => {
    assert.deepStrictEqual(ruleChannelIds({ channel_ids: [c1], escalation: [{ delay_s: 60, channel_ids: [c2, c1] }] }), [c1, c2])
  })
})
