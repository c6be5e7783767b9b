import { Effect } from "effect"
import { request } from "node:http"
import { crowdDefaults, crowdScore, hourOfWeekOf, usualByHourOfWeek } from "../../services/domain/CrowdScore.ts"
import { sessionCookieName } from "../../services/identity/SessionCookie.ts"
import { ApiBase, type Reply } from "./api.ts"

/**
 * Crowd reports through the HTTP API under test (services/crowd/README.md). Each reporter's
 * address is a real socket address: on Linux all of 127.0.0.0/8 is the loopback, so a request
 * bound to 127.0.N.1 comes from that address and from the network 127.0.N.0/24.
 */

/** One request to the API at `baseUrl` from `from` (a loopback address), with a session cookie when given. */
export const sendFrom = (baseUrl: string, method: string, path: string, from: string, options: { body?: unknown; session?: string } = {}) => {
  const base = new URL(baseUrl)
  return new Promise<Reply>((resolve, reject) => {
    const body = options.body === undefined ? undefined : JSON.stringify(options.body)
    const headers: Record<string, string> = {}
    if (body !== undefined) headers["content-type"] = "application/json"
    if (options.session !== undefined) headers["cookie"] = `${sessionCookieName}=${options.session}`
    const req = request(
      { host: base.hostname, port: base.port, path: `/api/v1${path}`, method, headers, localAddress: from },
      (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => text += chunk)
        res.on("end", () => {
          const responseHeaders = new Headers()
          for (const [name, value] of Object.entries(res.headers)) if (typeof value === "string") responseHeaders.set(name, value)
          resolve({ status: res.statusCode ?? 0, body: text === "" ? null : JSON.parse(text), headers: responseHeaders })
        })
      }
    )
    req.on("error", reject)
    req.end(body)
  })
}

/** `sendFrom` to the API under test (`ApiBase`). */
export const send = (method: string, path: string, from: string, options: { body?: unknown; session?: string } = {}) =>
  Effect.gen(function*() {
    const base = yield* ApiBase
    return yield* Effect.promise(() => sendFrom(base, method, path, from, options))
  })

export const report = (key: string, from: string, body: Record<string, unknown>, session?: string) =>
  send("POST", `/sources/${key}/reports`, from, { body, ...(session === undefined ? {} : { session }) })

/** Waits, when needed, so that the next `seconds` stay inside one period of `periodMs` (a 10-minute window, a minute). */
export const awayFromBoundary = (periodMs: number, seconds: number) =>
  Effect.gen(function*() {
    const left = periodMs - (Date.now() % periodMs)
    if (left < seconds * 1000) yield* Effect.sleep(left + 500)
  })

/** The model's confidence for `n` reporters from `n` networks, all in the last minute, with no history. */
export const confidenceOf = (n: number) => {
  const networks = Array.from({ length: n }, () => 1)
  return crowdScore({
    networks,
    recent: crowdDefaults.shortWindowsMs.map(() => networks),
    usual: usualByHourOfWeek([], crowdDefaults.baselineWeeks)[hourOfWeekOf(Date.now())]!,
    failingMonitorOrganizations: 0
  }).confidence
}
