import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { MonitorEvent, StatusEvent } from "../../services/domain/Event.ts"
import { Bus } from "../../services/platform/Bus.ts"
import { RedisKeys } from "../../services/platform/RedisKeys.ts"
import { ApiBase, call, newTenant } from "../support/api.ts"
import { eventually } from "../support/eventually.ts"
import { arrivals, at, bodies, newRule, notifierLayer, publish, sleep, webhookChannel } from "../support/notifierHarness.ts"

/**
 * The rules engine between the event stream and the receivers: events are
 * written to the stream as the poller and the monitor checks write them, and
 * webhook receivers record what arrives (test/support/notifierHarness.ts).
 */

const TestLayer = notifierLayer({
  name: "notifier-rules",
  config: (base) => ({ SLACK_API_URL: `${base}/slack-api` }),
  // Slack's Web API answers 200 with the message's ts (a Unix time with microseconds).
  answer: (request, received) =>
    request.path === "/slack-api/chat.postMessage"
      ? { status: 200, json: { ok: true, channel: "C0OPS", ts: ts(received.filter((r) => r.path === request.path).length) } }
      : { status: 200 }
})

let sequence = 0
const eventId = () => `ev-${Date.now().toString(36)}-${++sequence}`

/** A source with components, in a new stack of a new tenant, with webhook channels named by receiver path. */
const setup = (plan: "pro" | "enterprise", componentCount = 1) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const tenant = yield* newTenant(plan)
    const key = tenant.keys.admin
    const sourceKey = `src-${tenant.slug}`
    const [source] = yield* sql<{ id: string }>`
      INSERT INTO sources (key, name, kind, provider_type, status_page_url, check_class, poll_interval_s)
      VALUES (${sourceKey}, ${`Service ${tenant.slug}`}, 'catalog', 'statuspage_io', 'https://status.invalid', 'standard', 300) RETURNING id`
    const components: Array<{ id: string; external: string; name: string }> = []
    for (let i = 0; i < componentCount; i++) {
      const [c] = yield* sql<{ id: string }>`
        INSERT INTO components (source_id, external_id, name, status) VALUES (${source!.id}::uuid, ${`c${i}`}, ${`Part ${i}`}, 'operational')
        RETURNING id`
      components.push({ id: c!.id, external: `c${i}`, name: `Part ${i}` })
    }
    const stack = (yield* call("POST", "/stacks", { key, body: { name: "Checkout" } })).body as { id: string; slug: string }
    for (const c of components) {
      assert.strictEqual((yield* call("POST", `/stacks/${stack.id}/items`, { key, body: { kind: "component", component_id: c.id } })).status, 201)
    }
    const channel = (path: string) => webhookChannel(key, path)
    const rule = (body: Record<string, unknown>) => newRule(key, body)
    const componentEvent = (index: number, previous: string, current: string, timestamp: string, incident?: StatusEvent["incident"]): StatusEvent => ({
      id: eventId(),
      type: "component.status_changed",
      timestamp,
      source: { key: sourceKey, name: `Service ${tenant.slug}` },
      component: { id: components[index]!.external, name: components[index]!.name, previous_status: previous, current_status: current },
      ...(incident === undefined ? {} : { incident })
    })
    return { tenant, key, sourceKey, components, stack, channel, rule, componentEvent }
  })

/** The ts the Slack stand-in gives its n-th message. */
const ts = (n: number) => `1760000000.${String(n).padStart(6, "0")}`
const names = (got: ReadonlyArray<Record<string, unknown>>) => got.map((b) => (b["component"] as { name: string }).name).toSorted()
const changes = (got: ReadonlyArray<Record<string, unknown>>) =>
  got.map((b) => `${b["timestamp"]} ${(b["component"] as { current_status: string }).current_status}`)

describe("notification rules engine", () => {
  layer(TestLayer, { timeout: 120_000, excludeTestServices: true })("event stream → rules → outbox → receivers", (it) => {
    it.effect("monitor triggers, with the alert level filter in either vocabulary", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const t = yield* setup("pro")
        const [monitor] = yield* sql<{ id: string }>`
          INSERT INTO monitors (organization_id, name, url) VALUES (${t.tenant.id}::uuid, 'Shop', 'https://shop.example.com/health') RETURNING id`
        const all = yield* t.channel("/monitor/all")
        const alerts = yield* t.channel("/monitor/alert-only")
        const triggers = ["monitor.down", "monitor.degraded", "monitor.recovered", "monitor.ssl_expiring"]
        yield* t.rule({ triggers, channel_ids: [all] })
        yield* t.rule({ triggers, alert_levels: ["Alert"], channel_ids: [alerts] })
        // Scope: a rule for this monitor only, and one for another monitor of the organization.
        const [other] = yield* sql<{ id: string }>`
          INSERT INTO monitors (organization_id, name, url) VALUES (${t.tenant.id}::uuid, 'Blog', 'https://blog.example.com') RETURNING id`
        const mine = yield* t.channel("/monitor/scoped-mine")
        const theirs = yield* t.channel("/monitor/scoped-other")
        yield* t.rule({ triggers: ["monitor.down"], scope: "specific", monitor_ids: [monitor!.id], channel_ids: [mine] })
        yield* t.rule({ triggers: ["monitor.down"], scope: "specific", monitor_ids: [other!.id], channel_ids: [theirs] })
        const base = { monitor: { id: monitor!.id, name: "Shop", url: "https://shop.example.com/health" }, error: "", http_status: 200, response_time_ms: 80 }
        const now = Date.now()
        const event = (type: MonitorEvent["type"], previous: MonitorEvent["previous_state"], current: MonitorEvent["current_state"], offset: number, extra: Partial<MonitorEvent> = {}): MonitorEvent => ({
          id: eventId(), type, timestamp: new Date(now + offset).toISOString(), previous_state: previous, current_state: current, ...base, ...extra
        })
        yield* publish(event("monitor.down", "up", "down", 0, { error: "expected 200-299, got 503", http_status: 503 }))
        yield* publish(event("monitor.degraded", "down", "degraded", 1000))
        yield* publish(event("monitor.recovered", "degraded", "up", 2000, { duration_ms: 300_000 }))
        yield* publish(event("monitor.ssl_expiring", "up", "up", 3000, {
          ssl: { threshold_days: 7, days_left: 5, valid_to: "2026-11-27T00:00:00Z", issuer: "CA", subject: "shop.example.com" }
        }))
        const everything = bodies(yield* arrivals("/monitor/all", 4))
        assert.deepStrictEqual(everything.map((b) => b["event"]), ["monitor.down", "monitor.degraded", "monitor.recovered", "monitor.ssl_expiring"])
        const down = everything[0] as { component: Record<string, string>; monitor: Record<string, unknown>; stack: Record<string, string> }
        assert.deepStrictEqual(down.component, { id: monitor!.id, name: "Shop", previous_status: "up", current_status: "down" })
        assert.strictEqual(down.monitor["error"], "expected 200-299, got 503")
        assert.strictEqual(down.monitor["http_status"], 503)
        assert.deepStrictEqual(down.stack, { id: "", name: "", slug: "" })
        assert.strictEqual((everything[3] as { monitor: Record<string, unknown> }).monitor["ssl_days_left"], 5)
        // "Alert" is critical: only the monitor going down.
        assert.deepStrictEqual(bodies(yield* at("/monitor/alert-only")).map((b) => b["event"]), ["monitor.down"])
        assert.deepStrictEqual(bodies(yield* at("/monitor/scoped-mine")).map((b) => b["event"]), ["monitor.down"])
        assert.strictEqual((yield* at("/monitor/scoped-other")).length, 0)
        const [recovered] = yield* sql<{ message: { title: string; text: string } }>`
          SELECT COALESCE(d.message, a.message) AS message FROM deliveries d JOIN alerts a ON a.id = d.alert_id
          WHERE d.event_type = 'monitor.recovered' AND d.organization_id = ${t.tenant.id}::uuid`
        assert.include(recovered!.message.text, "Duration: 5m")
      }))

    it.effect("a malformed stream entry is logged and acknowledged; the next good event is still handled", () =>
      Effect.gen(function*() {
        const t = yield* setup("pro")
        const hook = yield* t.channel("/malformed/after")
        yield* t.rule({ triggers: ["component.critical"], channel_ids: [hook] })
        const bus = yield* Bus
        // Not JSON; JSON that is not an object; a component change without its source; a monitor event
        // whose monitor is null; and an entry without a payload.
        const good = t.componentEvent(0, "operational", "critical", new Date().toISOString())
        const { source: _, ...sourceless } = good
        yield* bus.xadd(RedisKeys.events, { id: "bad-1", type: good.type, payload: "{not json" })
        yield* bus.xadd(RedisKeys.events, { id: "bad-2", type: good.type, payload: "42" })
        yield* bus.xadd(RedisKeys.events, { id: "bad-3", type: good.type, payload: JSON.stringify({ ...sourceless, id: "bad-3" }) })
        yield* bus.xadd(RedisKeys.events, {
          id: "bad-4",
          type: "monitor.down",
          payload: JSON.stringify({ id: "bad-4", type: "monitor.down", timestamp: good.timestamp, monitor: null, previous_state: "up", current_state: "down" })
        })
        yield* bus.xadd(RedisKeys.events, { id: "bad-5", type: good.type })
        yield* publish(good)
        const got = bodies(yield* arrivals("/malformed/after", 1, 1500))
        // Exactly once: the batch with the malformed entries was acknowledged, not retried.
        assert.strictEqual(got.length, 1)
        assert.deepStrictEqual((got[0]!["component"] as { current_status: string }).current_status, "critical")
      }))

    it.effect("incident triggers reach organizations whose stacks show the source", () =>
      Effect.gen(function*() {
        const t = yield* setup("pro")
        const hook = yield* t.channel("/incidents")
        yield* t.rule({ triggers: ["incident.created", "incident.updated", "incident.resolved"], channel_ids: [hook] })
        const started = new Date(Date.now() - 3_600_000).toISOString()
        const incident = (status: string, updates: number, resolved: string | null) => ({
          id: "inc-1", title: "Checkout errors", status, impact: "major", created_at: started, resolved_at: resolved, update_count: updates
        })
        const source = { key: t.sourceKey, name: `Service ${t.tenant.slug}` }
        const now = new Date().toISOString()
        yield* publish({ id: eventId(), type: "incident.created", timestamp: now, source, incident: incident("investigating", 1, null) })
        yield* publish({ id: eventId(), type: "incident.updated", timestamp: now, source, incident: incident("identified", 2, null) })
        yield* publish({ id: eventId(), type: "incident.resolved", timestamp: now, source, incident: incident("resolved", 3, now) })
        const got = bodies(yield* arrivals("/incidents", 3))
        assert.deepStrictEqual(got.map((b) => b["event"]), ["incident.created", "incident.updated", "incident.resolved"])
        const first = got[0] as { incident: Record<string, unknown>; stack: Record<string, string> }
        assert.deepStrictEqual([first.incident["id"], first.incident["title"], first.incident["update_count"]], ["inc-1", "Checkout errors", 1])
        assert.strictEqual(first.stack["id"], t.stack.id)
      }))

    it.effect("schedules: active hours and days in the rule's time zone across a DST change, critical alerts let through", () =>
      Effect.gen(function*() {
        const t = yield* setup("pro", 4)
        const office = yield* t.channel("/schedule/office")
        const always = yield* t.channel("/schedule/critical-always")
        const schedule = { timezone: "America/New_York", days: ["mon", "tue", "wed", "thu", "fri"], start: "09:00", end: "17:00" }
        yield* t.rule({ triggers: ["component.critical", "component.degraded"], schedule, channel_ids: [office] })
        yield* t.rule({ triggers: ["component.critical", "component.degraded"], schedule: { ...schedule, critical_always: true }, channel_ids: [always] })
        // Friday 2026-03-06 08:30 EST (13:30Z): before hours. Monday 2026-03-09 09:30 EDT (13:30Z, after the change): in hours.
        yield* publish(t.componentEvent(0, "operational", "critical", "2026-03-06T13:30:00Z"))
        yield* publish(t.componentEvent(1, "operational", "critical", "2026-03-09T13:30:00Z"))
        // Saturday noon: a degraded change is held back by both, a critical one passes the critical_always rule.
        yield* publish(t.componentEvent(2, "operational", "degraded", "2026-03-07T17:00:00Z"))
        yield* publish(t.componentEvent(3, "operational", "critical", "2026-03-07T17:00:00Z"))
        // Held alerts go when the window opens (long past here) unless the subject recovered first: these recover within the pause.
        yield* publish(t.componentEvent(0, "critical", "operational", "2026-03-06T13:45:00Z"))
        yield* publish(t.componentEvent(2, "degraded", "operational", "2026-03-07T18:00:00Z"))
        yield* publish(t.componentEvent(3, "critical", "operational", "2026-03-07T18:00:00Z"))
        const alwaysGot = bodies(yield* arrivals("/schedule/critical-always", 3))
        const officeGot = bodies(yield* at("/schedule/office"))
        assert.deepStrictEqual(names(officeGot), ["Part 1"])
        assert.deepStrictEqual(names(alwaysGot), ["Part 0", "Part 1", "Part 3"])
      }))

    it.effect("the 15-minute rule: one alert per component and rule unless the status changes again", () =>
      Effect.gen(function*() {
        const t = yield* setup("pro", 2)
        const criticalOnly = yield* t.channel("/cooldown/critical")
        const both = yield* t.channel("/cooldown/both")
        yield* t.rule({ triggers: ["component.critical"], channel_ids: [criticalOnly] })
        yield* t.rule({ triggers: ["component.critical", "component.recovered"], channel_ids: [both] })
        const t0 = Date.parse("2026-06-01T10:00:00Z")
        const min = (m: number) => new Date(t0 + m * 60_000).toISOString()
        yield* publish(t.componentEvent(0, "operational", "critical", min(0)))
        yield* publish(t.componentEvent(0, "critical", "operational", min(2)))
        yield* publish(t.componentEvent(0, "operational", "critical", min(5)))
        yield* publish(t.componentEvent(0, "critical", "operational", min(7)))
        yield* publish(t.componentEvent(0, "operational", "critical", min(16)))
        // Critical-only rule: the flap back to critical at +5 is the same status it alerted 5 minutes before; +16 is past the 15 minutes.
        assert.deepStrictEqual(changes(bodies(yield* arrivals("/cooldown/critical", 2))), [`${min(0)} critical`, `${min(16)} critical`])
        // With recoveries alerted too, every change is a new status for the rule.
        assert.deepStrictEqual(changes(bodies(yield* arrivals("/cooldown/both", 5))), [
          `${min(0)} critical`, `${min(2)} operational`, `${min(5)} critical`, `${min(7)} operational`, `${min(16)} critical`
        ])
      }))

    it.effect("de-duplication: several rules and stacks sending one event to one destination send it once", () =>
      Effect.gen(function*() {
        const t = yield* setup("pro")
        const shared = yield* t.channel("/dedup/shared")
        const own = yield* t.channel("/dedup/own")
        const second = (yield* call("POST", "/stacks", { key: t.key, body: { name: "Payments" } })).body as { id: string }
        yield* call("POST", `/stacks/${second.id}/items`, { key: t.key, body: { kind: "source", source_key: t.sourceKey } })
        yield* t.rule({ triggers: ["component.critical"], channel_ids: [shared] })
        yield* t.rule({ triggers: ["component.critical"], scope: "specific", stack_ids: [second.id], channel_ids: [shared, own] })
        yield* t.rule({ triggers: ["component.critical"], scope: "specific", stack_ids: [t.stack.id], channel_ids: [shared] })
        yield* t.rule({ triggers: ["component.critical"], scope: "specific", component_ids: [t.components[0]!.id], channel_ids: [shared] })
        const event = t.componentEvent(0, "operational", "critical", new Date().toISOString())
        yield* publish(event)
        yield* publish(event) // the same event read twice (at least once)
        assert.strictEqual((yield* arrivals("/dedup/own", 1)).length, 1)
        const got = yield* at("/dedup/shared")
        assert.strictEqual(got.length, 1)
        assert.isTrue(String(got[0]!.headers["webhook-id"]).startsWith(`${event.id}:`))
      }))

    it.effect("grouping: a stack's changes within the window arrive as one combined alert", () =>
      Effect.gen(function*() {
        const t = yield* setup("pro", 3)
        const hook = yield* t.channel("/group")
        yield* t.rule({ triggers: ["component.critical", "component.degraded"], group_window_s: 2, channel_ids: [hook] })
        const now = Date.now()
        yield* publish(t.componentEvent(0, "operational", "degraded", new Date(now).toISOString()))
        yield* publish(t.componentEvent(1, "operational", "critical", new Date(now + 1).toISOString()))
        yield* sleep(500)
        yield* publish(t.componentEvent(2, "operational", "degraded", new Date(now + 2).toISOString()))
        yield* sleep(1000)
        assert.strictEqual((yield* at("/group")).length, 0, "nothing before the window closes")
        const [only, ...rest] = bodies(yield* arrivals("/group", 1, 1500))
        assert.strictEqual(rest.length, 0)
        assert.strictEqual(only!["event"], "group")
        assert.deepStrictEqual((only!["changes"] as Array<{ component: { name: string } }>).map((c) => c.component.name), ["Part 0", "Part 1", "Part 2"])
        assert.strictEqual((only!["component"] as { name: string }).name, "Part 1", "the most severe change leads")
        assert.deepStrictEqual(only!["stack"], { id: t.stack.id, name: "Checkout", slug: t.stack.slug })
        // A later change opens a new window.
        yield* publish(t.componentEvent(0, "degraded", "critical", new Date(now + 10).toISOString()))
        const second = bodies(yield* arrivals("/group", 2, 300))[1]!
        assert.strictEqual(second["event"], "component.status_changed", "a window with one change sends it as it is")
      }))

    it.effect("escalation: steps follow until an acknowledgment through the API or the signed link stops them", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const t = yield* setup("enterprise", 2)
        const first = yield* t.channel("/escalate/first")
        const second = yield* t.channel("/escalate/second")
        const third = yield* t.channel("/escalate/third")
        yield* t.rule({
          triggers: ["component.critical"],
          channel_ids: [first],
          escalation: [{ delay_s: 1, channel_ids: [second] }, { delay_s: 3, channel_ids: [third] }]
        })
        // Acknowledged through the API after the first step: the second never comes.
        yield* publish(t.componentEvent(0, "operational", "critical", new Date().toISOString()))
        yield* arrivals("/escalate/first", 1, 0)
        yield* arrivals("/escalate/second", 1, 0)
        const [alert] = yield* sql<{ id: string; message: { text: string } }>`
          SELECT id, message FROM alerts WHERE organization_id = ${t.tenant.id}::uuid AND subject LIKE 'component:%' ORDER BY created_at`
        assert.strictEqual((yield* call("POST", `/alerts/${alert!.id}/acknowledge`, { key: t.tenant.keys.viewer })).status, 403)
        const acked = yield* call("POST", `/alerts/${alert!.id}/acknowledge`, { key: t.tenant.keys.member })
        assert.strictEqual(acked.status, 200)
        assert.strictEqual(acked.body.escalation_step, 1)
        assert.isNull(acked.body.next_escalation_at)
        assert.match(acked.body.acknowledged_by, /^api_key:/)
        // Acknowledged through the link of its message before the first step: no step at all.
        yield* publish(t.componentEvent(1, "operational", "critical", new Date().toISOString()))
        yield* eventually(5_000, at("/escalate/first").pipe(Effect.map((r) => (r.length === 2 ? r : undefined))))
        const [, linked] = yield* sql<{ id: string; message: { text: string } }>`
          SELECT id, message FROM alerts WHERE organization_id = ${t.tenant.id}::uuid ORDER BY created_at`
        const link = /Acknowledge: (\S+)/.exec(linked!.message.text)![1]!
        // The portal's page (/alerts/<id>/ack); the API's /api/v1/alerts/<id>/ack takes the same token.
        assert.isTrue(link.startsWith(`https://status.example.com/alerts/${linked!.id}/ack?token=`))
        const path = link.replace("https://status.example.com", "")
        assert.strictEqual((yield* call("GET", `${path.slice(0, -4)}AAAA`, {})).status, 404, "a forged token")
        assert.strictEqual((yield* call("POST", `${path.slice(0, -4)}AAAA`, {})).status, 404, "a forged token")
        // Opening the link (a mail scanner, a chat preview) only shows the alert and a button.
        const page = yield* call("GET", path, {})
        assert.strictEqual(page.status, 200)
        assert.match(page.headers.get("content-type") ?? "", /^text\/html/)
        assert.include(page.body, "Part 1")
        assert.include(page.body, `<form method="post" action="/api/v1/alerts/${linked!.id}/ack?token=`)
        const [still] = yield* sql<{ acknowledged_at: Date | null }>`SELECT acknowledged_at FROM alerts WHERE id = ${linked!.id}::uuid`
        assert.isNull(still!.acknowledged_at, "GET acknowledges nothing")
        const byLink = yield* call("POST", path, {})
        assert.strictEqual(byLink.status, 200)
        assert.strictEqual(byLink.body.acknowledged_by, "link")
        assert.include((yield* call("GET", path, {})).body, "Already acknowledged")
        yield* sleep(3_500)
        assert.strictEqual((yield* at("/escalate/second")).length, 1, "only the first alert's step 1")
        assert.strictEqual((yield* at("/escalate/third")).length, 0)
        const stepped = (yield* at("/escalate/second"))[0]!
        assert.isTrue(String(stepped.headers["webhook-id"]).startsWith(`${alert!.id}:escalation:1:`))
        const audit = yield* sql<{ action: string }>`SELECT action FROM audit_log WHERE organization_id = ${t.tenant.id}::uuid AND entity_type = 'alert'`
        assert.deepStrictEqual(audit.map((a) => a.action), ["alert.acknowledged", "alert.acknowledged"])
      }))

    it.effect("templates: every placeholder is replaced in what is sent", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const t = yield* setup("enterprise")
        const hook = yield* t.channel("/template")
        const placeholders = ["status_emoji", "component_name", "status", "stack_name", "previous_status", "current_status", "duration", "incident_title", "incident_update_count", "stack_url"]
        yield* t.rule({
          triggers: ["component.recovered"],
          template: { subject: "{status_emoji} {component_name} back", body: placeholders.map((p) => `${p}={${p}}`).join("|") },
          channel_ids: [hook]
        })
        const now = new Date()
        yield* publish(t.componentEvent(0, "critical", "operational", now.toISOString(), {
          id: "inc-9", title: "Checkout errors", status: "resolved", impact: "major",
          created_at: new Date(now.getTime() - 5 * 60_000).toISOString(), resolved_at: now.toISOString(), update_count: 3
        }))
        yield* arrivals("/template", 1, 0)
        // The attempt is recorded after the receiver answered: wait for the record, not only the arrival.
        const [delivery] = yield* eventually(5_000, sql<{ alert_id: string; message: { title: string; text: string; url: string; shortUrl: string } }>`
          SELECT a.id AS alert_id, COALESCE(d.message, a.message) AS message FROM deliveries d JOIN alerts a ON a.id = d.alert_id
          WHERE d.organization_id = ${t.tenant.id}::uuid AND d.status = 'delivered'`.pipe(Effect.map((rows) => (rows.length > 0 ? rows : undefined))))
        assert.strictEqual(delivery!.message.title, "🟢 Part 0 back")
        // The short link SMS carries: 8 characters of code, a redirect to the alert's page.
        const short = /^https:\/\/status\.example\.com\/a\/([A-Za-z0-9_-]{8})$/.exec(delivery!.message.shortUrl)
        assert.isNotNull(short)
        const base = yield* ApiBase
        const redirect = yield* Effect.promise(() => fetch(`${base}/a/${short![1]}`, { redirect: "manual" }))
        assert.strictEqual(redirect.status, 302)
        assert.strictEqual(redirect.headers.get("location"), `/alerts/${delivery!.alert_id}`)
        assert.strictEqual((yield* Effect.promise(() => fetch(`${base}/a/AAAAAAAA`, { redirect: "manual" }))).status, 404)
        assert.strictEqual(delivery!.message.text, [
          "status_emoji=🟢", "component_name=Part 0", "status=operational", "stack_name=Checkout", "previous_status=critical",
          "current_status=operational", "duration=5m", "incident_title=Checkout errors", "incident_update_count=3",
          `stack_url=https://status.example.com/dashboard/${t.tenant.slug}/stacks/${t.stack.slug}`
        ].join("|"))
      }))

    it.effect("channels the plan does not allow and paused rules send nothing", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const t = yield* setup("pro")
        const hook = yield* t.channel("/plan/webhook")
        const paused = yield* t.channel("/plan/paused")
        yield* t.rule({ triggers: ["component.critical"], channel_ids: [hook] })
        yield* t.rule({ triggers: ["component.critical"], channel_ids: [paused], active: false })
        // The organization moves to Free (e-mail only): its webhook is no longer sent to.
        yield* sql`UPDATE organizations SET plan_id = 'free' WHERE id = ${t.tenant.id}::uuid`
        yield* publish(t.componentEvent(0, "operational", "critical", new Date().toISOString()))
        yield* sleep(1500)
        assert.strictEqual((yield* at("/plan/webhook")).length, 0)
        assert.strictEqual((yield* at("/plan/paused")).length, 0)
        yield* sql`UPDATE organizations SET plan_id = 'pro' WHERE id = ${t.tenant.id}::uuid`
        yield* publish(t.componentEvent(0, "critical", "operational", new Date().toISOString()))
        yield* publish(t.componentEvent(0, "operational", "critical", new Date(Date.now() + 1000).toISOString()))
        assert.strictEqual((yield* arrivals("/plan/webhook", 1)).length, 1)
        assert.strictEqual((yield* at("/plan/paused")).length, 0)
      }))

    it.effect("the organization's maintenance windows hold alerts in their scope", () =>
      Effect.gen(function*() {
        const t = yield* setup("pro", 2)
        const hook = yield* t.channel("/maintenance")
        const other = (yield* call("POST", "/stacks", { key: t.key, body: { name: "Elsewhere" } })).body as { id: string }
        yield* call("POST", `/stacks/${other.id}/items`, { key: t.key, body: { kind: "component", component_id: t.components[1]!.id } })
        yield* t.rule({ triggers: ["component.critical"], channel_ids: [hook] })
        const window = yield* call("POST", "/maintenance-windows", {
          key: t.key,
          body: { title: "Upgrade", stack_id: t.stack.id, starts_at: new Date(Date.now() - 60_000).toISOString(), ends_at: new Date(Date.now() + 3_600_000).toISOString() }
        })
        assert.strictEqual(window.status, 201, JSON.stringify(window.body))
        // Part 0 is only in the stack under maintenance; Part 1 is also in another stack.
        yield* publish(t.componentEvent(0, "operational", "critical", new Date().toISOString()))
        yield* publish(t.componentEvent(1, "operational", "critical", new Date().toISOString()))
        const got = bodies(yield* arrivals("/maintenance", 1, 1000))
        assert.deepStrictEqual(got.map((b) => [(b["component"] as { name: string }).name, (b["stack"] as { name: string }).name]), [["Part 1", "Elsewhere"]])
      }))

    it.effect("Slack with a bot token: a subject's later alerts reply in the thread of its first, a new episode starts a new thread", () =>
      Effect.gen(function*() {
        const t = yield* setup("pro", 2)
        const created = yield* call("POST", "/channels", {
          key: t.key,
          body: { type: "slack", name: "Ops", settings: { channel: "#ops", bot_token: "xoxb-1234567890-abcdefghij", thread_replies: true } }
        })
        assert.strictEqual(created.status, 201, JSON.stringify(created.body))
        assert.notInclude(JSON.stringify(created.body), "abcdefghij", "the token is never shown")
        yield* t.rule({ triggers: ["component.critical", "component.degraded", "component.recovered"], channel_ids: [created.body.id] })
        const now = Date.now()
        const later = (s: number) => new Date(now + s * 1000).toISOString()
        yield* publish(t.componentEvent(0, "operational", "degraded", later(0)))
        yield* publish(t.componentEvent(1, "operational", "critical", later(1)))
        yield* publish(t.componentEvent(0, "degraded", "critical", later(2)))
        yield* publish(t.componentEvent(0, "critical", "operational", later(3)))
        yield* publish(t.componentEvent(0, "operational", "critical", later(4)))
        const posts = yield* arrivals("/slack-api/chat.postMessage", 5)
        assert.strictEqual(posts.length, 5)
        for (const p of posts) assert.strictEqual(p.headers["authorization"], "Bearer xoxb-1234567890-abcdefghij")
        // Part 0's messages: its first starts a thread, the next two reply in it (the recovery closes it), the last starts a new one.
        const part0 = posts.filter((p) => String(p.body["text"]).includes("Part 0"))
        const part1 = posts.filter((p) => String(p.body["text"]).includes("Part 1"))
        assert.strictEqual(part1.length, 1)
        assert.isUndefined(part1[0]!.body["thread_ts"])
        assert.strictEqual(part0.length, 4)
        const root = posts.indexOf(part0[0]!) + 1
        assert.deepStrictEqual(part0.map((p) => p.body["thread_ts"] ?? null), [null, ts(root), ts(root), null])
        assert.strictEqual(part0[0]!.body["channel"], "#ops")
      }))
  })
})
