import { afterAll, assert, beforeAll, describe, it } from "vitest"
import type { Reply } from "../support/api.ts"
import { runCli } from "../support/process.ts"
import { type ScreenWorld, startScreenWorld } from "../support/screens.ts"

/**
 * Where the TV and share pages may be framed (issue #19): each organization lists the origins allowed to
 * frame its TV links and public share pages (`PATCH /api/v1/organization/settings` `frame_ancestors`);
 * those pages' CSP `frame-ancestors` then names them and X-Frame-Options is left out. Every other answer,
 * and every page of an organization that lists none, stays `X-Frame-Options: DENY`, `frame-ancestors 'none'`.
 * Against a real `statusgrid start` (services/api/SecurityHeaders.ts, services/api/Portal.ts).
 */

let world: ScreenWorld
/** A second organization on the same server, with its own Admin key. */
let other: { readonly api: (method: string, path: string, body?: unknown) => Promise<Reply> }
/** Each organization's TV link page and share page. */
const pages = { acme: { tv: "", share: "" }, other: { tv: "", share: "" } }

const apiWith = (key: string) => async (method: string, path: string, body?: unknown): Promise<Reply> => {
  const response = await fetch(`${world.server.url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? null : JSON.parse(text), headers: response.headers }
}

/** A TV link and a public stack's share page of the organization `api` speaks for. */
const screensOf = async (api: (method: string, path: string, body?: unknown) => Promise<Reply>, name: string) => {
  const source = await api("POST", "/custom-sources", { name: `${name} API`, type: "manual", status: "operational" })
  assert.strictEqual(source.status, 201, JSON.stringify(source.body))
  const stack = await api("POST", "/stacks", { name, visibility: "public" })
  assert.strictEqual(stack.status, 201, JSON.stringify(stack.body))
  const item = await api("POST", `/stacks/${stack.body.id}/items`, { kind: "source", source_key: source.body.key })
  assert.strictEqual(item.status, 201, JSON.stringify(item.body))
  const tv = await api("POST", "/tv-links", { name: `${name} wall`, stack_ids: [stack.body.id] })
  assert.strictEqual(tv.status, 201, JSON.stringify(tv.body))
  return { tv: tv.body.url as string, share: stack.body.share_url as string }
}

/** The framing headers of the answer to GET `path`. */
const framingOf = async (path: string) => {
  const response = await fetch(`${world.server.url}${path}`, { redirect: "manual" })
  await response.arrayBuffer()
  const csp = response.headers.get("content-security-policy") ?? ""
  return {
    status: response.status,
    xFrameOptions: response.headers.get("x-frame-options"),
    frameAncestors: /(?:^|;\s*)frame-ancestors ([^;]+)/u.exec(csp)?.[1],
    internal: response.headers.get("x-statusgrid-frame-ancestors"),
    contentType: response.headers.get("content-type") ?? ""
  }
}

const expectNotFramed = async (path: string, label: string) => {
  const got = await framingOf(path)
  assert.isBelow(got.status, 500, `${label} ${path}`)
  assert.strictEqual(got.xFrameOptions, "DENY", `${label} ${path}`)
  assert.strictEqual(got.frameAncestors, "'none'", `${label} ${path}`)
  assert.isNull(got.internal, `${label} ${path}: the internal header is never sent`)
}

const expectFramedBy = async (path: string, origins: string, label: string) => {
  const got = await framingOf(path)
  assert.strictEqual(got.status, 200, `${label} ${path}`)
  assert.include(got.contentType, "text/html", label)
  assert.strictEqual(got.frameAncestors, origins, `${label} ${path}`)
  assert.isNull(got.xFrameOptions, `${label} ${path}: X-Frame-Options cannot list origins, so it is left out`)
  assert.isNull(got.internal, `${label} ${path}: the internal header is never sent`)
}

beforeAll(async () => {
  world = await startScreenWorld()
  // `statusgrid org create` on the embedded stores runs while the server is stopped.
  let key = ""
  await world.restart(async () => {
    const created = await runCli(["org", "create", "--name", "Other Corp", "--slug", "other", "--plan", "pro"], world.env)
    assert.strictEqual(created.code, 0, created.stderr)
    key = (JSON.parse(created.stdout.trim().split("\n").at(-1)!) as { admin_api_key: string }).admin_api_key
  })
  other = { api: apiWith(key) }
  pages.acme = await screensOf(world.api, "Checkout")
  pages.other = await screensOf(other.api, "Billing")
}, 120_000)

afterAll(async () => {
  await world?.stop()
})

describe("framing of the TV and share pages, per organization", () => {
  it("an organization that lists no origin (the default): its TV and share pages are framed nowhere", async () => {
    const org = await world.api("GET", "/organization")
    assert.strictEqual(org.status, 200)
    assert.deepStrictEqual(org.body.frame_ancestors, [])
    for (const [label, path] of Object.entries(pages.acme)) await expectNotFramed(path, `default ${label}`)
  })

  it("an origin allowed: that organization's TV and share pages name it in frame-ancestors, without X-Frame-Options; everything else stays DENY", async () => {
    const set = await world.api("PATCH", "/organization/settings", { frame_ancestors: ["https://wall.example.com"] })
    assert.strictEqual(set.status, 200, JSON.stringify(set.body))
    assert.deepStrictEqual(set.body.frame_ancestors, ["https://wall.example.com"])
    assert.deepStrictEqual((await world.api("GET", "/organization")).body.frame_ancestors, ["https://wall.example.com"])

    await expectFramedBy(pages.acme.tv, "https://wall.example.com", "TV link")
    await expectFramedBy(pages.acme.share, "https://wall.example.com", "share page")
    // The rest of the page's policy is the portal's usual one.
    const csp = (await fetch(`${world.server.url}${pages.acme.tv}`)).headers.get("content-security-policy") ?? ""
    assert.match(csp, /script-src 'self' 'nonce-[A-Za-z0-9+/=]+'/u)
    assert.include(csp, "default-src 'self'")

    // Its other answers: the screens' JSON state, the member's TV page and settings (sign-in first), other pages.
    for (const path of [`${pages.acme.tv}/state`, `${pages.acme.share}/state`, `/tv/${world.organization.slug}`, `/settings/${world.organization.slug}/tv`, "/catalog", "/signin", "/"]) {
      await expectNotFramed(path, "acme's other answers")
    }
    // Another organization's pages, on the same server.
    for (const [label, path] of Object.entries(pages.other)) await expectNotFramed(path, `other organization's ${label}`)
    // An unknown TV token or share token (404).
    await expectNotFramed(`/tv/tv_${"x".repeat(32)}`, "unknown TV token")
    await expectNotFramed(`/share/${"x".repeat(32)}`, "unknown share token")

    // Several origins, in the order given; an https origin with a port and http on localhost.
    const several = ["https://wall.example.com", "https://intranet.example.org:8443", "http://localhost:3000"]
    assert.strictEqual((await world.api("PATCH", "/organization/settings", { frame_ancestors: several })).status, 200)
    await expectFramedBy(pages.acme.tv, several.join(" "), "TV link, three origins")
    await expectFramedBy(pages.acme.share, several.join(" "), "share page, three origins")
    await expectNotFramed(pages.other.tv, "other organization's TV link")

    // Emptied again: framed nowhere.
    const cleared = await world.api("PATCH", "/organization/settings", { frame_ancestors: [] })
    assert.strictEqual(cleared.status, 200, JSON.stringify(cleared.body))
    assert.deepStrictEqual(cleared.body.frame_ancestors, [])
    for (const [label, path] of Object.entries(pages.acme)) await expectNotFramed(path, `cleared ${label}`)

    // Each change is in the audit log, before and after.
    const log = await world.api("GET", "/audit-log?entity_type=organization")
    const changes = (log.body.data as Array<{ action: string; before: unknown; after: unknown }>).filter((e) => e.action === "organization.updated")
    assert.deepStrictEqual(changes.map((e) => e.after), [
      { frame_ancestors: ["https://wall.example.com"] },
      { frame_ancestors: several },
      { frame_ancestors: [] }
    ])
    assert.deepStrictEqual(changes[0]!.before, { frame_ancestors: [] })
  })

  it("a bad origin, too many or a repeated one: 400 naming the field, nothing changed; only Admins may change it", async () => {
    assert.strictEqual((await world.api("PATCH", "/organization/settings", { frame_ancestors: ["https://wall.example.com"] })).status, 200)
    const refused: ReadonlyArray<readonly [unknown, string]> = [
      [["http://wall.example.com"], "frame_ancestors.0"],
      [["https://wall.example.com", "https://wall.example.com/status"], "frame_ancestors.1"],
      [["https://wall.example.com/"], "frame_ancestors.0"],
      [["https://*.example.com"], "frame_ancestors.0"],
      [["https://Wall.example.com"], "frame_ancestors.0"],
      [["https://wall.example.com:443"], "frame_ancestors.0"],
      [["https://wall.example.com 'unsafe-inline'"], "frame_ancestors.0"],
      [["https://wall.example.com; script-src *"], "frame_ancestors.0"],
      [["'self'"], "frame_ancestors.0"],
      [["*"], "frame_ancestors.0"],
      [["javascript:alert(1)"], "frame_ancestors.0"],
      [[""], "frame_ancestors.0"],
      [[42], "frame_ancestors.0"],
      ["https://wall.example.com", "frame_ancestors"],
      [Array.from({ length: 11 }, (_, i) => `https://wall${i}.example.com`), "frame_ancestors"],
      [["https://wall.example.com", "https://wall.example.com"], "frame_ancestors"]
    ]
    for (const [value, field] of refused) {
      const r = await world.api("PATCH", "/organization/settings", { frame_ancestors: value })
      assert.strictEqual(r.status, 400, `${JSON.stringify(value)}: ${JSON.stringify(r.body)}`)
      assert.strictEqual(r.body.code, "invalid_parameter", JSON.stringify(value))
      assert.strictEqual(r.body.field, field, `${JSON.stringify(value)}: ${JSON.stringify(r.body)}`)
      assert.include(r.body.message, field, JSON.stringify(value))
    }
    const unknown = await world.api("PATCH", "/organization/settings", { frame_ancestors: [], plan: "enterprise" })
    assert.strictEqual(unknown.status, 400)
    assert.strictEqual(unknown.body.field, "plan")
    // Ten are allowed.
    const ten = Array.from({ length: 10 }, (_, i) => `https://wall${i}.example.com`)
    assert.strictEqual((await world.api("PATCH", "/organization/settings", { frame_ancestors: ten })).status, 200)
    assert.deepStrictEqual((await world.api("GET", "/organization")).body.frame_ancestors, ten)

    // Members and viewers read the list but cannot change it.
    for (const role of ["member", "viewer"] as const) {
      const created = await world.api("POST", "/api-keys", { name: `${role} key`, role })
      assert.strictEqual(created.status, 201)
      const api = apiWith(created.body.key as string)
      assert.deepStrictEqual((await api("GET", "/organization")).body.frame_ancestors, ten)
      const denied = await api("PATCH", "/organization/settings", { frame_ancestors: [] })
      assert.strictEqual(denied.status, 403, role)
      assert.strictEqual(denied.body.code, "forbidden")
    }
    assert.deepStrictEqual((await world.api("GET", "/organization")).body.frame_ancestors, ten)
    // An organization's setting never reaches another's.
    assert.deepStrictEqual((await other.api("GET", "/organization")).body.frame_ancestors, [])
    assert.strictEqual((await world.api("PATCH", "/organization/settings", { frame_ancestors: [] })).status, 200)
  })
})
