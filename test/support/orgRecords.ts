import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { call, type Tenant } from "./api.ts"

const tag = () => Math.random().toString(36).slice(2, 10)

/** An instant `hours` from now, as the API takes it. */
export const hoursFromNow = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString()

/** A catalog source with `components` components (all operational), as the catalog loader would leave it. */
export const catalogSource = (components: number, status: "operational" | "degraded" = "operational") =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const key = `cat-${tag()}`
    const [source] = yield* sql<{ id: string }>`
      INSERT INTO sources (key, name, kind, status, status_page_url, enabled)
      VALUES (${key}, ${`Catalog ${key}`}, 'catalog', ${status}, 'https://status.example.com', true)
      RETURNING id`
    const ids: Array<string> = []
    for (let i = 0; i < components; i++) {
      const [c] = yield* sql<{ id: string }>`
        INSERT INTO components (source_id, external_id, name, status, position)
        VALUES (${source!.id}::uuid, ${`c${i}`}, ${`Component ${i} of ${key}`}, 'operational', ${i}) RETURNING id`
      ids.push(c!.id)
    }
    return { key, id: source!.id, components: ids }
  })

/** A user who is a member of the tenant's organization with `role` (written directly: sign-up is not under test here). */
export const memberOf = (tenant: Tenant, role: "admin" | "member" | "viewer" = "member") =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const [user] = yield* sql<{ id: string }>`
      INSERT INTO users (email, name) VALUES (${`user-${tag()}@example.com`}, 'Mo Member') RETURNING id`
    yield* sql`INSERT INTO memberships (organization_id, user_id, role) VALUES (${tenant.id}::uuid, ${user!.id}::uuid, ${role})`
    return user!.id
  })

/** An alert of the tenant's organization, as the notifier writes it. */
export const alertOf = (tenant: Tenant) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const [row] = yield* sql<{ id: string }>`
      INSERT INTO alerts (organization_id, trigger, subject, level, payload, message, short_code)
      VALUES (${tenant.id}::uuid, 'component.critical', ${`component:${crypto.randomUUID()}`}, 'critical', '{}'::jsonb,
        ${JSON.stringify({ title: `Alert ${tag()}` })}::jsonb, ${`sc${tag()}`})
      RETURNING id`
    return row!.id
  })

/** POSTs `body` as the tenant's Admin and returns the created record (asserting 201 or 202). */
export const created = (tenant: Tenant, path: string, body?: unknown) =>
  Effect.gen(function*() {
    const r = yield* call("POST", path, { key: tenant.keys.admin, ...(body === undefined ? {} : { body }) })
    assert.include([201, 202], r.status, `POST ${path}: ${JSON.stringify(r.body)}`)
    return r.body as { id: string; key?: string } & Record<string, unknown>
  })

/** Valid bodies, one of each record. */
export const bodies = {
  stack: () => ({ name: `Stack ${tag()}` }),
  reportSchedule: () => ({ name: `Weekly ${tag()}`, frequency: "weekly", recipients: ["board@example.com"] }),
  monitor: () => ({ name: `Monitor ${tag()}`, url: "http://127.0.0.1:9/health" }),
  customSource: () => ({ name: `Manual ${tag()}`, type: "manual", status: "operational" }),
  window: () => ({ title: `Upgrade ${tag()}`, starts_at: hoursFromNow(1), ends_at: hoursFromNow(2) }),
  channel: () => ({ name: `Mail ${tag()}`, type: "email", settings: { recipients: "ops@example.com" } }),
  rule: (channelId: string) => ({ name: `Rule ${tag()}`, triggers: ["component.critical"], channel_ids: [channelId] }),
  invitation: () => ({ email: `invitee-${tag()}@example.com`, role: "viewer" }),
  apiKey: () => ({ name: `Key ${tag()}`, role: "viewer" })
} as const

/** One record of every kind the organization API writes, created through the API (the organization must allow them). */
export const seedRecords = (tenant: Tenant) =>
  Effect.gen(function*() {
    const catalog = yield* catalogSource(3)
    const stack = yield* created(tenant, "/stacks", bodies.stack())
    const monitor = yield* created(tenant, "/monitors", bodies.monitor())
    const customSource = yield* created(tenant, "/custom-sources", bodies.customSource())
    const window = yield* created(tenant, "/maintenance-windows", bodies.window())
    const channel = yield* created(tenant, "/channels", bodies.channel())
    const rule = yield* created(tenant, "/rules", bodies.rule(channel.id))
    const reportSchedule = yield* created(tenant, "/report-schedules", bodies.reportSchedule())
    const member = yield* memberOf(tenant)
    return {
      catalog,
      stack: stack.id,
      monitor: monitor.id,
      customSource: customSource.key!,
      window: window.id,
      channel: channel.id,
      rule: rule.id,
      reportSchedule: reportSchedule.id,
      member
    }
  })

/**
 * A digest of everything the organization holds (records, settings, audit
 * entries), to show that a refused request changed nothing. API keys' last
 * use is left out: every request updates it.
 */
/**
 * What the poller writes on a monitor's row after each check (MonitorStore.saveChecks) and on a source's
 * (SourceStore: check times, snapshots, detection): observations, not records anyone saved, so the
 * digest leaves them out (a new monitor or source is checked at once, whenever a test posts next).
 */
const monitorObservations = [
  "state", "consecutive_failures", "ssl_notified_days", "last_changed_at", "last_checked_at", "last_error",
  "last_response_ms", "last_http_status", "tls_valid_to", "tls_issuer"
]
const sourceObservations = [
  "status", "last_checked_at", "last_error", "last_changed_at", "components_count", "incidents_count", "region_statuses",
  "has_history", "verified", "provider_type", "poll_url", "updated_at"
]

const textArray = (names: ReadonlyArray<string>) => `'{${names.join(",")}}'::text[]`

export const organizationDigest = (orgId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const [row] = yield* sql<{ digest: string }>`
      WITH o AS (SELECT ${orgId}::uuid AS id)
      SELECT md5(string_agg(x, '|' ORDER BY x)) AS digest FROM (
        SELECT 'organization' || to_jsonb(t)::text AS x FROM organizations t, o WHERE t.id = o.id
        UNION ALL SELECT 'stack' || to_jsonb(t)::text FROM stacks t, o WHERE t.organization_id = o.id
        UNION ALL SELECT 'item' || to_jsonb(i)::text FROM stack_items i JOIN stacks s ON s.id = i.stack_id, o WHERE s.organization_id = o.id
        UNION ALL SELECT 'monitor' || (to_jsonb(t) - ${sql.literal(textArray(monitorObservations))})::text FROM monitors t, o WHERE t.organization_id = o.id
        UNION ALL SELECT 'source' || (to_jsonb(t) - ${sql.literal(textArray(sourceObservations))})::text FROM sources t, o WHERE t.organization_id = o.id
        UNION ALL SELECT 'window' || to_jsonb(t)::text FROM maintenance_windows t, o WHERE t.organization_id = o.id
        UNION ALL SELECT 'channel' || to_jsonb(t)::text FROM channels t, o WHERE t.organization_id = o.id
        UNION ALL SELECT 'rule' || to_jsonb(t)::text FROM notification_rules t, o WHERE t.organization_id = o.id
        UNION ALL SELECT 'membership' || to_jsonb(t)::text FROM memberships t, o WHERE t.organization_id = o.id
        UNION ALL SELECT 'invitation' || to_jsonb(t)::text FROM invitations t, o WHERE t.organization_id = o.id
        UNION ALL SELECT 'api_key' || (to_jsonb(t) - 'last_used_at')::text FROM api_keys t, o WHERE t.organization_id = o.id
        UNION ALL SELECT 'delivery' || to_jsonb(t)::text FROM deliveries t, o WHERE t.organization_id = o.id
        UNION ALL SELECT 'alert' || to_jsonb(t)::text FROM alerts t, o WHERE t.organization_id = o.id
        UNION ALL SELECT 'tv_link' || to_jsonb(t)::text FROM tv_links t, o WHERE t.organization_id = o.id
        UNION ALL SELECT 'tv_link_stack' || to_jsonb(l)::text FROM tv_link_stacks l JOIN tv_links t ON t.id = l.tv_link_id, o WHERE t.organization_id = o.id
        UNION ALL SELECT 'calendar_feed' || to_jsonb(t)::text FROM calendar_feeds t, o WHERE t.organization_id = o.id
        UNION ALL SELECT 'report_schedule' || to_jsonb(t)::text FROM report_schedules t, o WHERE t.organization_id = o.id
        UNION ALL SELECT 'audit ' || count(*)::text FROM audit_log t, o WHERE t.organization_id = o.id
      ) rows`
    return row!.digest
  })

/**
 * A sent report of last week for `scheduleId`, with the figures of one stack, as the report worker
 * leaves it (the worker itself is tested in test/integration/reports.test.ts); its id.
 */
export const reportOf = (organizationId: string, scheduleId: string, stackId: string, stackName: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const to = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000)
    const from = new Date(to.getTime() - 7 * 86_400_000)
    const content = {
      organization: { name: "Test organization", slug: "test" },
      schedule: { id: scheduleId, name: "Weekly for the board", frequency: "weekly", time_zone: "UTC", sla_target: 99.9 },
      from: from.toISOString(),
      to: to.toISOString(),
      generated_at: to.toISOString(),
      stacks: [{
        id: stackId,
        name: stackName,
        uptime: 99.5,
        downtime_ms: 3_024_000,
        outage_count: 2,
        mttr_ms: 1_512_000,
        sla_met: false,
        allowed_downtime_ms: 604_800,
        outages: [{ start: new Date(from.getTime() + 3_600_000).toISOString(), end: new Date(from.getTime() + 5_112_000).toISOString(), duration_ms: 1_512_000 }],
        items: [{ kind: "component", name: "API", uptime: 99.5, downtime_ms: 3_024_000, outage_count: 2 }],
        incidents: { count: 1, mttr_ms: 3_600_000 }
      }],
      slowest_monitors: [{ id: "00000000-0000-4000-8000-000000000001", name: "Checkout", checks: 2016, mean_ms: 412, p95_ms: 980 }]
    }
    const [row] = yield* sql<{ id: string }>`
      INSERT INTO reports (schedule_id, organization_id, period_start, period_end, status, content, generated_at, sent_at, attempts)
      VALUES (${scheduleId}::uuid, ${organizationId}::uuid, ${from.toISOString()}::timestamptz, ${to.toISOString()}::timestamptz, 'sent',
        ${JSON.stringify(content)}::jsonb, now(), now(), 1)
      RETURNING id`
    return row!.id
  })
