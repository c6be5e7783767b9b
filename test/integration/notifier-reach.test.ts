import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { StatusEvent } from "../../services/domain/Event.ts"
import { smsSegments } from "../../services/notifier/channels/sms.ts"
import { call, newTenant } from "../support/api.ts"
import { eventually } from "../support/eventually.ts"
import { arrivals, at, bodies, newRule, notifierLayer, publish, type Received, sleep, webhookChannel } from "../support/notifierHarness.ts"

/**
 * Where alerts go and when (issue 12): acknowledgment links that expire,
 * incidents reaching only the stacks showing what they affect, sources
 * without components, alerts held by a schedule until its window opens.
 * Events are written to the stream as the poller writes them; webhook
 * receivers record what arrives (test/support/notifierHarness.ts).
 */

/** Acknowledgment links live 3 seconds here. */
const linkTtlS = 3

const TestLayer = notifierLayer({
  name: "notifier-reach",
  config: (base) => ({ TWILIO_API_URL: `${base}/twilio`, ALERT_ACK_LINK_TTL_S: String(linkTtlS) }),
  // Twilio's Messages API answers 201 with the message.
  answer: (request, received) =>
    String(request.headers["content-type"]).startsWith("application/x-www-form-urlencoded")
      ? { status: 201, json: { sid: `SM${received.length}`, status: "queued" } }
      : { status: 200 }
})

/** The incident ids of what arrived, sorted. */
const incidentIds = (got: ReadonlyArray<Received>) => got.map((r) => (r.body["incident"] as { id: string }).id).toSorted()

/** `HH:MM` of minutes since midnight (1440 is 24:00). */
const hhmm = (minutes: number) =>
  minutes >= 1440 ? "24:00" : `${String(Math.floor(minutes / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`

let sequence = 0
const eventId = () => `reach-${Date.now().toString(36)}-${++sequence}`

/** A tenant with a source of `components` components, webhook channels and rules through the API. */
const setup = (plan: "pro" | "enterprise", componentNames: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const tenant = yield* newTenant(plan)
    const key = tenant.keys.admin
    const sourceKey = `src-${tenant.slug}`
    const source = { key: sourceKey, name: `Service ${tenant.slug}` }
    yield* sql`
      INSERT INTO sources (key, name, kind, provider_type, status_page_url, check_class, poll_interval_s)
      VALUES (${sourceKey}, ${source.name}, 'catalog', 'statuspage_io', 'https://status.invalid', 'standard', 300)`
    const components = new Map<string, string>()
    for (const name of componentNames) {
      const [c] = yield* sql<{ id: string }>`
        INSERT INTO components (source_id, external_id, name, status)
        SELECT id, ${name}, ${name}, 'operational' FROM sources WHERE key = ${sourceKey} RETURNING id`
      components.set(name, c!.id)
    }
    const stack = (name: string, items: ReadonlyArray<Record<string, unknown>>) =>
      Effect.gen(function*() {
        const created = yield* call("POST", "/stacks", { key, body: { name } })
        assert.strictEqual(created.status, 201, JSON.stringify(created.body))
        for (const item of items) {
          const added = yield* call("POST", `/stacks/${created.body.id}/items`, { key, body: item })
          assert.strictEqual(added.status, 201, JSON.stringify(added.body))
        }
        return created.body as { id: string; slug: string }
      })
    const channel = (path: string) => webhookChannel(key, path)
    const rule = (body: Record<string, unknown>) => newRule(key, body)
    return { tenant, key, source, components, stack, channel, rule }
  })

describe("notifier reach", () => {
  layer(TestLayer, { timeout: 120_000, excludeTestServices: true })("who is alerted, and when", (it) => {
    it.effect("acknowledgment links: GET shows, POST acknowledges, an expired link is refused", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const t = yield* setup("enterprise", ["api"])
        yield* t.stack("Main", [{ kind: "component", component_id: t.components.get("api") }])
        const first = yield* t.channel("/ack/first")
        const later = yield* t.channel("/ack/later")
        yield* t.rule({ triggers: ["component.critical"], channel_ids: [first], escalation: [{ delay_s: 60, channel_ids: [later] }] })
        const flip = (): StatusEvent => ({
          id: eventId(), type: "component.status_changed", timestamp: new Date().toISOString(), source: t.source,
          component: { id: "api", name: "api", previous_status: "operational", current_status: "critical" }
        })
        const linkOf = (alertId: string) =>
          Effect.gen(function*() {
            const [row] = yield* sql<{ message: { text: string } }>`SELECT message FROM alerts WHERE id = ${alertId}::uuid`
            // The message links to the portal's page (/alerts/<id>/ack?token=…); the API's endpoint under
            // /api/v1 takes the same token (links sent before the portal existed), and is what this server serves.
            const link = /Acknowledge: (\S+)/.exec(row!.message.text)![1]!
            assert.match(link, new RegExp(`^https://status\\.example\\.com/alerts/${alertId}/ack\\?token=`))
            return link.replace("https://status.example.com", "")
          })
        const alertIds = () =>
          sql<{ id: string; acknowledged_at: Date | null }>`
            SELECT id, acknowledged_at FROM alerts WHERE organization_id = ${t.tenant.id}::uuid ORDER BY created_at`
        yield* publish(flip())
        yield* arrivals("/ack/first", 1, 0)
        const [alert] = yield* alertIds()
        const path = yield* linkOf(alert!.id)
        const shown = yield* call("GET", path)
        assert.strictEqual(shown.status, 200)
        assert.include(shown.body, "Acknowledge")
        assert.isNull((yield* alertIds())[0]!.acknowledged_at, "GET acknowledges nothing")
        const acked = yield* call("POST", path)
        assert.strictEqual(acked.status, 200, JSON.stringify(acked.body))
        assert.strictEqual(acked.body.acknowledged_by, "link")
        assert.isNotNull((yield* alertIds())[0]!.acknowledged_at)

        // A second alert whose link is left until it expires.
        yield* sql`DELETE FROM rule_subject_state`
        yield* publish(flip())
        yield* arrivals("/ack/first", 2, 0)
        const [, second] = yield* alertIds()
        const old = yield* linkOf(second!.id)
        yield* sleep(linkTtlS * 1000 + 500)
        for (const method of ["GET", "POST"]) {
          const refused = yield* call(method, old)
          assert.strictEqual(refused.status, 410, `${method}: ${JSON.stringify(refused.body)}`)
          assert.strictEqual(refused.body.code, "link_expired")
          assert.strictEqual(refused.body.field, "token")
          assert.include(refused.body.message, "expired")
        }
        assert.isNull((yield* alertIds())[1]!.acknowledged_at)
        assert.strictEqual((yield* call("POST", `${old.slice(0, -4)}AAAA`)).status, 404, "a forged token is still 404")
      }))

    it.effect("incidents reach the stacks showing a component they affect, or the whole source; one naming none reaches every stack", () =>
      Effect.gen(function*() {
        const t = yield* setup("pro", ["ec2-us-east-1", "ec2-eu-west-1"])
        const east = yield* t.stack("US East", [{ kind: "component", component_id: t.components.get("ec2-us-east-1") }])
        const west = yield* t.stack("EU West", [{ kind: "component", component_id: t.components.get("ec2-eu-west-1") }])
        const whole = yield* t.stack("All of it", [{ kind: "source", source_key: t.source.key }])
        const triggers = ["incident.created"]
        for (const [stack, path] of [[east, "/inc/east"], [west, "/inc/west"], [whole, "/inc/whole"]] as const) {
          yield* t.rule({ triggers, scope: "specific", stack_ids: [stack.id], channel_ids: [yield* t.channel(path)] })
        }
        const incident = (id: string, components: ReadonlyArray<string> | undefined): StatusEvent => ({
          id: eventId(), type: "incident.created", timestamp: new Date().toISOString(), source: t.source,
          incident: {
            id, title: `Incident ${id}`, status: "investigating", impact: "major", created_at: new Date().toISOString(),
            resolved_at: null, update_count: 1, ...(components === undefined ? {} : { components })
          }
        })
        yield* publish(incident("east-only", ["ec2-us-east-1"]))
        yield* publish(incident("unnamed", undefined))
        yield* publish(incident("unnamed-empty", []))
        assert.deepStrictEqual(incidentIds(yield* arrivals("/inc/east", 3)), ["east-only", "unnamed", "unnamed-empty"])
        assert.deepStrictEqual(incidentIds(yield* arrivals("/inc/whole", 3, 0)), ["east-only", "unnamed", "unnamed-empty"])
        assert.deepStrictEqual(incidentIds(yield* arrivals("/inc/west", 2, 0)), ["unnamed", "unnamed-empty"], "not the other region's incident")
      }))

    it.effect("SMS allowance: each segment of each delivery to each number counts, checked per delivery", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const names = Array.from({ length: 12 }, (_, i) => `node-${String(i).padStart(2, "0")}`)
        const t = yield* setup("pro", names)
        yield* t.stack("Fleet", [{ kind: "source", source_key: t.source.key }])
        const numbers = Array.from({ length: 10 }, (_, i) => `+1555010${String(i).padStart(4, "0")}`)
        const sms = yield* call("POST", "/channels", {
          key: t.key,
          body: { type: "sms", name: "On call", settings: { phone_numbers: numbers, account_sid: `AC${"ab".repeat(16)}`, auth_token: "twilio-token-1", from_number: "+15550000001" } }
        })
        assert.strictEqual(sms.status, 201, JSON.stringify(sms.body))
        yield* t.rule({ triggers: ["component.critical"], channel_ids: [sms.body.id] })
        // Twelve components go critical in one burst: twelve deliveries of ten numbers each, well within one batch.
        for (const name of names) {
          yield* publish({
            id: eventId(), type: "component.status_changed", timestamp: new Date().toISOString(), source: t.source,
            component: { id: name, name, previous_status: "operational", current_status: "critical" }
          })
        }
        const settled = yield* eventually(30_000, sql<{ status: string; sms_segments: number; last_error: string | null }>`
          SELECT status, sms_segments, last_error FROM deliveries WHERE organization_id = ${t.tenant.id}::uuid ORDER BY seq`.pipe(
          Effect.map((rows) => rows.length === names.length && rows.every((r) => r.status === "delivered" || r.status === "failed") ? rows : undefined)
        ))
        const sent = bodies(yield* at(`/twilio/2010-04-01/Accounts/AC${"ab".repeat(16)}/Messages.json`))
        const segments = smsSegments(String(sent[0]!["Body"]))
        for (const m of sent) assert.strictEqual(smsSegments(String(m["Body"])), segments, "every body has the same length")
        const perDelivery = numbers.length * segments
        const fits = Math.floor(100 / perDelivery)
        const delivered = settled.filter((d) => d.status === "delivered")
        const refused = settled.filter((d) => d.status === "failed")
        console.log(JSON.stringify({ sms: { segments_per_message: segments, numbers: numbers.length, deliveries: names.length, delivered: delivered.length, refused: refused.length, messages_sent: sent.length } }))
        assert.strictEqual(delivered.length, fits, `${perDelivery} messages per delivery within 100`)
        assert.strictEqual(sent.length, fits * numbers.length, "refused deliveries send nothing")
        assert.deepStrictEqual(delivered.map((d) => d.sms_segments), delivered.map(() => perDelivery))
        for (const d of refused) assert.include(d.last_error, "SMS allowance")
        const [used] = yield* sql<{ total: number }>`
          SELECT COALESCE(sum(sms_segments), 0)::int AS total FROM deliveries WHERE organization_id = ${t.tenant.id}::uuid`
        assert.isAtMost(used!.total, 100)
      }))

    it.effect("schedules pause: an alert outside the window is sent once when it opens if the subject is still down, not at all if it recovered", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const t = yield* setup("pro", ["stays-down", "recovers"])
        yield* t.stack("Main", [{ kind: "source", source_key: t.source.key }])
        const hook = yield* t.channel("/paused")
        // A window opening at the next whole minute at least 3 s away, for ten minutes (UTC, every day).
        const opens = Math.ceil((Date.now() + 3_000) / 60_000) * 60_000
        const startMinute = new Date(opens).getUTCHours() * 60 + new Date(opens).getUTCMinutes()
        const schedule = { timezone: "UTC", start: hhmm(startMinute), end: hhmm(Math.min(startMinute + 10, 1440)) }
        // Critical only: the recovery matches no trigger of the rule, yet it ends the pause of its subject.
        yield* t.rule({ triggers: ["component.critical"], schedule, cooldown_s: 0, channel_ids: [hook] })
        const change = (name: string, previous: string, current: string): StatusEvent => ({
          id: eventId(), type: "component.status_changed", timestamp: new Date().toISOString(), source: t.source,
          component: { id: name, name, previous_status: previous, current_status: current }
        })
        yield* publish(change("stays-down", "operational", "critical"))
        yield* publish(change("recovers", "operational", "critical"))
        yield* sleep(300)
        yield* publish(change("recovers", "critical", "operational"))
        const [held] = yield* eventually(5_000, sql<{ n: number }>`
          SELECT count(*)::int AS n FROM held_alerts WHERE organization_id = ${t.tenant.id}::uuid`.pipe(Effect.map((r) => (r[0]!.n === 2 ? r : undefined))))
        assert.strictEqual(held!.n, 2)
        yield* sleep(Math.max(0, opens - Date.now() - 800))
        assert.strictEqual((yield* at("/paused")).length, 0, "nothing before the window opens")
        const got = bodies(yield* arrivals("/paused", 1, 3_000))
        const arrivedAt = Date.now()
        assert.isAtLeast(arrivedAt, opens)
        assert.deepStrictEqual(got.map((b) => [(b["component"] as { name: string }).name, (b["component"] as { current_status: string }).current_status]), [["stays-down", "critical"]])
        const outcomes = yield* sql<{ outcome: string }>`
          SELECT outcome FROM held_alerts WHERE organization_id = ${t.tenant.id}::uuid ORDER BY outcome`
        assert.deepStrictEqual(outcomes.map((o) => o.outcome), ["recovered", "sent"])
        const [alert] = yield* sql<{ message: { text: string } }>`SELECT message FROM alerts WHERE organization_id = ${t.tenant.id}::uuid`
        assert.include(alert!.message.text, "held by the rule's schedule")
      }), 150_000)

    it.effect("a manual custom source alerts through a rule when its status is set through the API; a source with components alerts through them only", () =>
      Effect.gen(function*() {
        const t = yield* setup("pro", ["api"])
        const created = yield* call("POST", "/custom-sources", { key: t.key, body: { name: "Office VPN", type: "manual" } })
        assert.strictEqual(created.status, 201, JSON.stringify(created.body))
        const vpn = created.body as { key: string; name: string }
        const stack = yield* t.stack("Office", [{ kind: "source", source_key: vpn.key }, { kind: "source", source_key: t.source.key }])
        const hook = yield* t.channel("/manual")
        yield* t.rule({ triggers: ["component.critical", "component.degraded", "component.recovered"], cooldown_s: 0, channel_ids: [hook] })
        const set = (status: string) =>
          call("PATCH", `/custom-sources/${vpn.key}`, { key: t.key, body: { status } }).pipe(Effect.map((r) => {
            assert.strictEqual(r.status, 200, JSON.stringify(r.body))
          }))
        yield* set("down")
        yield* arrivals("/manual", 1, 0)
        yield* set("operational")
        yield* arrivals("/manual", 2, 0)
        yield* set("down")
        // The source with components: its own status change is carried by its components' events, never alerted itself.
        yield* publish({
          id: eventId(), type: "source.status_changed", timestamp: new Date().toISOString(), source: t.source,
          previous_status: "operational", current_status: "down"
        })
        const got = bodies(yield* arrivals("/manual", 3, 1_000))
        assert.deepStrictEqual(got.map((b) => {
          const c = b["component"] as { id: string; name: string; previous_status: string; current_status: string }
          return [b["event"], c.id, c.name, c.previous_status, c.current_status]
        }), [
          ["source.status_changed", vpn.key, "Office VPN", "operational", "down"],
          ["source.status_changed", vpn.key, "Office VPN", "down", "operational"],
          ["source.status_changed", vpn.key, "Office VPN", "operational", "down"]
        ])
        assert.deepStrictEqual(got[0]!["stack"], { id: stack.id, name: "Office", slug: stack.slug })
        assert.deepStrictEqual(got[0]!["source"], { key: vpn.key, name: "Office VPN" })
      }))
  })
})
