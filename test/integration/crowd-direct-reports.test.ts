import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { request } from "node:http"
import { randomBytes } from "node:crypto"
import { DirectRequests } from "../../services/api/DirectRequests.ts"
import { sessionCookieName } from "../../services/identity/SessionCookie.ts"
import { Sessions } from "../../services/identity/Sessions.ts"
import { SqlClient } from "effect/sql/SqlClient"
import { ApiBase, apiServer } from "../support/api.ts"
import { awayFromBoundary } from "../support/crowd.ts"
import { catalogSource } from "../support/orgRecords.ts"

/**
 * Crowd reports answered on Node's request (decision 0032, services/api/Crowd/ingest.ts) against the
 * same requests through the router (`CROWD_DIRECT_REPORTS=false`): every answer the same, status,
 * body and headers, for good reports, duplicates, each kind of bad body, an unknown source, a session
 * cookie, the rate limit, and the requests the direct path leaves to the router.
 */

interface Sent {
  readonly path: string
  readonly from: string
  readonly body: string
  readonly contentType?: string | undefined
  readonly cookie?: string | undefined
}

/** The headers an answer is compared by (Date and the connection's are the server's own). */
const compared = [
  "content-type",
  "content-length",
  "cache-control",
  "content-security-policy",
  "x-content-type-options",
  "x-frame-options",
  "referrer-policy",
  "strict-transport-security",
  "retry-after"
]

const sendRaw = (base: string, s: Sent) =>
  Effect.promise(() =>
    new Promise<{ status: number; text: string; headers: Record<string, string | undefined> }>((resolve, reject) => {
      const url = new URL(base)
      const headers: Record<string, string> = { "content-length": String(Buffer.byteLength(s.body)) }
      if (s.contentType !== undefined) headers["content-type"] = s.contentType
      if (s.cookie !== undefined) headers["cookie"] = s.cookie
      const req = request({ host: url.hostname, port: url.port, path: `/api/v1${s.path}`, method: "POST", headers, localAddress: s.from }, (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => text += chunk)
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            text,
            headers: Object.fromEntries(compared.map((name) => [name, res.headers[name] as string | undefined]))
          }))
      })
      req.on("error", reject)
      req.end(s.body)
    })
  )

/**
 * The same sequence of reports against one server: its own sources (`quiet`, `limited`),
 * its own, each answer with the source's key, the moments and the signal's id written as placeholders.
 */
const script = Effect.gen(function*() {
  const base = yield* ApiBase
  const quiet = yield* catalogSource(1)
  const limited = yield* catalogSource(1)
  const sql = yield* SqlClient
  const [person] = yield* sql<{ id: string }>`
    INSERT INTO users (email, name) VALUES (${`direct-${randomBytes(4).toString("hex")}@example.com`}, 'Crowd Person') RETURNING id`
  const { token } = yield* Sessions.use((s) => s.create(person!.id)).pipe(Effect.provide(Sessions.layer))
  const json = "application/json"
  const sent: Array<Sent> = [
    { path: `/sources/${quiet.key}/reports`, from: "127.0.71.1", body: JSON.stringify({ symptom: "down" }), contentType: json },
    { path: `/sources/${quiet.key}/reports`, from: "127.0.72.1", body: JSON.stringify({ symptom: "slow" }), contentType: "application/json; charset=utf-8" },
    // The same reporter again: counted once.
    { path: `/sources/${quiet.key}/reports`, from: "127.0.71.1", body: JSON.stringify({ symptom: "other" }), contentType: json },
    // No Content-Type: JSON, as the API takes it.
    { path: `/sources/${quiet.key}/reports`, from: "127.0.73.1", body: JSON.stringify({ symptom: "errors" }) },
    // A session cookie that is no session: reported anonymously.
    { path: `/sources/${quiet.key}/reports`, from: "127.0.74.1", body: JSON.stringify({ symptom: "login" }), contentType: json, cookie: `${sessionCookieName}=${"x".repeat(43)}` },
    // A signed-in person is the reporter wherever they report from: counted, then not again from another address.
    { path: `/sources/${quiet.key}/reports`, from: "127.0.81.1", body: JSON.stringify({ symptom: "login" }), contentType: json, cookie: `${sessionCookieName}=${token}` },
    { path: `/sources/${quiet.key}/reports`, from: "127.0.82.1", body: JSON.stringify({ symptom: "login" }), contentType: json, cookie: `theme=dark; ${sessionCookieName}=${token}` },
    // Bad bodies: each a 400 naming the field.
    { path: `/sources/${quiet.key}/reports`, from: "127.0.75.1", body: JSON.stringify({ symptom: "on fire" }), contentType: json },
    { path: `/sources/${quiet.key}/reports`, from: "127.0.75.1", body: JSON.stringify({ symptom: "down", extra: 1 }), contentType: json },
    { path: `/sources/${quiet.key}/reports`, from: "127.0.75.1", body: JSON.stringify({ symptom: "down", component_id: "c0" }), contentType: json },
    { path: `/sources/${quiet.key}/reports`, from: "127.0.75.1", body: JSON.stringify({ symptom: "down", region: "" }), contentType: json },
    { path: `/sources/${quiet.key}/reports`, from: "127.0.75.1", body: JSON.stringify({ symptom: "do\u0000wn" }), contentType: json },
    { path: `/sources/${quiet.key}/reports`, from: "127.0.75.1", body: JSON.stringify({ symptom: "down", region: { "a\u0000": 1 } }), contentType: json },
    { path: `/sources/${quiet.key}/reports`, from: "127.0.75.1", body: "{\"symptom\":", contentType: json },
    { path: `/sources/${quiet.key}/reports`, from: "127.0.75.1", body: "", contentType: json },
    { path: `/sources/${quiet.key}/reports`, from: "127.0.75.1", body: "[]", contentType: json },
    { path: `/sources/${quiet.key}/reports`, from: "127.0.75.1", body: "null", contentType: json },
    // A region the source does not have: the service's own 400.
    { path: `/sources/${quiet.key}/reports`, from: "127.0.76.1", body: JSON.stringify({ symptom: "down", region: "mars-north-1" }), contentType: json },
    // No such source.
    { path: "/sources/no-such-source/reports", from: "127.0.77.1", body: JSON.stringify({ symptom: "down" }), contentType: json },
    // Left to the router: another media type, an encoded key.
    { path: `/sources/${quiet.key}/reports`, from: "127.0.78.1", body: "symptom=down", contentType: "application/x-www-form-urlencoded" },
    { path: `/sources/${encodeURIComponent(quiet.key).replace("-", "%2D")}/reports`, from: "127.0.79.1", body: JSON.stringify({ symptom: "down" }), contentType: json },
    // Ten a minute from one address, then 429 with Retry-After.
    ...Array.from({ length: 11 }, (): Sent => ({ path: `/sources/${limited.key}/reports`, from: "127.0.80.1", body: JSON.stringify({ symptom: "down" }), contentType: json }))
  ]
  // Every step inside one minute (the rate limit) and one 10-minute window (duplicates).
  yield* awayFromBoundary(60_000, 20)
  const answers = []
  for (const s of sent) {
    const a = yield* sendRaw(base, s)
    // The seconds to wait depend on when in the minute the limit was reached.
    const retry = a.headers["retry-after"]
    answers.push({
      status: a.status,
      headers: { ...a.headers, "retry-after": retry === undefined ? undefined : "<s>" },
      retryAfterS: retry === undefined ? undefined : Number(retry),
      text: a.text.replaceAll(quiet.key, "<quiet>").replaceAll(limited.key, "<limited>").replace(/"(at|started_at|id)":"[^"]+"/gu, "\"$1\":\"<$1>\"").replace(/(retry after |"retry_after_s":)\d+/gu, "$1<s>")
    })
  }
  return answers
})

const secretsKey = randomBytes(32).toString("base64")

/** `script` against a server of its own (a fresh database), and how many requests its direct handler took. */
const run = (config: Record<string, string>) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(apiServer({ SECRETS_KEY: secretsKey, ...config }))
    const answers = yield* script.pipe(Effect.provideContext(context))
    return { answers, taken: Context.get(context, DirectRequests).taken() }
  }).pipe(Effect.scoped)

describe("crowd reports on Node's request", () => {
  it.live("answer as the router does: status, body and headers of good, repeated, bad, unknown, limited and left-over reports", () =>
    Effect.gen(function*() {
      const direct = yield* run({})
      const routed = yield* run({ CROWD_DIRECT_REPORTS: "false" })
      assert.strictEqual(routed.taken, 0)
      // All but the two left to the router were answered directly.
      assert.strictEqual(direct.taken, direct.answers.length - 2)
      assert.strictEqual(direct.answers.length, routed.answers.length)
      for (let i = 0; i < direct.answers.length; i++) {
        const { retryAfterS: a, ...one } = direct.answers[i]!
        const { retryAfterS: b, ...other } = routed.answers[i]!
        assert.deepStrictEqual(one, other, `request ${i}`)
        assert.strictEqual(a === undefined, b === undefined, `request ${i}: retry-after`)
      }
      const statuses = direct.answers.map((a) => a.status)
      assert.deepStrictEqual(statuses, [202, 202, 202, 202, 202, 202, 202, 400, 400, 400, 400, 400, 400, 400, 400, 400, 400, 400, 404, 415, 202, ...Array(10).fill(202), 429])
      assert.include(direct.answers[2]!.text, "\"counted\":false")
      assert.include(direct.answers[5]!.text, "\"counted\":true")
      assert.include(direct.answers[6]!.text, "\"counted\":false")
      const limited = direct.answers.at(-1)!
      assert.isAtLeast(limited.retryAfterS!, 1)
      assert.include(limited.text, "\"code\":\"rate_limited\"")
      console.log(JSON.stringify({ test: "crowd-direct-reports", requests: direct.answers.length, taken: direct.taken, statuses }))
    }), 180_000)
})
