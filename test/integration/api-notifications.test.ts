import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { NotificationPayload } from "../../services/domain/Channel.ts"
import type { Role } from "../../services/domain/Organization.ts"
import { SecretBox, secretBinding } from "../../services/platform/SecretBox.ts"
import { type ApiBase, apiServer, call, newTenant, operatorSetsPlan, type Tenant } from "../support/api.ts"
import { withConfig } from "../support/stores.ts"

/** The server under test keeps its key here (apiServer's DATA_DIR); the tests open stored secrets with it. */
const secretBox = SecretBox.layer.pipe(Layer.provide(withConfig({ DATA_DIR: "/tmp/statusgrid-api-test" })))

const slackUrl = "https://hooks.slack.com/services/T0000/B0000/abcdefghijklmnopqrstuvwx"
const slack = (name = "Ops chat") => ({ name, type: "slack", settings: { channel: "#ops", webhook_url: slackUrl } })
const email = (name = "Ops mail") => ({ name, type: "email", settings: { recipients: "ops@example.com, oncall@example.com" } })
const rule = (channel_ids: ReadonlyArray<string>, extra: Record<string, unknown> = {}) => ({
  name: "Production down",
  triggers: ["component.critical", "monitor.down"],
  channel_ids,
  ...extra
})

const all: ReadonlyArray<Role> = ["admin", "member", "viewer"]
const managers: ReadonlyArray<Role> = ["admin", "member"]

/** A request that must succeed with `status`; its body. */
const ok = (status: number, method: string, path: string, key: string, body?: unknown) =>
  Effect.gen(function*() {
    const r = yield* call(method, path, { key, body })
    assert.strictEqual(r.status, status, `${method} ${path}: ${JSON.stringify(r.body)}`)
    return r.body
  })

const newChannel = (t: Tenant, body: unknown = email()) => ok(201, "POST", "/channels", t.keys.admin, body).pipe(Effect.map((b) => b.id as string))
const newRule = (t: Tenant, extra: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const channel = yield* newChannel(t)
    return (yield* ok(201, "POST", "/rules", t.keys.admin, rule([channel], extra))).id as string
  })
const newDelivery = (t: Tenant) =>
  Effect.gen(function*() {
    const channel = yield* newChannel(t)
    return (yield* ok(202, "POST", `/channels/${channel}/test`, t.keys.admin)).id as string
  })

/** Every row of an organization this group writes, as one string: equal before and after means nothing changed. */
const snapshot = (orgId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const [row] = yield* sql<{ all: string }>`
      SELECT jsonb_build_object(
        'channels', (SELECT jsonb_agg(to_jsonb(c) ORDER BY c.id) FROM channels c WHERE c.organization_id = ${orgId}::uuid),
        'rules', (SELECT jsonb_agg(to_jsonb(r) ORDER BY r.id) FROM notification_rules r WHERE r.organization_id = ${orgId}::uuid),
        'scope', (SELECT jsonb_agg(to_jsonb(i) ORDER BY i.rule_id, coalesce(i.stack_id, i.component_id, i.monitor_id))
                  FROM rule_scope_items i JOIN notification_rules r ON r.id = i.rule_id WHERE r.organization_id = ${orgId}::uuid),
        'rule_channels', (SELECT jsonb_agg(to_jsonb(i) ORDER BY i.rule_id, i.channel_id)
                  FROM rule_channels i JOIN notification_rules r ON r.id = i.rule_id WHERE r.organization_id = ${orgId}::uuid),
        'deliveries', (SELECT jsonb_agg(to_jsonb(d) ORDER BY d.id) FROM deliveries d WHERE d.organization_id = ${orgId}::uuid),
        'audit', (SELECT count(*) FROM audit_log a WHERE a.organization_id = ${orgId}::uuid)
      )::text AS all`
    return row!.all
  })

const countOf = (table: "channels" | "notification_rules" | "deliveries" | "audit_log", orgId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const [row] = yield* sql.unsafe<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE organization_id = $1`, [orgId])
    return row!.n
  })

/** An organization's stack, monitor and custom source component, written directly (other groups own their APIs). */
const scopeFixtures = (orgId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const suffix = Math.random().toString(36).slice(2, 10)
    const [stack] = yield* sql<{ id: string }>`
      INSERT INTO stacks (organization_id, name, slug) VALUES (${orgId}::uuid, 'Checkout', ${`checkout-${suffix}`}) RETURNING id`
    const [monitor] = yield* sql<{ id: string }>`
      INSERT INTO monitors (organization_id, name, url) VALUES (${orgId}::uuid, 'API', 'https://api.example.com/health') RETURNING id`
    const [source] = yield* sql<{ id: string }>`
      INSERT INTO sources (organization_id, key, name, kind) VALUES (${orgId}::uuid, ${`own-${suffix}`}, 'Own', 'manual') RETURNING id`
    const [component] = yield* sql<{ id: string }>`
      INSERT INTO components (source_id, external_id, name) VALUES (${source!.id}::uuid, 'db', 'Database') RETURNING id`
    return { stack: stack!.id, monitor: monitor!.id, component: component!.id }
  })

const catalogComponent = Effect.gen(function*() {
  const sql = yield* SqlClient
  const key = `cat-${Math.random().toString(36).slice(2, 10)}`
  const [source] = yield* sql<{ id: string }>`
    INSERT INTO sources (key, name, kind, status_page_url) VALUES (${key}, 'Catalog', 'catalog', 'https://status.example.com') RETURNING id`
  const [component] = yield* sql<{ id: string }>`
    INSERT INTO components (source_id, external_id, name) VALUES (${source!.id}::uuid, 'api', 'API') RETURNING id`
  return component!.id
})

interface Endpoint {
  readonly name: string
  readonly allowed: ReadonlyArray<Role>
  readonly status: number
  /** Makes what the request needs (with the admin key) and gives method, path and body. */
  readonly request: (t: Tenant) => Setup
}

type Setup = Effect.Effect<readonly [string, string, unknown?], never, ApiBase>
const fixed = (method: string, path: string, body?: unknown): Setup => Effect.succeed([method, path, body] as const)

describe("notifications API: channels, rules, test sends, notification center", () => {
  layer(apiServer(), { timeout: 120_000, excludeTestServices: true })("on PostgreSQL", (it) => {
    it.effect("every endpoint answers 401 without a key, with the error body", () =>
      Effect.gen(function*() {
        const id = "6f1c1d62-1111-4c4c-8888-111111111111"
        const requests: Array<[string, string, unknown?]> = [
          ["GET", "/channels"],
          ["POST", "/channels", email()],
          ["GET", `/channels/${id}`],
          ["PATCH", `/channels/${id}`, { name: "x" }],
          ["DELETE", `/channels/${id}`],
          ["POST", `/channels/${id}/test`],
          ["GET", "/rules"],
          ["POST", "/rules", rule([id])],
          ["GET", `/rules/${id}`],
          ["PATCH", `/rules/${id}`, { active: false }],
          ["DELETE", `/rules/${id}`],
          ["GET", "/deliveries"],
          ["GET", `/deliveries/${id}`]
        ]
        for (const [method, path, body] of requests) {
          const r = yield* call(method, path, { body })
          assert.strictEqual(r.status, 401, `${method} ${path}`)
          assert.strictEqual(r.body.code, "unauthorized")
        }
        const wrong = yield* call("GET", "/channels", { key: "sg_not-a-real-key" })
        assert.strictEqual(wrong.status, 401)
      }))

    it.effect("role matrix: everyone views; Admin and Member manage; Viewer gets 403 and changes nothing", () =>
      Effect.gen(function*() {
        const t = yield* newTenant("pro")
        const endpoints: ReadonlyArray<Endpoint> = [
          { name: "list channels", allowed: all, status: 200, request: () => fixed("GET", "/channels") },
          { name: "create channel", allowed: managers, status: 201, request: () => fixed("POST", "/channels", slack()) },
          { name: "get channel", allowed: all, status: 200, request: (t) => newChannel(t).pipe(Effect.map((id) => ["GET", `/channels/${id}`] as const)) },
          {
            name: "update channel",
            allowed: managers,
            status: 200,
            request: (t) => newChannel(t).pipe(Effect.map((id) => ["PATCH", `/channels/${id}`, { name: "Renamed" }] as const))
          },
          { name: "delete channel", allowed: managers, status: 204, request: (t) => newChannel(t).pipe(Effect.map((id) => ["DELETE", `/channels/${id}`] as const)) },
          { name: "test channel", allowed: managers, status: 202, request: (t) => newChannel(t).pipe(Effect.map((id) => ["POST", `/channels/${id}/test`] as const)) },
          { name: "list rules", allowed: all, status: 200, request: () => fixed("GET", "/rules") },
          { name: "create rule", allowed: managers, status: 201, request: (t) => newChannel(t).pipe(Effect.map((id) => ["POST", "/rules", rule([id])] as const)) },
          { name: "get rule", allowed: all, status: 200, request: (t) => newRule(t).pipe(Effect.map((id) => ["GET", `/rules/${id}`] as const)) },
          { name: "update rule", allowed: managers, status: 200, request: (t) => newRule(t).pipe(Effect.map((id) => ["PATCH", `/rules/${id}`, { active: false }] as const)) },
          { name: "delete rule", allowed: managers, status: 204, request: (t) => newRule(t).pipe(Effect.map((id) => ["DELETE", `/rules/${id}`] as const)) },
          { name: "list deliveries", allowed: all, status: 200, request: () => fixed("GET", "/deliveries") },
          { name: "get delivery", allowed: all, status: 200, request: (t) => newDelivery(t).pipe(Effect.map((id) => ["GET", `/deliveries/${id}`] as const)) }
        ]
        for (const endpoint of endpoints) {
          for (const role of all) {
            const [method, path, body] = yield* endpoint.request(t)
            const before = yield* snapshot(t.id)
            const r = yield* call(method, path, { key: t.keys[role], body })
            if (endpoint.allowed.includes(role)) {
              assert.strictEqual(r.status, endpoint.status, `${endpoint.name} as ${role}: ${JSON.stringify(r.body)}`)
            } else {
              assert.strictEqual(r.status, 403, `${endpoint.name} as ${role}`)
              assert.deepStrictEqual(r.body, { code: "forbidden", message: "the viewer role cannot manage notification rules and channels" })
              assert.strictEqual(yield* snapshot(t.id), before, `${endpoint.name} as ${role} changed something`)
            }
          }
        }
      }))

    it.effect("another organization's channels, rules and deliveries are 404 everywhere and never listed", () =>
      Effect.gen(function*() {
        const a = yield* newTenant("enterprise")
        const b = yield* newTenant("enterprise")
        const bChannel = yield* ok(201, "POST", "/channels", b.keys.admin, slack("B secret channel"))
        const bRule = yield* ok(201, "POST", "/rules", b.keys.admin, { ...rule([bChannel.id]), name: "B secret rule" })
        const bDelivery = yield* ok(202, "POST", `/channels/${bChannel.id}/test`, b.keys.admin)
        const bScope = yield* scopeFixtures(b.id)
        const aChannel = yield* newChannel(a)
        const aRule = yield* newRule(a)
        yield* ok(202, "POST", `/channels/${aChannel}/test`, a.keys.admin)
        const bBefore = yield* snapshot(b.id)
        const aBefore = yield* snapshot(a.id)

        const notFound: Array<[string, string, unknown?]> = [
          ["GET", `/channels/${bChannel.id}`],
          ["PATCH", `/channels/${bChannel.id}`, { name: "mine now" }],
          ["PATCH", `/channels/${bChannel.id}`, { settings: { channel: "#stolen" } }],
          ["DELETE", `/channels/${bChannel.id}`],
          ["POST", `/channels/${bChannel.id}/test`],
          ["GET", `/rules/${bRule.id}`],
          ["PATCH", `/rules/${bRule.id}`, { active: false }],
          ["DELETE", `/rules/${bRule.id}`],
          ["GET", `/deliveries/${bDelivery.id}`]
        ]
        for (const [method, path, body] of notFound) {
          for (const role of all) {
            const r = yield* call(method, path, { key: a.keys[role], body })
            // Viewers are refused before the record is looked up (a 403 reveals nothing either).
            const expected = method === "GET" || role !== "viewer" ? 404 : 403
            assert.strictEqual(r.status, expected, `${method} ${path} as ${role}`)
          }
        }
        // B's ids in A's rule are unknown ids, named by field.
        const references: Array<[Record<string, unknown>, string]> = [
          [rule([bChannel.id]), "channel_ids"],
          [rule([aChannel], { escalation: [{ delay_s: 60, channel_ids: [bChannel.id] }] }), "escalation.0.channel_ids"],
          [rule([aChannel], { scope: "specific", stack_ids: [bScope.stack] }), "stack_ids"],
          [rule([aChannel], { scope: "specific", monitor_ids: [bScope.monitor] }), "monitor_ids"],
          [rule([aChannel], { scope: "specific", component_ids: [bScope.component] }), "component_ids"]
        ]
        for (const [body, field] of references) {
          const r = yield* call("POST", "/rules", { key: a.keys.admin, body })
          assert.strictEqual(r.status, 404, field)
          assert.strictEqual(r.body.code, "not_found")
          assert.strictEqual(r.body.field, field)
        }
        const patched = yield* call("PATCH", `/rules/${aRule}`, { key: a.keys.admin, body: { channel_ids: [bChannel.id] } })
        assert.strictEqual(patched.status, 404)
        assert.strictEqual(patched.body.field, "channel_ids")

        for (const path of ["/channels", "/rules", "/deliveries"]) {
          const listed = yield* ok(200, "GET", path, a.keys.viewer)
          const text = JSON.stringify(listed)
          for (const secret of [bChannel.id, bRule.id, bDelivery.id, "B secret channel", "B secret rule"]) {
            assert.notInclude(text, secret, `${path} shows ${secret}`)
          }
          assert.isAbove(listed.data.length, 0, path)
        }
        assert.strictEqual(yield* snapshot(b.id), bBefore)
        assert.strictEqual(yield* snapshot(a.id), aBefore)
      }))

    it.effect("channels: bad bodies answer 400 naming the field and change nothing; markup and SQL are stored verbatim", () =>
      Effect.gen(function*() {
        const t = yield* newTenant("pro")
        const key = t.keys.admin
        const existing = yield* ok(201, "POST", "/channels", key, slack())
        const cases: Array<[unknown, string]> = [
          [{ name: "x", type: "fax", settings: {} }, "type"],
          [{ name: 42, type: "email", settings: { recipients: "a@example.com" } }, "name"],
          [{ name: "   ", type: "email", settings: { recipients: "a@example.com" } }, "name"],
          [{ type: "email", settings: { recipients: "a@example.com" } }, "name"],
          [{ name: "x", type: "email" }, "settings"],
          [{ name: "x", type: "email", settings: "a@example.com" }, "settings"],
          [{ name: "x", type: "email", settings: { recipients: "a@example.com" }, colour: "red" }, "colour"],
          [{ name: "x", type: "email", settings: { recipients: "a@example.com" }, enabled: "yes" }, "enabled"],
          [{ name: "x", type: "email", settings: { recipients: "a@example.com", colour: "red" } }, "settings.colour"],
          [{ name: "x", type: "email", settings: { recipients: "a@example.com, <script>@x" } }, "settings.recipients"],
          [{ name: "x", type: "email", settings: { recipients: 5 } }, "settings.recipients"],
          [{ name: "x", type: "slack", settings: { channel: "#ops", webhook_url: "hooks.slack.com/services/x" } }, "settings.webhook_url"],
          [{ name: "x", type: "slack", settings: { channel: "#ops", webhook_url: "javascript:alert(1)" } }, "settings.webhook_url"],
          [{ name: "x", type: "slack", settings: { channel: "#ops", webhook_url: "http://hooks.slack.com/x" } }, "settings.webhook_url"],
          [{ name: "x", type: "slack", settings: { webhook_url: slackUrl } }, "settings.channel"],
          [{ name: "x", type: "webhook", settings: { url: "http://" } }, "settings.url"],
          [{ name: "x", type: "webhook", settings: { url: "https://example.com", headers: { "Content-Length": "0" } } }, "settings.headers.Content-Length"],
          [{ name: "x", type: "sms", settings: { phone_numbers: ["+1 415 555"], account_sid: "AC1", auth_token: "t", from_number: "+14155550100" } }, "settings.phone_numbers.0"],
          [{ name: "x", type: "pagerduty", settings: { routing_key: "short" } }, "settings.routing_key"]
        ]
        const before = yield* snapshot(t.id)
        for (const [body, field] of cases) {
          const r = yield* call("POST", "/channels", { key, body })
          assert.strictEqual(r.status, 400, JSON.stringify(body))
          assert.strictEqual(r.body.code, "invalid_parameter")
          assert.strictEqual(r.body.field, field, JSON.stringify(body))
          assert.include(r.body.message, field)
        }
        const patches: Array<[unknown, string]> = [
          [{ type: "email" }, "type"],
          [{ name: "" }, "name"],
          [{ settings: { webhook_url: "http://hooks.slack.com/x" } }, "settings.webhook_url"],
          [{ settings: { channel: null } }, "settings.channel"],
          [{ settings: { recipients: "a@example.com" } }, "settings.recipients"]
        ]
        for (const [body, field] of patches) {
          const r = yield* call("PATCH", `/channels/${existing.id}`, { key, body })
          assert.strictEqual(r.status, 400, JSON.stringify(body))
          assert.strictEqual(r.body.field, field, JSON.stringify(body))
        }
        assert.strictEqual((yield* call("POST", "/channels", { key, rawBody: "{\"name\": " })).status, 400)
        const badId = yield* call("GET", "/channels/not-a-uuid", { key })
        assert.deepStrictEqual([badId.status, badId.body.field], [400, "id"])
        const badTestId = yield* call("POST", "/channels/1%27%20OR%201=1/test", { key })
        assert.deepStrictEqual([badTestId.status, badTestId.body.field], [400, "id"])
        const badLimit = yield* call("GET", "/channels?limit=0", { key })
        assert.deepStrictEqual([badLimit.status, badLimit.body.field], [400, "limit"])
        const badStatus = yield* call("GET", "/deliveries?status=lost", { key })
        assert.deepStrictEqual([badStatus.status, badStatus.body.field], [400, "status"])
        const badCursor = yield* call("GET", "/deliveries?cursor=bm9wZQ", { key })
        assert.deepStrictEqual([badCursor.status, badCursor.body.field], [400, "cursor"])
        const huge = yield* call("POST", "/channels", { key, body: { name: "x", type: "email", settings: { recipients: "a@example.com", pad: "x".repeat(2 * 1024 * 1024) } } })
        assert.deepStrictEqual([huge.status, huge.body.code], [413, "payload_too_large"])
        assert.strictEqual(yield* snapshot(t.id), before)

        const markup = "<script>alert(1)</script>'; DROP TABLE channels;--"
        const created = yield* ok(201, "POST", "/channels", key, {
          name: markup,
          type: "slack",
          settings: { channel: "#ops'\"; DELETE FROM rules;--<b>", webhook_url: slackUrl, mention_users: ["<@U1>", "' OR 1=1 --"] }
        })
        assert.strictEqual(created.name, markup)
        const read = yield* ok(200, "GET", `/channels/${created.id}`, t.keys.viewer)
        assert.strictEqual(read.name, markup)
        assert.strictEqual(read.settings.channel, "#ops'\"; DELETE FROM rules;--<b>")
        assert.deepStrictEqual(read.settings.mention_users, ["<@U1>", "' OR 1=1 --"])
        assert.strictEqual(yield* countOf("channels", t.id), 2)
      }))

    it.effect("rules: bad bodies answer 400 naming the field (nested ones by path) and change nothing", () =>
      Effect.gen(function*() {
        const t = yield* newTenant("enterprise")
        const key = t.keys.admin
        const channel = yield* newChannel(t)
        const existing = yield* ok(201, "POST", "/rules", key, rule([channel]))
        const cases: Array<[unknown, string]> = [
          [{ triggers: ["component.critical"], channel_ids: [channel] }, "name"],
          [{ ...rule([channel]), name: ["x"] }, "name"],
          [{ ...rule([channel]), triggers: "component.critical" }, "triggers"],
          [{ ...rule([channel]), triggers: [] }, "triggers"],
          [{ ...rule([channel]), triggers: ["component.exploded"] }, "triggers.0"],
          [{ ...rule([channel]), channel_ids: ["not-a-uuid"] }, "channel_ids.0"],
          [{ ...rule([channel]), channel_ids: [] }, "channel_ids"],
          [{ ...rule([channel]), priority: 1 }, "priority"],
          [{ ...rule([channel]), active: "yes" }, "active"],
          [{ ...rule([channel]), cooldown_s: "900" }, "cooldown_s"],
          [{ ...rule([channel]), cooldown_s: 1.5 }, "cooldown_s"],
          [{ ...rule([channel]), scope: "specific" }, "scope"],
          [{ ...rule([channel]), stack_ids: [channel] }, "stack_ids"],
          [{ ...rule([channel]), alert_levels: ["fatal"] }, "alert_levels.0"],
          [{ ...rule([channel]), schedule: "always" }, "schedule"],
          [{ ...rule([channel]), schedule: { timezone: "Mars/Olympus_Mons" } }, "schedule.timezone"],
          [{ ...rule([channel]), schedule: { timezone: "UTC", start: "25:00" } }, "schedule.start"],
          [{ ...rule([channel]), schedule: { timezone: "UTC", days: ["mon", "someday"] } }, "schedule.days.1"],
          [{ ...rule([channel]), schedule: { timezone: "UTC", holidays: ["25/12/2026"] } }, "schedule.holidays.0"],
          [{ ...rule([channel]), escalation: [{ delay_s: "soon", channel_ids: [channel] }] }, "escalation.0.delay_s"],
          [{ ...rule([channel]), template: { body: "{component_name} is {mood}" } }, "template.body"],
          [{ ...rule([channel]), template: { body: "<b>{status}</b>", footer: "x" } }, "template.footer"]
        ]
        const before = yield* snapshot(t.id)
        for (const [body, field] of cases) {
          const r = yield* call("POST", "/rules", { key, body })
          assert.strictEqual(r.status, 400, JSON.stringify(body))
          assert.strictEqual(r.body.code, "invalid_parameter")
          assert.strictEqual(r.body.field, field, JSON.stringify(body))
        }
        const placeholder = yield* call("POST", "/rules", { key, body: { ...rule([channel]), template: { body: "{component_name} is {mood}" } } })
        assert.strictEqual(
          placeholder.body.message,
          "template.body uses unknown placeholder {mood}; known: {status_emoji} {component_name} {status} {stack_name} " +
            "{previous_status} {current_status} {duration} {incident_title} {incident_update_count} {stack_url}"
        )
        const patches: Array<[unknown, string]> = [
          [{ triggers: [] }, "triggers"],
          [{ channel_ids: [] }, "channel_ids"],
          [{ scope: "specific" }, "scope"],
          [{ schedule: { timezone: "Nowhere/Town" } }, "schedule.timezone"],
          [{ template: { body: "{nope}" } }, "template.body"],
          [{ id: existing.id }, "id"]
        ]
        for (const [body, field] of patches) {
          const r = yield* call("PATCH", `/rules/${existing.id}`, { key, body })
          assert.strictEqual(r.status, 400, JSON.stringify(body))
          assert.strictEqual(r.body.field, field, JSON.stringify(body))
        }
        assert.strictEqual(yield* snapshot(t.id), before)

        const markup = "<img src=x onerror=alert(1)>'; DROP TABLE notification_rules;--"
        const created = yield* ok(201, "POST", "/rules", key, {
          ...rule([channel]),
          name: markup,
          template: { subject: "<b>{component_name}</b> & '{status}'", body: "\"; DELETE FROM channels; -- {stack_url}" }
        })
        const read = yield* ok(200, "GET", `/rules/${created.id}`, t.keys.viewer)
        assert.strictEqual(read.name, markup)
        assert.deepStrictEqual(read.template, { subject: "<b>{component_name}</b> & '{status}'", body: "\"; DELETE FROM channels; -- {stack_url}" })
      }))

    it.effect("Free plan: e-mail channels only (402 naming type), 2 channels per rule, the fourth rule refused; Pro accepts", () =>
      Effect.gen(function*() {
        const free = yield* newTenant("free")
        const key = free.keys.admin
        for (const body of [slack(), { name: "Hook", type: "webhook", settings: { url: "https://example.com/in" } }]) {
          const before = yield* snapshot(free.id)
          const r = yield* call("POST", "/channels", { key, body })
          assert.strictEqual(r.status, 402)
          assert.strictEqual(r.body.code, "plan_limit")
          assert.strictEqual(r.body.field, "type")
          assert.strictEqual(r.body.message, `the Free plan allows email channels only, not ${body.type}`)
          assert.strictEqual(yield* snapshot(free.id), before)
        }
        const c1 = yield* newChannel(free, email("one"))
        const c2 = yield* newChannel(free, email("two"))
        const c3 = yield* newChannel(free, email("three"))

        const before = yield* snapshot(free.id)
        const tooMany = yield* call("POST", "/rules", { key, body: rule([c1, c2, c3]) })
        assert.strictEqual(tooMany.status, 402)
        assert.deepStrictEqual(tooMany.body, {
          code: "plan_limit",
          message: "the Free plan allows 2 channels per rule; this rule has 3",
          field: "max_channels_per_rule"
        })
        assert.strictEqual(yield* snapshot(free.id), before)

        const first = yield* ok(201, "POST", "/rules", key, rule([c1, c2]))
        yield* ok(201, "POST", "/rules", key, rule([c2, c3]))
        yield* ok(201, "POST", "/rules", key, rule([c3]))
        const patchTooMany = yield* call("PATCH", `/rules/${first.id}`, { key, body: { channel_ids: [c1, c2, c3] } })
        assert.deepStrictEqual([patchTooMany.status, patchTooMany.body.field], [402, "max_channels_per_rule"])
        const full = yield* snapshot(free.id)
        const fourth = yield* call("POST", "/rules", { key: free.keys.member, body: rule([c1]) })
        assert.strictEqual(fourth.status, 402)
        assert.deepStrictEqual(fourth.body, {
          code: "plan_limit",
          message: "the Free plan allows 3 notification rules; this organization has 3",
          field: "max_rules"
        })
        assert.strictEqual(yield* snapshot(free.id), full)
        assert.strictEqual(yield* countOf("notification_rules", free.id), 3)

        // The same on Pro is accepted: other channel types, three channels on a rule, a fourth rule.
        const pro = yield* newTenant("pro")
        const s = yield* newChannel(pro, slack())
        const p1 = yield* newChannel(pro)
        const p2 = yield* newChannel(pro)
        for (let i = 0; i < 3; i++) yield* ok(201, "POST", "/rules", pro.keys.admin, rule([p1]))
        yield* ok(201, "POST", "/rules", pro.keys.member, rule([s, p1, p2]))
        assert.strictEqual(yield* countOf("notification_rules", pro.id), 4)
      }))

    it.effect("escalation and custom templates are Enterprise features: 402 naming the feature on Pro, accepted on Enterprise", () =>
      Effect.gen(function*() {
        const pro = yield* newTenant("pro")
        const channel = yield* newChannel(pro)
        const existing = yield* ok(201, "POST", "/rules", pro.keys.admin, rule([channel]))
        const before = yield* snapshot(pro.id)
        const escalation = { escalation: [{ delay_s: 300, channel_ids: [channel] }] }
        const template = { template: { subject: "{status_emoji} {component_name}", body: "{component_name} is {current_status} ({duration})" } }
        for (const [extra, field] of [[escalation, "escalation"], [template, "custom_templates"]] as const) {
          const created = yield* call("POST", "/rules", { key: pro.keys.admin, body: rule([channel], extra) })
          assert.deepStrictEqual([created.status, created.body.code, created.body.field], [402, "plan_limit", field])
          assert.include(created.body.message, "Enterprise feature")
          const patched = yield* call("PATCH", `/rules/${existing.id}`, { key: pro.keys.admin, body: extra })
          assert.deepStrictEqual([patched.status, patched.body.field], [402, field])
        }
        assert.strictEqual(yield* snapshot(pro.id), before)

        const ent = yield* newTenant("enterprise")
        const ec = yield* newChannel(ent)
        const created = yield* ok(201, "POST", "/rules", ent.keys.member, rule([ec], { escalation: [{ delay_s: 300, channel_ids: [ec] }], ...template }))
        assert.deepStrictEqual(created.escalation, [{ delay_s: 300, channel_ids: [ec] }])
        assert.deepStrictEqual(created.template, template.template)

        // After a downgrade the rule keeps them, can be renamed, and can drop them; it cannot add them again.
        yield* operatorSetsPlan(ent.slug, "pro")
        const renamed = yield* ok(200, "PATCH", `/rules/${created.id}`, ent.keys.admin, { name: "Renamed" })
        assert.deepStrictEqual(renamed.escalation, created.escalation)
        const dropped = yield* ok(200, "PATCH", `/rules/${created.id}`, ent.keys.admin, { escalation: null, template: null })
        assert.deepStrictEqual([dropped.escalation, dropped.template], [null, null])
        const again = yield* call("PATCH", `/rules/${created.id}`, { key: ent.keys.admin, body: { escalation: created.escalation } })
        assert.deepStrictEqual([again.status, again.body.field], [402, "escalation"])
      }))

    it.effect("after a downgrade to Free, a chat channel can be renamed or disabled but not tested, changed or used", () =>
      Effect.gen(function*() {
        const t = yield* newTenant("pro")
        const key = t.keys.admin
        const chat = yield* newChannel(t, slack())
        const mail = yield* newChannel(t)
        yield* operatorSetsPlan(t.slug, "free")
        const before = yield* snapshot(t.id)
        const refused: Array<[string, string, unknown?]> = [
          ["POST", `/channels/${chat}/test`],
          ["PATCH", `/channels/${chat}`, { settings: { channel: "#other" } }],
          ["POST", "/rules", rule([mail, chat])]
        ]
        for (const [method, path, body] of refused) {
          const r = yield* call(method, path, { key, body })
          assert.strictEqual(r.status, 402, `${method} ${path}`)
        }
        assert.strictEqual((yield* call("POST", "/rules", { key, body: rule([mail, chat]) })).body.field, "channel_ids")
        assert.strictEqual(yield* snapshot(t.id), before)
        const disabled = yield* ok(200, "PATCH", `/channels/${chat}`, key, { name: "Old chat", enabled: false })
        assert.deepStrictEqual([disabled.name, disabled.enabled], ["Old chat", false])
        assert.strictEqual((yield* call("PATCH", `/channels/${chat}`, { key, body: { enabled: true } })).status, 402)
      }))

    it.effect("secrets are sealed, never returned, kept when not given, replaced when given; a webhook's signing secret is shown once", () =>
      Effect.gen(function*() {
        const t = yield* newTenant("pro")
        const key = t.keys.admin
        const sql = yield* SqlClient
        const box = yield* SecretBox
        const stored = (id: string) =>
          Effect.gen(function*() {
            const [row] = yield* sql<{ settings: Record<string, unknown>; secrets: Uint8Array | null; raw: string }>`
              SELECT settings, secrets, settings::text || coalesce(encode(secrets, 'escape'), '') AS raw FROM channels WHERE id = ${id}::uuid`
            return { settings: row!.settings, raw: row!.raw, secrets: JSON.parse(yield* box.open(row!.secrets!, secretBinding("channel secrets", t.id, id))) as Record<string, unknown> }
          })

        const chat = yield* ok(201, "POST", "/channels", key, slack())
        assert.deepStrictEqual(chat.settings, {
          channel: "#ops",
          webhook_url: "https://hooks.slack.com/…/uvwx",
          mention_users: [],
          thread_replies: false,
          channel_mentions: "none"
        })
        const first = yield* stored(chat.id)
        assert.deepStrictEqual(first.secrets, { webhook_url: slackUrl })
        assert.notInclude(first.raw, slackUrl)

        // A read-back record sent unchanged keeps the secret; other settings change; a new URL replaces it.
        const echoed = yield* ok(200, "PATCH", `/channels/${chat.id}`, key, { settings: { ...chat.settings, thread_replies: true } })
        assert.strictEqual(echoed.settings.thread_replies, true)
        assert.deepStrictEqual((yield* stored(chat.id)).secrets, { webhook_url: slackUrl })
        const newUrl = "https://hooks.slack.com/services/T1111/B1111/zyxwvutsrqponmlkjihgfedc"
        const replaced = yield* ok(200, "PATCH", `/channels/${chat.id}`, key, { settings: { webhook_url: newUrl } })
        assert.strictEqual(replaced.settings.webhook_url, "https://hooks.slack.com/…/fedc")
        assert.deepStrictEqual((yield* stored(chat.id)).secrets, { webhook_url: newUrl })

        const hook = yield* ok(201, "POST", "/channels", key, {
          name: "Deploy hook",
          type: "webhook",
          settings: { url: "https://example.com/in?team=ops", headers: { "X-Api-Key": "header-secret-value" } }
        })
        assert.match(hook.signing_secret, /^whsec_[A-Za-z0-9+/]{43}=$/, "a Standard Webhooks secret: 32 bytes, base64")
        assert.deepStrictEqual(hook.settings, {
          url: "https://example.com/in?team=ops",
          method: "POST",
          headers: { "X-Api-Key": "…" },
          signing_secret: `…${hook.signing_secret.slice(-4)}`
        })
        const hookStored = yield* stored(hook.id)
        assert.deepStrictEqual(hookStored.secrets, { headers: { "X-Api-Key": "header-secret-value" }, signing_secret: hook.signing_secret })
        const got = yield* ok(200, "GET", `/channels/${hook.id}`, t.keys.viewer)
        assert.notProperty(got, "signing_secret")
        const methodOnly = yield* ok(200, "PATCH", `/channels/${hook.id}`, key, { settings: { method: "PUT", headers: { "X-Api-Key": "…", "X-Team": "ops" } } })
        assert.notProperty(methodOnly, "signing_secret")
        assert.deepStrictEqual((yield* stored(hook.id)).secrets, {
          headers: { "X-Api-Key": "header-secret-value", "X-Team": "ops" },
          signing_secret: hook.signing_secret
        })
        // null asks for a new signing secret, shown once again.
        const rotated = yield* ok(200, "PATCH", `/channels/${hook.id}`, key, { settings: { signing_secret: null } })
        assert.match(rotated.signing_secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
        assert.notStrictEqual(rotated.signing_secret, hook.signing_secret)
        assert.strictEqual((yield* stored(hook.id)).secrets["signing_secret"], rotated.signing_secret)

        const sms = yield* ok(201, "POST", "/channels", key, {
          name: "On-call SMS",
          type: "sms",
          settings: { phone_numbers: ["+14155550100"], account_sid: `AC${"ab".repeat(16)}`, auth_token: "twilio-auth-token-0001", from_number: "+14155550199" }
        })
        assert.strictEqual(sms.settings.auth_token, "…0001")
        const pd = yield* ok(201, "POST", "/channels", key, { name: "Pager", type: "pagerduty", settings: { routing_key: "R0UTINGKEY0123456789abcdefABCDEF" } })
        assert.strictEqual(pd.settings.routing_key, "…CDEF")

        // No secret in any response, list or audit entry.
        const everything = JSON.stringify([
          yield* ok(200, "GET", "/channels", t.keys.viewer),
          yield* ok(200, "GET", "/audit-log", key)
        ])
        for (const secret of [slackUrl, newUrl, "header-secret-value", hook.signing_secret, rotated.signing_secret, "twilio-auth-token-0001", "R0UTINGKEY0123456789abcdefABCDEF"]) {
          assert.notInclude(everything, secret)
        }
      }).pipe(Effect.provide(secretBox)))

    it.effect("test notifications queue a pending delivery with the webhook payload; the notification center lists the outbox newest first", () =>
      Effect.gen(function*() {
        const t = yield* newTenant("pro")
        const key = t.keys.member
        const sql = yield* SqlClient
        const chat = yield* newChannel(t, slack("Chat"))
        const mail = yield* newChannel(t, email("Mail"))
        const started = Date.now()
        const d1 = yield* ok(202, "POST", `/channels/${chat}/test`, key)
        const d2 = yield* ok(202, "POST", `/channels/${chat}/test`, key)
        const d3 = yield* ok(202, "POST", `/channels/${mail}/test`, key)
        assert.deepStrictEqual({ ...d1, id: "", created_at: "" }, {
          id: "",
          status: "pending",
          attempts: 0,
          last_error: null,
          channel: { id: chat, type: "slack", name: "Chat" },
          rule: null,
          event_type: "test",
          created_at: "",
          delivered_at: null
        })
        assert.isAtLeast(Date.parse(d1.created_at), started - 1000)

        const rows = yield* sql<{ id: string; idempotency_key: string; payload: NotificationPayload; rule_id: string | null; event_id: string | null; status: string }>`
          SELECT id, idempotency_key, payload, rule_id, event_id, status FROM deliveries WHERE organization_id = ${t.id}::uuid ORDER BY created_at`
        assert.deepStrictEqual(rows.map((r) => r.id), [d1.id, d2.id, d3.id])
        assert.strictEqual(new Set(rows.map((r) => r.idempotency_key)).size, 3)
        const payload = rows[0]!.payload
        assert.deepStrictEqual(Object.keys(payload).toSorted(), ["component", "event", "incident", "stack", "timestamp"])
        assert.strictEqual(payload["event"], "test")
        assert.deepStrictEqual(payload["stack"], { id: "00000000-0000-0000-0000-000000000000", name: "Example stack", slug: "example-stack" })
        assert.deepStrictEqual(payload["component"], {
          id: "00000000-0000-0000-0000-000000000000",
          name: "Example component",
          previous_status: "operational",
          current_status: "degraded"
        })
        assert.deepStrictEqual(Object.keys(payload["incident"]).toSorted(), ["created_at", "id", "resolved_at"])
        assert.isNull(payload["incident"]["resolved_at"])
        assert.match(payload["timestamp"], /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
        assert.deepStrictEqual(rows.map((r) => [r.rule_id, r.event_id, r.status]), [[null, null, "pending"], [null, null, "pending"], [null, null, "pending"]])

        const listed = yield* ok(200, "GET", "/deliveries", t.keys.viewer)
        assert.deepStrictEqual(listed.data.map((d: { id: string }) => d.id), [d3.id, d2.id, d1.id])
        const page1 = yield* ok(200, "GET", "/deliveries?limit=2", t.keys.viewer)
        assert.deepStrictEqual(page1.data.map((d: { id: string }) => d.id), [d3.id, d2.id])
        const page2 = yield* ok(200, "GET", `/deliveries?limit=2&cursor=${page1.next_cursor}`, t.keys.viewer)
        assert.deepStrictEqual(page2.data.map((d: { id: string }) => d.id), [d1.id])
        assert.isNull(page2.next_cursor)

        // What the notifier (#7) writes shows up: delivered, failed with its error, a rule's delivery.
        yield* sql`UPDATE deliveries SET status = 'delivered', attempts = 1, delivered_at = now() WHERE id = ${d1.id}::uuid`
        yield* sql`UPDATE deliveries SET status = 'failed', attempts = 5, last_error = 'HTTP 500 from hooks.slack.com' WHERE id = ${d2.id}::uuid`
        const ruleId = (yield* ok(201, "POST", "/rules", key, { ...rule([mail]), name: "Mail rule" })).id
        const [fromRule] = yield* sql<{ id: string }>`
          INSERT INTO deliveries (organization_id, rule_id, channel_id, event_id, event_type, idempotency_key, payload)
          VALUES (${t.id}::uuid, ${ruleId}::uuid, ${mail}::uuid, 'evt-1', 'component.critical', ${`evt-1:${mail}`}, '{}'::jsonb) RETURNING id`
        const delivered = yield* ok(200, "GET", "/deliveries?status=delivered", t.keys.viewer)
        assert.deepStrictEqual(delivered.data.map((d: { id: string }) => d.id), [d1.id])
        assert.isString(delivered.data[0].delivered_at)
        const failed = yield* ok(200, "GET", "/deliveries?status=failed", t.keys.viewer)
        assert.deepStrictEqual(failed.data.map((d: { id: string; attempts: number; last_error: string }) => [d.id, d.attempts, d.last_error]), [
          [d2.id, 5, "HTTP 500 from hooks.slack.com"]
        ])
        const pending = yield* ok(200, "GET", "/deliveries?status=pending", t.keys.viewer)
        assert.deepStrictEqual(pending.data.map((d: { id: string }) => d.id), [fromRule!.id, d3.id])
        const one = yield* ok(200, "GET", `/deliveries/${fromRule!.id}`, t.keys.viewer)
        assert.deepStrictEqual([one.rule, one.event_type, one.channel], [{ id: ruleId, name: "Mail rule" }, "component.critical", { id: mail, type: "email", name: "Mail" }])
        assert.deepStrictEqual((yield* ok(200, "GET", "/deliveries?status=cancelled", t.keys.viewer)).data, [])

        // A disabled channel is not tested: 409, nothing queued.
        yield* ok(200, "PATCH", `/channels/${chat}`, key, { enabled: false })
        const before = yield* countOf("deliveries", t.id)
        const refused = yield* call("POST", `/channels/${chat}/test`, { key })
        assert.deepStrictEqual(refused.body, { code: "conflict", message: "the channel is disabled; enable it to send a test notification", field: "enabled" })
        assert.strictEqual(refused.status, 409)
        assert.strictEqual(yield* countOf("deliveries", t.id), before)
      }))

    it.effect("rules: scope items visible to the organization, both level vocabularies, PATCH semantics, deleted channels leave rules", () =>
      Effect.gen(function*() {
        const t = yield* newTenant("enterprise")
        const key = t.keys.admin
        const sql = yield* SqlClient
        const own = yield* scopeFixtures(t.id)
        const catalog = yield* catalogComponent
        const c1 = yield* newChannel(t, slack("one"))
        const c2 = yield* newChannel(t, email("two"))
        const created = yield* ok(201, "POST", "/rules", key, {
          name: "Checkout alerts",
          active: false,
          triggers: ["component.critical", "incident.created", "monitor.ssl_expiring"],
          scope: "specific",
          stack_ids: [own.stack],
          component_ids: [catalog, own.component],
          monitor_ids: [own.monitor],
          alert_levels: ["Alert", "Warning"],
          schedule: { timezone: "America/New_York", days: ["mon", "tue", "wed", "thu", "fri"], start: "08:00", end: "18:30", holidays: ["2026-11-26"], critical_always: true },
          group_window_s: 120,
          cooldown_s: 600,
          escalation: [{ delay_s: 300, channel_ids: [c2] }, { delay_s: 900, channel_ids: [c1, c2] }],
          template: { body: "{status_emoji} {component_name}: {previous_status} → {current_status}" },
          channel_ids: [c2, c1]
        })
        assert.deepStrictEqual({ ...created, id: "", created_at: "", updated_at: "" }, {
          id: "",
          name: "Checkout alerts",
          active: false,
          triggers: ["component.critical", "incident.created", "monitor.ssl_expiring"],
          scope: "specific",
          stack_ids: [own.stack],
          component_ids: [catalog, own.component].toSorted(),
          monitor_ids: [own.monitor],
          alert_levels: ["critical", "degraded"],
          schedule: { timezone: "America/New_York", days: ["mon", "tue", "wed", "thu", "fri"], start: "08:00", end: "18:30", holidays: ["2026-11-26"], critical_always: true },
          group_window_s: 120,
          cooldown_s: 600,
          crowd_min_confidence: 70,
          escalation: [{ delay_s: 300, channel_ids: [c2] }, { delay_s: 900, channel_ids: [c1, c2] }],
          template: { body: "{status_emoji} {component_name}: {previous_status} → {current_status}" },
          channel_ids: [c1, c2].toSorted(),
          created_at: "",
          updated_at: ""
        })
        assert.deepStrictEqual(yield* ok(200, "GET", `/rules/${created.id}`, t.keys.viewer), created)
        const [items] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM rule_scope_items WHERE rule_id = ${created.id}::uuid`
        assert.strictEqual(items!.n, 4)

        // An empty PATCH changes nothing and records nothing.
        const audits = yield* countOf("audit_log", t.id)
        assert.deepStrictEqual(yield* ok(200, "PATCH", `/rules/${created.id}`, key, {}), created)
        assert.deepStrictEqual(yield* ok(200, "PATCH", `/rules/${created.id}`, key, { channel_ids: [c2, c1] }), created)
        assert.strictEqual(yield* countOf("audit_log", t.id), audits)

        // Widening to all drops the ids.
        const widened = yield* ok(200, "PATCH", `/rules/${created.id}`, key, { scope: "all", alert_levels: ["info"] })
        assert.deepStrictEqual([widened.scope, widened.stack_ids, widened.component_ids, widened.monitor_ids, widened.alert_levels], ["all", [], [], [], ["info"]])
        const [left] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM rule_scope_items WHERE rule_id = ${created.id}::uuid`
        assert.strictEqual(left!.n, 0)
        const narrowed = yield* ok(200, "PATCH", `/rules/${created.id}`, key, { scope: "specific", monitor_ids: [own.monitor] })
        assert.deepStrictEqual([narrowed.scope, narrowed.monitor_ids], ["specific", [own.monitor]])

        // Deleting a channel takes it out of the rule's channels and escalation steps.
        const deleted = yield* call("DELETE", `/channels/${c2}`, { key })
        assert.deepStrictEqual([deleted.status, deleted.body], [204, null])
        const after = yield* ok(200, "GET", `/rules/${created.id}`, key)
        assert.deepStrictEqual(after.channel_ids, [c1])
        assert.deepStrictEqual(after.escalation, [{ delay_s: 900, channel_ids: [c1] }])
        yield* ok(204, "DELETE", `/channels/${c1}`, key)
        const orphan = yield* ok(200, "GET", `/rules/${created.id}`, key)
        assert.deepStrictEqual([orphan.channel_ids, orphan.escalation], [[], null])
        // It can still be paused or renamed; giving channels again needs at least one.
        assert.strictEqual((yield* ok(200, "PATCH", `/rules/${created.id}`, key, { name: "No channels left" })).name, "No channels left")
        assert.strictEqual((yield* call("PATCH", `/rules/${created.id}`, { key, body: { channel_ids: [] } })).body.field, "channel_ids")
        assert.strictEqual((yield* call("GET", `/channels/${c1}`, { key })).status, 404)
      }))

    it.effect("audit: one entry per change, with the entity and before/after; refused and no-op requests leave none", () =>
      Effect.gen(function*() {
        const t = yield* newTenant("enterprise")
        const key = t.keys.admin
        const chat = yield* ok(201, "POST", "/channels", key, slack("Chat"))
        const renamed = yield* ok(200, "PATCH", `/channels/${chat.id}`, key, { name: "Team chat", settings: { thread_replies: true } })
        yield* ok(200, "PATCH", `/channels/${chat.id}`, key, { name: "Team chat" })
        const sent = yield* ok(202, "POST", `/channels/${chat.id}/test`, key)
        const created = yield* ok(201, "POST", "/rules", key, rule([chat.id]))
        const updated = yield* ok(200, "PATCH", `/rules/${created.id}`, key, { active: false })
        assert.strictEqual((yield* call("PATCH", `/rules/${created.id}`, { key, body: { triggers: [] } })).status, 400)
        assert.strictEqual((yield* call("POST", "/channels", { key: t.keys.viewer, body: email() })).status, 403)
        yield* ok(204, "DELETE", `/rules/${created.id}`, key)
        const mail = yield* ok(201, "POST", "/channels", key, email())
        yield* ok(204, "DELETE", `/channels/${mail.id}`, key)

        const log = yield* ok(200, "GET", "/audit-log", key)
        type Entry = { action: string; entity_type: string; entity_id: string; before: unknown; after: unknown; actor: { kind: string }; ip: string }
        const entries = log.data as Array<Entry>
        assert.deepStrictEqual(entries.map((e) => [e.action, e.entity_type, e.entity_id]), [
          ["channel.created", "channel", chat.id],
          ["channel.updated", "channel", chat.id],
          ["channel.test_sent", "channel", chat.id],
          ["rule.created", "notification_rule", created.id],
          ["rule.updated", "notification_rule", created.id],
          ["rule.deleted", "notification_rule", created.id],
          ["channel.created", "channel", mail.id],
          ["channel.deleted", "channel", mail.id]
        ])
        const [chCreated, chUpdated, tested, rCreated, rUpdated, rDeleted, mCreated, mDeleted] = entries as [Entry, Entry, Entry, Entry, Entry, Entry, Entry, Entry]
        assert.deepStrictEqual([chCreated.before, chCreated.after], [null, chat])
        assert.deepStrictEqual([chUpdated.before, chUpdated.after], [chat, renamed])
        assert.deepStrictEqual([tested.before, tested.after], [null, { delivery_id: sent.id, event_type: "test" }])
        assert.deepStrictEqual([rCreated.before, rCreated.after], [null, created])
        assert.deepStrictEqual([rUpdated.before, rUpdated.after], [created, updated])
        assert.deepStrictEqual([rDeleted.before, rDeleted.after], [updated, null])
        assert.deepStrictEqual([mCreated.before, mCreated.after], [null, mail])
        assert.deepStrictEqual([mDeleted.before, mDeleted.after], [{ ...mail, used_by_rules: [] }, null])
        for (const e of entries) assert.deepStrictEqual([e.actor.kind, e.ip], ["api_key", "127.0.0.1"])
        assert.notInclude(JSON.stringify(entries), slackUrl)
      }))

    it.effect("the OpenAPI document describes every notifications endpoint and record", () =>
      Effect.gen(function*() {
        const doc = yield* call("GET", "/openapi.json")
        assert.strictEqual(doc.status, 200)
        const paths = doc.body.paths as Record<string, Record<string, unknown>>
        assert.deepStrictEqual(Object.keys(paths["/api/v1/channels"]!).toSorted(), ["get", "post"])
        assert.deepStrictEqual(Object.keys(paths["/api/v1/channels/{id}"]!).toSorted(), ["delete", "get", "patch"])
        assert.deepStrictEqual(Object.keys(paths["/api/v1/channels/{id}/test"]!), ["post"])
        assert.deepStrictEqual(Object.keys(paths["/api/v1/rules"]!).toSorted(), ["get", "post"])
        assert.deepStrictEqual(Object.keys(paths["/api/v1/rules/{id}"]!).toSorted(), ["delete", "get", "patch"])
        assert.deepStrictEqual(Object.keys(paths["/api/v1/deliveries"]!), ["get"])
        const schemas = Object.keys(doc.body.components.schemas)
        for (const name of ["Channel", "SlackChannel", "WebhookSettingsView", "Rule", "RuleScheduleView", "Delivery", "ChannelCreate", "RuleCreate"]) {
          assert.include(schemas, name)
        }
        assert.property((paths["/api/v1/channels/{id}/test"]!["post"] as { responses: object }).responses, "202")
        assert.property((paths["/api/v1/rules/{id}"]!["delete"] as { responses: object }).responses, "204")
      }))
  })
})
