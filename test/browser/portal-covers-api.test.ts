import { Effect } from "effect"
import type { Browser, BrowserContext } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { ApiKeys } from "../../services/orgs/ApiKeys.ts"
import { api } from "../support/alertWorld.ts"
import { launchBrowser } from "../support/browser.ts"
import { people, type SettingsWorld, signIn, startSettingsWorld } from "../support/monitorsWorld.ts"
import { alertOf, bodies, catalogSource, hoursFromNow, reportOf } from "../support/orgRecords.ts"

/**
 * "A new user, in a real browser, can do everything the organization API can
 * do, without the API": every operation of the server's own OpenAPI document
 * (read at run time, so a new endpoint without a page fails here) is mapped
 * to the portal page where a person does it, and, for a change, the form
 * (its `intent`) on that page. The test opens each page as the Admin, with
 * records made through the API, and finds the record shown and the form
 * present. That each form does what the endpoint does, for each role, is
 * test/browser/portal-actions.test.ts; each page's main path, by clicking,
 * is its own browser test (settings-*.test.ts, channels, rules, maintenance,
 * push, alerts, dashboard, catalog).
 */

let world: SettingsWorld
let browser: Browser
let admin: BrowserContext
let key: string
const records: Record<string, string> = {}

/** Where a person does an API operation in the portal: the page, the text it shows, the form that changes it. */
interface PortalWay {
  /** The page's path; `{org}` and `{<record>}` are filled in from the records made for the test. */
  readonly page: string
  /** Text the page shows (a record's name), `{<record>}` filled in. */
  readonly shows?: string
  /** The form's marker in the page's HTML: `name="intent" value="…"`, or another field's name. */
  readonly form?: string
}

/** A form's `intent` (a hidden input's or a button's value). */
const intent = (value: string) => `value="${value}"`

/**
 * The map, by "METHOD /path" as in the OpenAPI document. Public endpoints
 * (sources, share and TV tokens, the signed acknowledgment link) and the
 * live streams the pages themselves open are listed too.
 */
const portalWays: Readonly<Record<string, PortalWay>> = {
  // The catalog (public).
  "GET /api/v1/sources": { page: "/catalog" },
  "GET /api/v1/sources/{key}": { page: "/sources/{catalog}", shows: "{catalogName}" },
  "GET /api/v1/sources/{key}/components": { page: "/sources/{catalog}", shows: "Component 0 of {catalog}" },
  "GET /api/v1/sources/{key}/incidents": { page: "/sources/{catalog}", shows: "Incidents" },
  "GET /api/v1/sources/{key}/maintenances": { page: "/sources/{catalog}", shows: "Upcoming maintenance" },
  "GET /api/v1/sources/{key}/history": { page: "/sources/{catalog}", shows: "uptime" },
  "GET /api/v1/sources/{key}/analytics": { page: "/sources/{catalog}/analytics?days=7", shows: "Component 0 of {catalog}" },
  // Crowd reports (public): the source page's report form, the score and the record against the status page.
  "POST /api/v1/sources/{key}/reports": { page: "/sources/{catalog}", shows: "Report a problem" },
  "GET /api/v1/sources/{key}/crowd": { page: "/sources/{catalog}", shows: "confidence that users see a problem" },
  "GET /api/v1/sources/{key}/crowd/record": { page: "/sources/{catalog}", shows: "in the last 90 days" },
  // The organization, its plan and usage.
  "GET /api/v1/organization": { page: "/settings/{org}/plan", shows: "Pro" },
  // Where its TV links and share pages may be framed: beside the TV links.
  "PATCH /api/v1/organization/settings": { page: "/settings/{org}/tv", form: intent("framing") },
  // Team: members, invitations, API keys, audit log.
  "GET /api/v1/members": { page: "/settings/{org}/team", shows: "Bea Member" },
  "PATCH /api/v1/members/{user_id}": { page: "/settings/{org}/team", form: intent("role") },
  "DELETE /api/v1/members/{user_id}": { page: "/settings/{org}/team", form: intent("remove") },
  "GET /api/v1/invitations": { page: "/settings/{org}/team", shows: "{invitationEmail}" },
  "POST /api/v1/invitations": { page: "/settings/{org}/team", form: intent("invite") },
  "DELETE /api/v1/invitations/{id}": { page: "/settings/{org}/team", form: intent("revoke") },
  "GET /api/v1/api-keys": { page: "/settings/{org}/api-keys", shows: "{apiKeyName}" },
  "POST /api/v1/api-keys": { page: "/settings/{org}/api-keys", form: intent("create") },
  "DELETE /api/v1/api-keys/{id}": { page: "/settings/{org}/api-keys", form: intent("revoke") },
  "GET /api/v1/audit-log": { page: "/settings/{org}/audit", shows: "stack.created" },
  // Stacks and their items, share links, TV links.
  "GET /api/v1/stacks": { page: "/settings/{org}/stacks", shows: "{stackName}" },
  "POST /api/v1/stacks": { page: "/settings/{org}/stacks", form: 'name="name"' },
  "GET /api/v1/stacks/{id}": { page: "/settings/{org}/stacks/{stack}", shows: "{stackName}" },
  "PATCH /api/v1/stacks/{id}": { page: "/settings/{org}/stacks/{stack}", form: 'value="update"' },
  "DELETE /api/v1/stacks/{id}": { page: "/settings/{org}/stacks/{stack}", form: 'value="delete"' },
  "POST /api/v1/stacks/{id}/items": { page: "/settings/{org}/stacks/{stack}?source={catalog}", form: intent("add") },
  "DELETE /api/v1/stacks/{id}/items/{item_id}": { page: "/settings/{org}/stacks/{stack}", form: 'value="remove"' },
  "POST /api/v1/stacks/{id}/items/{item_id}/move": { page: "/settings/{org}/stacks/{stack}", form: 'value="down"' },
  "GET /api/v1/stacks/{id}/analytics": { page: "/dashboard/{org}/stacks/{stackSlug}/analytics?days=7", shows: "Time at each banner" },
  // Scheduled reports: schedules, each report, its CSV and PDF.
  "GET /api/v1/report-schedules": { page: "/settings/{org}/reports", shows: "{scheduleName}" },
  "POST /api/v1/report-schedules": { page: "/settings/{org}/reports", form: intent("create") },
  "PATCH /api/v1/report-schedules/{id}": { page: "/settings/{org}/reports", form: 'value="toggle"' },
  "DELETE /api/v1/report-schedules/{id}": { page: "/settings/{org}/reports", form: 'value="delete"' },
  "GET /api/v1/reports": { page: "/settings/{org}/reports", shows: "{reportSchedule}" },
  "GET /api/v1/reports/{id}": { page: "/settings/{org}/reports/{report}", shows: "Allowed downtime at the target" },
  "GET /api/v1/reports/{id}/csv": { page: "/settings/{org}/reports/{report}", shows: "Download CSV" },
  "GET /api/v1/reports/{id}/pdf": { page: "/settings/{org}/reports/{report}", shows: "Download PDF" },
  "GET /api/v1/tv-links": { page: "/settings/{org}/tv", shows: "{tvName}" },
  "POST /api/v1/tv-links": { page: "/settings/{org}/tv", form: intent("create") },
  "DELETE /api/v1/tv-links/{id}": { page: "/settings/{org}/tv", form: intent("revoke") },
  // Website monitors.
  "GET /api/v1/monitors": { page: "/settings/{org}/monitors", shows: "{monitorName}" },
  "POST /api/v1/monitors": { page: "/settings/{org}/monitors", form: 'name="url"' },
  "GET /api/v1/monitors/{id}": { page: "/settings/{org}/monitors/{monitor}", shows: "{monitorName}" },
  "PATCH /api/v1/monitors/{id}": { page: "/settings/{org}/monitors/{monitor}", form: 'name="url"' },
  "DELETE /api/v1/monitors/{id}": { page: "/settings/{org}/monitors/{monitor}", form: 'value="delete"' },
  "POST /api/v1/monitors/{id}/check": { page: "/settings/{org}/monitors/{monitor}", form: 'value="check"' },
  "POST /api/v1/monitors/{id}/pause": { page: "/settings/{org}/monitors/{monitor}", form: 'value="pause"' },
  "POST /api/v1/monitors/{id}/resume": { page: "/settings/{org}/monitors/{monitor}", shows: "{monitorName}" },
  "GET /api/v1/monitors/{id}/checks": { page: "/settings/{org}/monitors/{monitor}", shows: "Check log" },
  "GET /api/v1/monitors/{id}/history": { page: "/settings/{org}/monitors/{monitor}", shows: "Response time" },
  "GET /api/v1/monitors/{id}/analytics": { page: "/settings/{org}/monitors/{monitor}/analytics", shows: "Time at each status" },
  // Custom sources.
  "GET /api/v1/custom-sources": { page: "/settings/{org}/sources", shows: "{customSourceName}" },
  "POST /api/v1/custom-sources": { page: "/settings/{org}/sources", form: intent("add") },
  "GET /api/v1/custom-sources/{key}": { page: "/settings/{org}/sources", shows: "{customSourceName}" },
  "PATCH /api/v1/custom-sources/{key}": { page: "/settings/{org}/sources", form: 'value="status"' },
  "DELETE /api/v1/custom-sources/{key}": { page: "/settings/{org}/sources", form: 'value="delete"' },
  // Maintenance windows (and the calendar feed, which has no API twin).
  "GET /api/v1/maintenance-windows": { page: "/settings/{org}/maintenance?view=list", shows: "{windowTitle}" },
  "POST /api/v1/maintenance-windows": { page: "/settings/{org}/maintenance", form: intent("create") },
  "GET /api/v1/maintenance-windows/{id}": { page: "/settings/{org}/maintenance/{window}", shows: "{windowTitle}" },
  "PATCH /api/v1/maintenance-windows/{id}": { page: "/settings/{org}/maintenance/{window}", form: 'name="title"' },
  "DELETE /api/v1/maintenance-windows/{id}": { page: "/settings/{org}/maintenance/{window}", form: 'value="delete"' },
  // Channels, rules, deliveries, alerts.
  "GET /api/v1/channels": { page: "/settings/{org}/channels", shows: "{channelName}" },
  "POST /api/v1/channels": { page: "/settings/{org}/channels?type=email", form: 'name="recipients"' },
  "GET /api/v1/channels/{id}": { page: "/settings/{org}/channels/{channel}", shows: "{channelName}" },
  "PATCH /api/v1/channels/{id}": { page: "/settings/{org}/channels/{channel}", form: 'value="save"' },
  "DELETE /api/v1/channels/{id}": { page: "/settings/{org}/channels/{channel}", form: 'value="delete"' },
  "POST /api/v1/channels/{id}/test": { page: "/settings/{org}/channels/{channel}", form: 'value="test"' },
  "GET /api/v1/rules": { page: "/settings/{org}/rules", shows: "{ruleName}" },
  "POST /api/v1/rules": { page: "/settings/{org}/rules/new", form: 'name="trigger"' },
  "GET /api/v1/rules/{id}": { page: "/settings/{org}/rules/{rule}", shows: "{ruleName}" },
  "PATCH /api/v1/rules/{id}": { page: "/settings/{org}/rules/{rule}", form: 'value="save"' },
  "DELETE /api/v1/rules/{id}": { page: "/settings/{org}/rules/{rule}", form: 'value="delete"' },
  "GET /api/v1/deliveries": { page: "/settings/{org}/notifications", shows: "{channelName}" },
  "GET /api/v1/deliveries/{id}": { page: "/settings/{org}/notifications", shows: "{channelName}" },
  "POST /api/v1/deliveries/{id}/retry": { page: "/settings/{org}/notifications?status=failed", shows: "Notification center" },
  "GET /api/v1/alerts": { page: "/settings/{org}/notifications", shows: "{alertTitle}" },
  "GET /api/v1/alerts/{id}": { page: "/alerts/{alert}", shows: "{alertTitle}" },
  "POST /api/v1/alerts/{id}/acknowledge": { page: "/alerts/{alert}", shows: "{alertTitle}" },
  "GET /api/v1/alerts/{id}/ack": { page: "/alerts/{alert}", shows: "{alertTitle}" },
  "POST /api/v1/alerts/{id}/ack": { page: "/alerts/{alert}", shows: "{alertTitle}" },
}

/**
 * Operations that are not something a person does: the API's own description.
 * (The live streams, `/api/v1/organizations/{org}/stream` and the share and TV
 * ones, are not in the OpenAPI document: the dashboard, share and TV pages open them.)
 */
const notForPeople = new Set(["GET /api/v1/openapi.json"])

const fill = (template: string) => template.replace(/\{([a-zA-Z]+)\}/g, (_, name: string) => {
  if (name === "org") return world.org.slug
  const value = records[name]
  if (value === undefined) throw new Error(`no record ${name} for ${template}`)
  return value
})

beforeAll(async () => {
  ;[world, browser] = await Promise.all([startSettingsWorld(), launchBrowser()])
  key = await world.run(ApiKeys.use((k) => k.issue(world.org.id, "coverage test", "admin")).pipe(Effect.provide(ApiKeys.layer)))
  const post = async (path: string, body: unknown) => api(world.server.url, key, "POST", path, body)
  const catalog = await world.run(catalogSource(2))
  records["catalog"] = catalog.key
  records["catalogName"] = `Catalog ${catalog.key}`
  const stack = await post("/stacks", bodies.stack())
  records["stack"] = String(stack["id"])
  records["stackName"] = String(stack["name"])
  records["stackSlug"] = String(stack["slug"])
  await post(`/stacks/${records["stack"]}/items`, { kind: "source", source_key: catalog.key })
  await post(`/stacks/${records["stack"]}/items`, { kind: "component", component_id: catalog.components[0] })
  const monitor = await post("/monitors", bodies.monitor())
  records["monitor"] = String(monitor["id"])
  records["monitorName"] = String(monitor["name"])
  const custom = await post("/custom-sources", bodies.customSource())
  records["customSourceName"] = String(custom["name"])
  const window = await post("/maintenance-windows", { ...bodies.window(), starts_at: hoursFromNow(2), ends_at: hoursFromNow(3) })
  records["window"] = String(window["id"])
  records["windowTitle"] = String(window["title"])
  const channel = await post("/channels", bodies.channel())
  records["channel"] = String(channel["id"])
  records["channelName"] = String(channel["name"])
  await post(`/channels/${records["channel"]}/test`, {})
  const rule = await post("/rules", bodies.rule(records["channel"]!))
  records["rule"] = String(rule["id"])
  records["ruleName"] = String(rule["name"])
  const invitation = bodies.invitation()
  await post("/invitations", invitation)
  records["invitationEmail"] = invitation.email
  const apiKey = await post("/api-keys", bodies.apiKey())
  records["apiKeyName"] = String(apiKey["name"])
  const schedule = await post("/report-schedules", { name: "Weekly for the board", frequency: "weekly", recipients: ["board@example.com"] })
  records["scheduleName"] = String(schedule["name"])
  // A report of last week, as the worker leaves it once generated (the worker itself: test/integration/reports.test.ts).
  records["report"] = await world.run(reportOf(world.org.id, String(schedule["id"]), String(stack["id"]), records["stackName"]!))
  records["reportSchedule"] = String(schedule["name"])
  const tv = await post("/tv-links", { name: "Ops wall", stack_ids: [records["stack"]] })
  records["tvName"] = String(tv["name"])
  const tenant = { id: world.org.id, slug: world.org.slug, keys: { admin: key, member: key, viewer: key } }
  records["alert"] = await world.run(alertOf(tenant))
  const alert = await api(world.server.url, key, "GET", `/alerts/${records["alert"]}`)
  records["alertTitle"] = String(alert["title"])
  admin = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  await signIn(await admin.newPage(), world.server, people.admin, `/settings/${world.org.slug}/stacks`)
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await world?.close()
}, 120_000)

describe("the portal covers the organization API", () => {
  it("every operation of the OpenAPI document has a page where a person does it", async () => {
    const document = (await (await fetch(`${world.server.url}/api/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> }
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).filter((m) => ["get", "post", "put", "patch", "delete"].includes(m)).map((m) => `${m.toUpperCase()} ${path}`)
    )
    assert.isAbove(operations.length, 60)
    const missing = operations.filter((op) => !notForPeople.has(op) && portalWays[op] === undefined)
    assert.deepStrictEqual(missing, [], "API operations without a portal page: add them to portalWays (and a page)")
    const stale = Object.keys(portalWays).filter((op) => !operations.includes(op))
    assert.deepStrictEqual(stale, [], "portalWays names operations the API does not have")
  })

  it("as the Admin, each page shows the records made through the API and has the form of each change", async () => {
    const pages = new Map<string, string>()
    const problems: Array<string> = []
    for (const [operation, way] of Object.entries(portalWays)) {
      const path = fill(way.page)
      let html = pages.get(path)
      if (html === undefined) {
        const answer = await admin.request.get(`${world.server.url}${path}`)
        html = await answer.text()
        if (answer.status() !== 200) problems.push(`${operation}: ${path} answered ${answer.status()}`)
        pages.set(path, html)
      }
      if (way.shows !== undefined && !html.includes(fill(way.shows))) problems.push(`${operation}: ${path} does not show "${fill(way.shows)}"`)
      if (way.form !== undefined && !html.includes(way.form)) problems.push(`${operation}: ${path} has no form with ${way.form}`)
    }
    assert.deepStrictEqual(problems, [])
  })
})
