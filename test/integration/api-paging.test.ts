import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { apiServer, call, newTenant } from "../support/api.ts"
import { alertOf, bodies, catalogSource, created, memberOf, reportOf } from "../support/orgRecords.ts"

interface Parameter {
  readonly name: string
  readonly in: string
}
interface Document {
  readonly paths: Record<string, Record<string, { readonly parameters?: ReadonlyArray<Parameter> }>>
}

/** How a list item is told apart: its id, or the key of a source, or the user of a member. */
const identity = (item: Record<string, unknown>) => String(item["id"] ?? item["key"] ?? item["user_id"])

describe("paging: every list of the OpenAPI document walks page by page", () => {
  layer(apiServer(), { timeout: 300_000, excludeTestServices: true })("on PostgreSQL", (it) => {
    it.effect("with limit=2 every list gives each item once, full pages until the last, and no cursor on the last page", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("enterprise")
        const key = tenant.keys.admin
        // Three or more of everything, so that every list has at least two pages of two.
        for (let i = 0; i < 3; i++) {
          yield* catalogSource(1)
          yield* memberOf(tenant)
          yield* alertOf(tenant)
          yield* created(tenant, "/invitations", bodies.invitation())
          const stack = yield* created(tenant, "/stacks", bodies.stack())
          const schedule = yield* created(tenant, "/report-schedules", bodies.reportSchedule())
          yield* reportOf(tenant.id, schedule.id, stack.id, "Stack")
          yield* created(tenant, "/monitors", bodies.monitor())
          yield* created(tenant, "/custom-sources", bodies.customSource())
          yield* created(tenant, "/maintenance-windows", bodies.window())
          const channel = yield* created(tenant, "/channels", bodies.channel())
          yield* created(tenant, "/rules", bodies.rule(channel.id))
          yield* created(tenant, `/channels/${channel.id}/test`)
        }

        // A catalog source with three incidents and three maintenances, for lists under a source.
        const source = yield* catalogSource(2)
        const sql = yield* SqlClient
        for (let i = 0; i < 3; i++) {
          yield* sql`
            INSERT INTO incidents (source_id, external_id, title, status, impact, started_at, updated_at)
            VALUES (${source.id}::uuid, ${`inc-${i}`}, ${`Incident ${i}`}, 'investigating', 'minor',
              now() - make_interval(mins => ${10 + i}), now() - make_interval(mins => ${i}))`
          yield* sql`
            INSERT INTO scheduled_maintenances (source_id, external_id, title, status, scheduled_for, scheduled_until)
            VALUES (${source.id}::uuid, ${`mnt-${i}`}, ${`Maintenance ${i}`}, 'scheduled',
              now() + make_interval(hours => ${1 + i}), now() + make_interval(hours => ${2 + i}))`
        }
        /** A list under a record, with the record's id in its path. */
        const withIds = (path: string) => path.replace(/^\/sources\/\{key\}/, `/sources/${source.key}`)

        const doc = (yield* call("GET", "/openapi.json")).body as Document
        const lists = Object.entries(doc.paths)
          .filter(([, ops]) => ops["get"]?.parameters?.some((p) => p.in === "query" && p.name === "cursor") === true)
          .map(([path]) => path.replace(/^\/api\/v1/, ""))
        assert.includeMembers(lists, [
          "/sources", "/api-keys", "/audit-log", "/members", "/invitations", "/stacks", "/monitors", "/custom-sources",
          "/maintenance-windows", "/channels", "/rules", "/deliveries", "/alerts"
        ])

        const figures: Record<string, { items: number; pages: number }> = {}
        for (const template of lists) {
          const list = withIds(template)
          assert.notInclude(list, "{", `${template}: a list under a record needs its ids in withIds`)
          const all = yield* call("GET", `${list}?limit=200`, { key })
          assert.strictEqual(all.status, 200, `${list}: ${JSON.stringify(all.body)}`)
          assert.isNull(all.body.next_cursor, `${list}: more than 200 items`)
          const expected = (all.body.data as Array<Record<string, unknown>>).map(identity)
          // Lists this test fills hold three or more; a list under a source shows what its endpoint selects of the rows above.
          assert.isAtLeast(expected.length, template === list ? 3 : 1, list)

          const walked: Array<string> = []
          let cursor: string | null = null
          let pages = 0
          do {
            const query: string = cursor === null ? "limit=2" : `limit=2&cursor=${encodeURIComponent(cursor)}`
            const page = yield* call("GET", `${list}?${query}`, { key })
            assert.strictEqual(page.status, 200, `${list} page ${pages + 1}: ${JSON.stringify(page.body)}`)
            pages++
            const data = page.body.data as Array<Record<string, unknown>>
            cursor = page.body.next_cursor as string | null
            assert.strictEqual(page.body.limit, 2)
            // A page with a cursor after it is full; the last page is not empty.
            if (cursor !== null) assert.strictEqual(data.length, 2, `${list} page ${pages}`)
            else assert.isAbove(data.length, 0, `${list}: a trailing empty page`)
            walked.push(...data.map(identity))
            assert.isAtMost(pages, expected.length, `${list}: more pages than items`)
          } while (cursor !== null)
          assert.deepStrictEqual(walked, expected, `${list}: each item once, in the list's order`)
          figures[template] = { items: walked.length, pages }
        }
        // A cursor of the right shape that no page gave (an impossible instant, an id of the other kind) is a 400, never a 500.
        const uuid = "00000000-0000-4000-8000-000000000000"
        const forged = ["2026-02-30T10:00:00.000000Z", "0000-01-01T00:00:00.000000Z", "2026-01-01T24:00:00.000000Z"]
          .flatMap((at) => [`${at}|${uuid}`, `${at}|42`])
          .concat([`2026-01-01T00:00:00.000000Z|99999999999999999999`])
        for (const list of ["/stacks", "/audit-log", "/deliveries"]) {
          for (const raw of forged) {
            const r = yield* call("GET", `${list}?cursor=${Buffer.from(raw).toString("base64url")}`, { key })
            assert.deepStrictEqual([r.status, r.body.field], [400, "cursor"], `${list} with ${raw}: ${JSON.stringify(r.body)}`)
          }
        }
        console.log(JSON.stringify({ test: "paging", lists: figures }))
      }))
  })
})
