import type { Message } from "../Sender.ts"

/** A realistic message for tests and previews: API in Payments went critical 65 minutes into an open incident. */
export const sampleMessage = (overrides: Partial<Message> = {}): Message => ({
  event: "component.status_changed",
  title: "🔴 API is critical (was operational)",
  text: "API in Payments is critical.\nStarted 1h 5m ago; payments may fail.",
  url: "https://status.example.com/s/payments",
  level: "critical",
  payload: {
    event: "component.status_changed",
    timestamp: "2026-03-01T11:05:00.000Z",
    stack: { id: "stack-1", name: "Payments", slug: "payments" },
    component: { id: "comp-1", name: "API", previous_status: "operational", current_status: "critical" },
    incident: { id: "inc-1", created_at: "2026-03-01T10:00:00.000Z", resolved_at: null }
  },
  ...overrides
})
