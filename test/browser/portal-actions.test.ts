import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { createECDH, randomBytes } from "node:crypto"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { stackLimits } from "../../services/domain/api/Stacks.ts"
import type { Role } from "../../services/domain/Organization.ts"
import { type Permission, permissions } from "../../services/domain/Permissions.ts"
import { ApiKeys } from "../../services/orgs/ApiKeys.ts"
import { api } from "../support/alertWorld.ts"
import type { Tenant } from "../support/api.ts"
import { expectAccessible, launchBrowser, screenshot } from "../support/browser.ts"
import { password, people, type SettingsWorld, signIn, startSettingsWorld } from "../support/monitorsWorld.ts"
import { alertOf, bodies, catalogSource, memberOf, organizationDigest } from "../support/orgRecords.ts"
import { tearDown } from "../support/teardown.ts"

/**
 * Every action of the portal (each POST form of Portal II's pages, the
 * catalog's "Add to a stack", the alert's Acknowledge, the profile) against a
 * real `statusgrid start`, proving two acceptance lines of the issue:
 *
 * 1. The role matrix: each action posted as Viewer, Member and Admin (each
 *    signed in in Chromium, the form posted with the session's CSRF token, as
 *    a browser without JavaScript would) is refused with 403 exactly when
 *    `permissions` of services/domain/Permissions.ts, the API's own table,
 *    leaves the role out; a refused one changes nothing (`organizationDigest`).
 *    Rows name only the permission their service checks, never roles.
 * 2. Bad input: every field of every action missing, empty, 5,000 characters
 *    long and of the wrong kind, an unknown intent and an empty form: never a
 *    500 nor a stack trace, and a 400 saves nothing. Some bad values are then
 *    typed into the real forms: the field's message beside it, nothing saved.
 *
 * The poller's interval is a day (POLLER_INTERVAL_OVERRIDE_S) so that no
 * scheduled check rewrites a monitor between two digests, and the notifier
 * looks for due deliveries every 100 ms (a retried one is found by polling),
 * well within the 150 ms in which `quietDigest` waits for the organization to
 * settle.
 */

let world: SettingsWorld
let browser: Browser
let adminKey: string
let catalog: { readonly key: string; readonly components: ReadonlyArray<string> }

const roles = ["viewer", "member", "admin"] as const satisfies ReadonlyArray<Role>

interface Person {
  readonly context: BrowserContext
  readonly page: Page
  readonly csrf: string
}
const persons = new Map<Role, Person>()
const person = (role: Role) => persons.get(role)!

beforeAll(async () => {
  ;[world, browser] = await Promise.all([startSettingsWorld({ POLLER_INTERVAL_OVERRIDE_S: "86400", NOTIFIER_POLL_MS: "100" }), launchBrowser()])
  adminKey = await world.run(ApiKeys.use((k) => k.issue(world.org.id, "portal actions test", "admin")).pipe(Effect.provide(ApiKeys.layer)))
  catalog = await world.run(catalogSource(2))
  for (const role of roles) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await context.newPage()
    await signIn(page, world.server, people[role], settings("stacks"))
    persons.set(role, { context, page, csrf: (await page.locator("input[name=csrf]").first().getAttribute("value")) ?? "" })
  }
}, 180_000)

afterAll(async () => {
  await tearDown([
    ...[...persons.entries()].map(([role, p]) => [`close the ${role}'s browser context`, () => p.context.close()] as const),
    ["close the browser", () => browser?.close()]
  ])
  // Its own steps are each bounded and named (test/support/monitorsWorld.ts).
  await world?.close()
}, 300_000)

// ---------------------------------------------------------------------------------------------
// Posting forms, and what the organization holds

/** A form's fields; a list is a repeated field (ticked checkboxes). */
type Fields = Readonly<Record<string, string | ReadonlyArray<string>>>

const settings = (path: string) => `/settings/${world.org.slug}/${path}`
const unique = (what: string) => `${what} ${randomBytes(4).toString("hex")}`

/** POSTs `fields` as `role`'s browser session would (its CSRF token unless `csrf` is false), redirects not followed. */
const post = async (role: Role, path: string, fields: Fields, csrf = true) => {
  const body = new URLSearchParams(csrf ? [["csrf", person(role).csrf]] : [])
  for (const [name, value] of Object.entries(fields)) for (const v of typeof value === "string" ? [value] : value) body.append(name, v)
  const response = await person(role).context.request.post(`${world.server.url}${path}`, {
    data: body.toString(),
    headers: { origin: world.server.url, "content-type": "application/x-www-form-urlencoded" },
    maxRedirects: 0,
    failOnStatusCode: false
  })
  return { status: response.status(), body: await response.text() }
}

const digest = () => world.run(organizationDigest(world.org.id))

/** The digest once the server has finished what earlier actions started (a retried delivery is sent in the background). */
const quietDigest = async () => {
  let last = await digest()
  for (let i = 0; i < 40; i++) {
    await new Promise((resolve) => setTimeout(resolve, 150))
    const now = await digest()
    if (now === last) return now
    last = now
  }
  throw new Error("the organization kept changing")
}

/** A stack trace or a runtime error's name in a page: what no answer may show. */
const leak = /^\s+at \S.*:\d+:\d+\)?$|\b(?:Type|Reference|Range|Syntax|Sql|Postgres)?Error: /m

// ---------------------------------------------------------------------------------------------
// Fresh records, made through the HTTP API with an Admin key

const call = (method: string, path: string, body?: unknown) => api(world.server.url, adminKey, method, path, body)
const idOf = async (path: string, body?: unknown) => String((await call("POST", path, body))["id"])
const listed = async (path: string) => (await call("GET", path))["data"] as ReadonlyArray<Record<string, string>>

/** A Web Push subscription as a browser's `PushSubscription.toJSON()` gives it. */
const subscription = () => ({
  endpoint: `https://push.example.com/${randomBytes(8).toString("hex")}`,
  p256dh: createECDH("prime256v1").generateKeys().toString("base64url"),
  auth: randomBytes(16).toString("base64url")
})

/** Pro allows 25 rules and 10 custom sources: when there are nearly that many, they all go. */
const makeRoom = async (path: string, key: string, most: number) => {
  const rows = await listed(`${path}?limit=100`)
  if (rows.length >= most) for (const row of rows) await call("DELETE", `${path}/${row[key]}`)
}

/** The organization as the API tests' helpers take it (they use its id). */
const tenant = (): Tenant => ({ id: world.org.id, slug: world.org.slug, keys: { admin: adminKey, member: adminKey, viewer: adminKey } })

const fresh = {
  stack: () => idOf("/stacks", bodies.stack()),
  publicStack: () => idOf("/stacks", { ...bodies.stack(), visibility: "public" }),
  /** A stack showing two components of the catalog source. */
  stackWithItems: async () => {
    const stack = await fresh.stack()
    const item = (component_id: string | undefined) => idOf(`/stacks/${stack}/items`, { kind: "component", component_id })
    return { stack, first: await item(catalog.components[0]), second: await item(catalog.components[1]) }
  },
  tvLink: async () => idOf("/tv-links", { name: unique("Wall"), stack_ids: [await fresh.stack()] }),
  reportSchedule: () => idOf("/report-schedules", { name: unique("Weekly"), frequency: "weekly", recipients: ["board@example.com"] }),
  monitor: () => idOf("/monitors", bodies.monitor()),
  pausedMonitor: async () => {
    const id = await fresh.monitor()
    await call("POST", `/monitors/${id}/pause`)
    return id
  },
  customSource: async () => {
    await makeRoom("/custom-sources", "key", 8)
    return String((await call("POST", "/custom-sources", bodies.customSource()))["key"])
  },
  window: () => idOf("/maintenance-windows", bodies.window()),
  channel: () => idOf("/channels", bodies.channel()),
  pushChannel: () => {
    const { endpoint, p256dh, auth } = subscription()
    return idOf("/channels", { name: unique("Phone"), type: "webpush", settings: { endpoint, keys: { p256dh, auth } } })
  },
  /** A test notification to an e-mail channel, failed (no SMTP server is configured): one to retry. */
  failedDelivery: async () => {
    const id = await idOf(`/channels/${await fresh.channel()}/test`)
    for (let i = 0; i < 200 && (await call("GET", `/deliveries/${id}`))["status"] !== "failed"; i++) await new Promise((r) => setTimeout(r, 50))
    return id
  },
  rule: async () => {
    await makeRoom("/rules", "id", 20)
    const channel = await fresh.channel()
    return { rule: await idOf("/rules", bodies.rule(channel)), channel }
  },
  invitation: () => idOf("/invitations", bodies.invitation()),
  apiKey: () => idOf("/api-keys", bodies.apiKey()),
  member: () => world.run(memberOf(tenant())),
  alert: () => world.run(alertOf(tenant())),
  /** The maintenance calendar's feed, as "Create subscription address" makes it (the API has none). */
  calendarFeed: () =>
    world.run(SqlClient.use((sql) =>
      sql`INSERT INTO calendar_feeds (organization_id, token) VALUES (${world.org.id}::uuid, ${`cal_${randomBytes(24).toString("base64url")}`})
          ON CONFLICT (organization_id) DO NOTHING`
    ))
}

// ---------------------------------------------------------------------------------------------
// Every action, with the permission its service checks and a valid form

/** Records an action works on, by name (ids and keys). */
type Records = Readonly<Record<string, string>>

interface Action {
  readonly name: string
  /** The permission of services/domain/Permissions.ts the action's service checks; "own": the person's own profile. */
  readonly permission: Permission | "own"
  /** Fresh records for one post (the action may use them up). */
  readonly setup?: () => Promise<Records>
  readonly path: (r: Records) => string
  /** A valid form (without `csrf`). */
  readonly fields: (r: Records) => Fields
  /** Done, it changes nothing the organization holds (a trial check; the person's own account). */
  readonly keepsOrganization?: true
}

const inHours = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString().slice(0, 16)

const monitorForm = () => ({
  name: unique("Monitor"),
  url: "http://127.0.0.1:9/health",
  method: "GET",
  expected_status: "200-299",
  keyword: "",
  keyword_mode: "contains",
  headers: "Accept: application/json",
  auth_type: "none",
  interval: "60",
  alert_threshold: "3",
  timeout: "10000"
})

const windowForm = () => ({ title: unique("Upgrade"), description: "", stack_id: "", starts_local: inHours(24), ends_local: inHours(26), time_zone: "UTC" })

const emailChannelForm = () => ({ type: "email", name: unique("Mail"), recipients: "ops@example.com", subject_template: "" })

const ruleForm = (channel: string) => ({
  name: unique("Rule"),
  active: "on",
  trigger: ["component.critical"],
  scope: "all",
  channel_id: [channel],
  cooldown_s: "900",
  group_window_s: "",
  scheduled: "on",
  "schedule.timezone": "UTC",
  "schedule.day": ["mon", "tue", "wed", "thu", "fri"],
  "schedule.start": "08:00",
  "schedule.end": "18:00"
})

const actions: ReadonlyArray<Action> = [
  // Stacks and TV links
  {
    name: "stacks: create",
    permission: "content.write",
    path: () => settings("stacks"),
    fields: () => ({ name: unique("Stack"), description: "Checkout", team: "payments", visibility: "private" })
  },
  {
    name: "stack: update",
    permission: "content.write",
    setup: async () => ({ stack: await fresh.stack() }),
    path: (r) => settings(`stacks/${r["stack"]}`),
    fields: () => ({ intent: "update", name: unique("Stack"), description: "Checkout", team: "payments" })
  },
  {
    name: "stack: add a catalog source",
    permission: "content.write",
    setup: async () => ({ stack: await fresh.stack() }),
    path: (r) => settings(`stacks/${r["stack"]}`),
    fields: () => ({ intent: "add", what: "source", source_key: catalog.key })
  },
  {
    name: "stack: add own monitors",
    permission: "content.write",
    setup: async () => ({ stack: await fresh.stack(), monitor: await fresh.monitor() }),
    path: (r) => settings(`stacks/${r["stack"]}`),
    fields: (r) => ({ intent: "add-own", monitor: r["monitor"]! })
  },
  ...(["remove", "up", "down"] as const).map((intent): Action => ({
    name: `stack: ${intent} an item`,
    permission: "content.write",
    setup: fresh.stackWithItems,
    path: (r) => settings(`stacks/${r["stack"]}`),
    fields: (r) => ({ intent, item_id: intent === "down" ? r["first"]! : r["second"]! })
  })),
  {
    name: "stack: share",
    permission: "content.write",
    setup: async () => ({ stack: await fresh.stack() }),
    path: (r) => settings(`stacks/${r["stack"]}`),
    fields: () => ({ intent: "share" })
  },
  {
    name: "stack: unshare",
    permission: "content.write",
    setup: async () => ({ stack: await fresh.publicStack() }),
    path: (r) => settings(`stacks/${r["stack"]}`),
    fields: () => ({ intent: "unshare" })
  },
  {
    name: "stack: delete",
    permission: "content.delete",
    setup: async () => ({ stack: await fresh.stack() }),
    path: (r) => settings(`stacks/${r["stack"]}`),
    fields: () => ({ intent: "delete" })
  },
  {
    name: "tv: create",
    permission: "content.write",
    setup: async () => ({ stack: await fresh.stack() }),
    path: () => settings("tv"),
    fields: (r) => ({ intent: "create", name: unique("Wall"), rotation_s: "15", stack_id: [r["stack"]!] })
  },
  {
    name: "tv: revoke",
    permission: "content.write",
    setup: async () => ({ link: await fresh.tvLink() }),
    path: () => settings("tv"),
    fields: (r) => ({ intent: "revoke", id: r["link"]! })
  },
  {
    name: "tv: who may frame the TV links and share pages",
    permission: "members.manage",
    path: () => settings("tv"),
    fields: () => ({ intent: "framing", frame_ancestors: `https://wall-${randomBytes(4).toString("hex")}.example.com\nhttp://localhost:3000` })
  },
  {
    name: "reports: schedule",
    permission: "notifications.manage",
    setup: async () => ({ stack: await fresh.stack() }),
    path: () => settings("reports"),
    fields: (r) => ({
      intent: "create",
      name: unique("Weekly"),
      frequency: "weekly",
      time_zone: "Europe/Paris",
      recipients: "board@example.com",
      stack_id: [r["stack"]!],
      sla_target: "99.9"
    })
  },
  {
    name: "reports: pause",
    permission: "notifications.manage",
    setup: async () => ({ schedule: await fresh.reportSchedule() }),
    path: () => settings("reports"),
    fields: (r) => ({ intent: "toggle", id: r["schedule"]!, enabled: "false" })
  },
  {
    name: "reports: delete a schedule",
    permission: "notifications.manage",
    setup: async () => ({ schedule: await fresh.reportSchedule() }),
    path: () => settings("reports"),
    fields: (r) => ({ intent: "delete", id: r["schedule"]! })
  },
  {
    name: "catalog source: add to a stack",
    permission: "content.write",
    setup: async () => ({ stack: await fresh.stack() }),
    path: () => `/sources/${catalog.key}`,
    fields: (r) => ({ org: world.org.slug, stack: r["stack"]!, new_stack_name: "", what: "source" })
  },
  {
    name: "catalog source: add components to a new stack",
    permission: "content.write",
    path: () => `/sources/${catalog.key}`,
    fields: () => ({ org: world.org.slug, stack: "new", new_stack_name: unique("Stack"), what: "components", component: [catalog.components[0]!] })
  },
  // Website monitors and custom sources
  { name: "monitors: create", permission: "content.write", path: () => settings("monitors"), fields: monitorForm },
  ...([["check", "monitor"], ["pause", "monitor"], ["resume", "pausedMonitor"]] as const).map(([intent, made]): Action => ({
    name: `monitor: ${intent}`,
    permission: "content.write",
    setup: async () => ({ monitor: await fresh[made]() }),
    path: (r) => settings(`monitors/${r["monitor"]}`),
    fields: () => ({ intent }),
    ...(intent === "check" ? { keepsOrganization: true as const } : {})
  })),
  {
    name: "monitor: save",
    permission: "content.write",
    setup: async () => ({ monitor: await fresh.monitor() }),
    path: (r) => settings(`monitors/${r["monitor"]}`),
    fields: () => ({ intent: "save", ...monitorForm() })
  },
  {
    name: "monitor: delete",
    permission: "content.delete",
    setup: async () => ({ monitor: await fresh.monitor() }),
    path: (r) => settings(`monitors/${r["monitor"]}`),
    fields: () => ({ intent: "delete" })
  },
  {
    name: "custom sources: add",
    permission: "content.write",
    setup: async () => {
      await makeRoom("/custom-sources", "key", 8)
      return {}
    },
    path: () => settings("sources"),
    fields: () => ({ intent: "add", type: "manual", name: unique("Manual"), status: "operational" })
  },
  {
    name: "custom source: edit",
    permission: "content.write",
    setup: async () => ({ source: await fresh.customSource() }),
    path: () => settings("sources"),
    fields: (r) => ({ intent: "edit", key: r["source"]!, name: unique("Manual"), description: "Set by hand" })
  },
  {
    name: "custom source: set the status",
    permission: "content.write",
    setup: async () => ({ source: await fresh.customSource() }),
    path: () => settings("sources"),
    fields: (r) => ({ intent: "status", key: r["source"]!, status: "degraded" })
  },
  {
    name: "custom source: delete",
    permission: "content.delete",
    setup: async () => ({ source: await fresh.customSource() }),
    path: () => settings("sources"),
    fields: (r) => ({ intent: "delete", key: r["source"]! })
  },
  // Maintenance calendar
  { name: "maintenance: create a window", permission: "content.write", path: () => settings("maintenance"), fields: () => ({ intent: "create", ...windowForm() }) },
  { name: "maintenance: create the feed", permission: "content.write", path: () => settings("maintenance"), fields: () => ({ intent: "feed-create" }) },
  {
    name: "maintenance: revoke the feed",
    permission: "content.write",
    setup: async () => {
      await fresh.calendarFeed()
      return {}
    },
    path: () => settings("maintenance"),
    fields: () => ({ intent: "feed-revoke" })
  },
  {
    name: "maintenance window: save",
    permission: "content.write",
    setup: async () => ({ window: await fresh.window() }),
    path: (r) => settings(`maintenance/${r["window"]}`),
    fields: windowForm
  },
  {
    name: "maintenance window: delete",
    permission: "content.delete",
    setup: async () => ({ window: await fresh.window() }),
    path: (r) => settings(`maintenance/${r["window"]}`),
    fields: () => ({ intent: "delete" })
  },
  // Channels, the notification center, rules, alerts
  { name: "channels: create", permission: "notifications.manage", path: () => settings("channels"), fields: emailChannelForm },
  {
    name: "channel: save",
    permission: "notifications.manage",
    setup: async () => ({ channel: await fresh.channel() }),
    path: (r) => settings(`channels/${r["channel"]}`),
    fields: () => ({ intent: "save", ...emailChannelForm(), enabled: "on" })
  },
  ...(["test", "delete"] as const).map((intent): Action => ({
    name: `channel: ${intent}`,
    permission: "notifications.manage",
    setup: async () => ({ channel: await fresh.channel() }),
    path: (r) => settings(`channels/${r["channel"]}`),
    fields: () => ({ intent })
  })),
  {
    name: "notification center: retry a delivery",
    permission: "notifications.manage",
    setup: async () => ({ delivery: await fresh.failedDelivery() }),
    path: () => settings("notifications"),
    fields: (r) => ({ intent: "retry", id: r["delivery"]! })
  },
  {
    name: "rules: create",
    permission: "notifications.manage",
    setup: async () => {
      await makeRoom("/rules", "id", 20)
      return { channel: await fresh.channel() }
    },
    path: () => settings("rules/new"),
    fields: (r) => ({ intent: "save", ...ruleForm(r["channel"]!) })
  },
  {
    name: "rule: save",
    permission: "notifications.manage",
    setup: fresh.rule,
    path: (r) => settings(`rules/${r["rule"]}`),
    fields: (r) => ({ intent: "save", ...ruleForm(r["channel"]!) })
  },
  {
    name: "rule: delete",
    permission: "notifications.manage",
    setup: fresh.rule,
    path: (r) => settings(`rules/${r["rule"]}`),
    fields: () => ({ intent: "delete" })
  },
  {
    name: "alert: acknowledge",
    permission: "notifications.manage",
    setup: async () => ({ alert: await fresh.alert() }),
    path: (r) => `/alerts/${r["alert"]}`,
    fields: () => ({})
  },
  // Team and API keys
  {
    name: "team: invite",
    permission: "members.manage",
    path: () => settings("team"),
    fields: () => ({ intent: "invite", email: `${randomBytes(4).toString("hex")}@example.com`, role: "viewer" })
  },
  ...(["resend", "revoke"] as const).map((intent): Action => ({
    name: `team: ${intent} an invitation`,
    permission: "members.manage",
    setup: async () => ({ invitation: await fresh.invitation() }),
    path: () => settings("team"),
    fields: (r) => ({ intent, id: r["invitation"]! })
  })),
  {
    name: "team: change a role",
    permission: "members.manage",
    setup: async () => ({ user: await fresh.member() }),
    path: () => settings("team"),
    fields: (r) => ({ intent: "role", user_id: r["user"]!, role: "viewer" })
  },
  {
    name: "team: remove a member",
    permission: "members.manage",
    setup: async () => ({ user: await fresh.member() }),
    path: () => settings("team"),
    fields: (r) => ({ intent: "remove", user_id: r["user"]!, email: "mo@example.com" })
  },
  { name: "api keys: create", permission: "members.manage", path: () => settings("api-keys"), fields: () => ({ intent: "create", name: unique("Key"), role: "viewer" }) },
  {
    name: "api keys: revoke",
    permission: "members.manage",
    setup: async () => ({ key: await fresh.apiKey() }),
    path: () => settings("api-keys"),
    fields: (r) => ({ intent: "revoke", id: r["key"]! })
  },
  // The profile: the person's own, except push devices (a webpush channel of the organization)
  { name: "profile: name", permission: "own", keepsOrganization: true, path: () => "/profile", fields: () => ({ intent: "name", name: "Pat Example" }) },
  {
    name: "profile: password",
    permission: "own",
    keepsOrganization: true,
    path: () => "/profile",
    fields: () => ({ intent: "password", current_password: password, new_password: password })
  },
  { name: "profile: sign out other sessions", permission: "own", keepsOrganization: true, path: () => "/profile", fields: () => ({ intent: "sessions" }) },
  {
    name: "profile: subscribe a push device",
    permission: "notifications.manage",
    path: () => "/profile",
    fields: () => ({ intent: "push-subscribe", organization: world.org.slug, name: unique("Laptop"), ...subscription() })
  },
  {
    name: "profile: remove a push device",
    permission: "notifications.manage",
    setup: async () => ({ channel: await fresh.pushChannel() }),
    path: () => "/profile",
    fields: (r) => ({ intent: "push-remove", organization: world.org.slug, id: r["channel"]! })
  }
]

const allowedRoles = (action: Action): ReadonlyArray<Role> => action.permission === "own" ? roles : permissions[action.permission]

// ---------------------------------------------------------------------------------------------
// Malformed variants of a valid form

/** Values of the wrong kind for any field. */
const badValues: ReadonlyArray<readonly [string, string]> = [
  ["empty", ""],
  ["5,000 characters", "x".repeat(5000)],
  ["not a UUID", "not-a-uuid"],
  ["NaN", "NaN"],
  ["markup", "<script>alert(1)</script>"]
]

/** For each field but the intent: the field left out, then each bad value in its place. */
const variantsOf = (valid: Fields): ReadonlyArray<{ readonly what: string; readonly apply: (valid: Fields) => Fields }> =>
  Object.keys(valid).filter((name) => name !== "intent").flatMap((name) => [
    { what: `${name} missing`, apply: (v: Fields) => Object.fromEntries(Object.entries(v).filter(([k]) => k !== name)) },
    ...badValues.map(([label, value]) => ({ what: `${name} ${label}`, apply: (v: Fields) => ({ ...v, [name]: value }) }))
  ])

describe("the portal's actions", () => {
  it("as Viewer, Member and Admin: each action is refused (403, nothing changed) exactly when the permission table leaves the role out", async () => {
    const problems: Array<string> = []
    for (const action of actions) {
      for (const role of roles) {
        const records = (await action.setup?.()) ?? {}
        const allowed = allowedRoles(action).includes(role)
        const before = await quietDigest()
        const { status } = await post(role, action.path(records), action.fields(records))
        const changed = (await digest()) !== before
        const said = `${action.name} as ${role}: ${status}`
        if (!allowed && status !== 403) problems.push(`${said}, expected 403`)
        if (!allowed && changed) problems.push(`${said}, refused, yet the organization changed`)
        if (allowed && ![200, 302, 303].includes(status)) problems.push(`${said}, expected it done`)
        // Done means done: the organization changed (the digest), except for what keeps it as it is.
        if (allowed && changed === (action.keepsOrganization === true)) problems.push(`${said}, yet the organization ${changed ? "changed" : "did not change"}`)
      }
    }
    process.stderr.write(`[portal actions] role matrix: ${actions.length} actions × ${roles.length} roles\n`)
    assert.deepStrictEqual(problems, [])
  }, 150_000)

  it("with malformed forms (as the Admin): never a 500 or a stack trace, and a 400 saves nothing", async () => {
    const problems: Array<string> = []
    const statuses = new Map<number, number>()
    let quiet: string | undefined
    const check = async (what: string, path: string, fields: Fields, options: { readonly csrf?: boolean; readonly refused?: boolean } = {}) => {
      const before = quiet ?? await quietDigest()
      const { status, body } = await post("admin", path, fields, options.csrf)
      const after = await digest()
      statuses.set(status, (statuses.get(status) ?? 0) + 1)
      if (status >= 500) problems.push(`${what}: ${status}`)
      if (status >= 400 && leak.test(body)) problems.push(`${what}: ${status} with a stack trace`)
      if (status === 400 && after !== before) problems.push(`${what}: 400, yet something was saved`)
      if (options.refused && (status < 400 || status >= 500)) problems.push(`${what}: ${status}, expected a 4xx`)
      // After a refusal the organization is as it was (quiet); what an accepted post started may still run.
      quiet = status >= 400 ? after : undefined
      return status
    }

    const routes = new Set<string>()
    for (const action of actions) {
      let records = (await action.setup?.()) ?? {}
      quiet = undefined
      for (const variant of variantsOf(action.fields(records))) {
        const status = await check(`${action.name}, ${variant.what}`, action.path(records), variant.apply(action.fields(records)))
        // Accepted (a bad value the action may take, such as a name "NaN"): it may have used its records up.
        if (status < 400 && action.setup !== undefined) {
          records = await action.setup()
          quiet = undefined
        }
      }
      // Once per page: an unknown intent, and a form with no field at all (not even the CSRF token).
      const path = action.path(records)
      const route = path.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, ":id")
      if (routes.has(route)) continue
      routes.add(route)
      // The alert's page has one action, Acknowledge, which reads no field: any post of a Member or Admin is it.
      const readsFields = Object.keys(action.fields(records)).length > 0
      await check(`${route}: unknown intent`, path, { intent: "no-such-intent" }, { refused: readsFields })
      await check(`${route}: no fields`, path, {}, { csrf: false, refused: true })
    }
    // The Admin's name back, after the bad values the name form took.
    await post("admin", "/profile", { intent: "name", name: "Ada Admin" })
    const answers = [...statuses].toSorted(([a], [b]) => a - b).map(([status, n]) => `${n} × ${status}`).join(", ")
    process.stderr.write(`[portal actions] malformed posts on ${routes.size} pages: ${answers}\n`)
    assert.deepStrictEqual(problems, [])
  }, 240_000)

  it("bad values typed into the real forms: the message beside the field, nothing saved", async () => {
    const page = person("admin").page
    /** Submits the form whose button is `button` and returns the field's message shown beside it. */
    const refused = async (path: string, fill: Record<string, string>, button: string, field: string) => {
      await page.goto(`${world.server.url}${path}`)
      const before = await quietDigest()
      for (const [name, value] of Object.entries(fill)) await page.locator(`#field-${name}`).fill(value)
      await page.getByRole("button", { name: button }).click()
      const error = page.locator(`#field-${field}-error.field-error`)
      await error.waitFor()
      const input = page.locator(`#field-${field}`)
      assert.strictEqual(await input.getAttribute("aria-invalid"), "true", `${path}: ${field} marked invalid`)
      assert.include(await input.getAttribute("aria-describedby"), `field-${field}-error`, `${path}: ${field} described by its message`)
      assert.strictEqual(await digest(), before, `${path}: nothing saved`)
      return error.innerText()
    }

    assert.match(await refused(settings("stacks"), { name: "x".repeat(stackLimits.name + 1) }, "Create stack", "name"), /^Name /)
    assert.match(
      await refused(settings("monitors"), { name: "Checkout", url: "https://checkout.example.com/health", interval: "NaN" }, "Add monitor", "interval"),
      /^Interval/
    )
    assert.match(
      await refused(settings("channels?type=email"), { name: "Ops mail", recipients: "not an address" }, "Create E-mail channel", "recipients"),
      /^Recipients/
    )
    assert.match(
      await refused(settings("maintenance"), { title: "Upgrade", starts_local: inHours(24), ends_local: inHours(26), time_zone: "Mars/Olympus" }, "Create window", "time_zone"),
      /time zone/
    )
    await expectAccessible(page)
    await screenshot(page, "portal-actions-bad-input")
  }, 90_000)
})
