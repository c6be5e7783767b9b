import { Result } from "effect"
import type { HttpMethod, KeywordMode, MonitorAuth } from "../../domain/Monitor.ts"
import { monitorUserAgent } from "../../platform/Outbound.ts"
import { type ExpectedStatus, parseExpectedStatus } from "../ExpectedStatus.ts"
import type { MonitorSettings } from "../Validate.ts"

/** The monitors' own user agent, from the outbound module (services/platform/Outbound.ts), as its address guard. */
export const userAgent = monitorUserAgent

/** One check, ready to run: built once per monitor (`requestFromSettings`), reused for every check. */
export interface CheckRequest {
  readonly url: string
  readonly method: HttpMethod
  /** Everything sent, User-Agent and Authorization included (not Host, Content-Length). */
  readonly headers: Readonly<Record<string, string>>
  readonly body?: Buffer
  readonly timeout_ms: number
  readonly expected: ExpectedStatus
  readonly keyword?: string
  readonly keyword_mode: KeywordMode
  readonly degraded_after_ms?: number
  readonly follow_redirects: boolean
  readonly tls_verify: boolean
}

const basicAuth = (username: string, password: string) =>
  `Basic ${Buffer.from(`${username}:${password}`, "utf8").toString("base64")}`

/**
 * The request of a validated monitor. `secret` is the decrypted credentials
 * (the stored settings carry only the auth type); without it `settings.auth`
 * is used. Throws when `expected_status` does not parse: settings come from
 * `validateMonitor`, so that is a bug, not a monitor failure.
 */
export const requestFromSettings = (settings: MonitorSettings, secret?: MonitorAuth): CheckRequest => {
  const expected = parseExpectedStatus(settings.expected_status)
  if (Result.isFailure(expected)) throw new Error(`expected_status ${JSON.stringify(settings.expected_status)} ${expected.failure}`)
  const headers: Record<string, string> = {}
  const given = new Set<string>()
  for (const [name, value] of Object.entries(settings.headers)) {
    headers[name] = value
    given.add(name.toLowerCase())
  }
  if (!given.has("user-agent")) headers["User-Agent"] = userAgent
  if (!given.has("accept")) headers["Accept"] = "*/*"
  const auth = secret ?? settings.auth
  if (auth?.type === "basic") headers["Authorization"] = basicAuth(auth.username, auth.password)
  else if (auth?.type === "bearer") headers["Authorization"] = `Bearer ${auth.token}`
  return {
    url: settings.url,
    method: settings.method,
    headers,
    ...(settings.body !== undefined ? { body: Buffer.from(settings.body, "utf8") } : {}),
    timeout_ms: settings.timeout,
    expected: expected.success,
    ...(settings.keyword !== undefined ? { keyword: settings.keyword } : {}),
    keyword_mode: settings.keyword_mode,
    ...(settings.degraded_after_ms !== undefined ? { degraded_after_ms: settings.degraded_after_ms } : {}),
    follow_redirects: settings.follow_redirects,
    tls_verify: settings.tls_verify
  }
}
