import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import * as Migrations from "../../services/platform/Migrations.ts"
import { apiServer, call, newTenant } from "../support/api.ts"
import { organizationDigest, seedRecords } from "../support/orgRecords.ts"

/**
 * Walks the OpenAPI document and sends every operation generated bad input (fast-check, fixed seed,
 * a bounded number of cases each): garbage in its path parameters (or a real record's id), random
 * values for its query parameters and unknown ones, and for a body random JSON, the operation's own
 * fields with random values, or text that is not JSON. Every answer is below 500, a 4xx carries the
 * API's error body, and a 4xx changes nothing the organization holds (organizationDigest).
 */

interface Operation {
  readonly method: string
  readonly path: string
  readonly query: ReadonlyArray<string>
  readonly bodyFields: ReadonlyArray<string> | undefined
}

// The OpenAPI document, read as what it is: JSON of a known shape.
// oxlint-disable-next-line typescript/no-explicit-any
type Json = any

const seed = 19
const casesPerOperation = 60

/** The operations of the document, each with its query parameters and its body's fields (a body with no named fields: []). */
const operationsOf = (doc: Json): ReadonlyArray<Operation> => {
  const resolve = (schema: Json): Json => schema?.$ref === undefined ? schema : resolve(doc.components.schemas[String(schema.$ref).split("/").at(-1)!])
  const fieldsOf = (schema: Json): ReadonlyArray<string> => {
    const s = resolve(schema)
    const alternatives: ReadonlyArray<Json> = s?.anyOf ?? s?.oneOf ?? []
    return [...new Set([...Object.keys(s?.properties ?? {}), ...alternatives.flatMap((a) => fieldsOf(a))])]
  }
  return Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, item]) =>
    Object.entries(item).filter(([method]) => ["get", "post", "put", "patch", "delete"].includes(method)).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      query: ((op.parameters ?? []) as Array<Json>).filter((p) => p.in === "query").map((p) => String(p.name)),
      bodyFields: op.requestBody === undefined ? undefined : fieldsOf(op.requestBody.content?.["application/json"]?.schema)
    }))
  )
}

const garbage = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.constantFrom("..", "%00", "%2e%2e%2f", "-1", "1e309", "00000000-0000-0000-0000-000000000000", "x".repeat(300), "null", "__proto__", " ")
)
const queryValue = fc.oneof(garbage, fc.integer().map(String), fc.double().map(String), fc.constant(""))
const bodyOf = (fields: ReadonlyArray<string>) =>
  fc.oneof(
    fc.jsonValue().map((v) => ({ json: v })),
    fc.record(Object.fromEntries(fields.map((f) => [f, fc.jsonValue({ maxDepth: 2 })])), { requiredKeys: [] }).map((v) => ({ json: v })),
    fc.constantFrom("{", "nul", "{\"a\":}", "[1,]", "\u0000", "").map((raw) => ({ raw }))
  )

describe("API fuzzing from the OpenAPI document", () => {
  layer(apiServer({ API_RATE_LIMIT_PER_MINUTE: "100000000" }), { timeout: 600_000, excludeTestServices: true })("on PostgreSQL", (it) => {
    it.effect("every operation, generated bad input: no 5xx, a 4xx with the error body, and nothing changed on a 4xx", () =>
      Effect.gen(function*() {
        // The history endpoints read ClickHouse: its tables exist, as in a running statusgrid.
        yield* Migrations.migrateClickHouse()
        const tenant = yield* newTenant("enterprise")
        const key = tenant.keys.admin
        const ids = yield* seedRecords(tenant)
        const doc = (yield* call("GET", "/openapi.json")).body as Json
        const operations = operationsOf(doc)
        assert.isAbove(operations.length, 40)

        /** A real record for a path parameter, where the path names one (API keys excepted: the test's own key would go). */
        const realId = (path: string, name: string): string | undefined => {
          if (path.startsWith("/api/v1/api-keys")) return undefined
          if (name === "user_id") return ids.member
          if (path.startsWith("/api/v1/sources/")) return ids.catalog.key
          const byPrefix: ReadonlyArray<readonly [string, string]> = [
            ["/api/v1/stacks/", ids.stack], ["/api/v1/monitors/", ids.monitor], ["/api/v1/custom-sources/", ids.customSource],
            ["/api/v1/maintenance-windows/", ids.window], ["/api/v1/channels/", ids.channel], ["/api/v1/rules/", ids.rule],
            ["/api/v1/report-schedules/", ids.reportSchedule]
          ]
          return name === "id" || name === "key" ? byPrefix.find(([prefix]) => path.startsWith(prefix))?.[1] : undefined
        }

        let requests = 0
        const findings: Array<string> = []
        for (const [index, op] of operations.entries()) {
          const cases = fc.sample(
            fc.record({
              real: fc.boolean(),
              params: fc.array(garbage, { minLength: 4, maxLength: 4 }),
              query: fc.record(Object.fromEntries([...op.query, "unknown_param"].map((q) => [q, queryValue])), { requiredKeys: [] }),
              body: op.bodyFields === undefined ? fc.constant(undefined) : bodyOf(op.bodyFields),
              textPlain: fc.boolean()
            }),
            { seed: seed + index, numRuns: casesPerOperation }
          )
          for (const c of cases) {
            let n = 0
            const path = op.path.replace(/\{([^}]+)\}/gu, (_, name: string) => {
              const value = (c.real ? realId(op.path, name) : undefined) ?? c.params[n++ % c.params.length]!
              return encodeURIComponent(value)
            })
            const search = new URLSearchParams(Object.entries(c.query).map(([k, v]): [string, string] => [k, String(v)])).toString()
            const url = `${path.slice("/api/v1".length)}${search === "" ? "" : `?${search}`}`
            const before = yield* organizationDigest(tenant.id)
            const options = c.body === undefined
              ? { key }
              : "raw" in c.body
              ? { key, rawBody: c.body.raw }
              : { key, body: c.body.json, ...(c.textPlain ? { headers: { "content-type": "text/plain" } } : {}) }
            const reply = yield* call(op.method, url, options)
            requests++
            const what = `${op.method} ${url} ${JSON.stringify(c.body)?.slice(0, 300)} → ${reply.status} ${JSON.stringify(reply.body)?.slice(0, 300)}`
            if (reply.status >= 500) findings.push(what)
            if (reply.status >= 400 && reply.status < 500) {
              if (typeof reply.body?.code !== "string" || typeof reply.body?.message !== "string") findings.push(`no error body: ${what}`)
              if ((yield* organizationDigest(tenant.id)) !== before) findings.push(`changed on a ${reply.status}: ${what}`)
            }
          }
        }
        assert.deepStrictEqual(findings, [], `${findings.length} of ${requests} requests`)
        assert.isAbove(requests, operations.length * casesPerOperation - 1)
      }))
  })
})
