import { describe, expect, it } from "vitest"
import { templatePlaceholders, testPayload } from "../domain/Channel.ts"
import type { Message } from "./Sender.ts"
import { formatDuration, renderTemplate, statusEmoji, templateVars } from "./template.ts"

const message = (overrides: Partial<Message> = {}): Message => {
  const payload = testPayload(new Date("2026-03-01T10:00:00Z"))
  return {
    event: "component.status_changed",
    title: "🔴 API is critical (was operational)",
    text: "API in Payments is critical.",
    url: "https://status.example.com/s/payments",
    level: "critical",
    payload: {
      ...payload,
      timestamp: "2026-03-01T11:05:00.000Z",
      stack: { id: "s1", name: "Payments", slug: "payments" },
      component: { id: "c1", name: "API", previous_status: "operational", current_status: "critical" },
      incident: { id: "i1", created_at: "2026-03-01T10:00:00.000Z", resolved_at: null }
    },
    ...overrides
  }
}

describe("renderTemplate", () => {
  it("replaces every placeholder of the spec", () => {
    const vars = Object.fromEntries(templatePlaceholders.map((name) => [name, `<${name}>`]))
    const template = templatePlaceholders.map((name) => `{${name}}`).join("|")
    expect(renderTemplate(template, vars)).toBe(templatePlaceholders.map((name) => `<${name}>`).join("|"))
  })

  it("renders a known placeholder without a value as empty, leaves unknown names and other braces as text", () => {
    expect(renderTemplate("{status_emoji}{component_name} {nope} {} {a b}", { component_name: "API" })).toBe("API {nope} {} {a b}")
  })

  it("replaces repeats and does not expand placeholders inside values", () => {
    expect(renderTemplate("{status}/{status}", { status: "{component_name}" })).toBe("{component_name}/{component_name}")
  })
})

describe("templateVars", () => {
  it("takes each value from the message", () => {
    expect(templateVars(message())).toEqual({
      status_emoji: "🔴",
      component_name: "API",
      status: "critical",
      stack_name: "Payments",
      previous_status: "operational",
      current_status: "critical",
      duration: "1h 5m",
      incident_title: "",
      incident_update_count: "",
      stack_url: "https://status.example.com/s/payments"
    })
  })

  it("measures a resolved incident to its resolution, and leaves duration empty when the dates are unusable", () => {
    const m = message()
    const resolved = message({ payload: { ...m.payload, incident: { ...m.payload.incident, resolved_at: "2026-03-01T10:00:45.000Z" } } })
    expect(templateVars(resolved).duration).toBe("45s")
    const broken = message({ payload: { ...m.payload, incident: { ...m.payload.incident, created_at: "" } } })
    expect(templateVars(broken).duration).toBe("")
  })

  it("takes values the notifier adds as `vars`, ignoring non-strings (stored JSON) and unknown names", () => {
    const withVars = { ...message(), vars: { incident_title: "Checkout errors", incident_update_count: "3", duration: 5, other: "x" } as unknown as Record<string, string> }
    const vars = templateVars(withVars)
    expect(vars.incident_title).toBe("Checkout errors")
    expect(vars.incident_update_count).toBe("3")
    expect(vars.duration).toBe("1h 5m")
    expect(Object.keys(vars)).toHaveLength(templatePlaceholders.length)
  })
})

it("formatDuration shows the two largest units, dropping a zero second one", () => {
  expect([0, 999, 45_000, 60_000, 725_000, 7_500_000, 7_200_000, 3 * 86_400_000 + 4 * 3_600_000, 86_400_000 + 59_000].map(formatDuration))
    .toEqual(["0s", "1s", "45s", "1m", "12m 5s", "2h 5m", "2h", "3d 4h", "1d"])
})

it("statusEmoji knows component statuses and monitor states", () => {
  expect(["operational", "degraded", "critical", "maintenance", "down", "up", "unknown"].map(statusEmoji))
    .toEqual(["🟢", "🟡", "🔴", "🔧", "🔴", "🟢", "⚪"])
})
