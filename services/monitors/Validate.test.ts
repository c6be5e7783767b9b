import { assert, describe, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { monitorDefaults } from "../domain/Monitor.ts"
import { type FieldIssue, MonitorInvalid, type ValidatedMonitor, validateMonitor, validateMonitorResult } from "./Validate.ts"

const base = { name: "API", url: "https://api.example.com/health" }

const valid = (input: Record<string, unknown>): ValidatedMonitor => {
  const r = validateMonitorResult({ ...base, ...input })
  if (Result.isFailure(r)) throw new Error(r.failure.message)
  return r.success
}
const issues = (input: Record<string, unknown>, replace = false): ReadonlyArray<FieldIssue> => {
  const r = validateMonitorResult(replace ? input : { ...base, ...input })
  if (Result.isSuccess(r)) throw new Error(`accepted: ${JSON.stringify(r.success.settings)}`)
  return r.failure.issues
}
const issueOf = (input: Record<string, unknown>, field: string): string => {
  const all = issues(input)
  const found = all.find((i) => i.field === field)
  if (!found) throw new Error(`no issue for ${field}: ${JSON.stringify(all)}`)
  return found.message
}
const warningFields = (v: ValidatedMonitor) => v.warnings.map((w) => w.field)

describe("validateMonitor: defaults and normalization", () => {
  it("a name and a URL are enough; every default applies", () => {
    const { settings, warnings } = valid({})
    assert.deepStrictEqual(settings, {
      name: "API",
      url: "https://api.example.com/health",
      check_type: "https",
      interval: monitorDefaults.interval,
      alert_threshold: 3,
      timeout: 10_000,
      expected_status: "200-299",
      method: "GET",
      headers: {},
      keyword_mode: "contains",
      ssl_expiry_days: [30, 14, 7, 1],
      follow_redirects: true,
      tls_verify: true,
      paused: false
    })
    assert.deepStrictEqual(warnings, [])
  })

  it("trims the name, normalizes the URL, takes check_type from the scheme and sorts SSL thresholds", () => {
    const { settings } = valid({ name: "  Shop  ", url: " HTTP://Shop.Example.com:80/a?b=1 ", ssl_expiry_days: [7, 30, 1] })
    assert.strictEqual(settings.name, "Shop")
    assert.strictEqual(settings.url, "http://shop.example.com/a?b=1")
    assert.strictEqual(settings.check_type, "http")
    assert.deepStrictEqual(settings.ssl_expiry_days, [30, 7, 1])
  })

  it("keeps optional settings when given", () => {
    const { settings } = valid({
      method: "POST",
      body: "{\"ping\":1}",
      headers: { "X-Api-Key": "k" },
      auth: { type: "bearer", token: "abc.def" },
      keyword: "ok",
      keyword_mode: "absent",
      degraded_after_ms: 2000,
      expected_status: " 2xx,301 ",
      follow_redirects: false,
      tls_verify: false,
      paused: true
    })
    assert.strictEqual(settings.body, "{\"ping\":1}")
    assert.deepStrictEqual(settings.headers, { "X-Api-Key": "k" })
    assert.deepStrictEqual(settings.auth, { type: "bearer", token: "abc.def" })
    assert.strictEqual(settings.keyword_mode, "absent")
    assert.strictEqual(settings.degraded_after_ms, 2000)
    assert.strictEqual(settings.expected_status, "2xx,301")
    assert.isFalse(settings.follow_redirects)
    assert.isFalse(settings.tls_verify)
    assert.isTrue(settings.paused)
  })

  it.effect("the Effect form fails with MonitorInvalid listing every issue", () =>
    Effect.gen(function*() {
      const e = yield* Effect.flip(validateMonitor({ name: "", url: "ftp://x", timeout: 50 }))
      assert.instanceOf(e, MonitorInvalid)
      assert.deepStrictEqual(e.issues.map((i) => i.field), ["name"])
      const e2 = yield* Effect.flip(validateMonitor({ name: "x", url: "ftp://x", timeout: 50 }))
      assert.deepStrictEqual(e2.issues.map((i) => i.field).toSorted(), ["timeout", "url"])
      assert.include(e2.message, "url must use http or https, not ftp")
    }))
})

describe("validateMonitor: interval and its alias check_interval", () => {
  it("check_interval is accepted as interval", () => {
    assert.strictEqual(valid({ check_interval: 120 }).settings.interval, 120)
    assert.strictEqual(valid({ interval: 120 }).settings.interval, 120)
    assert.strictEqual(valid({ interval: 120, check_interval: 120 }).settings.interval, 120)
  })

  it("both given and different is an error naming check_interval", () => {
    assert.include(issueOf({ interval: 60, check_interval: 120 }, "check_interval"), "alias of interval")
  })

  it("under 10 s is an error under the name that was used", () => {
    assert.include(issueOf({ interval: 5 }, "interval"), "from 10 to 86400")
    assert.include(issueOf({ check_interval: 9 }, "check_interval"), "from 10 to 86400")
    assert.include(issueOf({ check_interval: 100_000 }, "check_interval"), "from 10 to 86400")
    assert.include(issueOf({ interval: 60.5 }, "interval"), "integer")
    assert.include(issueOf({ interval: "60" }, "interval"), "Expected number")
  })

  it("warns under 30 s, and outside 60-300 s, with the field as given", () => {
    const fast = valid({ check_interval: 10, timeout: 5000 })
    assert.deepStrictEqual(warningFields(fast), ["check_interval"])
    assert.include(fast.warnings[0]!.message, "under 30 s")
    const v45 = valid({ interval: 45 })
    assert.deepStrictEqual(warningFields(v45), ["interval"])
    assert.include(v45.warnings[0]!.message, "60-300 s")
    assert.deepStrictEqual(warningFields(valid({ interval: 3600 })), ["interval"])
    assert.deepStrictEqual(warningFields(valid({ interval: 60 })), [])
    assert.deepStrictEqual(warningFields(valid({ interval: 300 })), [])
  })
})

describe("validateMonitor: timeout", () => {
  it("must be within 100..120000 ms", () => {
    assert.include(issueOf({ timeout: 99 }, "timeout"), "from 100 to 120000")
    assert.include(issueOf({ timeout: 120_001, interval: 600 }, "timeout"), "from 100 to 120000")
    assert.strictEqual(valid({ timeout: 100 }).settings.timeout, 100)
  })

  it("must not exceed the interval", () => {
    assert.include(issueOf({ interval: 10, timeout: 10_001 }, "timeout"), "must not exceed the interval")
    assert.strictEqual(valid({ interval: 10, timeout: 10_000 }).settings.timeout, 10_000)
    // The default timeout (10 s) fits the smallest interval.
    assert.strictEqual(valid({ interval: 10 }).settings.timeout, 10_000)
  })

  it("degraded_after_ms must be positive and under the timeout", () => {
    assert.include(issueOf({ degraded_after_ms: 0 }, "degraded_after_ms"), "positive")
    assert.include(issueOf({ degraded_after_ms: 10_000 }, "degraded_after_ms"), "less than the timeout")
  })
})

describe("validateMonitor: URL", () => {
  it("must parse", () => {
    assert.include(issueOf({ url: "example.com/health" }, "url"), "not a valid absolute URL")
    assert.include(issueOf({ url: "" }, "url"), "1 to 2048")
  })

  it("http and https only", () => {
    assert.include(issueOf({ url: "ftp://example.com/" }, "url"), "not ftp")
    assert.include(issueOf({ url: "file:///etc/passwd" }, "url"), "not file")
  })

  it("no credentials in the URL, pointing at auth", () => {
    assert.include(issueOf({ url: "https://user:pw@example.com/" }, "url"), "use auth instead")
    assert.include(issueOf({ url: "https://user@example.com/" }, "url"), "credentials")
  })

  it("check_type must agree with the scheme", () => {
    assert.include(issueOf({ check_type: "http" }, "check_type"), "is http but the URL is https")
    assert.strictEqual(valid({ check_type: "https" }).settings.check_type, "https")
    assert.include(issueOf({ check_type: "tcp" }, "check_type"), "Expected")
  })
})

describe("validateMonitor: other fields", () => {
  it("name is 1..200 characters after trimming", () => {
    assert.include(issueOf({ name: "   " }, "name"), "1 to 200")
    assert.include(issueOf({ name: "x".repeat(201) }, "name"), "1 to 200")
    assert.strictEqual(valid({ name: ` ${"x".repeat(200)} ` }).settings.name.length, 200)
    assert.deepStrictEqual(issues({ url: "https://x.example" }, true).map((i) => i.field), ["name"])
  })

  it("expected_status must parse, with the parser's reason", () => {
    assert.include(issueOf({ expected_status: "299-200" }, "expected_status"), "reversed range")
    assert.include(issueOf({ expected_status: "6xx" }, "expected_status"), "not a status class")
    assert.include(issueOf({ expected_status: "" }, "expected_status"), "empty")
  })

  it("alert_threshold is 1..100; 1 warns of false alarms, outside 3-5 warns", () => {
    assert.include(issueOf({ alert_threshold: 0 }, "alert_threshold"), "from 1 to 100")
    assert.include(issueOf({ alert_threshold: 101 }, "alert_threshold"), "from 1 to 100")
    const one = valid({ alert_threshold: 1 })
    assert.deepStrictEqual(warningFields(one), ["alert_threshold"])
    assert.include(one.warnings[0]!.message, "a single failure alerts: expect false alarms")
    assert.deepStrictEqual(warningFields(valid({ alert_threshold: 2 })), ["alert_threshold"])
    assert.deepStrictEqual(warningFields(valid({ alert_threshold: 10 })), ["alert_threshold"])
    assert.deepStrictEqual(warningFields(valid({ alert_threshold: 5 })), [])
  })

  it("method is one of the seven", () => {
    assert.include(issueOf({ method: "TRACE" }, "method"), "Expected")
    assert.include(issueOf({ method: "get" }, "method"), "Expected")
  })

  it("headers: valid tokens only, no framing headers, no line breaks; the field names the header", () => {
    const found = issues({
      headers: { "X Bad": "1", Host: "evil", "content-length": "1", "Transfer-Encoding": "chunked", Connection: "close", "X-Ok": "a\r\nInjected: 1" }
    })
    assert.deepStrictEqual(found.map((i) => i.field).toSorted(), [
      "headers.Connection",
      "headers.Host",
      "headers.Transfer-Encoding",
      "headers.X Bad",
      "headers.X-Ok",
      "headers.content-length"
    ])
    assert.include(issueOf({ headers: { "X-Foo": 1 } }, "headers.X-Foo"), "Expected string")
    assert.include(issueOf({ headers: { "x-a": "1", "X-A": "2" } }, "headers.X-A"), "twice")
  })

  it("auth is basic (no colon in the user) or bearer, and not together with an Authorization header", () => {
    assert.deepStrictEqual(valid({ auth: { type: "basic", username: "u", password: "p:w" } }).settings.auth, {
      type: "basic",
      username: "u",
      password: "p:w"
    })
    assert.include(issueOf({ auth: { type: "basic", username: "a:b", password: "p" } }, "auth.username"), "colon")
    assert.include(issueOf({ auth: { type: "bearer", token: "" } }, "auth.token"), "1 to 8192")
    assert.include(issueOf({ auth: { type: "bearer", token: "a b" } }, "auth.token"), "printable ASCII")
    assert.include(
      issueOf({ auth: { type: "bearer", token: "t" }, headers: { authorization: "x" } }, "headers.authorization"),
      "conflicts with auth"
    )
    assert.isDefined(issues({ auth: { type: "digest" } }).find((i) => i.field.startsWith("auth")))
  })

  it("body is at most 64 KiB (bytes, not characters); a body with GET warns", () => {
    assert.include(issueOf({ method: "POST", body: "é".repeat(32 * 1024 + 1) }, "body"), "64 KiB")
    assert.strictEqual(valid({ method: "POST", body: "x".repeat(64 * 1024) }).settings.body?.length, 64 * 1024)
    assert.deepStrictEqual(warningFields(valid({ body: "x" })), ["body"])
  })

  it("keyword is 1..1000 characters, not with HEAD; keyword_mode contains or absent", () => {
    assert.include(issueOf({ keyword: "" }, "keyword"), "1 to 1000")
    assert.include(issueOf({ keyword: "x".repeat(1001) }, "keyword"), "1 to 1000")
    assert.include(issueOf({ keyword: "ok", method: "HEAD" }, "keyword"), "HEAD")
    assert.include(issueOf({ keyword_mode: "missing" }, "keyword_mode"), "Expected")
  })

  it("ssl_expiry_days: distinct integers 1..365", () => {
    assert.include(issueOf({ ssl_expiry_days: [30, 30] }, "ssl_expiry_days"), "distinct")
    assert.include(issueOf({ ssl_expiry_days: [0] }, "ssl_expiry_days.0"), "from 1 to 365")
    assert.include(issueOf({ ssl_expiry_days: [400] }, "ssl_expiry_days.0"), "from 1 to 365")
    assert.deepStrictEqual(valid({ ssl_expiry_days: [] }).settings.ssl_expiry_days, [])
  })

  it("unknown settings are refused (catches typos)", () => {
    assert.include(issueOf({ intervall: 60 }, "intervall"), "not a monitor setting")
  })

  it("a non-object body is one issue", () => {
    assert.strictEqual(issues(null as unknown as Record<string, unknown>, true).length, 1)
  })
})
