import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { apiServer, call, newTenant, type Reply } from "../support/api.ts"
import { bodies, organizationDigest, seedRecords } from "../support/orgRecords.ts"

/** A JSON schema of the OpenAPI document, as far as this test reads it. */
interface JsonSchema {
  readonly $ref?: string
  readonly type?: string
  readonly properties?: Record<string, JsonSchema>
  readonly items?: JsonSchema
  readonly additionalProperties?: JsonSchema | boolean
  readonly anyOf?: ReadonlyArray<JsonSchema>
  readonly oneOf?: ReadonlyArray<JsonSchema>
}
interface Operation {
  readonly requestBody?: { readonly content: Record<string, { readonly schema: JsonSchema }> }
}
interface Document {
  readonly paths: Record<string, Record<string, Operation>>
  readonly components: { readonly schemas: Record<string, JsonSchema> }
}

/**
 * The path of every string the schema lists (`name`, `settings.url`,
 * `triggers.0`, `headers.X-Nul` for a map of strings), through `$ref`s and
 * unions.
 */
const stringPaths = (doc: Document, schema: JsonSchema, path: ReadonlyArray<string> = [], seen = new Set<string>()): Array<ReadonlyArray<string>> => {
  if (schema.$ref !== undefined) {
    if (seen.has(schema.$ref)) return []
    const name = schema.$ref.replace("#/components/schemas/", "")
    return stringPaths(doc, doc.components.schemas[name]!, path, new Set([...seen, schema.$ref]))
  }
  const variants = [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]
  const found: Array<ReadonlyArray<string>> = variants.flatMap((v) => stringPaths(doc, v, path, seen))
  if (schema.type === "string") found.push(path)
  for (const [key, property] of Object.entries(schema.properties ?? {})) found.push(...stringPaths(doc, property, [...path, key], seen))
  if (schema.items !== undefined) found.push(...stringPaths(doc, schema.items, [...path, "0"], seen))
  if (typeof schema.additionalProperties === "object") {
    found.push(...stringPaths(doc, schema.additionalProperties, [...path, "X-Nul"], seen))
  }
  const unique = new Map(found.map((p) => [p.join("."), p]))
  return [...unique.values()]
}

/**
 * The path of every object the schema lists whose members are known (the
 * body itself, `auth`, `settings`, `schedule`, ...): a member of another name
 * is an unknown field there. Maps (`additionalProperties` with a schema, such
 * as headers) take any name and are left out.
 */
const objectPaths = (doc: Document, schema: JsonSchema, path: ReadonlyArray<string> = [], seen = new Set<string>()): Array<ReadonlyArray<string>> => {
  if (schema.$ref !== undefined) {
    if (seen.has(schema.$ref)) return []
    const name = schema.$ref.replace("#/components/schemas/", "")
    return objectPaths(doc, doc.components.schemas[name]!, path, new Set([...seen, schema.$ref]))
  }
  const found: Array<ReadonlyArray<string>> = [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].flatMap((v) => objectPaths(doc, v, path, seen))
  if (schema.type === "object" && typeof schema.additionalProperties !== "object") found.push(path)
  for (const [key, property] of Object.entries(schema.properties ?? {})) found.push(...objectPaths(doc, property, [...path, key], seen))
  if (schema.items !== undefined) found.push(...objectPaths(doc, schema.items, [...path, "0"], seen))
  return [...new Map(found.map((p) => [p.join("."), p])).values()]
}

/** Sets an own property, even one named `__proto__` (an assignment would set the prototype). */
const setOwn = (target: object, key: string, value: unknown) =>
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })

/** `body` with the value at `path` replaced (objects and arrays created on the way). */
const withValueAt = (body: unknown, path: ReadonlyArray<string>, value: unknown): unknown => {
  if (path.length === 0) return value
  const [head, ...rest] = path as [string, ...Array<string>]
  if (/^[0-9]+$/.test(head)) {
    const list = Array.isArray(body) ? [...body] : []
    list[Number(head)] = withValueAt(list[Number(head)], rest, value)
    return list
  }
  const object = body !== null && typeof body === "object" && !Array.isArray(body) ? { ...(body as Record<string, unknown>) } : {}
  return setOwn(object, head, withValueAt(Object.hasOwn(object, head) ? object[head] : undefined, rest, value))
}

/** Whether `body` holds an object at `path`. */
const hasObjectAt = (body: unknown, path: ReadonlyArray<string>): boolean => {
  let at: unknown = body
  for (const key of path) {
    if (at === null || typeof at !== "object" || !Object.hasOwn(at, key)) return false
    at = (at as Record<string, unknown>)[key]
  }
  return at !== null && typeof at === "object" && !Array.isArray(at)
}

/** The same fields as a form (the top-level strings and numbers). */
const asForm = (body: Record<string, unknown>) =>
  new URLSearchParams(
    Object.entries(body).flatMap(([k, v]): Array<[string, string]> => typeof v === "string" || typeof v === "number" ? [[k, String(v)]] : [])
  ).toString()

const assertRefused = (r: Reply, what: string, status: number, field: string) => {
  assert.notStrictEqual(r.status, 500, `${what}: ${JSON.stringify(r.body)}`)
  assert.strictEqual(r.status, status, `${what}: ${JSON.stringify(r.body)}`)
  assert.match(r.headers.get("content-type") ?? "", /^application\/json/, what)
  assert.isObject(r.body, what)
  assert.isString(r.body.code, what)
  assert.isString(r.body.message, what)
  assert.strictEqual(r.body.field, field, `${what}: ${JSON.stringify(r.body)}`)
}

describe("bad input is never a 500: every write endpoint of the OpenAPI document", () => {
  layer(apiServer(), { timeout: 600_000, excludeTestServices: true })("on PostgreSQL", (it) => {
    it.effect("__proto__/constructor/toString fields, NUL in every string field, text/plain and form bodies: a 4xx naming the field, nothing changed", () =>
      Effect.gen(function*() {
        const tenant = yield* newTenant("enterprise")
        const key = tenant.keys.admin
        const ids = yield* seedRecords(tenant)
        const other = yield* seedRecords(tenant)

        const added = yield* call("POST", `/stacks/${ids.stack}/items`, { key, body: { kind: "source", source_key: other.catalog.key } })
        assert.strictEqual(added.status, 201, JSON.stringify(added.body))
        const item = String(added.body.id)

        /** A valid body for each write endpoint (and the ids in its path), so that only the part under test is wrong. */
        const valid: Record<string, { readonly path: string; readonly body: () => Record<string, unknown> }> = {
          "post /api/v1/api-keys": { path: "/api-keys", body: bodies.apiKey },
          "patch /api/v1/organization/settings": { path: "/organization/settings", body: () => ({ frame_ancestors: ["https://wall.example.com"] }) },
          "patch /api/v1/members/{user_id}": { path: `/members/${ids.member}`, body: () => ({ role: "viewer" }) },
          "post /api/v1/invitations": { path: "/invitations", body: bodies.invitation },
          "post /api/v1/stacks": { path: "/stacks", body: bodies.stack },
          "patch /api/v1/stacks/{id}": { path: `/stacks/${ids.stack}`, body: () => ({ name: "Renamed stack" }) },
          "post /api/v1/stacks/{id}/items": { path: `/stacks/${ids.stack}/items`, body: () => ({ kind: "source", source_key: ids.catalog.key }) },
          "post /api/v1/stacks/{id}/items/{item_id}/move": { path: `/stacks/${ids.stack}/items/${item}/move`, body: () => ({ direction: "up" }) },
          "post /api/v1/monitors": { path: "/monitors", body: bodies.monitor },
          "patch /api/v1/monitors/{id}": { path: `/monitors/${ids.monitor}`, body: () => ({ name: "Renamed monitor" }) },
          "post /api/v1/custom-sources": { path: "/custom-sources", body: bodies.customSource },
          "patch /api/v1/custom-sources/{key}": { path: `/custom-sources/${ids.customSource}`, body: () => ({ name: "Renamed source" }) },
          "post /api/v1/maintenance-windows": { path: "/maintenance-windows", body: bodies.window },
          "patch /api/v1/maintenance-windows/{id}": { path: `/maintenance-windows/${ids.window}`, body: () => ({ title: "Renamed window" }) },
          "post /api/v1/channels": { path: "/channels", body: bodies.channel },
          "patch /api/v1/channels/{id}": { path: `/channels/${ids.channel}`, body: () => ({ name: "Renamed channel" }) },
          "post /api/v1/rules": { path: "/rules", body: () => bodies.rule(other.channel) },
          "patch /api/v1/rules/{id}": { path: `/rules/${ids.rule}`, body: () => ({ name: "Renamed rule" }) },
          "post /api/v1/tv-links": { path: "/tv-links", body: () => ({ name: "Office wall", stack_ids: [ids.stack], rotation_s: 30 }) },
          "post /api/v1/report-schedules": { path: "/report-schedules", body: bodies.reportSchedule },
          "patch /api/v1/report-schedules/{id}": { path: `/report-schedules/${ids.reportSchedule}`, body: () => ({ name: "Renamed schedule" }) },
          // Public (no key needed; the key sent is ignored): a crowd report on a catalog source.
          "post /api/v1/sources/{key}/reports": { path: `/sources/${ids.catalog.key}/reports`, body: () => ({ symptom: "down" }) }
        }

        const doc = (yield* call("GET", "/openapi.json")).body as Document
        const writes = Object.entries(doc.paths).flatMap(([path, operations]) =>
          Object.entries(operations)
            .filter(([method, operation]) => ["post", "put", "patch"].includes(method) && operation.requestBody !== undefined)
            .map(([method, operation]) => ({ name: `${method} ${path}`, method: method.toUpperCase(), operation }))
        )
        // Every write endpoint with a body is covered: a new one fails here until it has a valid body above.
        assert.deepStrictEqual(writes.map((w) => w.name).toSorted(), Object.keys(valid).toSorted())

        let requests = 0
        let objects = 0
        for (const { name, method, operation } of writes) {
          const { path, body } = valid[name]!
          const send = (options: { body?: unknown; rawBody?: string; headers?: Record<string, string> }) => {
            requests++
            return call(method, path, { key, ...options })
          }
          const before = yield* organizationDigest(tenant.id)

          const schema = operation.requestBody!.content["application/json"]!.schema
          // A member named like a built-in property of objects, in the body and in every object in it.
          for (const at of objectPaths(doc, schema)) {
            for (const member of ["__proto__", "constructor", "toString"]) {
              const base = body()
              const bad = JSON.stringify(withValueAt(base, [...at, member], "x"))
              const field = [...at, member].join(".")
              const r = yield* send({ rawBody: bad })
              if (hasObjectAt(base, at)) {
                assertRefused(r, `${name} with ${field}`, 400, field)
              } else {
                // An object the valid body leaves out: refused naming it or a field in it (a member it requires may come first).
                assertRefused(r, `${name} with ${field}`, 400, r.body?.field?.startsWith(at.join(".")) === true ? r.body.field : at.join("."))
              }
              objects++
            }
          }
          const paths = stringPaths(doc, schema)
          assert.isAbove(paths.length, 0, name)
          for (const field of paths) {
            const bad = withValueAt(body(), field, "before\u0000after")
            assertRefused(yield* send({ body: bad }), `${name} with NUL in ${field.join(".")}`, 400, field.join("."))
          }
          const plain = yield* send({ rawBody: JSON.stringify(body()), headers: { "content-type": "text/plain" } })
          assertRefused(plain, `${name} as text/plain`, 415, "content-type")
          const form = yield* send({ rawBody: asForm(body()), headers: { "content-type": "application/x-www-form-urlencoded" } })
          assertRefused(form, `${name} as a form`, 415, "content-type")

          assert.strictEqual(yield* organizationDigest(tenant.id), before, `${name}: a refused request changed something`)
          // The valid body itself is accepted: the refusals above were for the part under test.
          const ok = yield* send({ body: body() })
          assert.include([200, 201, 202], ok.status, `${name} with a valid body: ${JSON.stringify(ok.body)}`)
        }
        // Values that name built-in properties are values, not the aliases they might be looked up as.
        const levels = yield* call("POST", "/rules", { key, body: { ...bodies.rule(other.channel), alert_levels: ["constructor"] } })
        assertRefused(levels, "alert_levels constructor", 400, "alert_levels.0")
        console.log(JSON.stringify({ test: "bad-input", write_endpoints: writes.length, requests, built_in_members: objects }))
      }))
  })
})
